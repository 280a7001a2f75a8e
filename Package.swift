// swift-tools-version: 6.2
// SPDX-License-Identifier: Apache-2.0
//
// thumbd: a caching HTTP image proxy for Linux. Module map and dependency direction are described
// in docs/architecture.md; C libraries are reached only through their wrapper modules.

import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode is the package default; these add
/// the upcoming features we rely on and keep warnings visible.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "thumbd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "thumbd", targets: ["thumbd"]),
        // The decoder sandbox's helper (docs/threat-model.md): the loaders thumbd never runs in its own process.
        .executable(name: "thumbd-decoder", targets: ["thumbd-decoder"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(
            url: "https://github.com/apple/swift-configuration",
            from: "1.4.0",
            traits: [.defaults, "YAML", "Reloading"]
        ),
        // Already in the graph through swift-configuration's YAML trait; ConfigFile walks the YAML tree with it
        // to reject unknown keys, which swift-configuration does not detect.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // HMAC-SHA256 for signed /thumb URLs (URLSignatureVerifier); on Linux it builds BoringSSL's primitives.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // MARK: - C libraries and shims

        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libvips's own pkg-config cflags carry `-pthread`, which SwiftPM refuses with a warning on every
        // build. Its headers sit in the default include path and need only glib's include directories, which
        // gobject-2.0 (a dependency of libvips-dev) provides without -pthread; the library itself is linked by
        // Sources/CVips/module.modulemap.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "gobject-2.0",
            providers: [.apt(["libvips-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "CCurlShims", dependencies: ["CCurl"], cSettings: [.unsafeFlags(["-Wall", "-Werror"])]),
        // Swift code reaches libvips only through these shims and never imports CVips, so the modulemap's
        // `link` lines are not autolinked: the shim target links libvips itself.
        .target(
            name: "CVipsShims",
            dependencies: ["CVips"],
            exclude: ["compat/README.md"],
            cSettings: [.unsafeFlags(["-Wall", "-Werror"])],
            linkerSettings: [
                .linkedLibrary("vips"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0"),
                .linkedLibrary("jpeg"), .linkedLibrary("webp"),
                // The per-source analysis's palette (quantize/palette.c): Debian's libimagequant-dev 2.17, the
                // library libvips itself links for its palettes.
                .linkedLibrary("imagequant"),
            ]
        ),
        .target(name: "CLinuxShims", cSettings: [.unsafeFlags(["-Wall", "-Werror"])]),
        // C++ over OpenCV (Debian's libopencv-objdetect-dev) with a C interface only: face detection with a cascade
        // and good features to track, on grey pixels Thumbnailing hands it. Debian ships no opencv4.pc with these
        // packages, and a header search path must lie inside the package, so the include directory comes as a flag
        // (-isystem: OpenCV's own headers are not held to -Wall -Werror).
        .target(
            name: "CFaceShims",
            cxxSettings: [.unsafeFlags(["-Wall", "-Werror", "-std=c++17", "-isystem", "/usr/include/opencv4"])],
            linkerSettings: [
                .linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core"),
            ]
        ),

        // MARK: - Swift modules

        .target(
            name: "EventLoops",
            dependencies: ["CLinuxShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HTTP1",
            dependencies: ["EventLoops", "CLinuxShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OriginFetch",
            dependencies: ["CCurl", "CCurlShims", "EventLoops", "CLinuxShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Thumbnailing",
            dependencies: ["CVips", "CVipsShims", "CFaceShims", "CLinuxShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Caching",
            dependencies: ["CSQLite"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Instrumentation",
            swiftSettings: swiftSettings
        ),
        // thumbd's settings: their values and defaults, the YAML file and `THUMBD_*` loader with its key checks,
        // sizes and durations, validation, and what a reload may change. Knows no component.
        .target(
            name: "ThumbdSettings",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTML of /status and the gallery at /, built from a StatusReport: strings only, no I/O.
        .target(
            name: "Pages",
            swiftSettings: swiftSettings
        ),
        // The URL forms: /thumb's query, thumbor's and imgproxy's paths, their signatures, presets and rules, and the
        // plan and key text they make. Parsing only: no cache, no service; only ThumbdApp, the fuzz targets and tests
        // import it.
        .target(
            name: "URLForms",
            dependencies: [
                "HTTP1", "OriginFetch", "Thumbnailing", "ThumbdSettings",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ThumbdApp",
            dependencies: [
                "EventLoops", "HTTP1", "OriginFetch", "Thumbnailing", "Caching", "Instrumentation", "ThumbdSettings",
                "Pages", "URLForms",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "thumbd",
            dependencies: ["ThumbdApp"],
            swiftSettings: swiftSettings
        ),
        // A C executable (no Swift runtime in the sandboxed process): libvips with its untrusted loaders, a seccomp
        // filter, rlimits; jobs on standard input, rasters on standard output (Sources/thumbd-decoder/include).
        .executableTarget(
            name: "thumbd-decoder",
            dependencies: ["CVips"],
            cSettings: [.unsafeFlags(["-Wall", "-Werror"])],
            linkerSettings: [
                .linkedLibrary("vips"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0"), .linkedLibrary("m"),
            ]
        ),

        // MARK: - Tests

        .target(
            name: "ThumbdTestSupport",
            dependencies: ["CLinuxShims", "CVipsShims", "EventLoops"],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventLoopsTests", dependencies: ["EventLoops", "ThumbdTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HTTP1Tests", dependencies: ["HTTP1", "EventLoops", "ThumbdTestSupport"], swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OriginFetchTests", dependencies: ["OriginFetch", "EventLoops", "ThumbdTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ThumbnailingTests",
            dependencies: ["Thumbnailing", "ThumbdTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CachingTests", dependencies: ["Caching", "ThumbdTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "InstrumentationTests", dependencies: ["Instrumentation"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ThumbdSettingsTests", dependencies: ["ThumbdSettings", "ThumbdTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(name: "PagesTests", dependencies: ["Pages"], swiftSettings: swiftSettings),
        .testTarget(
            name: "URLFormsTests",
            dependencies: [
                "URLForms", "ThumbdSettings", "HTTP1", "OriginFetch", "Thumbnailing", "ThumbdTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings),
        // The app's tests name the types its API carries (ThumbnailSpec, FetchError, HTTPStatus, WorkerPool,
        // DiskCache.Freshness...).
        .testTarget(
            name: "ThumbdAppTests",
            dependencies: [
                "ThumbdApp", "ThumbdSettings", "Pages", "EventLoops", "HTTP1", "OriginFetch", "Thumbnailing", "Caching",
                "URLForms", "ThumbdTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "ThumbdApp", "ThumbdSettings", "Pages", "EventLoops", "HTTP1", "OriginFetch", "Thumbnailing", "Caching",
                "URLForms", "ThumbdTestSupport",
            ],
            swiftSettings: swiftSettings),
    ]
)

// MARK: - Opt-in tools, absent from a normal build

// libFuzzer targets (fuzz/README.md): `fuzz/run.sh` sets THUMBD_FUZZ=1 and builds them with
// -sanitize=fuzzer,address into their own scratch path (.build-fuzz):
// - FuzzRequestParser: the HTTP request parser;
// - FuzzThumbParameters: the /thumb parameter parser and its canonical query;
// - FuzzDialectURLs: thumbor's and imgproxy's URL parsers, and the /thumb query of what they compile into;
// - FuzzObjectKeys: `s3://` source URLs, and the bucket their request reaches.
if Context.environment["THUMBD_FUZZ"] == "1" {
    package.targets.append(.target(name: "CFuzzDriver", path: "fuzz/CFuzzDriver"))
    package.targets.append(
        .executableTarget(
            name: "FuzzRequestParser",
            dependencies: ["HTTP1", "CFuzzDriver"],
            path: "fuzz/FuzzRequestParser",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        ))
    package.targets.append(
        .executableTarget(
            name: "FuzzThumbParameters",
            dependencies: ["URLForms", "Thumbnailing", "OriginFetch", "CFuzzDriver"],
            path: "fuzz/FuzzThumbParameters",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        ))
    package.targets.append(
        .executableTarget(
            name: "FuzzDialectURLs",
            dependencies: ["URLForms", "Thumbnailing", "OriginFetch", "CFuzzDriver"],
            path: "fuzz/FuzzDialectURLs",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        ))
    package.targets.append(
        .executableTarget(
            name: "FuzzObjectKeys",
            dependencies: ["OriginFetch", "CFuzzDriver"],
            path: "fuzz/FuzzObjectKeys",
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        ))
}

// Benchmark executables (bench/README.md), built by the bench scripts with THUMBD_BENCH=1 into their own scratch
// path (.build-bench) so that `swift build` and `swift test` do not compile them:
// - thumbd-httpbench: the HTTP server answering a fixed in-memory body (bench/http.sh);
// - thumbd-render-bench: Thumbnailer throughput on the peers' corpus (bench/compare.sh);
// - thumbd-face-bench: one face and feature detection on a 512 px intermediate (bench/face-detection.sh);
// - thumbd-analysis-bench: one per-source analysis on a 512 px intermediate (bench/analysis.sh);
// - CachingBenchmark: memory and disk cache operations;
// - thumbd-metrics-bench: metric updates of one memory hit, Instrumentation vs swift-prometheus (BENCHMARKS.md).
if Context.environment["THUMBD_BENCH"] == "1" {
    // Only the metrics micro-benchmark compares against swift-prometheus; thumbd itself does not depend on it.
    package.dependencies.append(.package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"))
    package.targets += [
        .executableTarget(
            name: "thumbd-httpbench",
            dependencies: ["HTTP1", "EventLoops"],
            path: "bench/HTTPBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "thumbd-render-bench",
            dependencies: ["Thumbnailing"],
            path: "bench/RenderBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "thumbd-face-bench",
            dependencies: ["Thumbnailing"],
            path: "bench/FaceBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "thumbd-analysis-bench",
            dependencies: ["Thumbnailing"],
            path: "bench/AnalysisBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "thumbd-metrics-bench",
            dependencies: ["Instrumentation", .product(name: "Prometheus", package: "swift-prometheus")],
            path: "bench/MetricsBench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CachingBenchmark",
            dependencies: ["Caching", "ThumbdTestSupport"],
            path: "bench/CachingBenchmark",
            swiftSettings: swiftSettings
        ),
    ]
}
