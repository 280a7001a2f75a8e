// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A listener whose accept queue is full, so that new connections hang in SYN-SENT: the way
/// to exercise a connect timeout on loopback (the kernel drops SYNs to a full queue).
package final class BlackholeListener: Sendable {
    /// Its port on `host`.
    package let port: Int
    private let listener: Int32
    private let filler: Int32

    /// Listens on `host` with backlog 0 and fills the queue with one connection of its own.
    package init(host: String = "127.0.0.1") throws(LoopbackSocketError) {
        let (fd, port) = try LoopbackSocket.listen(host: host, backlog: 0)
        self.listener = fd
        self.port = port
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        self.filler = client
    }

    deinit {
        close(filler)
        close(listener)
    }
}
