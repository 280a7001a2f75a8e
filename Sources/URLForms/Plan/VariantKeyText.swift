// SPDX-License-Identifier: Apache-2.0
package import OriginFetch
package import Thumbnailing

/// The text of what identifies one thumbnail: the canonical source URL and the normalised spec (which carries the
/// negotiated set of accepted formats under `format=auto`). The app's `VariantKey` (the key of render coalescing and
/// of both cache tiers) is this text hashed; it lives here so that the parsers' fuzz targets check it without the app.
package enum VariantKeyText {
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
            if accepting.contains(.jxl) { text += "+jxl" }
        }
        // Each operation's descriptor writes its own token, in the order the steps run; a plain resize adds
        // nothing, so its key is the one it had before the pipeline existed.
        if spec.operations != ThumbnailSpec.Operations() { spec.operations.appendKey(to: &text) }
        text += " "
        text += source.string
        return text
    }
}
