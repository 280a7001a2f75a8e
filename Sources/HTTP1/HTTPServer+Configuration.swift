// SPDX-License-Identifier: Apache-2.0
import EventLoops

extension HTTPServer {
    /// Settings of the server (the `server.*` section of the config file).
    package struct Configuration: Sendable, Hashable {
        /// Listen host: numeric IPv4, IPv6 (`::1` or `[::1]`), `localhost` or `*` (`server.listen`).
        package var host = "127.0.0.1"
        /// Listen port; 0 picks a free one (tests), see ``HTTPServer/localAddresses``.
        package var port = 8080
        /// Event loops, one thread and one `SO_REUSEPORT` listen socket each (`server.threads`).
        package var threads = EventLoopGroup.coreCount
        /// Open connections, all loops together; accepting pauses at the limit (`server.max_connections`).
        package var maxConnections = 10_000
        /// Largest request body (`server.max_body_bytes`); 413 beyond.
        package var maxBodyBytes = 1024 * 1024
        /// Longest request line (414 beyond).
        package var maxRequestLineBytes = 8 * 1024
        /// Largest header block (431 beyond).
        package var maxHeaderBytes = 32 * 1024
        /// Most header fields (431 beyond).
        package var maxHeaderFields = 100
        /// From accept or the first byte of a request to its complete head; also the most time
        /// between two reads of a body (`server.header_read_timeout`). 408 and close on expiry.
        package var headerReadTimeout: Duration = .seconds(10)
        /// Keep-alive idle time between requests (`server.idle_timeout`).
        package var idleTimeout: Duration = .seconds(60)
        /// The most time output may wait on a client that does not read (`server.write_stall_timeout`).
        package var writeStallTimeout: Duration = .seconds(30)
        /// How long a graceful shutdown lets in-flight requests finish (`server.shutdown_timeout`).
        package var shutdownTimeout: Duration = .seconds(10)
        /// `listen(2)` backlog per loop (`server.backlog`).
        package var backlog = 1024

        /// Creates the default configuration.
        package init() {}

        /// Checks every value's range.
        /// - Throws: ``ConfigurationError`` naming the first bad key.
        package func validate() throws(ConfigurationError) {
            do {
                _ = try SocketAddress.listenAddress(host: host, port: port)
            } catch {
                throw ConfigurationError(key: "server.listen", reason: "\(error)")
            }
            try check((0...65535).contains(port), "server.listen", "port must be 0...65535")
            try check((1...256).contains(threads), "server.threads", "must be 1...256")
            try check((1...1_000_000).contains(maxConnections), "server.max_connections", "must be 1...1000000")
            try check((0...(1 << 30)).contains(maxBodyBytes), "server.max_body_bytes", "must be 0...1GiB")
            try check(
                (64...65_536).contains(maxRequestLineBytes), "server.max_request_line_bytes", "must be 64...64KiB")
            try check((256...65_536).contains(maxHeaderBytes), "server.max_header_bytes", "must be 256...64KiB")
            try check(
                maxRequestLineBytes + maxHeaderBytes <= 65_535, "server.max_header_bytes",
                "request line and header block together must stay below 64 KiB")
            try check((1...1000).contains(maxHeaderFields), "server.max_header_fields", "must be 1...1000")
            try positive(headerReadTimeout, "server.header_read_timeout")
            try positive(idleTimeout, "server.idle_timeout")
            try positive(writeStallTimeout, "server.write_stall_timeout")
            try check(shutdownTimeout >= .zero, "server.shutdown_timeout", "must not be negative")
            try check((1...65_535).contains(backlog), "server.backlog", "must be 1...65535")
        }

        private func check(_ condition: Bool, _ key: String, _ reason: String) throws(ConfigurationError) {
            if !condition { throw ConfigurationError(key: key, reason: reason) }
        }

        private func positive(_ value: Duration, _ key: String) throws(ConfigurationError) {
            try check(value > .zero && value <= .seconds(86_400), key, "must be more than 0 and at most 24h")
        }

        var timeouts: Connection.StateMachine<LoopInstant>.Timeouts {
            .init(headerRead: headerReadTimeout, idle: idleTimeout, writeStall: writeStallTimeout)
        }

        var parserLimits: RequestParser.Limits {
            var limits = RequestParser.Limits()
            limits.maxBodyBytes = maxBodyBytes
            limits.maxRequestLineBytes = maxRequestLineBytes
            limits.maxHeaderBlockBytes = maxHeaderBytes
            limits.maxHeaderFields = maxHeaderFields
            return limits
        }
    }
}
