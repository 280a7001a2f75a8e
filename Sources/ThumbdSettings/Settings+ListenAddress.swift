// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Settings {
    /// A numeric IP address and TCP port to listen on: `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`.
    ///
    /// Host names such as `localhost` are refused: they can resolve to several addresses (or change), and a
    /// listener must bind one address, the one the operator wrote. Port 0 asks the kernel for a free port
    /// (tests use it).
    package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
        /// The numeric address without brackets: `127.0.0.1` or `::1`.
        package var host: String
        /// The TCP port, 0...65535.
        package var port: Int

        /// Creates an address from parts that are already known to be valid (see `validate()`).
        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `HOST:PORT`, with an IPv6 host in brackets.
        ///
        /// - Throws: `InvalidValue` when the form, the address or the port is wrong.
        package init(parsing text: String) throws(InvalidValue) {
            let example = "expected HOST:PORT with a numeric host, such as 127.0.0.1:8080 or [::1]:8080"
            let host: Substring
            let portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                    throw InvalidValue("\(example), got \"\(text)\"")
                }
                host = text[text.index(after: text.startIndex)..<close]
                portText = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":") else {
                    throw InvalidValue("\(example), got \"\(text)\" (no port)")
                }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
                if host.contains(":") {
                    throw InvalidValue("\(example), got \"\(text)\" (write an IPv6 host in brackets)")
                }
            }
            guard let port = WholeNumber.parse(portText), port <= 65_535, !portText.contains("_") else {
                throw InvalidValue("port in \"\(text)\" must be a number from 0 to 65535")
            }
            self.init(host: String(host), port: port)
            if let problem = hostProblem { throw InvalidValue("\(problem) in \"\(text)\"") }
        }

        /// Whether the host is an IPv6 address.
        package var isIPv6: Bool { host.contains(":") }

        /// `127.0.0.1:8080` or `[::1]:8080`, the form `init(parsing:)` accepts.
        package var description: String {
            isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
        }

        /// Checks the address and port.
        ///
        /// - Throws: `InvalidValue` when the host is not a numeric IP address or the port is out of range.
        package func validate() throws(InvalidValue) {
            if let problem = hostProblem { throw InvalidValue(problem) }
            guard (0...65_535).contains(port) else { throw InvalidValue("port \(port) is not in 0...65535") }
        }

        /// Why `host` is not a usable numeric address, or nil.
        private var hostProblem: String? {
            guard !host.isEmpty else { return "the host is missing (use 0.0.0.0 or [::] for every interface)" }
            guard IPAddressText.bytes(of: host) != nil else {
                return "\"\(host)\" is not a numeric IPv4 or IPv6 address"
            }
            return nil
        }
    }
}

/// Conversions between textual and binary IP addresses (`inet_pton`/`inet_ntop`, which never block).
enum IPAddressText {
    /// The 4 or 16 network-order bytes of a numeric IPv4 or IPv6 address, or nil if `text` is neither.
    static func bytes(of text: some StringProtocol) -> [UInt8]? {
        let text = String(text)
        if !text.contains(":") {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The canonical text of 4 or 16 network-order bytes (`10.0.0.0`, `fd00::`).
    static func text(of bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let result = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard result != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
