// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch
import ThumbdSettings

/// Turns an origin response's caching headers into cache deadlines, as a shared cache (RFC 9111) whose
/// operator clamps every lifetime into `[minTTL, maxTTL]`.
///
/// Pure: no clock (the caller passes the receive time), no I/O, so it is tested with fixed instants.
///
/// The rules, in order:
/// 1. `no-store` or `private` (also `private="field"`, conservatively) → not stored (``decide(_:receivedAt:)``).
/// 2. Freshness lifetime (RFC 9111 §4.2.1): `no-cache` (also `no-cache="field"`) → 0; else `s-maxage`; else
///    `max-age`; else `Expires` − `Date` (`Date` absent or invalid → the receive time; an invalid `Expires`
///    such as `0` means already expired, lifetime 0, §5.3); else `defaultTTL`.
/// 3. The lifetime is clamped into `[minTTL, maxTTL]`: the operator's floor applies to 0 and to
///    `defaultTTL` too, so even `no-cache` origins are asked at most once per `minTTL`.
/// 4. Current age (§4.2.3) = max(`Age`, apparent age `now − Date`); a `Date` in the future gives
///    apparent age 0 rather than a negative one (clock skew never makes a response younger).
///    `validatedAt = now − age`, so the `Age` thumbd sends keeps counting from the origin's copy.
/// 5. `expiresAt = validatedAt + lifetime`. A response that arrives already older than its clamped lifetime
///    would be stale on arrival and revalidated on every request; it gets `expiresAt = now + minTTL`
///    instead, because the operator's minimum is there to protect the origin.
/// 6. `staleIfErrorUntil = expiresAt + staleIfError`; validators are copied, trimmed, empty ones dropped.
///
/// `Cache-Control` syntax is read leniently (see ``CacheControl``): directive names in any case,
/// optional whitespace, token or quoted-string values (`max-age="60"`), several header lines already
/// joined with ", ". A numeric value that is not a plain non-negative integer makes its directive absent
/// (`max-age=-1` and `max-age=1.5` fall through to `Expires`). When a directive appears twice, the first
/// occurrence wins, as RFC 9111 §4.2.1 allows; a malformed first occurrence still hides later ones, so a
/// response cannot pick its lifetime by repetition. Values past 2^31 seconds saturate there (§1.2.2).
struct FreshnessPolicy: Sendable, Equatable {
    /// Lifetime when the origin gives none (before clamping).
    var defaultTTL: Duration
    /// Floor for every lifetime, including 0 (`no-cache`, expired `Expires`).
    var minTTL: Duration
    /// Ceiling for every lifetime.
    var maxTTL: Duration
    /// How long after `expiresAt` a stale entry may still be served while the origin fails.
    var staleIfError: Duration

    init(defaultTTL: Duration, minTTL: Duration, maxTTL: Duration, staleIfError: Duration) {
        self.defaultTTL = defaultTTL
        self.minTTL = minTTL
        self.maxTTL = maxTTL
        self.staleIfError = staleIfError
    }

    /// The policy of `cache.*` settings.
    init(_ cache: Settings.Cache) {
        self.init(
            defaultTTL: cache.defaultTTL, minTTL: cache.minTTL, maxTTL: cache.maxTTL, staleIfError: cache.staleIfError)
    }

    /// Whether and how a 200 is stored.
    enum Decision: Sendable, Equatable {
        /// The origin forbids a shared cache to keep it; `reason` names the directive (`no-store`, `private`).
        case doNotStore(reason: String)
        /// Store it with these deadlines and validators.
        case store(DiskCache.Freshness)
    }

    /// Decides what to do with a 200 from the origin received at `now`.
    func decide(_ headers: FreshnessHeaders, receivedAt now: Timestamp) -> Decision {
        let cacheControl = CacheControl(headers.cacheControl)
        if cacheControl.hasNoStore { return .doNotStore(reason: "no-store") }
        if cacheControl.isPrivate { return .doNotStore(reason: "private") }
        let deadlines = deadlines(cacheControl, headers, now: now)
        return .store(
            DiskCache.Freshness(
                validatedAt: deadlines.validatedAt, expiresAt: deadlines.expiresAt,
                staleIfErrorUntil: deadlines.staleIfErrorUntil, originETag: Self.validator(headers.etag),
                originLastModified: Self.validator(headers.lastModified)))
    }

