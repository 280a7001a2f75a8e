// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Synchronization

/// `GET|HEAD /health` (liveness: 200 while the process runs) and `/ready` (readiness: 200 between
/// `ThumbdService.start()` and the beginning of its shutdown, 503 otherwise).
///
/// Both answer on the event loop from prebuilt responses: no lock, queue or allocation that request load could
/// fill, so a loaded server still says it is alive.
final class HealthRoutes: Sendable {
    private let ready = Atomic<Bool>(false)

    /// Whether the service can serve (`/ready` answers 200).
    var isReady: Bool {
        get { ready.load(ordering: .relaxed) }
        set { ready.store(newValue, ordering: .relaxed) }
    }

    /// Adds `/health` and `/ready` to `router`.
    func register(in router: inout Router) {
        let health = HTTPResponse(
            status: .ok, headers: [HTTPField(name: "Content-Type", value: "text/plain")],
            body: .bytes(Array("ok\n".utf8)))
        router.add(.get, "/health") { _, responder in responder.respond(health) }
        router.add(.head, "/health") { _, responder in responder.respond(health) }
        let readyResponse = HTTPResponse(
            status: .ok, headers: [HTTPField(name: "Content-Type", value: "application/json")],
            body: .bytes(Array("{\"status\": 200, \"ready\": true}".utf8)))
        let notReadyResponse = HTTPResponse.error(
            HTTPStatus(code: 503, reasonPhrase: "Service Unavailable"), message: "not ready")
        let readiness: HTTPHandler = { [self] _, responder in
            responder.respond(isReady ? readyResponse : notReadyResponse)
        }
        router.add(.get, "/ready", handler: readiness)
        router.add(.head, "/ready", handler: readiness)
    }
}
