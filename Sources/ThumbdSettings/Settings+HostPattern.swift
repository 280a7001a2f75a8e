// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// An entry of `fetch.allowed_hosts`: an exact host (`example.com`, `192.0.2.7`) or every subdomain of one
    /// (`*.example.com`, which matches `a.example.com` and `a.b.example.com` but not `example.com` itself;
    /// list both to allow both).
    ///
    /// Host names are compared case-insensitively, without a trailing dot. Internationalised names must be
    /// written in their ASCII (`xn--`) form, which is what a URL's host becomes before DNS.
    package struct HostPattern: Sendable, Hashable, CustomStringConvertible {
        /// The lower-cased host, or the parent domain of a wildcard, without `*.`.
        package var host: String
        /// True for `*.host`: any subdomain matches, the host itself does not.
        package var matchesSubdomainsOnly: Bool

        /// Parses `example.com`, `*.example.com` or a numeric address.
        ///
        /// - Throws: `InvalidValue` when the text is not a valid host name or pattern.
        package init(parsing text: String) throws(InvalidValue) {
            var name = Substring(text.lowercased())
            matchesSubdomainsOnly = name.hasPrefix("*.")
            if matchesSubdomainsOnly { name = name.dropFirst(2) }
            if name.hasSuffix(".") { name = name.dropLast() }
            if name.hasPrefix("[") && name.hasSuffix("]") { name = name.dropFirst().dropLast() }
            host = String(name)
            if let bytes = IPAddressText.bytes(of: host) {
                guard !matchesSubdomainsOnly else { throw InvalidValue("\"\(text)\": an IP address has no subdomains") }
                host = IPAddressText.text(of: bytes)
                return
            }
            if let problem = Self.hostNameProblem(host) {
                throw InvalidValue("\"\(text)\" is not a host pattern such as example.com or *.example.com: \(problem)")
            }
        }

        /// `example.com` or `*.example.com`.
        package var description: String { matchesSubdomainsOnly ? "*.\(host)" : host }

        /// Whether a request URL's host is allowed by this pattern.
        ///
        /// - Parameter candidate: the host part of the URL, any case, without brackets or port.
        package func matches(_ candidate: some StringProtocol) -> Bool {
            var name = candidate.lowercased()
            if name.hasSuffix(".") { name.removeLast() }
            if matchesSubdomainsOnly {
                return name.hasSuffix("." + host) && name.count > host.count + 1
            }
            if let bytes = IPAddressText.bytes(of: name) { return IPAddressText.text(of: bytes) == host }
            return name == host
        }

        /// Why `name` is not a DNS host name (RFC 1123 labels; `_` tolerated as some CDNs use it), or nil.
        private static func hostNameProblem(_ name: String) -> String? {
            guard !name.isEmpty else { return "empty" }
            guard name.utf8.count <= 253 else { return "longer than 253 characters" }
            for label in name.split(separator: ".", omittingEmptySubsequences: false) {
                guard !label.isEmpty, label.utf8.count <= 63 else { return "each label must be 1 to 63 characters" }
                guard label.utf8.allSatisfy({ $0 < 0x80 && ($0 == 0x2D || $0 == 0x5F || isAlphanumeric($0)) }) else {
                    return "only letters, digits, '-' and '_' (use the xn-- form of international names)"
                }
                guard label.first != "-", label.last != "-" else { return "a label cannot start or end with '-'" }
            }
            return nil
        }

        private static func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte)
        }
    }
}
