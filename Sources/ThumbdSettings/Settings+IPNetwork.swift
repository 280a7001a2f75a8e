// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// An IPv4 or IPv6 network in CIDR notation (`10.1.0.0/16`, `fd00:1::/32`); a bare address means
    /// just that host (`/32` or `/128`).
    ///
    /// Host bits must be zero (`10.1.2.3/16` is refused with the network it probably meant), so the text
    /// in the file says exactly which addresses are allowed.
    package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
        /// The network address: 4 bytes (IPv4) or 16 bytes (IPv6), network order, host bits zero.
        package var address: [UInt8]
        /// The number of leading bits that must match, 0...32 or 0...128.
        package var prefixLength: Int

        /// Parses `ADDRESS/PREFIX` or a bare address.
        ///
        /// - Throws: `InvalidValue` for a malformed address, a prefix out of range or host bits set.
        package init(parsing text: String) throws(InvalidValue) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddressText.bytes(of: parts[0]) else {
                throw InvalidValue("\"\(text)\" is not a network in CIDR notation such as 10.1.0.0/16 or fd00::/8")
            }
            let maximum = address.count * 8
            var prefixLength = maximum
            if parts.count == 2 {
                guard let parsed = WholeNumber.parse(parts[1]), parsed <= maximum, !parts[1].contains("_") else {
                    throw InvalidValue("prefix length in \"\(text)\" must be 0...\(maximum)")
                }
                prefixLength = parsed
            }
            self.address = address
            self.prefixLength = prefixLength
            let network = Self.masked(address, prefixLength: prefixLength)
            guard network == address else {
                let suggestion = "\(IPAddressText.text(of: network))/\(prefixLength)"
                throw InvalidValue("\"\(text)\" has host bits set; did you mean \(suggestion)?")
            }
        }

        /// `10.1.0.0/16` or `fd00::/8`.
        package var description: String { "\(IPAddressText.text(of: address))/\(prefixLength)" }

        /// Whether `candidate` (4 or 16 network-order bytes) is inside this network. Addresses of the other
        /// family never match: callers unwrap IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) first.
        package func contains(_ candidate: [UInt8]) -> Bool {
            candidate.count == address.count && Self.masked(candidate, prefixLength: prefixLength) == address
        }

        /// `bytes` with every bit after the first `prefixLength` cleared.
        private static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
            var result = bytes
            for index in result.indices {
                let bitsKept = max(0, min(8, prefixLength - index * 8))
                result[index] &= bitsKept == 0 ? 0 : ~UInt8(0) << (8 - bitsKept)
            }
            return result
        }
    }
}
