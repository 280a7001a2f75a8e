// SPDX-License-Identifier: Apache-2.0

import Caching
import Glibc
import OriginFetch
import Testing

@testable import ThumbdApp
@testable import ThumbdSettings

/// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
private let now = Timestamp(millisecondsSinceEpoch: 784_111_777_000)

/// The operator's defaults: default 1d, clamp [1m, 30d], stale-if-error 1d.
private let policy = FreshnessPolicy(Settings.Cache())

private let day = Duration.seconds(86_400)

/// `now` moved by `seconds`, as an IMF-fixdate formatted by the C library (so the parser is not graded by
/// a formatter of its own).
private func httpDate(_ seconds: Int64) -> String {
    var time = time_t((now.millisecondsSinceEpoch / 1_000) + seconds)
    var fields = tm()
    gmtime_r(&time, &fields)
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &fields)
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func after(_ duration: Duration) -> Timestamp { now.advanced(by: duration) }

private func stored(_ headers: FreshnessHeaders, by policy: FreshnessPolicy = policy) -> DiskCache.Freshness? {
    if case .store(let freshness) = policy.decide(headers, receivedAt: now) { freshness } else { nil }
}

@Suite struct FreshnessPolicyTests {
    // MARK: - Not stored

    @Test(arguments: [
        ("no-store", "no-store"),
        ("NO-STORE", "no-store"),
        ("public, max-age=3600, no-store", "no-store"),
        ("no-store=\"whatever\"", "no-store"),
        ("private", "private"),
        ("Private", "private"),
        ("max-age=60, private", "private"),
        ("private=\"set-cookie\"", "private"),
        ("private=\"set-cookie, x-user\", max-age=60", "private"),
        ("no-store, private", "no-store"),
        ("private, no-store", "no-store"),
        ("public, max-age=60, private", "private"),
    ])
    func noStoreAndPrivateAreNotStored(cacheControl: String, reason: String) {
        // Given a response whose Cache-Control forbids a shared cache to keep it (the last row is two Cache-Control
        // lines as the fetcher joins them), when decided, then it is not stored and the reason names the directive.
        let decision = policy.decide(FreshnessHeaders(cacheControl: cacheControl), receivedAt: now)
        #expect(decision == .doNotStore(reason: reason))
    }

    // MARK: - Lifetime

