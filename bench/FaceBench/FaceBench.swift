// SPDX-License-Identifier: Apache-2.0
// thumbd-face-bench: the time of one detection (FaceDetector.detect: the grey pixels, the cascade's faces and good
// features to track) on a source's intermediate, on one thread, as a render thread runs it. bench/face-detection.sh
// builds and runs it on scikit-image's astronaut.
//
//   THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-face-bench
//   .build-bench/release/thumbd-face-bench -n 50 [--band 512] [--face-side 0] [--cascade PATH] FILE
//
// Prints per-run milliseconds (median, p10, p90, min) of the whole detection, of the faces alone (maxFeatures 0)
// and of the intermediate's making (decode, for scale), the CPU milliseconds per detection, and one
// `RESULT_JSON {...}` line on stdout.
import Foundation
import Thumbnailing

@main
struct FaceBench {
    static func main() throws {
        var runs = 50, band = 512, faceSide = 0
        var cascade = FaceDetector.Configuration.defaultCascadePath
        var file: String?
        var arguments = Array(CommandLine.arguments.dropFirst()).makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "-n": runs = Int(arguments.next() ?? "") ?? runs
            case "--band": band = Int(arguments.next() ?? "") ?? band
            case "--face-side": faceSide = Int(arguments.next() ?? "") ?? faceSide
            case "--cascade": cascade = arguments.next() ?? cascade
            default: file = argument
            }
        }
        guard let file else { throw BenchError(description: "usage: thumbd-face-bench [-n N] [--band B] FILE") }
        let source = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let thumbnailer = try Thumbnailer(vips: Vips.initialize(programName: "thumbd-face-bench"))
        let detector = try FaceDetector(configuration: .init(cascadePath: cascade, faceSide: faceSide))
        let facesOnly = try FaceDetector(configuration: .init(cascadePath: cascade, faceSide: faceSide, maxFeatures: 0))

        var making: [Double] = []
        var image = try thumbnailer.analysisImage(source, band: band)
        for _ in 0..<max(5, runs / 5) {
            let start = ContinuousClock.now
            image = try thumbnailer.analysisImage(source, band: band)
            making.append((ContinuousClock.now - start).milliseconds)
        }
        // Warm-up: the first detection on a thread loads its cascade.
        var regions = try detector.detect(in: image)
        _ = try facesOnly.detect(in: image)
        var whole: [Double] = [], faces: [Double] = []
        let cpuBefore = threadCPUMilliseconds()
        for _ in 0..<runs {
            let start = ContinuousClock.now
            regions = try detector.detect(in: image)
            whole.append((ContinuousClock.now - start).milliseconds)
        }
        let cpu = (threadCPUMilliseconds() - cpuBefore) / Double(runs)
        for _ in 0..<runs {
            let start = ContinuousClock.now
            _ = try facesOnly.detect(in: image)
            faces.append((ContinuousClock.now - start).milliseconds)
        }
        let grey = try image.greyPixels()
        func line(_ name: String, _ values: [Double]) -> String {
            let sorted = values.sorted()
            return "  \(name): median \(format(percentile(sorted, 50))) p10 \(format(percentile(sorted, 10))) "
                + "p90 \(format(percentile(sorted, 90))) min \(format(sorted.first ?? 0)) ms"
        }
        FileHandle.standardError.write(
            Data(
                ("""
                thumbd FaceDetector, \((cascade as NSString).lastPathComponent), \(runs) runs on a \(grey.width)x\
                \(grey.height) intermediate of \((file as NSString).lastPathComponent): \(regions.faces.count) face(s) \
                \(regions.faces.map { "\($0.x),\($0.y) \($0.width)x\($0.height)" }), \(regions.features.count) features
                """ + "\n" + line("detection (grey + faces + features)", whole) + "; CPU \(format(cpu)) ms\n"
                    + line("faces alone (grey + faces)", faces) + "\n"
                    + line("intermediate (decode, for scale)", making) + "\n").utf8))
        let sortedWhole = whole.sorted(), sortedFaces = faces.sorted()
        print(
            "RESULT_JSON {\"cascade\":\"\((cascade as NSString).lastPathComponent)\",\"runs\":\(runs),"
                + "\"width\":\(grey.width),\"height\":\(grey.height),\"faces\":\(regions.faces.count),"
                + "\"median_ms\":\(format(percentile(sortedWhole, 50), 3)),"
                + "\"p90_ms\":\(format(percentile(sortedWhole, 90), 3)),"
                + "\"faces_median_ms\":\(format(percentile(sortedFaces, 50), 3)),"
                + "\"cpu_ms\":\(format(cpu, 3))}")
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p / 100).rounded()))]
    }

    static func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

    /// CPU time of the calling thread (OpenCV runs on it; its own threads are off).
    static func threadCPUMilliseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1e6
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
