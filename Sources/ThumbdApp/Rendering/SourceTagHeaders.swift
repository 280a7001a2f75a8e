// SPDX-License-Identifier: Apache-2.0
import HTTP1
import OriginFetch
import Synchronization

/// The source tag header (`cache.tag_header`, e.g. `Surrogate-Key` for Fastly and Varnish xkey, `Cache-Tag` for
/// Cloudflare and Akamai): the tag of a thumbnail's source (``SourceTag``), so a CDN in front can purge every size of
/// it by that tag. As `X-Thumbd-Placeholder` (``PlaceholderHeaders``), it is put in the variant's prepared fields once,
/// when the variant is made or read back from a tier below memory (disk, shared tier): a hit from memory or a hot set
/// sends the prepared fields as they are and costs nothing more. Off (no field) until the service names the header.
final class SourceTagHeaders: Sendable {
    private let name = Mutex<String?>(nil)

    init() {}

    /// Names the header (the service's start); nil or empty turns it off.
    func connect(name: String?) {
        let value = name.flatMap { $0.isEmpty ? nil : $0 }
        self.name.withLock { $0 = value }
    }

    /// Whether the header is on.
    var isOn: Bool { name.withLock { $0 != nil } }

    /// The header's name, or nil when off.
    var headerName: String? { name.withLock { $0 } }

    /// The field of a variant whose prepared fields hold the source's tag, with the request's operator `tags` after
    /// it (``AnswerOptions/tags``), or nil when off. Tags are separated as the header's readers expect: commas for the
    /// `Cache-Tag` family (Cloudflare, Akamai's `Edge-Cache-Tag`), spaces otherwise (`Surrogate-Key`: Fastly, Varnish).
    func field(in fields: PreparedFields, adding tags: [String]) -> HTTPField? {
        guard let name = headerName, let own = fields.value(named: name) else { return nil }
        let separator = name.lowercased().hasSuffix("tag") ? "," : " "
        return HTTPField(name: name, value: ([own] + tags).joined(separator: separator))
    }

    /// The field for a variant of `url`, or nil when off.
    func field(for url: SourceURL) -> HTTPField? {
        guard let name = name.withLock({ $0 }) else { return nil }
        return HTTPField(name: name, value: SourceTag.of(url))
    }

    /// The field for the canonical source URL `url` (already canonical: the prepared `/info` answers keep it so).
    func field(forCanonical url: String) -> HTTPField? {
        guard name.withLock({ $0 }) != nil, let source = try? SourceURL(url) else { return nil }
        return field(for: source)
    }
}