    static let lifetimes: [(cacheControl: String?, expires: String?, date: String?, lifetime: Duration)] = [
        // No caching headers: default_ttl.
        (nil, nil, nil, day),
        ("public", nil, nil, day),
        ("", nil, nil, day),
        // max-age, in any case, quoted, with whitespace.
        ("max-age=3600", nil, nil, .seconds(3_600)),
        ("Max-Age=3600", nil, nil, .seconds(3_600)),
        ("max-age=\"3600\"", nil, nil, .seconds(3_600)),
        ("  public ,\tmax-age = 3600 ,", nil, nil, .seconds(3_600)),
        (",, ,max-age=3600,,", nil, nil, .seconds(3_600)),
        // A comma or an escaped quote inside a quoted string does not start a directive.
        ("ext=\"a, max-age=5\", max-age=3600", nil, nil, .seconds(3_600)),
        ("ext=\"a\\\", max-age=5\", max-age=3600", nil, nil, .seconds(3_600)),
        // s-maxage wins over max-age, in either order and even when shorter.
        ("s-maxage=7200, max-age=60", nil, nil, .seconds(7_200)),
        ("max-age=60, S-MAXAGE=7200", nil, nil, .seconds(7_200)),
        ("max-age=3600, s-maxage=120", nil, nil, .seconds(120)),
        // max-age wins over Expires.
        ("max-age=3600", httpDate(7_200), httpDate(0), .seconds(3_600)),
        ("max-age=3600", "0", nil, .seconds(3_600)),
        // Duplicates: the first occurrence wins, even a malformed one.
        ("max-age=3600, max-age=60", nil, nil, .seconds(3_600)),
        ("max-age=abc, max-age=60", nil, nil, day),
        // Malformed numbers make the directive absent (then Expires or the default applies).
        ("max-age=-1", nil, nil, day),
        ("max-age=1.5", nil, nil, day),
        ("max-age=", nil, nil, day),
        ("max-age", nil, nil, day),
        ("max-age=6 0", nil, nil, day),
        ("max-age=\"3600", nil, nil, day),
        ("max-age=+60", nil, nil, day),
        ("max-age=abc", httpDate(7_200), httpDate(0), .seconds(7_200)),
        ("s-maxage=x, max-age=3600", nil, nil, .seconds(3_600)),
        // Expires − Date; without a valid Date, Expires − now.
        (nil, httpDate(7_200), httpDate(0), .seconds(7_200)),
        (nil, httpDate(7_200), nil, .seconds(7_200)),
        (nil, httpDate(7_200), "yesterday", .seconds(7_200)),
        (nil, "Sunday, 06-Nov-94 10:49:37 GMT", nil, .seconds(7_200)),
        (nil, "Sun Nov  6 10:49:37 1994", nil, .seconds(7_200)),
        // Expires at or before Date, or invalid: already expired, lifetime 0 → min_ttl.
        (nil, httpDate(0), httpDate(0), .seconds(60)),
        (nil, httpDate(-3_600), httpDate(0), .seconds(60)),
        (nil, "0", nil, .seconds(60)),
        (nil, "-1", nil, .seconds(60)),
        (nil, "never", nil, .seconds(60)),
        (nil, "", nil, .seconds(60)),
        (nil, httpDate(7_200) + ", " + httpDate(14_400), nil, .seconds(60)),
        // no-cache (also with field names): lifetime 0 → min_ttl, whatever else is said.
        ("no-cache", nil, nil, .seconds(60)),
        ("no-cache, max-age=3600", nil, nil, .seconds(60)),
        ("s-maxage=3600, No-Cache", httpDate(7_200), nil, .seconds(60)),
        ("no-cache=\"set-cookie\"", nil, nil, .seconds(60)),
        // Clamps: below min_ttl, above max_ttl.
        ("max-age=0", nil, nil, .seconds(60)),
        ("max-age=59", nil, nil, .seconds(60)),
        ("max-age=61", nil, nil, .seconds(61)),
        ("max-age=31536000", nil, nil, day * 30),
        ("max-age=99999999999999999999999", nil, nil, day * 30),
        (nil, httpDate(365 * 86_400), httpDate(0), day * 30),
    ]

    @Test(arguments: lifetimes)
    func lifetimeFromHeaders(cacheControl: String?, expires: String?, date: String?, lifetime: Duration) throws {
        // Given a 200 with these caching headers, received when its Date says (age 0), when decided, then it
        // is stored fresh for the clamped lifetime.
        let freshness = try #require(stored(FreshnessHeaders(cacheControl: cacheControl, expires: expires, date: date)))
        #expect(freshness.validatedAt == now)
        #expect(freshness.expiresAt == after(lifetime))
    }

    @Test func defaultTTLIsClampedToo() throws {
        // Given an operator whose default lies outside its own clamp (settings validation forbids this, the
        // policy does not rely on it), when a response without caching headers is decided, then the clamp wins.
        let short = FreshnessPolicy(defaultTTL: day, minTTL: .seconds(60), maxTTL: .seconds(3_600), staleIfError: .zero)
        let long = FreshnessPolicy(defaultTTL: .zero, minTTL: .seconds(120), maxTTL: day, staleIfError: .zero)
        #expect(try #require(stored(FreshnessHeaders(), by: short)).expiresAt == after(.seconds(3_600)))
        #expect(try #require(stored(FreshnessHeaders(), by: long)).expiresAt == after(.seconds(120)))
    }

    @Test func zeroMinimumLeavesNoCacheResponsesStaleOnArrival() throws {
        // Given min_ttl 0, when a no-cache response is decided, then it expires at once (revalidated on every
        // request) instead of getting a lifetime.
        let strict = FreshnessPolicy(defaultTTL: day, minTTL: .zero, maxTTL: day, staleIfError: .seconds(10))
        let freshness = try #require(stored(FreshnessHeaders(cacheControl: "no-cache"), by: strict))
        #expect(freshness.expiresAt == now)
        #expect(freshness.staleIfErrorUntil == after(.seconds(10)))
    }

