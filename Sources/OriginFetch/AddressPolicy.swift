// SPDX-License-Identifier: Apache-2.0

/// Decides whether the fetcher may open a connection to a resolved address (the SSRF guard).
///
/// The fetcher asks this from libcurl's `CURLOPT_OPENSOCKETFUNCTION`, that is for every socket
/// libcurl is about to open, after DNS resolution and for every redirect hop. Checking there
/// (and not the host name in the URL) is what defeats DNS rebinding and redirects to internal
/// addresses: whatever name led there, the address actually dialled is judged.
///
/// Rules, in order:
/// 1. `allowPrivateNetworks == true` allows everything (tests, private deployments).
/// 2. An address inside one of `allowedNetworks` is allowed (operator exceptions such as
///    "10.1.2.0/24 only"; an IPv4-mapped IPv6 address is matched by its IPv4 form).
/// 3. An address in any special-purpose range (``SpecialRange``) is refused. For IPv6 this
///    includes every address outside global unicast `2000::/3`, and the IPv4 address
///    embedded in IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4 and Teredo forms is
///    judged as IPv4 (so `::ffff:127.0.0.1` and `2002:7f00:1::` are loopback).
/// 4. Everything else (public unicast) is allowed.
///
/// Documentation and benchmarking ranges are refused too: nothing legitimate lives there, and
/// some networks route them internally.
package struct AddressPolicy: Sendable, Equatable {
    /// Lifts the check entirely when true.
    package var allowPrivateNetworks: Bool
    /// Blocks that are allowed even though they are special-purpose (exceptions to rule 3).
    package var allowedNetworks: [IPNetwork]

    /// A policy; the defaults refuse every special-purpose address.
    package init(allowPrivateNetworks: Bool = false, allowedNetworks: [IPNetwork] = []) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.allowedNetworks = allowedNetworks
    }

    /// The special-purpose range that makes `address` refused, or nil when it may be dialled.
    package func refusal(for address: IPAddress) -> SpecialRange? {
        if allowPrivateNetworks { return nil }
        let unwrapped = Self.unmapped(address)
        if allowedNetworks.contains(where: { $0.contains(address) || $0.contains(unwrapped) }) { return nil }
        return Self.classify(address)
    }

    /// `::ffff:a.b.c.d` as `a.b.c.d`; any other address unchanged. Only the mapped form is
    /// unwrapped for exceptions: a socket to a mapped address reaches exactly that IPv4 host.
    static func unmapped(_ address: IPAddress) -> IPAddress {
        if case .v6(let value) = address, value >> 32 == 0xFFFF {
            return .v4(UInt32(truncatingIfNeeded: value))
        }
        return address
    }

    // MARK: - Classification (pure)

    /// The special-purpose range `address` belongs to, or nil for ordinary public unicast.
    package static func classify(_ address: IPAddress) -> SpecialRange? {
        switch address {
        case .v4(let value): return classify(v4: value)
        case .v6(let value): return classify(v6: value)
        }
    }

    /// IPv4 special-purpose blocks (RFC 6890 and successors), most specific first.
    private static let v4Ranges: [(base: UInt32, prefix: Int, range: SpecialRange)] = [
        (0xFFFF_FFFF, 32, .broadcast),  // 255.255.255.255
        (0x0000_0000, 8, .thisNetwork),  // 0.0.0.0/8
        (0x0A00_0000, 8, .privateNetwork),  // 10.0.0.0/8
        (0x6440_0000, 10, .sharedAddressSpace),  // 100.64.0.0/10 (CGNAT)
        (0x7F00_0000, 8, .loopback),  // 127.0.0.0/8
        (0xA9FE_0000, 16, .linkLocal),  // 169.254.0.0/16 (cloud metadata lives here)
        (0xAC10_0000, 12, .privateNetwork),  // 172.16.0.0/12
        (0xC000_0000, 24, .protocolAssignments),  // 192.0.0.0/24
        (0xC000_0200, 24, .documentation),  // 192.0.2.0/24 TEST-NET-1
        (0xC058_6300, 24, .reserved),  // 192.88.99.0/24 deprecated 6to4 relay anycast
        (0xC0A8_0000, 16, .privateNetwork),  // 192.168.0.0/16
        (0xC612_0000, 15, .benchmarking),  // 198.18.0.0/15
        (0xC633_6400, 24, .documentation),  // 198.51.100.0/24 TEST-NET-2
        (0xCB00_7100, 24, .documentation),  // 203.0.113.0/24 TEST-NET-3
        (0xE000_0000, 4, .multicast),  // 224.0.0.0/4
        (0xF000_0000, 4, .reserved),  // 240.0.0.0/4 (future use)
    ]

    private static func classify(v4 value: UInt32) -> SpecialRange? {
        for entry in v4Ranges {
            let mask: UInt32 = entry.prefix == 0 ? 0 : ~0 << (32 - entry.prefix)
            if value & mask == entry.base { return entry.range }
        }
        return nil
    }

    private static func classify(v6 value: UInt128) -> SpecialRange? {
        func prefix(_ bits: Int) -> UInt128 { value >> (128 - bits) }
        func embedded(_ inner: UInt32) -> SpecialRange? {
            classify(v4: inner).map { .embeddedIPv4($0) }
        }
        let low32 = UInt32(truncatingIfNeeded: value)
        switch true {
        case value == 0: return .unspecified  // ::
        case value == 1: return .loopback  // ::1
        case value >> 32 == 0xFFFF: return embedded(low32)  // ::ffff:0:0/96 IPv4-mapped
        case value >> 32 == 0: return embedded(low32) ?? .reserved  // ::/96 IPv4-compatible (deprecated)
        case value >> 32 == 0xFFFF_0000: return embedded(low32) ?? .reserved  // ::ffff:0:0:0/96 SIIT
        case value >> 32 == 0x0064_FF9B << 64: return embedded(low32)  // 64:ff9b::/96 NAT64
        case prefix(48) == 0x0064_FF9B_0001: return embedded(low32) ?? .reserved  // 64:ff9b:1::/48 local NAT64
        case prefix(64) == 0x0100 << 48: return .discardOnly  // 100::/64
        case prefix(16) == 0x2002:  // 2002::/16 6to4: the IPv4 gateway in bits 16..<48
            return embedded(UInt32(truncatingIfNeeded: value >> 80))
        case prefix(32) == 0x2001_0000:  // 2001::/32 Teredo: server in bits 32..<64, client inverted
            return embedded(UInt32(truncatingIfNeeded: value >> 64)) ?? embedded(~low32)
        case prefix(32) == 0x2001_0DB8: return .documentation  // 2001:db8::/32
        case prefix(48) == 0x2001_0002_0000: return .benchmarking  // 2001:2::/48
        case prefix(23) == 0x2001_0000 >> 9: return .protocolAssignments  // 2001::/23 (rest of it)
        case prefix(20) == 0x3FFF0: return .documentation  // 3fff::/20 (RFC 9637)
        case prefix(8) == 0xFF: return .multicast  // ff00::/8
        case prefix(7) == 0xFC >> 1: return .uniqueLocal  // fc00::/7
        case prefix(10) == 0xFE80 >> 6: return .linkLocal  // fe80::/10
        case prefix(10) == 0xFEC0 >> 6: return .siteLocal  // fec0::/10 (deprecated)
        case prefix(3) != 0b001: return .reserved  // outside global unicast 2000::/3
        default: return nil
        }
    }
}

