// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// thumbor's `convolution`: a kernel applied as a correlation (not flipped), edges extended by copying.
    package struct Convolution: Hashable, Sendable {
        /// Row by row; `values.count` is `columns × rows`, both odd.
        package var values: [FixedDecimal]
        package var columns: Int
        /// Divides the kernel by its sum (when that is not 0).
        package var normalize: Bool

        package init(values: [FixedDecimal], columns: Int, normalize: Bool = true) {
            self.values = values
            self.columns = columns
            self.normalize = normalize
        }

        /// The longest side of a kernel.
        package static let maxSide = 11

        /// Why `values` and `columns` are not a kernel, or nil.
        package static func problem(count: Int, columns: Int) -> String? {
            guard columns >= 1, count >= 1, count % columns == 0, columns % 2 == 1, (count / columns) % 2 == 1,
                columns <= maxSide, count / columns <= maxSide
            else {
                return "a kernel needs an odd number of columns and of rows, at most \(maxSide) each"
            }
            return nil
        }
    }
}

/// `convolution=<v;v;…>,<columns>[,<normalize>]`: thumbor's convolution (every band, alpha too, as thumbor 7.8 does),
/// `normalize` 1 by default. Key ` conv=columns:v;v;…` (`:raw` when not normalised).
enum ConvolutionOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.convolution]

    static let reason = "must be V;V;…,COLUMNS[,NORMALIZE]: numbers, an odd number of columns and rows (at most 11)"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), let columns = ThumbValue.integer(String(parts[1])) else {
            throw SpecError(field: "convolution", reason: reason)
        }
        let texts = parts[0].split(separator: ";", omittingEmptySubsequences: false)
        let numbers = texts.compactMap { FixedDecimal(parsing: $0) }
        guard numbers.count == texts.count, texts.count <= 121 else {
            throw SpecError(field: "convolution", reason: reason)
        }
        let normalize = parts.count > 2 ? try ThumbValue.boolean(String(parts[2]), .convolution) : true
        values.convolution = ThumbnailSpec.Convolution(values: numbers, columns: columns, normalize: normalize)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard var convolution = values.convolution else { return }
        // A kernel whose sum is 0 is never divided by it: one plan whether or not it asks (also ``normalize(_:)``).
        if convolution.values.reduce(0, { $0 + $1.units }) == 0 { convolution.normalize = false }
        operations.convolution = convolution
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let kernel = operations.convolution else { return }
        if let problem = ThumbnailSpec.Convolution.problem(count: kernel.values.count, columns: kernel.columns) {
            throw SpecError(field: "convolution", reason: problem)
        }
    }

    /// A kernel whose sum is 0 is not divided by it.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        guard let kernel = operations.convolution, kernel.normalize else { return }
        if kernel.values.reduce(0, { $0 + $1.units }) == 0 { operations.convolution?.normalize = false }
    }

    static func text(_ kernel: ThumbnailSpec.Convolution) -> String {
        kernel.values.map(\.description).joined(separator: ";")
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let kernel = operations.convolution else { return }
        text += " conv=\(kernel.columns):\(Self.text(kernel))" + (kernel.normalize ? "" : ":raw")
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let kernel = operations.convolution else { return }
        let value = "\(Self.text(kernel)),\(kernel.columns)" + (kernel.normalize ? "" : ",0")
        fields.append(CanonicalField(.convolution, value))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let kernel = operations.convolution else { return }
        params.convolution_columns = Int32(kernel.columns)
        params.convolution_rows = Int32(kernel.values.count / kernel.columns)
        params.convolution_normalize = kernel.normalize ? 1 : 0
        withUnsafeMutableBytes(of: &params.convolution_kernel) { buffer in
            let values = buffer.bindMemory(to: Double.self)
            for (index, value) in kernel.values.prefix(values.count).enumerated() { values[index] = value.value }
        }
    }
}
