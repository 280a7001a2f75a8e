// SPDX-License-Identifier: Apache-2.0

package import Logging

/// The whole configuration of thumbd: plain values with the built-in defaults.
///
/// `ConfigFile` fills it from the YAML file, `THUMBD_*` environment variables and command-line flags
/// (in that order of precedence, lowest first), then calls `validate()`. Nothing starts until that
/// succeeds. The composition root maps each section onto the per-module `Configuration` types.
///
/// Sizes are in bytes (`...Bytes`), durations are `Duration`, and counts of threads use `0` for "one
/// per CPU" (the affinity mask, lowered to a CPU quota). The YAML key of each property is its snake_case name
/// under its section (`cache.memory.maxBytes` is `cache.memory.max_bytes`); `Settings.keys` lists them all.
///
/// ```swift
/// var settings = Settings()
/// settings.server.listen = try Settings.ListenAddress(parsing: "127.0.0.1:0")
/// settings.fetch.allowsPrivateNetworks = true
/// try settings.validate()
/// ```
package struct Settings: Sendable, Equatable {
    /// The HTTP listener and connection limits (`server.*`).
    package var server = Server()
    /// Fetching source images from origins (`fetch.*`).
    package var fetch = Fetch()
    /// Rendering thumbnails (`image.*`).
    package var image = Image()
    /// `/info` (`info.*`).
    package var info = Info()
    /// Response caching headers and the two cache tiers (`cache.*`).
    package var cache = Cache()
    /// The admin routes (`admin.*`).
    package var admin = Admin()
    /// URL signing (`security.*`).
    package var security = Security()
    /// thumbor's URL form (`thumbor.*`).
    package var thumbor = Thumbor()
    /// imgproxy's URL form (`imgproxy.*`).
    package var imgproxy = Imgproxy()
    /// Diagnostic and access logging (`log.*`).
    package var log = Log()
    /// The Prometheus endpoint (`metrics.*`).
    package var metrics = Metrics()
    /// The S3-compatible object store: the shared cache tier's and `s3://` sources' (`s3.*`).
    package var s3 = S3()
    /// Named sets of `/thumb` parameters (`presets:`), by name: each a query string such as
    /// `w=400&h=300&fit=cover`, used by the `preset` parameter; the one named `default` applies to every request.
    /// Their names and sizes are checked here; their parameters by `/thumb`'s own parser when the service loads
    /// them (ThumbdApp, Settings+ModuleConfigurations.swift).
    package var presets: [String: String] = [:]

    /// The built-in defaults, suitable for a local development run.
    package init() {}

    /// `server.*`: the HTTP/1.1 listener.
    package struct Server: Sendable, Equatable {
        /// Address and port to listen on (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`; port 0 picks a free one).
        package var listen = ListenAddress(host: "127.0.0.1", port: 8080)
        /// Number of event-loop threads; 0 means one per CPU the process may use (its affinity mask's count, lowered
        /// to a cgroup CPU quota: `EventLoops.CPUAllowance`).
        package var threads = 0
        /// Open client connections at which accepting pauses.
        package var maxConnections = 10_000
        /// Largest accepted request body; larger ones get 413.
        package var maxBodyBytes = 1 << 20
        /// Time allowed to receive a complete request head (defeats slowloris).
        package var headerTimeout: Duration = .seconds(10)
        /// Time an idle keep-alive connection is kept open.
        package var idleTimeout: Duration = .seconds(60)
        /// Time a response write may make no progress before the connection is closed.
        package var writeTimeout: Duration = .seconds(30)
        /// On SIGTERM/SIGINT, time in-flight requests get to finish before the process exits.
        package var shutdownTimeout: Duration = .seconds(10)

        /// The defaults.
        package init() {}
    }

    /// `info.*`: `/info`'s batch form, `POST /info`.
    package struct Info: Sendable, Equatable {
        /// Entries a `POST /info` may hold (400 beyond).
        package var batchMax = 100
        /// Largest `POST /info` body (413 beyond; `server.max_body_bytes` bounds every body before it).
        package var batchMaxBytes = 1 << 20

        /// The defaults.
        package init() {}
    }

    /// `fetch.*`: the origin fetch layer.
    package struct Fetch: Sendable, Equatable {
        /// Total time for one origin transfer, including redirects and a slow body.
        package var timeout: Duration = .seconds(10)
        /// Time to establish the TCP (and TLS) connection to an origin.
        package var connectTimeout: Duration = .seconds(3)
        /// Redirects followed per fetch (0 = none).
        package var maxRedirects = 5
        /// Largest source image accepted, enforced while streaming (413 beyond).
        package var maxSourceBytes = 25_000_000
        /// Concurrent transfers per origin host; more wait in a queue.
        package var maxPerHost = 16
        /// When false (the default), origins on loopback, private, link-local and other internal addresses are
        /// refused after DNS resolution (SSRF protection).
        package var allowsPrivateNetworks = false
        /// Internal networks allowed anyway while `allowsPrivateNetworks` is false (`10.1.0.0/16`).
        package var allowedNetworks: [IPNetwork] = []
        /// If not empty, only these origin hosts are fetched (`example.com`, `*.example.com`).
        package var allowedHosts: [HostPattern] = []
        /// The `User-Agent` sent to origins.
        package var userAgent = "thumbd"

        /// The defaults.
        package init() {}
    }

    /// `image.*`: the libvips render pool.
    package struct Image: Sendable, Equatable {
        /// Render threads; 0 means one per CPU the process may use (as `Server.threads`), plus a quarter.
        package var renderThreads = 0
        /// Renders waiting for a thread before new ones are refused with 503.
        package var queueLimit = 64
        /// Largest source image, in pixels (width × height), checked from the header before decoding (422 beyond).
        package var maxSourcePixels = 50_000_000
        /// Most frames an animation may have to be rendered animated (422 beyond); its frames × pixels also
        /// count against `maxSourcePixels`.
        package var maxFrames = 100
        /// Highest resolution a PDF page is rasterised at (dots per inch, 1...2400): the page is drawn at the DPI
        /// that fits the box, never above this, and within `maxSourcePixels`.
        package var pdfMaxDPI = 300
        /// Watermark images a request may name (`wm=<name>`): `name=path` entries, read and checked at start.
        package var watermarks: [WatermarkFile] = []
        /// Encoder quality when the request has no `q` (1–100).
        package var defaultQuality = 80
        /// Whether `format=auto` may answer AVIF to clients that accept it.
        package var isAVIFEnabled = true
        /// The formats `format=auto` may answer besides JPEG and PNG, most preferred first (restart only: the
        /// variant key names the format negotiated under this order).
        package var autoFormats: [AutoFormat] = [.avif, .jxl, .webp]
        /// Whether `format=heic` (HEVC in HEIF) is written; off by default (HEVC's patents: an operator opts in).
        package var isHEICOutputEnabled = false
        /// Budget for decoded intermediate renders kept so other sizes of a recent source skip its decode
        /// (`IntermediateCache`); 0 keeps none.
        package var intermediateCacheBytes = 128_000_000
        /// Face and feature detection for `gravity=face`, thumbor's `smart/`, `redact` and `/info?faces=1`, once per
        /// source (OpenCV). On by default; with `faceCascade` unreadable at start it is off (logged).
        package var faces = true
        /// The OpenCV cascade of the quick face search (`gravity=face`, `/info`), from opencv-data: the LBP
        /// frontal-face cascade, an eighth of thumbor's Haar cascade's time at `faceSide` 256 (BENCHMARKS.md).
        package var faceCascade = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface.xml"
        /// The longer side of the copy of a source's 512 px intermediate the quick search runs on; 0 searches the
        /// intermediate itself.
        package var faceSide = 256
        /// The per-source analysis (placeholders, colours, hashes: `SourceAnalysis`): made at a source's first render
        /// through its 512 px intermediate and kept in every tier, so `/info` answers it without a fetch. When false
        /// it is made only when `/info` asks for it.
        package var analysis = true
        /// The BlurHash components (across, down) of the kept analysis, 1–9 each.
        package var blurhashX = 4
        package var blurhashY = 3
        /// Colours in the kept analysis's palette, 2–256.
        package var paletteColours = 8
        /// Every thumbnail answer carries `X-Thumbd-Placeholder` (its source's BlurHash and average colour); a render
        /// then makes the source's analysis record before its answer.
        package var placeholderHeader = false
        /// When true, `/thumb` accepts only `url`, `preset`, `sig`, `format` and `dpr`: every other option comes
        /// from `presets` (a closed deployment).
        package var allowsOnlyPresets = false
        /// An image file sent, rendered with the request's plan, instead of the error body when the source
        /// fails (not found, not an image, origin error, timeout); empty for none.
        package var fallback = ""
        /// The status of an answer with the fallback image: the error's own, or a fixed one.
        package var fallbackStatus = FallbackStatus.original
        /// `Cache-Control: max-age` of an answer with the fallback image.
        package var fallbackTTL: Duration = .seconds(60)
        /// Whether `/thumb` asks for (`Accept-CH`) and reads the `Sec-CH-DPR`, `Sec-CH-Width` and
        /// `Sec-CH-Viewport-Width` client hints when a request's plan gives no `dpr` or size.
        package var readsClientHints = false
        /// Which sources the decoder sandbox's helpers decode (docs/threat-model.md): `untrusted` (SVG, PDF, JPEG XL,
        /// BMP, ICO), `all`, or `off` (those five refused).
        package var sandbox = Sandbox.untrusted
        /// Helpers kept started between jobs.
        package var sandboxHelpers = 2
        /// Jobs one helper serves before it is replaced.
        package var sandboxJobsPerHelper = 100
        /// Wall-clock time one sandbox job may take before its helper is killed (504).
        package var sandboxDeadline: Duration = .seconds(10)
        /// A helper's address-space limit.
        package var sandboxMemoryBytes = 1 << 30

        /// `image.sandbox`.
        package enum Sandbox: String, Sendable, Equatable, CaseIterable {
            case untrusted
            case all
            case off
        }

        /// The defaults.
        package init() {}
    }

    /// `image.fallback_status`: which status an answer with the fallback image has.
    package enum FallbackStatus: Sendable, Equatable, CustomStringConvertible {
        /// The status of the error it replaces (404, 413, 422, 502 or 504).
        case original
        /// Always this one: 200, or a code from 400 to 599.
        case fixed(Int)

        /// `original`, `200`, or a code from 400 to 599.
        package init(parsing text: String) throws(InvalidValue) {
            let trimmed = trimmingASCIISpaces(text[...])
            if trimmed.lowercased() == "original" {
                self = .original
                return
            }
            guard let code = WholeNumber.parse(trimmed), code == 200 || (400...599).contains(code) else {
                throw InvalidValue("expected original, 200 or a status code from 400 to 599, got \"\(text)\"")
            }
            self = .fixed(code)
        }

        /// `original` or the code.
        package var description: String {
            switch self {
            case .original: "original"
            case .fixed(let code): "\(code)"
            }
        }
    }

    /// `cache.*`: client caching headers, freshness rules and the two tiers.
    package struct Cache: Sendable, Equatable {
        /// `Cache-Control: max-age` sent to clients with every thumbnail.
        package var clientMaxAge: Duration = .seconds(365 * 86_400)
        /// Freshness of a stored thumbnail when the origin sent no caching headers.
        package var defaultTTL: Duration = .seconds(86_400)
        /// Lower clamp for the origin's freshness lifetime.
        package var minTTL: Duration = .seconds(60)
        /// Upper clamp for the origin's freshness lifetime.
        package var maxTTL: Duration = .seconds(30 * 86_400)
        /// How long past expiry a stale entry is still served when revalidation fails.
        package var staleIfError: Duration = .seconds(86_400)
        /// How long an origin 404 is remembered (0 = not cached).
        package var negativeTTL: Duration = .seconds(60)
        /// Whether source originals are also kept on disk, so new sizes of a known source need no fetch.
        package var keepsSources = true
        /// The header every thumbnail and `/info` answer carries its source's tag in (`Surrogate-Key`, `Cache-Tag`);
        /// empty for none.
        package var tagHeader = ""
        /// The memory tier.
        package var memory = Memory()
        /// The disk tier.
        package var disk = Disk()
        /// The shared tier on the S3-compatible store (`s3.*`), for many nodes.
        package var shared = Shared()
        /// Purges pushed downstream (Varnish, a webhook).
        package var purge = Purge()
        /// How often each source stored on this node is checked with its origin in the background (a changed or
        /// gone source is purged); zero for never.
        package var sourceCheckInterval: Duration = .zero

        /// The defaults.
        package init() {}

        /// `cache.memory.*`: the in-process LRU.
        package struct Memory: Sendable, Equatable {
            /// Byte budget (encoded bytes); 0 turns the memory tier off.
            package var maxBytes = 256_000_000
            /// Entry budget.
            package var maxEntries = 100_000

            /// The defaults.
            package init() {}
        }

        /// `cache.disk.*`: blob files indexed by SQLite.
        package struct Disk: Sendable, Equatable {
            /// Directory of the blob files and the index (created if missing). `--cache-dir` overrides it.
            package var path = "./var/cache"
            /// Byte budget for thumbnails on disk.
            package var maxBytes = 10_000_000_000
            /// Separate byte budget for source originals (used when `keepsSources` is true).
            package var sourcesMaxBytes = 2_000_000_000
            /// Separate disk budget for the sources' analysis records (about 2 KB each).
            package var analysesMaxBytes = 256_000_000

            /// The defaults.
            package init() {}
        }
    }

    /// `cache.shared.*`: the third tier, objects in a bucket of the `s3.*` store that every node reads and writes
    /// (docs/scaling.md).
    package struct Shared: Sendable, Equatable {
        /// Whether the tier is used.
        package var isEnabled = false
        /// The bucket (it must exist).
        package var bucket = ""
        /// Prepended to every object key (letters, digits and `/_.-`).
        package var prefix = "thumbd/"
        /// Time a lookup or a write may take, connection included; a slower answer counts as a failure.
        package var timeout: Duration = .seconds(1)
        /// Failures in a row after which the tier is skipped (the breaker opens).
        package var breakerFailures = 5
        /// How long the tier is skipped once the breaker opens; then one request tries it again.
        package var breakerPause: Duration = .seconds(30)
        /// Writes under way at once; more are dropped (and counted) rather than queued without bound.
        package var putQueue = 256
        /// Whether source originals are stored there too (a new size of a known source then needs no origin).
        package var keepsSources = true

        /// The defaults.
        package init() {}
    }

    /// `cache.purge.*`: where every purge (`DELETE /cache`, `POST /purge`, a source found changed) is pushed, so that
    /// the caches in front drop their copies too.
    package struct Purge: Sendable, Equatable {
        /// Varnish endpoints (`http://host:port/`): each gets a `BAN` with the purged tags (deploy/cluster/varnish.vcl).
        package var varnish: [String] = []
        /// A URL that gets a `POST` of JSON with the purged tags and source URLs; empty for none.
        package var webhook = ""
        /// Sent to the webhook as `Authorization: Bearer <token>`; empty for none.
        package var webhookToken = ""
        /// Tags waiting per endpoint; more are dropped (and counted).
        package var queueLimit = 10_000
        /// Tries of one batch before it is given up (and counted); between tries 0.5 s, doubling, at most 30 s.
        package var attempts = 6
        /// Time one push may take, connection included.
        package var timeout: Duration = .seconds(5)

        /// The defaults.
        package init() {}
    }

    /// `admin.*`: the cache and prefetch admin routes.
    package struct Admin: Sendable, Equatable {
        /// Bearer token for the admin routes; empty turns the admin routes off (they answer 404).
        package var token = ""

        /// Whether the admin routes exist at all.
        package var isEnabled: Bool { !token.isEmpty }

        /// The defaults.
        package init() {}
    }

    /// `security.*`: signed URLs.
    package struct Security: Sendable, Equatable {
        /// HMAC-SHA256 keys (the UTF-8 bytes of each string), newest first. A request signed with any of them is
        /// accepted; new signatures use the first. Empty means /thumb needs no signature.
        package var signingKeys: [String] = []

        /// Whether /thumb requires `sig=`.
        package var requiresSignature: Bool { !signingKeys.isEmpty }

        /// The defaults.
        package init() {}
    }

    /// `thumbor.*`: thumbor's URL form (`/<signature|unsafe>/[options/]<image>`), off by default.
    package struct Thumbor: Sendable, Equatable {
        /// Whether the form is mounted.
        package var isEnabled = false
        /// The path prefix it is mounted at (`/` is thumbor's own layout; the existing routes keep precedence).
        package var prefix = "/thumbor/"
        /// thumbor's `SECURITY_KEY`s (the UTF-8 bytes of each string are HMAC-SHA1 keys), newest first: any
        /// verifies.
        package var securityKeys: [String] = []
        /// Whether `unsafe/` URLs (no signature) are accepted (thumbor's `ALLOW_UNSAFE_URL`).
        package var allowsUnsafe = false
        /// What becomes of a filter thumbor itself would skip (an unknown name, or arguments that do not match).
        package var skippedFilters = SkippedFilters.skip
        /// Whether the crop mode with both sides (`WxH`) crops whole pixels of the picture and stretches them to the
        /// box, as thumbor 7.8 does (`rounding=thumbor-crop`), rather than thumbd's cover, one entry with `/thumb`'s
        /// and imgproxy's.
        package var exactCrop = false

        /// The defaults.
        package init() {}

        /// `thumbor.skipped_filters`.
        package enum SkippedFilters: String, Sendable, Equatable, CaseIterable {
            /// As thumbor: the rest of the URL is rendered, and the answer names the filter.
            case skip
            /// A 400 naming the filter.
            case refuse
        }
    }

    /// `imgproxy.*`: imgproxy's URL form (`/<signature>/<options>/<source>`), off by default.
    package struct Imgproxy: Sendable, Equatable {
        /// Whether the form is mounted.
        package var isEnabled = false
        /// The path prefix it is mounted at (`/` is imgproxy's own layout; the existing routes keep precedence).
        package var prefix = "/imgproxy/"
        /// imgproxy's `IMGPROXY_KEY`s, hexadecimal, paired in order with ``salts``. Empty: unsigned URLs
        /// (any signature segment is accepted and ignored, as imgproxy does).
        package var keys: [String] = []
        /// imgproxy's `IMGPROXY_SALT`s, hexadecimal, one per key.
        package var salts: [String] = []
        /// How many bytes of the HMAC-SHA256 the signature carries (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1...32).
        package var signatureSize = 32

        /// The defaults.
        package init() {}
    }

    /// `log.*`: diagnostics on stderr, access log on stdout.
    package struct Log: Sendable, Equatable {
        /// Lowest level of diagnostic messages written.
        package var level: Logger.Level = .info
        /// Line format of both the diagnostic and the access log.
        package var format: Format = .text
        /// Whether one access-log line is written per request.
        package var isAccessLogEnabled = true

        /// The defaults.
        package init() {}

        /// The line format of log output.
        package enum Format: String, Sendable, Equatable, CaseIterable {
            /// `2026-11-22T10:00:00.123Z info thumbd: message key=value`.
            case text
            /// One JSON object per line.
            case json
        }
    }

    /// `metrics.*`: the Prometheus endpoint.
    package struct Metrics: Sendable, Equatable {
        /// Separate address for `GET /metrics`; nil serves it on `server.listen`.
        package var listen: ListenAddress?

        /// The defaults.
        package init() {}
    }

    /// `s3.*`: the S3-compatible object store (AWS S3, MinIO, Ceph, R2...). Credentials come from
    /// `credentials_file` or the standard `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` environment variables,
    /// never from this file's own keys, and are never printed.
    package struct S3: Sendable, Equatable {
        /// `http(s)://host[:port]`, requests path-style; empty for no store.
        package var endpoint = ""
        /// The signing region.
        package var region = "us-east-1"
        /// An AWS shared-credentials file (`aws_access_key_id`, `aws_secret_access_key` of its `[default]`
        /// section); empty reads the environment.
        package var credentialsFile = ""
        /// Buckets `url=s3://bucket/key` may name; empty refuses `s3://` sources.
        package var sourceBuckets: [String] = []

        /// The defaults.
        package init() {}
    }
}