/// Why an address is not ordinary public unicast (see ``AddressPolicy``).
package indirect enum SpecialRange: Hashable, Sendable, CustomStringConvertible {
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// `0.0.0.0/8` ("this network").
    case thisNetwork
    /// `::`.
    case unspecified
    /// `10/8`, `172.16/12`, `192.168/16` (RFC 1918).
    case privateNetwork
    /// `100.64.0.0/10`, carrier-grade NAT (RFC 6598).
    case sharedAddressSpace
    /// `169.254/16` (cloud metadata endpoints), `fe80::/10`.
    case linkLocal
    /// `fec0::/10`, deprecated IPv6 site-local.
    case siteLocal
    /// `fc00::/7`, IPv6 unique local addresses.
    case uniqueLocal
    /// `224/4`, `ff00::/8`.
    case multicast
    /// `255.255.255.255`.
    case broadcast
    /// `192.0.0.0/24`, `2001::/23`: IETF protocol assignments.
    case protocolAssignments
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    case documentation
    /// `198.18/15`, `2001:2::/48`.
    case benchmarking
    /// `100::/64`, IPv6 discard-only.
    case discardOnly
    /// `240/4`, the old 6to4 relay anycast block, and IPv6 outside `2000::/3`.
    case reserved
    /// An IPv6 form that embeds an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo)
    /// whose IPv4 address is in the given range.
    case embeddedIPv4(SpecialRange)

    /// A short name for logs and errors, e.g. `loopback` or `ipv4-embedded loopback`.
    package var description: String {
        switch self {
        case .loopback: "loopback"
        case .thisNetwork: "this-network"
        case .unspecified: "unspecified"
        case .privateNetwork: "private"
        case .sharedAddressSpace: "shared-address-space"
        case .linkLocal: "link-local"
        case .siteLocal: "site-local"
        case .uniqueLocal: "unique-local"
        case .multicast: "multicast"
        case .broadcast: "broadcast"
        case .protocolAssignments: "protocol-assignments"
        case .documentation: "documentation"
        case .benchmarking: "benchmarking"
        case .discardOnly: "discard-only"
        case .reserved: "reserved"
        case .embeddedIPv4(let inner): "ipv4-embedded \(inner)"
        }
    }
}
