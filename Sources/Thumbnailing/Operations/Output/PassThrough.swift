// SPDX-License-Identifier: Apache-2.0
import CVipsShims

// The source's own bytes instead of a render (imgproxy's `raw` and `skip_processing`): the render reads the header
// and checks it as any source's (an allowed format found by its loader, the pixel limit, the frame limits of a source
// of several frames), then answers a copy of the bytes as they came, in the format found (jobs/pass_through.c). The
// decision is the render's, made once the source is read, so the variant key is the normalised request: one picture,
// one key, cached in every tier as a rendered one is.

extension ThumbnailSpec {
    /// The spec of every `raw=1` request, whatever else the plan said (the parsers refuse a picture parameter beside
    /// it): a box of the largest side, `contain`, no quality, `auto` negotiating nothing, so that the key is the
    /// source's alone (`v1 w=4096 h=4096 fit=contain g=centre q=- up=0 f=auto raw <url>`).
    package static let raw: ThumbnailSpec = {
        var operations = Operations()
        operations.raw = true
        return ThumbnailSpec(
            validatedWidth: maxDimension, height: maxDimension, fit: .contain, gravity: .centre, quality: nil,
            enlarge: false, format: .auto(accepting: []), focalPoint: nil, operations: operations)
    }()
}

extension ThumbnailSpec {
    /// A set of source formats held in one byte, one bit per ``ImageFormat`` case: it is part of every spec, so it
    /// adds no storage whose references a copy would count.
    package struct SourceFormats: Hashable, Sendable, ExpressibleByArrayLiteral {
        private var bits: UInt8 = 0

        package init(_ formats: some Sequence<ImageFormat>) {
            for format in formats { bits |= Self.bit(format) }
        }

        package init(arrayLiteral formats: ImageFormat...) { self.init(formats) }

        private static func bit(_ format: ImageFormat) -> UInt8 {
            1 << UInt8(ImageFormat.allCases.firstIndex(of: format) ?? 0)
        }

        package var isEmpty: Bool { bits == 0 }

        package func contains(_ format: ImageFormat) -> Bool { bits & Self.bit(format) != 0 }

        /// The formats, in ``ImageFormat``'s order.
        package var formats: [ImageFormat] { ImageFormat.allCases.filter(contains) }
    }
}

/// `raw=1`: the source's own bytes, after the checks every source passes. Key ` raw`. Only in ``ThumbnailSpec/raw``
/// (``Thumbnailer/normalized(_:)`` makes it so): URLForms refuses a picture parameter beside it, by name.
enum RawOperation: FlagOperation {
    static let parameter = ThumbParameter.raw
    static var value: WritableKeyPath<PlanValues, Bool?> { \.raw }
    static var operation: WritableKeyPath<ThumbnailSpec.Operations, Bool> { \.raw }
    static let token = "raw"

    static func fill(_ on: Bool, into params: inout ThumbdVipsThumbnailParams) { params.pass_through = on ? 1 : 0 }

    /// The source's own bytes would show every face: not beside `redact` (URLForms refuses it by name first; this
    /// holds for a plan built in code).
    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if operations.raw && operations.redact != nil {
            throw SpecError(field: "raw", reason: "not with redact (the source's own bytes would be answered)")
        }
    }
}

/// `skip=jpeg,png,…`: a source in a listed format is answered as `raw=1` answers it when the output format is
/// `auto` or that same format (imgproxy's `skip_processing`); any other source is rendered. Names: `jpeg` (`jpg`),
/// `png`, `webp`, `avif`, `gif`, `tiff` (`tif`), `heif` (`heic`). Key ` skip=jpeg,png` (``ImageFormat``'s order).
/// With a format asked by name, ``Thumbnailer/normalized(_:)`` keeps that format only (the others can never apply).
enum SkipProcessingOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.skip]

    /// The names `skip` reads.
    static let names: [String: ImageFormat] = [
        "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "webp": .webp, "avif": .avif, "gif": .gif, "tiff": .tiff,
        "tif": .tiff, "heif": .heif, "heic": .heif,
    ]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        var formats = Set<ImageFormat>()
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let format = names[String(name)] else {
                throw SpecError(field: "skip", reason: "must be source formats: jpeg, png, webp, avif, gif, tiff, heif")
            }
            formats.insert(format)
        }
        values.skipProcessing = formats
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let formats = values.skipProcessing { operations.skipProcessing = ThumbnailSpec.SourceFormats(formats) }
    }

    /// A skipped source would be answered as it came, its faces shown: not beside `redact`.
    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if operations.redact != nil && !operations.skipProcessing.isEmpty {
            throw SpecError(field: "skip", reason: "not with redact (a skipped source would be answered unredacted)")
        }
    }

    /// `jpeg,png`: the listed formats in ``ImageFormat``'s order.
    static func text(_ formats: ThumbnailSpec.SourceFormats) -> String {
        formats.formats.map(\.rawValue).joined(separator: ",")
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if !operations.skipProcessing.isEmpty { text += " skip=" + Self.text(operations.skipProcessing) }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if !operations.skipProcessing.isEmpty {
            fields.append(CanonicalField(.skip, Self.text(operations.skipProcessing)))
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.skip_formats = operations.skipProcessing.formats.reduce(0) { $0 | (1 << $1.vipsFormat.rawValue) }
    }
}
