// SPDX-License-Identifier: Apache-2.0
package import FoundationEssentials

/// An image format thumbd reads (all cases) or writes (`isEncodable`).
package enum ImageFormat: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case jpeg
    case png
    case webp
    case avif
    case gif
    case tiff
    case heif
    case jxl

    /// The media type for `Content-Type`.
    package var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .gif: "image/gif"
        case .tiff: "image/tiff"
        case .heif: "image/heif"
        case .jxl: "image/jxl"
        }
    }

    /// The usual file extension, without the dot.
    package var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        default: rawValue
        }
    }

    /// Whether thumbd can write thumbnails in this format (AVIF also needs `Vips.canSaveAVIF`, JPEG XL
    /// `Vips.canSaveJXL`, HEIF `Vips.canSaveHEIC`). JPEG XL is written only: its loader stays blocked. HEIF is
    /// written as HEIC (HEVC), only when the configuration allows it (`image.heic_output`).
    package var isEncodable: Bool {
        switch self {
        case .jpeg, .png, .webp, .avif, .gif, .jxl, .heif: true
        case .tiff: false
        }
    }

    /// The lowercase name, e.g. `jpeg`.
    package var description: String { rawValue }

    /// The format whose media type is `mimeType` (case-insensitive, parameters ignored), e.g. from an
    /// `Accept` entry. `image/jpg` and `image/heic` are accepted as aliases.
    package init?(mimeType: some StringProtocol) {
        let bare = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let type = String(bare.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            .lowercased()
        switch type {
        case "image/jpeg", "image/jpg": self = .jpeg
        case "image/png": self = .png
        case "image/webp": self = .webp
        case "image/avif": self = .avif
        case "image/gif": self = .gif
        case "image/tiff": self = .tiff
        case "image/heif", "image/heic": self = .heif
        case "image/jxl": self = .jxl
        default: return nil
        }
    }

    /// Detects the format from the first bytes (magic numbers), without libvips. A quick sniff for callers
    /// that want one before rendering; `Thumbnailer` itself trusts libvips's loaders.
    package init?(detecting source: some ContiguousBytes) {
        guard let format = source.withUnsafeBytes({ ImageFormat.sniff($0) }) else { return nil }
        self = format
    }

    static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        func matches(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            return prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
        }
        if matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if matches(Array("GIF87a".utf8)) || matches(Array("GIF89a".utf8)) { return .gif }
        if matches(Array("RIFF".utf8)) && matches(Array("WEBP".utf8), at: 8) { return .webp }
        if matches([0x49, 0x49, 0x2A, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2A])
            || matches([0x49, 0x49, 0x2B, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2B])
        {
            return .tiff
        }
        if matches(Array("ftyp".utf8), at: 4) { return sniffISOBMFF(bytes) }
        return nil
    }

    /// HEIF and AVIF share the ISO base media container: the `ftyp` box's brands tell them apart.
    private static func sniffISOBMFF(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        let declared = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        let boxEnd = min(bytes.count, max(declared, 12))
        var brands: [String] = []
        // Major brand at 8, minor version at 12, compatible brands from 16 to the end of the box.
        for offset in stride(from: 8, to: boxEnd - 3, by: 4) where offset != 12 {
            brands.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 4]), as: UTF8.self))
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]
        if brands.contains(where: heifBrands.contains) { return .heif }
        return nil
    }
}
