// SPDX-License-Identifier: Apache-2.0
// A server that answers GET /bench with a fixed in-memory body, for bench/http.sh.
//   thumbd-httpbench [--port N] [--threads N] [--body FILE | --size BYTES]
// Runs until SIGINT or SIGTERM, then shuts down gracefully.
import EventLoops
import HTTP1

#if canImport(Glibc)
    import Glibc
#endif

enum BenchServer {
    static func run() {
        var port = 18051
        var threads = EventLoopGroup.coreCount
        var size = 10 * 1024
        var bodyFile: String?
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--port": port = Int(arguments.next() ?? "") ?? port
            case "--threads": threads = Int(arguments.next() ?? "") ?? threads
            case "--size": size = Int(arguments.next() ?? "") ?? size
            case "--body": bodyFile = arguments.next()
            default:
                printError("unknown argument \(argument)")
                exit(2)
            }
        }
        let body: [UInt8]
        if let bodyFile {
            guard let bytes = readFile(bodyFile) else {
                printError("cannot read \(bodyFile)")
                exit(1)
            }
            body = bytes
        } else {
            body = (0..<size).map { UInt8(truncatingIfNeeded: 0x41 + $0 % 26) }
        }

        // Signals are blocked before any thread starts, so every thread inherits the mask and
        // only sigwait below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.threads = threads
        configuration.backlog = 4096
        let headers = [HTTPField(name: "Content-Type", value: "application/octet-stream")]
        var router = Router()
        router.add(.get, "/bench") { _, responder in
            responder.respond(HTTPResponse(status: .ok, headers: headers, body: .bytes(body)))
        }
        let server = HTTPServer(configuration: configuration, router: router)
        do {
            try server.start()
        } catch {
            printError("start failed: \(error)")
            exit(1)
        }
        print("thumbd-httpbench listening on \(server.localAddresses[0]) with \(threads) loops, body \(body.count) B")
        var received: Int32 = 0
        sigwait(&signals, &received)
        server.shutdown(timeout: .seconds(2))
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { return n == 0 ? bytes : nil }
            bytes += chunk[..<n]
        }
    }
}

private func printError(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress!, $0.count) }
}