    /// The freshness of an entry after the origin answered 304 at `now`.
    ///
    /// Deadlines come from the 304's headers alone, by the same rules as ``decide(_:receivedAt:)``: this type
    /// does not keep the 200's headers, and RFC 9110 §15.4.5 asks origins to repeat `Cache-Control` and
    /// `Expires` on a 304 (one without them gets `defaultTTL`). A 304 cannot un-store an entry, so
    /// `no-store` or `private` on it count as lifetime 0 (hence `minTTL`). Validators the 304 carries replace
    /// the stored ones (a weak ETag may change on a 304); missing ones are kept from `previous`.
    func refreshed(
        _ previous: DiskCache.Freshness, with headers: FreshnessHeaders, receivedAt now: Timestamp
    ) -> DiskCache.Freshness {
        var cacheControl = CacheControl(headers.cacheControl)
        if cacheControl.hasNoStore || cacheControl.isPrivate { cacheControl.hasNoCache = true }
        let deadlines = deadlines(cacheControl, headers, now: now)
        return DiskCache.Freshness(
            validatedAt: deadlines.validatedAt, expiresAt: deadlines.expiresAt,
            staleIfErrorUntil: deadlines.staleIfErrorUntil,
            originETag: Self.validator(headers.etag) ?? previous.originETag,
            originLastModified: Self.validator(headers.lastModified) ?? previous.originLastModified)
    }

    // MARK: - Rules

    private struct Deadlines {
        var validatedAt: Timestamp
        var expiresAt: Timestamp
        var staleIfErrorUntil: Timestamp
    }

    private func deadlines(_ cacheControl: CacheControl, _ headers: FreshnessHeaders, now: Timestamp) -> Deadlines {
        let date = headers.date.flatMap { HTTPDate.parse($0, now: now) }
        let lifetime = clamped(lifetime(cacheControl, expires: headers.expires, date: date, now: now))
        let validatedAt = now.advanced(by: .zero - currentAge(headers.age, date: date, now: now))
        var expiresAt = validatedAt.advanced(by: lifetime)
        if expiresAt <= now { expiresAt = now.advanced(by: minTTL) }
        return Deadlines(
            validatedAt: validatedAt, expiresAt: expiresAt, staleIfErrorUntil: expiresAt.advanced(by: staleIfError))
    }

    /// The origin's freshness lifetime, before clamping (RFC 9111 §4.2.1).
    private func lifetime(_ cacheControl: CacheControl, expires: String?, date: Timestamp?, now: Timestamp)
        -> Duration
    {
        if cacheControl.hasNoCache { return .zero }
        if let seconds = cacheControl.sharedMaxAge ?? cacheControl.maxAge { return .seconds(seconds) }
        guard let expires else { return defaultTTL }
        guard let expiresAt = HTTPDate.parse(expires, now: now) else { return .zero }
        return max(.zero, Self.duration(from: date ?? now, to: expiresAt))
    }

    private func clamped(_ lifetime: Duration) -> Duration {
        min(max(lifetime, minTTL), maxTTL)
    }

    /// max(`Age`, `now − Date`), never negative (RFC 9111 §4.2.3; the request time is unknown here, so the
    /// response delay is not added).
    private func currentAge(_ ageHeader: String?, date: Timestamp?, now: Timestamp) -> Duration {
        let ageSeconds = ageHeader.flatMap { CacheControl.deltaSeconds(Substring($0).trimmingBlanks) } ?? 0
        let apparentAge = date.map { Self.duration(from: $0, to: now) } ?? .zero
        return max(.seconds(ageSeconds), apparentAge)
    }

    private static func duration(from start: Timestamp, to end: Timestamp) -> Duration {
        .milliseconds(end.millisecondsSinceEpoch - start.millisecondsSinceEpoch)
    }

    private static func validator(_ value: String?) -> String? {
        guard let trimmed = value.map({ String(Substring($0).trimmingBlanks) }), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}

// MARK: - Cache-Control

extension FreshnessPolicy {
    /// The `Cache-Control` directives that matter to a shared cache storing 200s, read leniently.
    ///
    /// Grammar (RFC 9111 §5.2): `#( token [ "=" ( token / quoted-string ) ] )`; this reader also allows
    /// whitespace around `=`, empty list elements and any case in names. A comma inside a quoted string does
    /// not split directives (`private="a, b"` is one directive). Text after a value up to the next comma makes
    /// that value malformed; a malformed or unterminated value still counts for `no-store`, `private` and
    /// `no-cache` (conservative) but makes `max-age` and `s-maxage` absent.
    struct CacheControl: Equatable {
        /// `no-store` is present.
        var hasNoStore = false
        /// `private` is present, with or without field names.
        var isPrivate = false
        /// `no-cache` is present, with or without field names.
        var hasNoCache = false
        /// `max-age` in seconds, if present and well-formed.
        var maxAge: Int64?
        /// `s-maxage` in seconds, if present and well-formed.
        var sharedMaxAge: Int64?

