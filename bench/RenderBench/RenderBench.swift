// SPDX-License-Identifier: Apache-2.0
// thumbd-render-bench: Thumbnailer throughput on in-memory sources, to compare with the peers' raw libvips
// benchmark (~/peers/bench/vips_bench.c) on the same corpus. Like vips_bench, every file is read into memory
// first, T OS threads take images from a shared counter (cycling through the files), and each job is exactly
// what a render worker does: Thumbnailer.render(bytes, spec) with a 256x256 contain box.
//
//   THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-render-bench
//   .build-bench/release/thumbd-render-bench -t 2 -s 256 -n 624 ~/peers/corpus/*.{jpg,png,webp}
//
// Options: -t threads (1), -s box side (256), -n thumbnails (2 x files), -o output: keep (same format as
// the source, as vips_bench does; default), jpeg, png, webp, avif or auto (auto accepts WebP);
// --png-compression N, --webp-effort N, --avif-effort N, --progressive, --quality N, --max-pixels N.
// With a refused input (e.g. the header-only bomb fixture) it measures how long a refusal takes.
// Prints a summary on stderr and one `RESULT_JSON {...}` line on stdout.
import Foundation
import Synchronization
import Thumbnailing

@main
struct RenderBench {
    struct Options {
        var threads = 1
        var box = 256
        var total: Int?
        var output = "keep"
        var configuration = Thumbnailer.Configuration()
        var quality = 80
        var files: [String] = []
    }

    struct Source: Sendable {
        let name: String
        let bytes: [UInt8]
        let format: ImageFormat
    }

    static func main() throws {
        let options = try parse(Array(CommandLine.arguments.dropFirst()))
        let vips = try Vips.initialize(programName: "thumbd-render-bench")
        let thumbnailer = try Thumbnailer(configuration: options.configuration, vips: vips)
        let sources = try options.files.map { path in
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            guard let format = ImageFormat(detecting: bytes) else { throw BenchError("unknown format: \(path)") }
            return Source(name: path, bytes: bytes, format: format)
        }
        guard !sources.isEmpty else { throw BenchError("no input files") }
        let total = options.total ?? 2 * sources.count
        let specs = try sources.map { try spec(for: $0, options: options) }

        let run = Run(total: total)
        let done = DispatchSemaphore(value: 0)
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        for index in 0..<options.threads {
            let thread = Thread {
                run.work(sources: sources, specs: specs, thumbnailer: thumbnailer)
                Vips.shutdownCurrentThread()
                done.signal()
            }
            thread.name = "render-\(index)"
            thread.start()
        }
        for _ in 0..<options.threads { done.wait() }
        let wall = (ContinuousClock.now - start).seconds
        let cpu = processCPUSeconds() - cpuBefore

        report(run: run, sources: sources, options: options, total: total, wall: wall, cpu: cpu, vips: vips)
    }

    static func spec(for source: Source, options: Options) throws -> ThumbnailSpec {
        let format: FormatRequest
        switch options.output {
        case "keep": format = .exactly(source.format == .png || source.format == .webp ? source.format : .jpeg)
        case "auto": format = .auto(accepting: [.webp])
        default:
            guard let explicit = ImageFormat(rawValue: options.output) else {
                throw BenchError("unknown output \(options.output)")
            }
            format = .exactly(explicit)
        }
        return try ThumbnailSpec(width: options.box, height: options.box, quality: options.quality, format: format)
    }

