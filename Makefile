# SPDX-License-Identifier: Apache-2.0
# thumbd: the two commands a new machine needs are `make run` and `make test`.
# Both install the missing Debian packages first (as root, or through sudo).

SHELL := /bin/bash
# libopencv-objdetect-dev (with the core and imgproc headers and libraries it pulls in) builds Sources/CFaceShims, the
# face and feature detection; opencv-data holds the Haar and LBP cascades it reads at run time
# (/usr/share/opencv4/haarcascades/, the same files thumbor's face detector uses). libimagequant-dev makes the
# per-source analysis's palette (Sources/CVipsShims/quantize/palette.c); libvips links the same library.
APT_PACKAGES := libvips-dev libjpeg-dev libwebp-dev libcurl4-openssl-dev libsqlite3-dev pkg-config \
	libopencv-objdetect-dev opencv-data libimagequant-dev
# Only for `make test`: headless Chromium drives the /status and gallery pages (Tests/IntegrationTests/PagesTests);
# python3-venv holds the URL builders and moto from PyPI (Tests/Builders/requirements.txt) in .venv-test/; haproxy (2.6 on
# Debian 12) runs deploy/cluster/haproxy.cfg in front of several thumbd processes (Tests/IntegrationTests/ClusterTests),
# nginx (1.22) runs deploy/cluster/nginx.conf the same way (ClusterNginxTests), varnish (7.1) runs
# deploy/cluster/varnish.vcl (ClusterVarnishTests). The tests start their own processes on loopback ports; on a machine
# with systemd, Debian's packages also start services of their own (nginx's default site on :80, varnishd on :6081):
# `systemctl disable --now haproxy nginx varnish varnishncsa` if you do not want them. python3-opencv is the oracle of
# the face and feature detection tests (Tests/ThumbnailingTests/FaceDetectorTests.swift), run with Debian's
# /usr/bin/python3: the same cascades and OpenCV as thumbd's build. python3-blurhash (with python3-pil and
# python3-numpy) is the BlurHash oracle of the per-source analysis (Tests/ThumbnailingTests/AnalysisOracleTests.swift).
# libjxl-tools (djxl) and libheif-examples (heif-convert) are the second decoders, beside libvips's command line, of
# the JPEG XL and HEIC round trips (Tests/IntegrationTests/NewOutputFormatTests.swift): thumbd blocks its own JPEG XL
# loader, and neither Pillow 10.4 nor the venv reads JPEG XL or HEIC.
APT_TEST_PACKAGES := chromium python3-venv haproxy nginx varnish python3-opencv python3-blurhash python3-pil \
	python3-numpy libjxl-tools libheif-examples
TEST_VENV := .venv-test
THUMBOR_VENV := .venv-thumbor
CONFIG ?= config/thumbd.yaml
CACHE_DIR ?= var/cache
SWIFT ?= swift
SWIFT_TEST_FLAGS ?=

.PHONY: all deps test-deps test-venv thumbor-venv thumbor-diff thumbor-diff-short smart-crops imgproxy-table install-packages build release run test fuzz bench check-imports check-c-layers test-c-geometry format lint clean

all: build

# Installs only what is missing, so a second run costs one dpkg query.
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(APT_PACKAGES)"

test-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(APT_TEST_PACKAGES)"

# The pinned PyPI packages of the integration tests (thumbor's and imgproxy's URL builders; moto's S3 server for the
# shared tier and s3:// sources), in a git-ignored virtual environment; made again when
# Tests/Builders/requirements.txt changes.
test-venv: test-deps $(TEST_VENV)/.installed

$(TEST_VENV)/.installed: Tests/Builders/requirements.txt
	rm -rf $(TEST_VENV)
	python3 -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install --quiet --disable-pip-version-check -r Tests/Builders/requirements.txt
	touch $@

# thumbor 7.8.0 itself for the differential test (bench/thumbor-diff/), pinned in its own git-ignored virtual
# environment: thumbor pins versions that may clash with Tests/Builders/requirements.txt. Nothing is compiled
# (no pycurl, no -dev package: bench/thumbor-diff/requirements.txt); made again when the requirements change.
thumbor-venv: test-deps $(THUMBOR_VENV)/.installed

$(THUMBOR_VENV)/.installed: bench/thumbor-diff/requirements.txt
	rm -rf $(THUMBOR_VENV)
	python3 -m venv $(THUMBOR_VENV)
	$(THUMBOR_VENV)/bin/pip install --quiet --disable-pip-version-check -r bench/thumbor-diff/requirements.txt
	touch $@