        /// RFC 9111 §1.2.2: a larger delta-seconds is taken as 2^31.
        static let maximumDeltaSeconds: Int64 = 2_147_483_648

        /// Parses a `Cache-Control` value; `nil` gives no directives.
        init(_ header: String?) {
            guard let header else { return }
            var seen: Set<String> = []
            for directive in Self.directives(in: Array(header.utf8)) where seen.insert(directive.name).inserted {
                switch directive.name {
                case "no-store": hasNoStore = true
                case "private": isPrivate = true
                case "no-cache": hasNoCache = true
                case "max-age": maxAge = directive.isWellFormed ? directive.value.flatMap(Self.deltaSeconds) : nil
                case "s-maxage":
                    sharedMaxAge = directive.isWellFormed ? directive.value.flatMap(Self.deltaSeconds) : nil
                default: break
                }
            }
        }

        /// `1*DIGIT`, saturating at ``maximumDeltaSeconds``; `nil` for anything else (signs, fractions, empty).
        static func deltaSeconds(_ text: Substring) -> Int64? {
            guard !text.isEmpty else { return nil }
            var value: Int64 = 0
            for byte in text.utf8 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = min(value * 10 + Int64(byte - UInt8(ascii: "0")), maximumDeltaSeconds)
            }
            return value
        }

        struct Directive: Equatable {
            /// Lowercased.
            var name: String
            /// Unquoted and unescaped; `nil` when there was no `=`.
            var value: Substring?
            /// False when the value was unterminated or followed by stray text.
            var isWellFormed: Bool
        }

        /// Splits a header value into directives, in order, duplicates included.
        static func directives(in bytes: [UInt8]) -> [Directive] {
            let comma = UInt8(ascii: ","), equals = UInt8(ascii: "="), quote = UInt8(ascii: "\"")
            let backslash = UInt8(ascii: "\\")
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var result: [Directive] = []
            var index = 0
            func skipBlanks() { while index < bytes.count, isBlank(bytes[index]) { index += 1 } }
            /// Consumes bytes up to (not including) a comma, a blank or `=`.
            func token() -> [UInt8] {
                let start = index
                while index < bytes.count, bytes[index] != comma, bytes[index] != equals, !isBlank(bytes[index]) {
                    index += 1
                }
                return Array(bytes[start..<index])
            }
            while index < bytes.count {
                skipBlanks()
                if index < bytes.count, bytes[index] == comma {
                    index += 1
                    continue
                }
                let name = String(decoding: token().map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
                skipBlanks()
                var value: [UInt8]?
                var isWellFormed = true
                if index < bytes.count, bytes[index] == equals {
                    index += 1
                    skipBlanks()
                    if index < bytes.count, bytes[index] == quote {
                        index += 1
                        var unquoted: [UInt8] = []
                        var isClosed = false
                        while index < bytes.count {
                            let byte = bytes[index]
                            index += 1
                            if byte == quote {
                                isClosed = true
                                break
                            }
                            if byte == backslash, index < bytes.count {
                                unquoted.append(bytes[index])
                                index += 1
                            } else {
                                unquoted.append(byte)
                            }
                        }
                        value = unquoted
                        isWellFormed = isClosed
                    } else {
                        value = token()
                    }
                    skipBlanks()
                }
                if index < bytes.count, bytes[index] != comma {
                    // Stray text (`max-age=6 0`, `a b`): skip to the next comma outside quotes.
                    isWellFormed = false
                    var isQuoted = false
                    while index < bytes.count, isQuoted || bytes[index] != comma {
                        if bytes[index] == quote { isQuoted.toggle() }
                        index += 1
                    }
                }
                guard !name.isEmpty else { continue }
                result.append(
                    Directive(
                        name: name, value: value.map { Substring(String(decoding: $0, as: UTF8.self)) },
                        isWellFormed: isWellFormed))
            }
            return result
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmingBlanks: Substring {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