    // MARK: - Age

    static let ages: [(age: String?, date: String?, maxAge: Int, validatedAt: Duration, expiresAt: Duration)] = [
        // The Age header shifts validatedAt back; the deadline counts from there.
        ("600", nil, 3_600, .seconds(-600), .seconds(3_000)),
        (" 600 ", httpDate(0), 3_600, .seconds(-600), .seconds(3_000)),
        // Invalid Age headers are ignored.
        ("abc", nil, 3_600, .zero, .seconds(3_600)),
        ("-600", nil, 3_600, .zero, .seconds(3_600)),
        ("1.5", nil, 3_600, .zero, .seconds(3_600)),
        ("", nil, 3_600, .zero, .seconds(3_600)),
        ("600, 700", nil, 3_600, .zero, .seconds(3_600)),
        // Apparent age (now − Date) counts when larger than Age.
        (nil, httpDate(-3_600), 7_200, .seconds(-3_600), .seconds(3_600)),
        ("600", httpDate(-100), 3_600, .seconds(-600), .seconds(3_000)),
        ("600", httpDate(-900), 3_600, .seconds(-900), .seconds(2_700)),
        // A Date in the future (clock skew) does not make the response younger than now.
        (nil, httpDate(3_600), 3_600, .zero, .seconds(3_600)),
        // Older than its clamped lifetime on arrival: fresh for min_ttl from now.
        ("7200", nil, 3_600, .seconds(-7_200), .seconds(60)),
        ("3600", nil, 3_600, .seconds(-3_600), .seconds(60)),
        ("99999999999999999999", nil, 3_600, .seconds(-2_147_483_648), .seconds(60)),
        // Not yet older than the clamped lifetime (max-age=0 → 60 s): the deadline keeps counting from validatedAt.
        ("30", nil, 0, .seconds(-30), .seconds(30)),
    ]

    @Test(arguments: ages)
    func ageShiftsValidation(age: String?, date: String?, maxAge: Int, validatedAt: Duration, expiresAt: Duration)
        throws
    {
        // Given a 200 that has already spent time in upstream caches, when decided, then validatedAt is that
        // much earlier and the deadline follows.
        let headers = FreshnessHeaders(cacheControl: "max-age=\(maxAge)", date: date, age: age)
        let freshness = try #require(stored(headers))
        #expect(freshness.validatedAt == after(validatedAt))
        #expect(freshness.expiresAt == after(expiresAt))
    }

    @Test func expiresDeadlineMatchesExpiresWhenTheResponseIsOld() throws {
        // Given a response generated an hour ago that expires two hours after its Date, when decided, then it
        // is fresh until exactly its Expires.
        let headers = FreshnessHeaders(expires: httpDate(3_600), date: httpDate(-3_600))
        let freshness = try #require(stored(headers))
        #expect(freshness.validatedAt == after(.seconds(-3_600)))
        #expect(freshness.expiresAt == after(.seconds(3_600)))
    }

    // MARK: - Stale-if-error, validators, settings

    @Test func staleIfErrorFollowsExpiry() throws {
        // Given stale_if_error 1d (and 0), when a 200 with max-age=3600 and Age=600 is decided, then stale
        // entries may be served until that long after expiry.
        let headers = FreshnessHeaders(cacheControl: "max-age=3600", age: "600")
        #expect(try #require(stored(headers)).staleIfErrorUntil == after(.seconds(3_000) + day))
        let none = FreshnessPolicy(defaultTTL: day, minTTL: .seconds(60), maxTTL: day, staleIfError: .zero)
        #expect(try #require(stored(headers, by: none)).staleIfErrorUntil == after(.seconds(3_000)))
    }

    @Test func validatorsAreCopiedTrimmed() throws {
        // Given validators with surrounding whitespace, when decided, then they are kept verbatim but trimmed,
        // and blank ones are dropped.
        let lastModified = "Sat, 05 Nov 1994 08:49:37 GMT"
        let freshness = try #require(stored(FreshnessHeaders(etag: " W/\"abc\"\t", lastModified: lastModified)))
        #expect(freshness.originETag == "W/\"abc\"")
        #expect(freshness.originLastModified == lastModified)
        let blank = try #require(stored(FreshnessHeaders(etag: "  ", lastModified: "")))
        #expect(blank.originETag == nil)
        #expect(blank.originLastModified == nil)
    }