install-packages:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; \
	  else echo "need root or sudo to install:$$missing" >&2; exit 1; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	mkdir -p $(CACHE_DIR)
	.build/release/thumbd --config $(CONFIG) --cache-dir $(CACHE_DIR)

# `swift build --build-tests` first: it also builds the thumbd executable, which the crash-recovery tests
# run as a child process (`swift test` alone builds only what the test bundle links).
# Then the short differential test against thumbor 7.8 (below) on the debug build `swift build` made.
test: deps test-deps test-venv thumbor-venv check-imports check-c-layers test-c-geometry lint
	$(SWIFT) build --build-tests $(SWIFT_TEST_FLAGS)
	$(SWIFT) test $(SWIFT_TEST_FLAGS)
	@$(MAKE) --no-print-directory thumbor-diff-short imgproxy-table

# The same signed thumbor URLs asked of thumbor 7.8 and of thumbd's thumbor form (bench/thumbor-diff/README.md).
# `make thumbor-diff`: 600 URLs against a fresh build, the report in bench/results/thumbor-diff/ (results.md,
# failing.json). `make thumbor-diff-short` (run by `make test`): the first 80, failing when a figure falls below
# its floor in bench/thumbor-diff/floors.txt (a ratchet).
THUMBOR_DIFF_COUNT ?= 600
thumbor-diff: deps thumbor-venv
	$(SWIFT) build --product thumbd
	$(THUMBOR_VENV)/bin/python bench/thumbor-diff/diff.py --thumbd .build/debug/thumbd --count $(THUMBOR_DIFF_COUNT)

thumbor-diff-short: thumbor-venv
	$(THUMBOR_VENV)/bin/python bench/thumbor-diff/diff.py --thumbd .build/debug/thumbd --count 80 \
	  --out .build/thumbor-diff-short --floors bench/thumbor-diff/floors.txt

# Where thumbor 7.8 (face and feature detectors on) and a fresh debug build place the same `smart/` crops, on
# photographs from scikit-image's wheel and Debian's opencv-doc (downloaded, not installed, by
# bench/smart-crops/pictures.sh into .build/smart-crops/); fails when a crop centre is more than 10 % of the box
# from thumbor's (bench/smart-crops/README.md). Not run by `make test`.
smart-crops: deps thumbor-venv
	$(SWIFT) build --product thumbd
	bench/smart-crops/pictures.sh
	$(THUMBOR_VENV)/bin/python bench/smart-crops/compare.py --thumbd .build/debug/thumbd \
	  --out .build/smart-crops/results.json

# imgproxy's server cannot run here: its result sizes as a table (bench/thumbor-diff/imgproxy_table.py) asked of
# the debug build's imgproxy form; fails on a row that fails unmarked or passes while marked as a known failure.
imgproxy-table: thumbor-venv
	$(THUMBOR_VENV)/bin/python bench/thumbor-diff/imgproxy_table.py --thumbd .build/debug/thumbd \
	  --out .build/imgproxy-table

# swift-format with .swift-format (4 spaces, 120 columns): `make format` rewrites, `make lint` checks.
FORMAT_PATHS := Package.swift Sources Tests bench fuzz
format:
	$(SWIFT) format format -i -r $(FORMAT_PATHS)

lint:
	@out=$$($(SWIFT) format lint -r $(FORMAT_PATHS) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out" | head -40; echo "swift-format: run 'make format'"; exit 1; fi

# Only a wrapper module may import a C module (docs/architecture.md); SwiftPM cannot enforce it.
check-imports:
	@scripts/check-imports.sh

# The C shim's files include only headers of the layers below their own (scripts/check-c-layers.sh lists them).
check-c-layers:
	@scripts/check-c-layers.sh

# The C shim's geometry layer, unit-tested in C without libvips (scripts/test-c-geometry.sh).
test-c-geometry:
	@scripts/test-c-geometry.sh

# libFuzzer over the HTTP request parser and the /thumb parameter parser (fuzz/README.md); RUNS executions of
# each, default 1,000,000.
RUNS ?= 1000000
fuzz: deps
	fuzz/run.sh $(RUNS)

# HTTP server against nginx serving the same 10 KB file (bench/README.md; needs nginx and wrk).
bench: deps
	bench/http.sh

clean:
	rm -rf .build .build-bench .build-fuzz
