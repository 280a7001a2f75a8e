// SPDX-License-Identifier: Apache-2.0
import CVipsShims

// The encoder's options. An option the explicitly asked format cannot honour is refused; under `format=auto` it
// applies when the negotiated format can. Keys ` prog=`, ` chroma=`, ` lossless`, ` avif_effort=`, ` jxl_effort=`,
// ` max_bytes=`.

extension ThumbnailSpec.Operations {
    /// Chroma subsampling.
    package enum Chroma: String, Hashable, Sendable {
        /// 4:2:0: colour at half resolution on both axes.
        case subsampled = "420"
        /// 4:4:4: colour at full resolution.
        case full = "444"
    }
}

extension OperationContext {
    /// Refuses `parameter` when the format asked by name is not one of `formats`.
    func refuse(_ parameter: ThumbParameter, unless formats: Set<ImageFormat>, _ what: String) throws(SpecError) {
        if let explicitFormat, !formats.contains(explicitFormat) {
            throw SpecError(field: parameter.rawValue, reason: "\(explicitFormat.rawValue) output has no \(what)")
        }
    }
}

/// `progressive=0|1`: progressive JPEG, interlaced PNG; absent takes the configuration's.
enum ProgressiveOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.progressive]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.progressive = try ThumbValue.boolean(text, .progressive)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.progressive = values.progressive
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.progressive != nil {
            try context.refuse(.progressive, unless: [.jpeg, .png], "progressive or interlaced mode")
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let progressive = operations.progressive { text += progressive ? " prog=1" : " prog=0" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let progressive = operations.progressive {
            fields.append(CanonicalField(.progressive, progressive ? "1" : "0"))
        }
    }

    /// Over the configuration's value, which `Thumbnailer.parameters(for:)` sets first.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        if let progressive = operations.progressive { params.jpeg_progressive = progressive ? 1 : 0 }
    }
}

/// `chroma=420|444`: JPEG and AVIF chroma subsampling.
enum ChromaOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.chroma]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        guard let chroma = ThumbnailSpec.Operations.Chroma(rawValue: text) else {
            throw SpecError(field: "chroma", reason: "must be 420 or 444")
        }
        values.chroma = chroma
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.chroma = values.chroma
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.chroma != nil {
            try context.refuse(.chroma, unless: [.jpeg, .avif], "chroma subsampling setting")
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let chroma = operations.chroma { text += " chroma=\(chroma.rawValue)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let chroma = operations.chroma { fields.append(CanonicalField(.chroma, chroma.rawValue)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.chroma {
        case nil: params.chroma = 0
        case .subsampled?: params.chroma = 1
        case .full?: params.chroma = 2
        }
    }
}

/// `lossless=1`: lossless WebP, AVIF and JPEG XL.
enum LosslessOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.lossless]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.lossless = try ThumbValue.boolean(text, .lossless)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let lossless = values.lossless { operations.lossless = lossless }
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.lossless { try context.refuse(.lossless, unless: [.webp, .avif, .jxl], "lossless mode") }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.lossless { text += " lossless" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.lossless { fields.append(CanonicalField(.lossless, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.lossless = operations.lossless ? 1 : 0
    }
}

/// `avif_effort=0...9`; absent takes the configuration's.
enum AVIFEffortOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.avif_effort]

    static let range = 0...9

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.avifEffort = try ThumbValue.integer(text, .avif_effort, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.avifEffort = values.avifEffort
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.avifEffort != nil { try context.refuse(.avif_effort, unless: [.avif], "AVIF encoder") }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let effort = operations.avifEffort { _ = try ThumbValue.checked(effort, .avif_effort, in: range) }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let effort = operations.avifEffort { text += " avif_effort=\(effort)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let effort = operations.avifEffort { fields.append(CanonicalField(.avif_effort, String(effort))) }
    }

    /// Over the configuration's value, which `Thumbnailer.parameters(for:)` sets first.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        if let effort = operations.avifEffort { params.avif_effort = Int32(effort) }
    }
}

/// `jxl_effort=3...9`; absent takes the configuration's (libvips 8.14's jxlsave refuses libjxl's efforts 1 and 2).
enum JXLEffortOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.jxl_effort]

    static let range = 3...9

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.jxlEffort = try ThumbValue.integer(text, .jxl_effort, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.jxlEffort = values.jxlEffort
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.jxlEffort != nil { try context.refuse(.jxl_effort, unless: [.jxl], "JPEG XL encoder") }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let effort = operations.jxlEffort { _ = try ThumbValue.checked(effort, .jxl_effort, in: range) }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let effort = operations.jxlEffort { text += " jxl_effort=\(effort)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let effort = operations.jxlEffort { fields.append(CanonicalField(.jxl_effort, String(effort))) }
    }

    /// Over the configuration's value, which `Thumbnailer.parameters(for:)` sets first.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        if let effort = operations.jxlEffort { params.jxl_effort = Int32(effort) }
    }
}

/// `max_bytes=1024...100000000`: lossy output is encoded again at lower qualities (down to
/// ``ThumbnailSpec/Operations/maxBytesQualityFloor``) until it fits.
enum MaxBytesOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.max_bytes]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.maxBytes = try ThumbValue.integer(text, .max_bytes, within: ThumbnailSpec.Operations.maxBytesRange)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.maxBytes = values.maxBytes
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        guard operations.maxBytes != nil else { return }
        try context.refuse(.max_bytes, unless: [.jpeg, .webp, .avif, .jxl], "quality to lower")
        // `lossless` is built before (query order), so its value is known here.
        if operations.lossless {
            throw SpecError(field: "max_bytes", reason: "lossless output has no quality to lower")
        }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let maxBytes = operations.maxBytes {
            _ = try ThumbValue.checked(maxBytes, .max_bytes, in: ThumbnailSpec.Operations.maxBytesRange)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let maxBytes = operations.maxBytes { text += " max_bytes=\(maxBytes)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let maxBytes = operations.maxBytes { fields.append(CanonicalField(.max_bytes, String(maxBytes))) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.max_bytes = Int64(operations.maxBytes ?? 0)
        params.min_quality = Int32(ThumbnailSpec.Operations.maxBytesQualityFloor)
    }
}