    @Test func policyFromSettings() {
        // Given cache settings with distinct durations, when a policy is made from them, then each lands in
        // its own field (and the defaults are 1d, 1m, 30d, 1d).
        var cache = Settings.Cache()
        #expect(
            FreshnessPolicy(cache)
                == FreshnessPolicy(defaultTTL: day, minTTL: .seconds(60), maxTTL: day * 30, staleIfError: day))
        cache.defaultTTL = .seconds(1)
        cache.minTTL = .seconds(2)
        cache.maxTTL = .seconds(3)
        cache.staleIfError = .seconds(4)
        cache.negativeTTL = .seconds(5)
        #expect(
            FreshnessPolicy(cache)
                == FreshnessPolicy(
                    defaultTTL: .seconds(1), minTTL: .seconds(2), maxTTL: .seconds(3), staleIfError: .seconds(4)))
    }

    // MARK: - 304

    private static let previous = DiskCache.Freshness(
        validatedAt: now.advanced(by: .seconds(-7_200)), expiresAt: now.advanced(by: .seconds(-3_600)),
        staleIfErrorUntil: now.advanced(by: .seconds(82_800)), originETag: "\"v1\"",
        originLastModified: "Sat, 05 Nov 1994 08:49:37 GMT")

    @Test func notModifiedRenewsDeadlinesFromItsHeaders() {
        // Given a stale entry, when the origin answers 304 with max-age=600 and Age=60, then the entry is
        // validated now (minus the age) with new deadlines, and keeps its validators.
        let headers = FreshnessHeaders(cacheControl: "max-age=600", age: "60")
        let freshness = policy.refreshed(Self.previous, with: headers, receivedAt: now)
        #expect(
            freshness
                == DiskCache.Freshness(
                    validatedAt: after(.seconds(-60)), expiresAt: after(.seconds(540)),
                    staleIfErrorUntil: after(.seconds(540) + day), originETag: Self.previous.originETag,
                    originLastModified: Self.previous.originLastModified))
    }

    @Test func notModifiedTakesNewValidators() {
        // Given a 304 with a new ETag but no Last-Modified, when refreshed, then the ETag is replaced and
        // Last-Modified is kept.
        let freshness = policy.refreshed(Self.previous, with: FreshnessHeaders(etag: " \"v2\" "), receivedAt: now)
        #expect(freshness.originETag == "\"v2\"")
        #expect(freshness.originLastModified == Self.previous.originLastModified)
        let both = FreshnessHeaders(etag: "W/\"v3\"", lastModified: "Sun, 06 Nov 1994 08:00:00 GMT")
        let replaced = policy.refreshed(Self.previous, with: both, receivedAt: now)
        #expect(replaced.originETag == "W/\"v3\"")
        #expect(replaced.originLastModified == "Sun, 06 Nov 1994 08:00:00 GMT")
    }

    @Test(
        arguments: [
            (nil, day),
            ("max-age=31536000", day * 30),
            ("no-cache", .seconds(60)),
            ("no-store", .seconds(60)),
            ("private, max-age=3600", .seconds(60)),
            ("max-age=7200", .seconds(7_200)),
        ] as [(String?, Duration)])
    func notModifiedUsesTheSameRules(cacheControl: String?, lifetime: Duration) {
        // Given a 304 (no-store and private cannot un-store an entry: they count as lifetime 0), when
        // refreshed, then the new lifetime follows the 200 rules, clamped.
        let freshness = policy.refreshed(
            Self.previous, with: FreshnessHeaders(cacheControl: cacheControl), receivedAt: now)
        #expect(freshness.validatedAt == now)
        #expect(freshness.expiresAt == after(lifetime))
        #expect(freshness.staleIfErrorUntil == after(lifetime + day))
    }

    @Test func notModifiedWithExpiresAndDate() {
        // Given a 304 carrying Expires and Date, when refreshed, then Expires − Date is the lifetime.
        let headers = FreshnessHeaders(expires: httpDate(1_800), date: httpDate(0))
        #expect(policy.refreshed(Self.previous, with: headers, receivedAt: now).expiresAt == after(.seconds(1_800)))
    }
}

