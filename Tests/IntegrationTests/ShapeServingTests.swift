// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

extension Integration {
    /// Sources of every shape through `/thumb`: a one-pixel strip answers 200 in every fit (it was a 500 once the
    /// intermediate's box averaging shrank its one column to nothing), and random shapes and plans answer 200 or a
    /// documented 422, never a 5xx. Sources are flat colours encoded by libvips at test time (`FlatImage`).
    @Suite(.timeLimit(.minutes(2))) struct ShapeServingTests {
        /// A 1 x 10000 strip's output in a 200 x 200 box, as (across, along) the strip; `nil`: a 422.
        static func expected(_ fit: String, enlarge: Bool, tall: Bool) -> (across: Int, along: Int)? {
            switch fit {
            case "contain": (1, 200)
            case "pad": (200, 200)
            case "cover": enlarge ? (200, 200) : (1, 200)
            case "fill": enlarge ? (200, 200) : (1, 1)
            case "outside": enlarge ? nil : (1, 10_000)
            default: expected(tall ? "contain" : "cover", enlarge: enlarge, tall: tall)  // auto
            }
        }

        @Test(arguments: [true, false])
        func stripsAnswer200InEveryFit(tall: Bool) async throws {
            let harness = try Harness.shared()
            for encoding in [FlatImage.Encoding.png, .jpeg] {
                // Given a one-pixel strip 10,000 pixels long, as PNG and as JPEG
                let path = "/shapes/strip-\(tall ? "tall" : "wide").\(encoding.rawValue)"
                let source = try FlatImage.make(width: tall ? 1 : 10_000, height: tall ? 10_000 : 1, as: encoding)
                harness.origin.route(path, .ok(source, contentType: "image/\(encoding.rawValue)"))
                for fit in ["contain", "cover", "fill", "pad", "outside", "auto"] {
                    for enlarge in [false, true] {
                        // When it is asked for in a 200 x 200 box
                        let parameters = "w=200&h=200&fit=\(fit)&enlarge=\(enlarge ? 1 : 0)&format=png"
                        let response = try await harness.request(harness.thumbTarget(path, parameters))
                        // Then it answers 200 at the fit's size; only an enlarged outside fit (200 x 2,000,000)
                        // is a 422
                        guard let expected = Self.expected(fit, enlarge: enlarge, tall: tall) else {
                            expectJSONError(response, status: 422, mentioning: "output has too many pixels")
                            continue
                        }
                        #expect(response.status == 200, "\(path) \(parameters): \(response.text)")
                        guard response.status == 200 else { continue }
                        let image = try response.image()
                        let size = tall ? (image.width, image.height) : (image.height, image.width)
                        #expect(size == (expected.across, expected.along), "\(path) \(parameters)")
                    }
                }
            }
        }

        // MARK: - Random shapes and plans

        /// The 422s a valid plan may meet on a legal source (docs/api.md); anything else fails the test.
        static let documentedRefusals = [
            "output has too many pixels", "crop region lies outside the image", "source has too many pixels",
            "trim cannot run on an animation (add animated=0)",
        ]

        @Test func randomShapesAndPlansAnswer200Or422() async throws {
            let seed = ProcessInfo.processInfo.environment["THUMBD_SHAPES_SEED"].flatMap { UInt64($0) } ?? 20_251_127
            print("ShapeServingTests: seed \(seed) (THUMBD_SHAPES_SEED=\(seed) repeats this run)")
            var random = SplitMix64(seed: seed)
            // A limit of 8 M pixels bounds every render's cost (enlarged outputs are refused above it).
            let harness = try Harness(["image.max_source_pixels": "8000000"])
            var statuses: [Int: Int] = [:]
            defer { print("ShapeServingTests: statuses \(statuses.sorted { $0.key < $1.key })") }
            for index in 0..<200 {
                // Given a source of a random shape and a random valid plan
                let source = RandomSource(using: &random)
                let plan = RandomPlan(for: source, using: &random)
                let path = "/random/\(seed)/\(index).\(source.encoding.rawValue)"
                harness.origin.route(path, .ok(try source.bytes(), contentType: "image/\(source.encoding.rawValue)"))
                // When it is asked for
                let response = try await harness.request(harness.thumbTarget(path, plan.query))
                // Then it is a 200 within the box (each side at least one pixel), or a documented 422
                let label = "case \(index): \(source) \(plan.query)"
                statuses[response.status, default: 0] += 1
                if response.status == 200 {
                    let image = try response.image()
                    #expect(image.width >= 1 && image.height >= 1, "\(label): \(image.width)x\(image.height)")
                    if let bound = plan.bound {
                        #expect(
                            image.width <= bound.width && image.height <= bound.height,
                            "\(label): \(image.width)x\(image.height)")
                    }
                    if let exact = plan.exact {
                        #expect(
                            image.width == exact.width && image.height == exact.height,
                            "\(label): \(image.width)x\(image.height)")
                    }
                } else {
                    #expect(response.status == 422, "\(label): \(response.status) \(response.text)")
                    let refusal = response.jsonError?.error ?? response.text
                    #expect(Self.documentedRefusals.contains(refusal), "\(label): \(refusal)")
                }
            }
        }
    }
}

