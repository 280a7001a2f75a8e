// SPDX-License-Identifier: Apache-2.0
import EventLoops
import HTTP1
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Many clients at once, mixing synchronous and off-loop answers, pipelining, and clients that
/// vanish mid-request. Also meant for `swift test --sanitize=thread`.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ServerStressTests {
    @Test func concurrentClientsGetCorrectAnswersAndVanishingOnesLeakNothing() throws {
        let server = try TestServer()
        let clients = 8
        let rounds = 25
        let correct = Atomic<Int>(0)
        let failures = Recorder<String>()
        let finished = Atomic<Int>(0)
        let pool = try WorkerPool(
            configuration: .init(threads: clients, interactiveQueueCapacity: clients, name: "client"))
        let port = server.port
        for clientIndex in 0..<clients {
            try pool.submit {
                defer { finished.add(1, ordering: .sequentiallyConsistent) }
                do {
                    var client = try RawHTTPClient(port: port)
                    for round in 0..<rounds {
                        switch (clientIndex + round) % 5 {
                        case 0:
                            // Pipelined pair: one answered on the loop, one from a worker.
                            try client.send(
                                "GET /echo?c=\(clientIndex)&r=\(round) HTTP/1.1\r\nHost: t\r\n\r\n"
                                    + "GET /later?ms=1&c=\(clientIndex)&r=\(round) HTTP/1.1\r\nHost: t\r\n\r\n")
                            let first = try client.readResponse()
                            let second = try client.readResponse()
                            if first.text == "c=\(clientIndex)&r=\(round)"
                                && second.text == "ms=1&c=\(clientIndex)&r=\(round)"
                            {
                                correct.add(1, ordering: .relaxed)
                            } else {
                                failures.append("pair \(clientIndex)/\(round): \(first.text) | \(second.text)")
                            }
                        case 1:
                            // Vanish with a request pending, then reconnect.
                            try client.send("GET /later?ms=5 HTTP/1.1\r\nHost: t\r\n\r\n")
                            client.close(reset: round % 2 == 0)
                            client = try RawHTTPClient(port: port)
                            correct.add(1, ordering: .relaxed)
                        default:
                            let response = try client.get("/big?n=\(1000 * (round + 1))")
                            if response.body == TestServer.pattern(1000 * (round + 1)) {
                                correct.add(1, ordering: .relaxed)
                            } else {
                                failures.append("big \(clientIndex)/\(round): \(response.body.count) bytes")
                            }
                        }
                    }
                    client.close()
                } catch {
                    failures.append("client \(clientIndex): \(error)")
                }
            }
        }
        #expect(waitUntil(timeout: .seconds(40)) { finished.load(ordering: .sequentiallyConsistent) == clients })
        pool.shutdown()
        #expect(failures.values == [])
        #expect(correct.load(ordering: .relaxed) == clients * rounds)
        // Every connection, including the vanished ones, is closed and released.
        #expect(waitUntil { server.server.connectionCount == 0 })
        #expect(try server.client().get("/echo?still").text == "still")
    }
}
