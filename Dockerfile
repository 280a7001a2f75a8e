# SPDX-License-Identifier: Apache-2.0
# thumbd container image. Build: docker build -t thumbd .
# Run:   docker run -p 8080:8080 -v $PWD/config/thumbd.yaml:/etc/thumbd/thumbd.yaml:ro thumbd
# The build stage does what `make release` does (apt packages from the Makefile's APT_PACKAGES,
# then `swift build -c release`); the runtime stage carries only the shared libraries, and OpenCV's cascade files
# (opencv-data) for face detection.

# ---- build ----
FROM swift:6.3-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      libvips-dev libjpeg-dev libwebp-dev libcurl4-openssl-dev libsqlite3-dev pkg-config \
      libopencv-objdetect-dev libimagequant-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve dependencies first so that source edits keep this layer cached.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# thumbd-decoder (the decoder sandbox's helper, C only) goes next to thumbd: thumbd starts it from its own directory.
RUN swift build -c release --static-swift-stdlib --product thumbd \
 && swift build -c release --product thumbd-decoder \
 && install -D "$(swift build -c release --show-bin-path)/thumbd" /out/thumbd \
 && install -D "$(swift build -c release --show-bin-path)/thumbd-decoder" /out/thumbd-decoder

# ---- runtime ----
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      libvips42 libjpeg62-turbo libwebp7 libcurl4 libsqlite3-0 ca-certificates curl \
      libopencv-objdetect406 libopencv-imgproc406 libopencv-core406 opencv-data \
      libimagequant0 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/cache/thumbd --shell /usr/sbin/nologin thumbd \
 && mkdir -p /var/cache/thumbd /etc/thumbd \
 && chown thumbd:thumbd /var/cache/thumbd
COPY --from=build /out/thumbd /usr/local/bin/thumbd
COPY --from=build /out/thumbd-decoder /usr/local/bin/thumbd-decoder
COPY config/thumbd.yaml /etc/thumbd/thumbd.yaml
USER thumbd
EXPOSE 8080
VOLUME ["/var/cache/thumbd"]
# libvips and glibc malloc: fewer arenas keep RSS close to the cache budget (docs/operations.md).
ENV MALLOC_ARENA_MAX=2
HEALTHCHECK --interval=10s --timeout=2s --start-period=5s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/health || exit 1
ENTRYPOINT ["/usr/local/bin/thumbd"]
CMD ["--config", "/etc/thumbd/thumbd.yaml", "--listen", "0.0.0.0:8080", "--cache-dir", "/var/cache/thumbd"]
