// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// thumbor's `curve`: four point lists, each made a 256-level table by natural cubic spline interpolation; each
    /// colour band goes through its own table, then through the first ("all channels") one.
    package struct Curve: Hashable, Sendable {
        /// One list: points with x strictly increasing, x and y 0...255.
        package typealias Points = [Point]

        package struct Point: Hashable, Sendable {
            package var x: Int
            package var y: Int

            package init(_ x: Int, _ y: Int) {
                self.x = x
                self.y = y
            }
        }

        package var all: Points
        package var red: Points
        package var green: Points
        package var blue: Points

        package init(all: Points, red: Points, green: Points, blue: Points) {
            self.all = all
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// The most points in one list.
        package static let maxPoints = 64

        /// Why `points` is not a list thumbd takes, or nil.
        package static func problem(_ points: Points) -> String? {
            guard (1...maxPoints).contains(points.count),
                points.allSatisfy({ (0...255).contains($0.x) && (0...255).contains($0.y) }),
                zip(points, points.dropFirst()).allSatisfy({ $0.x < $1.x })
            else {
                return "each list needs 1…\(maxPoints) points x:y, 0…255, x increasing"
            }
            return nil
        }

        /// The 256-level table of `points`, computed as thumbor's `_curve.c` computes it: the second derivatives of
        /// a natural spline (a tridiagonal system, solved forward then backward), each level between two points
        /// rounded and clamped, the first point's y before it and the last point's y from it on.
        package static func table(_ points: Points) -> [UInt8] {
            let n = points.count
            var table = [UInt8](repeating: UInt8(points[0].y), count: 256)
            let x = points.map { Double($0.x) }
            let y = points.map { Double($0.y) }
            var lower = [Double](repeating: 0, count: n)
            var diagonal = [Double](repeating: 0, count: n)
            var upper = [Double](repeating: 0, count: n)
            var result = [Double](repeating: 0, count: n)
            diagonal[0] = 1
            diagonal[n - 1] = 1
            if n > 2 {
                for i in 1..<(n - 1) {
                    lower[i] = (x[i] - x[i - 1]) / 6
                    diagonal[i] = (x[i + 1] - x[i - 1]) / 3
                    upper[i] = (x[i + 1] - x[i]) / 6
                    result[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1])
                }
            }
            if n > 1 {
                for i in 1..<n {
                    let k = lower[i] / diagonal[i - 1]
                    diagonal[i] -= k * upper[i - 1]
                    lower[i] = 0
                    result[i] -= k * result[i - 1]
                }
                for i in stride(from: n - 2, through: 0, by: -1) {
                    let k = upper[i] / diagonal[i + 1]
                    diagonal[i] -= k * lower[i + 1]
                    upper[i] = 0
                    result[i] -= k * result[i + 1]
                }
            }
            let second = (0..<n).map { result[$0] / diagonal[$0] }
            for i in 0..<max(0, n - 1) {
                let h = x[i + 1] - x[i]
                for level in points[i].x..<points[i + 1].x {
                    let t = (Double(level) - x[i]) / h
                    let a = 1 - t
                    let b = t
                    let value =
                        a * y[i] + b * y[i + 1] + (h * h / 6)
                        * ((a * a * a - a) * second[i] + (b * b * b - b) * second[i + 1])
                    table[level] = UInt8(min(255, max(0, value.rounded())))
                }
            }
            for level in points[n - 1].x..<256 { table[level] = UInt8(points[n - 1].y) }
            return table
        }
    }
}

/// `curve=<all>|<red>|<green>|<blue>`, each list `x:y,x:y,…`: thumbor's curve (an alpha band unchanged). Key
/// ` curve=…` as the query writes it.
enum CurveOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.curve]

    static let reason = "must be four lists ALL|RED|GREEN|BLUE of x:y points, 0…255, x increasing"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let lists = text.split(separator: "|", omittingEmptySubsequences: false).map { list in
            list.split(separator: ",", omittingEmptySubsequences: false).compactMap {
                pair -> ThumbnailSpec.Curve.Point? in
                let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2, let x = ThumbValue.integer(String(parts[0])),
                    let y = ThumbValue.integer(String(parts[1]))
                else { return nil }
                return ThumbnailSpec.Curve.Point(x, y)
            }
        }
        let counts = text.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.split(separator: ",", omittingEmptySubsequences: false).count
        }
        guard lists.count == 4, lists.map(\.count) == counts else { throw SpecError(field: "curve", reason: reason) }
        values.curve = ThumbnailSpec.Curve(all: lists[0], red: lists[1], green: lists[2], blue: lists[3])
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let curve = values.curve { operations.curve = curve }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let curve = operations.curve else { return }
        for points in [curve.all, curve.red, curve.green, curve.blue] {
            if let problem = ThumbnailSpec.Curve.problem(points) { throw SpecError(field: "curve", reason: problem) }
        }
    }

    static func text(_ curve: ThumbnailSpec.Curve) -> String {
        [curve.all, curve.red, curve.green, curve.blue].map { points in
            points.map { "\($0.x):\($0.y)" }.joined(separator: ",")
        }.joined(separator: "|")
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let curve = operations.curve { text += " curve=" + Self.text(curve) }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let curve = operations.curve { fields.append(CanonicalField(.curve, Self.text(curve))) }
    }

    /// The step gets one table per colour band: the band's own, then the first list's.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let curve = operations.curve else { return }
        let all = ThumbnailSpec.Curve.table(curve.all)
        let bands = [curve.red, curve.green, curve.blue].map(ThumbnailSpec.Curve.table)
        params.curve = 1
        withUnsafeMutableBytes(of: &params.curve_table) { buffer in
            for level in 0..<256 {
                for band in 0..<3 { buffer[level * 3 + band] = all[Int(bands[band][level])] }
            }
        }
    }
}
