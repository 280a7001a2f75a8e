// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A numeric IPv4 or IPv6 address with a port, as the server binds it.
package struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// Address bytes in network order: 4 for IPv4, 16 for IPv6.
    let bytes: [UInt8]
    /// The TCP port.
    package let port: Int

    /// Whether this is an IPv6 address.
    package var isIPv6: Bool { bytes.count == 16 }

    /// The numeric host, e.g. `127.0.0.1` or `::1`.
    package var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(isIPv6 ? AF_INET6 : AF_INET, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `127.0.0.1:8080` or `[::1]:8080`.
    package var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    init(bytes: [UInt8], port: Int) {
        self.bytes = bytes
        self.port = port
    }

    /// Parses a listen host: a numeric IPv4 address, an IPv6 address with or without brackets
    /// (`[::1]`), `localhost` (127.0.0.1), or `*` (all IPv4 interfaces). Names are not resolved: a
    /// listen address that depends on DNS at start-up is a configuration error.
    /// - Throws: ``HTTPServerError/invalidListenAddress(_:)``.
    package static func listenAddress(host: String, port: Int) throws(HTTPServerError) -> SocketAddress {
        var name = host
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { name = "127.0.0.1" }
        if name == "*" || name.isEmpty { name = "0.0.0.0" }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return SocketAddress(bytes: withUnsafeBytes(of: &v4) { Array($0) }, port: port)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return SocketAddress(bytes: withUnsafeBytes(of: &v6) { Array($0) }, port: port)
        }
        throw .invalidListenAddress(host)
    }

    /// Calls `body` with a `sockaddr` for this address.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// The local address of a bound socket (`getsockname`).
    static func local(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    SocketAddress(
                        bytes: withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) },
                        port: Int(UInt16(bigEndian: v4.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    SocketAddress(
                        bytes: withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) },
                        port: Int(UInt16(bigEndian: v6.pointee.sin6_port)))
                }
            }
        default:
            return nil
        }
    }
}
