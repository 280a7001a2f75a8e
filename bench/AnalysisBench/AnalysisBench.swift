// SPDX-License-Identifier: Apache-2.0
// thumbd-analysis-bench: the time of one per-source analysis (Thumbnailer.analyse: BlurHash, ThumbHash, colours,
// palette, hashes) on a source's intermediate, on one thread, as a render thread runs it on every new source.
// bench/analysis.sh builds and runs it on scikit-image's astronaut.
//
//   THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-analysis-bench
//   .build-bench/release/thumbd-analysis-bench -n 200 [--band 512] FILE
//
// Prints per-run milliseconds (median, p10, p90, min) of the whole analysis, of its C call alone (libvips's
// miniature and grey copies, libimagequant's palette) and of the intermediate's making (a decode, for scale).
import Foundation
import Thumbnailing

@main
struct AnalysisBench {
    static func main() throws {
        var runs = 200, band = 512
        var file: String?
        var arguments = Array(CommandLine.arguments.dropFirst()).makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "-n": runs = Int(arguments.next() ?? "") ?? runs
            case "--band": band = Int(arguments.next() ?? "") ?? band
            default: file = argument
            }
        }
        guard let file else { throw BenchError(description: "usage: thumbd-analysis-bench [-n N] [--band B] FILE") }
        let source = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let thumbnailer = try Thumbnailer(vips: Vips.initialize(programName: "thumbd-analysis-bench"))
        var making: [Double] = []
        var image = try thumbnailer.analysisImage(source, band: band)
        for _ in 0..<max(5, runs / 10) {
            let start = ContinuousClock.now
            image = try thumbnailer.analysisImage(source, band: band)
            making.append((ContinuousClock.now - start).milliseconds)
        }
        var analysis = try thumbnailer.analyse(image)  // warm-up
        var whole: [Double] = [], pixels: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            analysis = try thumbnailer.analyse(image)
            whole.append((ContinuousClock.now - start).milliseconds)
        }
        for _ in 0..<runs {
            let start = ContinuousClock.now
            _ = try image.analysisPixels(paletteColours: 8)
            pixels.append((ContinuousClock.now - start).milliseconds)
        }
        print("\(file) at \(band) px, \(runs) runs; blurhash \(analysis.blurhash), thumbhash \(analysis.thumbhash)")
        print("analyse:           \(summary(whole))")
        print("  its C call:      \(summary(pixels))")
        print("intermediate made: \(summary(making))")
    }

    static func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
        return String(
            format: "median %.3f ms, p10 %.3f, p90 %.3f, min %.3f", at(0.5), at(0.1), at(0.9), sorted[0])
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