@Suite struct HTTPDateTests {
    private func parse(_ text: String, at reference: Timestamp = now) -> Int64? {
        FreshnessPolicy.HTTPDate.parse(text, now: reference).map { $0.millisecondsSinceEpoch / 1_000 }
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
        "  sun, 06 NOV 1994 08:49:37 gmt\t",
        "Mon, 06 Nov 1994 08:49:37 GMT",
    ])
    func parsesTheThreeFormats(text: String) {
        // Given the RFC 9110 example in each accepted form (also odd case, padding, a wrong day name), when
        // parsed, then it is the same instant.
        #expect(parse(text) == 784_111_777)
    }

    @Test(
        arguments: [
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
            ("Thu, 29 Feb 2024 12:00:00 GMT", 1_709_208_000),
            ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
            ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
        ] as [(String, Int64)])
    func parsesEdgeDates(text: String, seconds: Int64) {
        // Given the epoch, a second before it, leap days, the last representable date and a leap second,
        // when parsed, then the instant is exact.
        #expect(parse(text) == seconds)
    }

    @Test(arguments: [
        "", "0", "-1", "garbage", "Sun, 06 Nov 1994", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 GMT+1", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT", "Tue, 29 Feb 1900 00:00:00 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 08:49:37 1994 GMT", "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT x", "Sun,06 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37Z", "784111777",
    ])
    func rejectsGarbage(text: String) {
        // Given something that is not an HTTP-date, when parsed, then there is no instant.
        #expect(parse(text) == nil)
    }

    @Test(
        arguments: [
            ("Thursday, 01-Jan-70 00:00:00 GMT", 2_000, 1970),
            ("Thursday, 01-Jan-70 00:00:00 GMT", 2_025, 2070),
            ("Thursday, 01-Jan-76 00:00:00 GMT", 2_025, 1976),
            ("Thursday, 01-Jan-76 00:00:00 GMT", 2_026, 2076),
            ("Thursday, 01-Jan-80 00:00:00 GMT", 2_025, 1980),
            ("Thursday, 01-Jan-25 00:00:00 GMT", 2_025, 2025),
            ("Thursday, 01-Jan-99 00:00:00 GMT", 1_994, 1999),
        ] as [(String, Int64, Int64)])
    func rfc850YearsAreAtMostFiftyYearsAhead(text: String, currentYear: Int64, year: Int64) throws {
        // Given a two-digit year read in `currentYear`, when parsed, then it is the year with those digits
        // that lies no more than 50 years ahead (RFC 9110 §5.6.7).
        let reference = Timestamp(
            millisecondsSinceEpoch: FreshnessPolicy.HTTPDate.daysSinceEpoch(year: currentYear, month: 6, day: 1)
                * 86_400_000)
        let parsed = try #require(FreshnessPolicy.HTTPDate.parse(text, now: reference))
        #expect(FreshnessPolicy.HTTPDate.year(of: parsed) == year)
    }

    @Test func calendarMatchesTheCLibrary() {
        // Given dates across four centuries, when converted both ways, then they agree with timegm/gmtime_r.
        for year in stride(from: 1_601, through: 2_400, by: 7) {
            for month in 1...12 {
                for day in [1, 15, 28] {
                    var fields = tm()
                    fields.tm_year = Int32(year - 1_900)
                    fields.tm_mon = Int32(month - 1)
                    fields.tm_mday = Int32(day)
                    let expected = Int64(timegm(&fields)) / 86_400
                    let days = FreshnessPolicy.HTTPDate.daysSinceEpoch(
                        year: Int64(year), month: Int64(month), day: Int64(day))
                    #expect(days == expected, "\(year)-\(month)-\(day)")
                    let lastMillisecond = Timestamp(millisecondsSinceEpoch: (days + 1) * 86_400_000 - 1)
                    #expect(FreshnessPolicy.HTTPDate.year(of: lastMillisecond) == Int64(year))
                }
            }
        }
    }
}
