// SPDX-License-Identifier: Apache-2.0
import Caching
package import OriginFetch
package import Thumbnailing

/// What identifies one thumbnail: the canonical source URL and the normalised spec (which carries
/// the negotiated set of accepted formats under `format=auto`). The key of render coalescing and of
/// both cache tiers (through ``cacheKey``).
package struct VariantKey: Hashable, Sendable {
    let source: SourceURL
    let spec: ThumbnailSpec
    /// The key of both cache tiers: ``description(source:spec:)`` hashed once.
    let cacheKey: CacheKey

    init(source: SourceURL, spec: ThumbnailSpec) {
        self.source = source
        self.spec = spec
        cacheKey = CacheKey(Self.description(source: source, spec: spec))
    }

    /// What a purge removes together: every variant of this key's source.
    var group: CacheGroup { CacheGroup(source.string) }

    /// Equal when the canonical descriptions are (which encode source and spec one to one).
    package static func == (lhs: VariantKey, rhs: VariantKey) -> Bool { lhs.cacheKey == rhs.cacheKey }

    /// Feeds the precomputed 64-bit hash only.
    package func hash(into hasher: inout Hasher) { hasher.combine(cacheKey.hash) }

    /// `v1 w=256 h=- fit=cover g=attention q=- up=0 f=auto+webp+avif <source URL>`: every output parameter,
    /// in fixed order and spelling, then the URL last, so that no URL can imitate another key's fields.
    /// The `v1` prefix versions the scheme: a change of renderer output can move to `v2` and leave the old
    /// entries to eviction. `q=-` means the configured default quality.
    package static func description(source: SourceURL, spec: ThumbnailSpec) -> String {
        var text = "v1 w="
        text += spec.width.map(String.init) ?? "-"
        text += " h="
        text += spec.height.map(String.init) ?? "-"
        text += " fit="
        text += spec.fit.rawValue
        text += " g="
        if let focalPoint = spec.focalPoint {
            text += focalPoint.text
        } else {
            text += spec.gravity.rawValue
        }
        text += " q="
        text += spec.quality.map(String.init) ?? "-"
        text += spec.enlarge ? " up=1 f=" : " up=0 f="
        switch spec.format {
        case .exactly(let format):
            text += format.fileExtension
        case .auto(let accepting):
            text += "auto"
            if accepting.contains(.webp) { text += "+webp" }
            if accepting.contains(.avif) { text += "+avif" }
        }
        if spec.operations != ThumbnailSpec.Operations() { text += operationsDescription(spec.operations) }
        text += " "
        text += source.string
        return text
    }

    /// ` wm=n:<name>:<digest>,<position>,<x>,<y>,<opacity>,<scale>` for a named watermark (the digest of its
    /// file, so a replaced file makes new keys), ` wm=u:<length>:<url>,…` for one from a URL (the length
    /// first, so that no URL can end early and imitate the fields after it).
    private static func watermarkDescription(_ watermark: ThumbnailSpec.Watermark) -> String {
        var text = " wm="
        switch watermark.image {
        case .named(let name, let digest): text += "n:\(name):" + String(digest, radix: 16)
        case .url(let url): text += "u:\(url.utf8.count):\(url)"
        }
        switch watermark.position {
        case .tile: text += ",tile"
        case .gravity(let gravity): text += ",\(gravity.rawValue)"
        }
        text += ",\(watermark.offsetX),\(watermark.offsetY),\(watermark.opacity),\(watermark.scale)"
        return text
    }

    /// ` still ao=0 o=90m adaptive trim=10,ffffff crop=px:… bri=… con=… sat=… grey blur=… sharpen=… pixelate=… pad=t,r,b,l
    /// wm=… bg=… kcr icc=keep prog=… chroma=… lossless avif_effort=… max_bytes=…`: only the steps that do something, in the order they run. A plain resize adds nothing, so its
    /// key is the one it had before the pipeline existed.
    private static func operationsDescription(_ operations: ThumbnailSpec.Operations) -> String {
        var text = ""
        if !operations.animated { text += " still" }
        if !operations.autoOrient { text += " ao=0" }
        if operations.orientation != .none {
            text += " o=\(operations.orientation.degrees)"
            if operations.orientation.mirrored { text += "m" }
        }
        if operations.adaptive { text += " adaptive" }
        if let trim = operations.trim {
            text += " trim=\(trim.threshold)"
            if let colour = trim.colour { text += ",\(colour)" }
            if trim.corner != .topLeft { text += ",\(trim.corner.rawValue)" }
        }
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            text += " crop=px:\(left),\(top),\(width),\(height)"
        case .fractions(let left, let top, let width, let height)?:
            text += " crop=fr:\(left),\(top),\(width),\(height)"
        }
        if operations.brightness != 0 { text += " bri=\(operations.brightness)" }
        if operations.contrast != .one { text += " con=\(operations.contrast)" }
        if operations.saturation != .one { text += " sat=\(operations.saturation)" }
        if operations.greyscale { text += " grey" }
        if operations.blur != .zero { text += " blur=\(operations.blur)" }
        if operations.sharpen != .zero { text += " sharpen=\(operations.sharpen)" }
        if operations.pixelate != 0 { text += " pixelate=\(operations.pixelate)" }
        if operations.padding != .zero {
            text += " pad=" + operations.padding.sides.map(String.init).joined(separator: ",")
        }
        if let watermark = operations.watermark { text += watermarkDescription(watermark) }
        if let background = operations.background { text += " bg=\(background)" }
        if operations.keepCopyright { text += " kcr" }
        if operations.keepColourProfile { text += " icc=keep" }
        if let progressive = operations.progressive { text += progressive ? " prog=1" : " prog=0" }
        if let chroma = operations.chroma { text += " chroma=\(chroma.rawValue)" }
        if operations.lossless { text += " lossless" }
        if let effort = operations.avifEffort { text += " avif_effort=\(effort)" }
        if let maxBytes = operations.maxBytes { text += " max_bytes=\(maxBytes)" }
        return text
    }
}