/// A flat source of a random shape: often a strip one to three pixels thin, else each side 1...2000 (uniform in
/// its logarithm, so small and large are both common); PNG, JPEG, PNG with alpha, or a two-frame GIF.
struct RandomSource: CustomStringConvertible {
    let width: Int
    let height: Int
    let encoding: FlatImage.Encoding
    let alpha: Bool
    let frames: Int

    init(using random: inout SplitMix64) {
        func side() -> Int { Int(pow(10, Double.random(in: 0...3.3, using: &random)).rounded()) }
        var width = side()
        var height = side()
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1: width = Int.random(in: 1...3, using: &random)
        case 2, 3: height = Int.random(in: 1...3, using: &random)
        default: break
        }
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<8: (encoding, alpha, frames) = (.png, false, 1)
        case 8..<14: (encoding, alpha, frames) = (.jpeg, false, 1)
        case 14..<17: (encoding, alpha, frames) = (.png, true, 1)
        default:
            // Animations resize whole frames before their crop: kept small so an enlarged one stays quick.
            (encoding, alpha, frames) = (.gif, false, 2)
            (width, height) = (min(width, 400), min(height, 400))
        }
        (self.width, self.height) = (width, height)
    }

    func bytes() throws -> [UInt8] {
        try FlatImage.make(width: width, height: height, as: encoding, frames: frames, alpha: alpha)
    }

    var description: String {
        "\(width)x\(height) \(encoding)\(alpha ? "+alpha" : "")\(frames > 1 ? " x\(frames)" : "")"
    }
}

/// A random valid `/thumb` plan for a source: box (one side may be missing), fit, enlarge, gravity, crop, trim,
/// rotation, padding, dpr and output format, with the output's bound where the fit has one.
struct RandomPlan {
    var query: String
    /// The largest output (box plus padding), except for `outside`, which overflows the box.
    var bound: (width: Int, height: Int)?
    /// The output exactly (`pad` extends to the box).
    var exact: (width: Int, height: Int)?

    init(for source: RandomSource, using random: inout SplitMix64) {
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        func boxSide() -> Int { Int(pow(10, Double.random(in: 0...3, using: &random)).rounded()) }
        var width: Int? = chance(80) ? boxSide() : nil
        let height: Int? = width == nil || chance(70) ? boxSide() : nil
        if width == nil && height == nil { width = boxSide() }
        let fit = ["contain", "cover", "fill", "pad", "outside", "auto"].randomElement(using: &random)!
        let dpr = chance(10) ? 2 : 1
        let padding = chance(15) ? Int.random(in: 1...20, using: &random) : 0
        var parts = ["fit=\(fit)"]
        if let width { parts.append("w=\(width)") }
        if let height { parts.append("h=\(height)") }
        if chance(35) { parts.append("enlarge=1") }
        if dpr > 1 { parts.append("dpr=\(dpr)") }
        if padding > 0 { parts.append("padding=\(padding)") }
        if chance(20) {
            let gravity = ["north", "southeast", "west", "attention", "entropy", "fp:0.2,0.8"].randomElement(
                using: &random)!
            parts.append("gravity=\(gravity)")
        }
        if chance(20) { parts.append("rotate=\([90, 180, 270].randomElement(using: &random)!)") }
        if chance(25) {
            if chance(50) {
                let left = Int.random(in: 0...source.width + 5, using: &random)
                let top = Int.random(in: 0...source.height + 5, using: &random)
                let cropWidth = Int.random(in: 1...source.width, using: &random)
                let cropHeight = Int.random(in: 1...source.height, using: &random)
                parts.append("crop=\(left),\(top),\(cropWidth),\(cropHeight)")
            } else {
                let left = Int.random(in: 0...99, using: &random)
                let top = Int.random(in: 0...99, using: &random)
                func size(_ start: Int) -> Int { Int.random(in: 1...100 - start, using: &random) }
                func fraction(_ hundredths: Int) -> String {
                    String(format: "%d.%02d", hundredths / 100, hundredths % 100)
                }
                parts.append(
                    "crop=\(fraction(left)),\(fraction(top)),\(fraction(size(left))),\(fraction(size(top)))")
            }
        }
        if chance(10) { parts.append("trim=10") }
        if chance(5) { parts.append("blur=2") }
        if chance(5) { parts.append("pixelate=4") }
        parts.append("format=\(["png", "jpeg", "webp", "gif"].randomElement(using: &random)!)")
        query = parts.joined(separator: "&")
        // A missing side is bounded by the largest box side; `outside` overflows the box.
        let boxWidth = (width ?? 4096 / dpr) * dpr, boxHeight = (height ?? 4096 / dpr) * dpr
        let frame = 2 * padding * dpr
        if fit != "outside" { bound = (boxWidth + frame, boxHeight + frame) }
        if fit == "pad", width != nil, height != nil { exact = (boxWidth + frame, boxHeight + frame) }
    }
}
