// SPDX-License-Identifier: Apache-2.0
import Glibc

/// An IPv4 or IPv6 address as a number, for range checks (``AddressPolicy``).
///
/// IPv6 zone ids (`%eth0`) are not part of the value: the policy judges the address itself.
package enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 address, most significant octet first (`127.0.0.1` is `0x7F00_0001`).
    case v4(UInt32)
    /// An IPv6 address, most significant byte first.
    case v6(UInt128)

    /// Parses a textual address (`192.0.2.1`, `::1`, `::ffff:10.0.0.1`) with `inet_pton`.
    /// Returns nil for anything else, including host names and IPv4 shorthands like `127.1`.
    package init?(_ text: String) {
        if text.contains(":") {
            var storage = in6_addr()
            guard inet_pton(AF_INET6, text, &storage) == 1 else { return nil }
            self = .v6(Self.number(from: storage))
        } else {
            var storage = in_addr()
            guard inet_pton(AF_INET, text, &storage) == 1 else { return nil }
            self = .v4(UInt32(bigEndian: storage.s_addr))
        }
    }

    /// Reads the address out of a `sockaddr` as libcurl hands it to the open-socket callback.
    /// Returns nil for families other than AF_INET and AF_INET6 (or a too-short length).
    init?(sockaddr pointer: UnsafeRawPointer, length: Int) {
        let family = pointer.load(as: sockaddr.self).sa_family
        switch Int32(family) {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            let address = pointer.load(as: sockaddr_in.self).sin_addr
            self = .v4(UInt32(bigEndian: address.s_addr))
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            self = .v6(Self.number(from: pointer.load(as: sockaddr_in6.self).sin6_addr))
        default:
            return nil
        }
    }

    private static func number(from address: in6_addr) -> UInt128 {
        withUnsafeBytes(of: address) { bytes in
            bytes.reduce(UInt128(0)) { ($0 << 8) | UInt128($1) }
        }
    }

    /// The conventional text form (`inet_ntop`), e.g. `10.0.0.1` or `::ffff:10.0.0.1`.
    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch self {
        case .v4(let value):
            var storage = in_addr(s_addr: value.bigEndian)
            _ = inet_ntop(AF_INET, &storage, &buffer, socklen_t(buffer.count))
        case .v6(let value):
            var storage = in6_addr()
            withUnsafeMutableBytes(of: &storage) { bytes in
                for index in 0..<16 { bytes[index] = UInt8(truncatingIfNeeded: value >> (8 * (15 - index))) }
            }
            _ = inet_ntop(AF_INET6, &storage, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A CIDR block such as `10.1.2.0/24` or `fd00::/8`, used for ``AddressPolicy/allowedNetworks``.
package struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block (host bits are cleared on creation).
    package let address: IPAddress
    /// The prefix length: 0...32 for IPv4, 0...128 for IPv6.
    package let prefixLength: Int

    /// Parses `address/prefix` or a bare address (a single-address block). Returns nil when the
    /// address does not parse or the prefix is out of range. Host bits are cleared, so
    /// `10.1.2.3/24` means `10.1.2.0/24`.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let maximum = if case .v4 = address { 32 } else { 128 }
        let prefix: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maximum).contains(parsed) else { return nil }
            prefix = parsed
        } else {
            prefix = maximum
        }
        self.prefixLength = prefix
        switch address {
        case .v4(let value): self.address = .v4(value & Self.mask32(prefix))
        case .v6(let value): self.address = .v6(value & Self.mask128(prefix))
        }
    }

    /// Whether `candidate` lies in this block. An IPv4 block never contains an IPv6 address
    /// (IPv4-mapped forms are unwrapped by the policy before it asks).
    package func contains(_ candidate: IPAddress) -> Bool {
        switch (address, candidate) {
        case (.v4(let base), .v4(let value)): return value & Self.mask32(prefixLength) == base
        case (.v6(let base), .v6(let value)): return value & Self.mask128(prefixLength) == base
        default: return false
        }
    }

    /// `address/prefix`.
    package var description: String { "\(address)/\(prefixLength)" }

    private static func mask32(_ prefix: Int) -> UInt32 {
        prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
    }

    private static func mask128(_ prefix: Int) -> UInt128 {
        prefix == 0 ? 0 : ~UInt128(0) << (128 - prefix)
    }
}