    /// User + system CPU of the whole process (all threads, libvips's included): unlike wall time, hardly
    /// affected by other processes on a shared machine.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func report(
        run: Run,
        sources: [Source],
        options: Options,
        total: Int,
        wall: Double,
        cpu: Double,
        vips: Vips
    ) {
        let latencies = run.latencies.withLock { $0 }
        let all = latencies.map(\.milliseconds).sorted()
        func median(_ format: ImageFormat) -> Double {
            percentile(latencies.filter { sources[$0.source].format == format }.map(\.milliseconds).sorted(), 50)
        }
        let errors = run.errors.load(ordering: .relaxed)
        let bytes = run.outputBytes.load(ordering: .relaxed)
        let rate = Double(total) / wall
        let mean = all.reduce(0, +) / Double(max(all.count, 1))
        FileHandle.standardError.write(
            """
            thumbd Thumbnailer on vips \(vips.version): \(sources.count) files, box \(options.box), \
            \(options.threads) thread(s), output \(options.output)
              \(total) thumbnails in \(format(wall)) s = \(format(rate)) thumbnails/s; per image ms: median \
            \(format(percentile(all, 50))) p90 \(format(percentile(all, 90))) p99 \(format(percentile(all, 99))) \
            mean \(format(mean)); CPU ms/thumbnail \(format(cpu * 1000 / Double(total))); errors \(errors); \
            output \(bytes / max(total - errors, 1)) bytes/thumbnail
              median ms by source format: jpeg \(format(median(.jpeg))) png \(format(median(.png))) \
            webp \(format(median(.webp)))

            """.data(using: .utf8)!
        )
        print(
            "RESULT_JSON {\"threads\":\(options.threads),\"box\":\(options.box),\"files\":\(sources.count),"
                + "\"thumbnails\":\(total),\"wall_s\":\(format(wall, 3)),\"thumbs_per_s\":\(format(rate)),"
                + "\"median_ms\":\(format(percentile(all, 50), 3)),\"p90_ms\":\(format(percentile(all, 90), 3)),"
                + "\"mean_ms\":\(format(mean, 3)),\"cpu_ms_per_thumbnail\":\(format(cpu * 1000 / Double(total), 3)),"
                + "\"errors\":\(errors),\"output\":\"\(options.output)\","
                + "\"bytes_per_thumbnail\":\(bytes / max(total - errors, 1))}"
        )
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> Int {
            guard let text = iterator.next(), let number = Int(text) else { throw BenchError("\(flag) needs a number") }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "-t": options.threads = try value(argument)
            case "-s": options.box = try value(argument)
            case "-n": options.total = try value(argument)
            case "-o": options.output = iterator.next() ?? "keep"
            case "--quality": options.quality = try value(argument)
            case "--png-compression": options.configuration.pngCompression = try value(argument)
            case "--webp-effort": options.configuration.webpEffort = try value(argument)
            case "--avif-effort": options.configuration.avifEffort = try value(argument)
            case "--progressive": options.configuration.jpegProgressive = true
            case "--max-pixels": options.configuration.maxSourcePixels = try value(argument)
            default: options.files.append(argument)
            }
        }
        return options
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[Int(p / 100 * Double(sorted.count - 1) + 0.5)]
    }

    static func format(_ value: Double, _ digits: Int = 2) -> String {
        String(format: "%.\(digits)f", value)
    }
}

/// The shared job counter and results. Sendable through its atomics and mutex.
final class Run: Sendable {
    struct Latency {
        let source: Int
        let milliseconds: Double
    }

    let total: Int
    let next = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let outputBytes = Atomic<Int>(0)
    let latencies = Mutex<[Latency]>([])

    init(total: Int) { self.total = total }

    func work(sources: [RenderBench.Source], specs: [ThumbnailSpec], thumbnailer: Thumbnailer) {
        var local: [Latency] = []
        while true {
            let job = next.wrappingAdd(1, ordering: .relaxed).oldValue
            if job >= total { break }
            let index = job % sources.count
            let start = ContinuousClock.now
            do {
                let thumbnail = try thumbnailer.render(sources[index].bytes, spec: specs[index])
                outputBytes.wrappingAdd(thumbnail.bytes.count, ordering: .relaxed)
            } catch {
                FileHandle.standardError.write("error on \(sources[index].name): \(error)\n".data(using: .utf8)!)
                errors.wrappingAdd(1, ordering: .relaxed)
            }
            local.append(Latency(source: index, milliseconds: (ContinuousClock.now - start).seconds * 1000))
        }
        latencies.withLock { $0.append(contentsOf: local) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
