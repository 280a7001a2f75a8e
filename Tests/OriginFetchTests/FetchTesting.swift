// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Synchronization
import Testing
import ThumbdTestSupport

/// The origin tests fetch from: 127.0.0.2, the one loopback address the test policy allows.
/// Refusal tests use a second origin on 127.0.0.1, which stays forbidden.
let allowedOriginHost = "127.0.0.2"

/// A test configuration: the SSRF guard on, with 127.0.0.2 as the only exception.
func testConfiguration(_ adjust: (inout OriginFetcher.Configuration) -> Void = { _ in }) -> OriginFetcher.Configuration
{
    var configuration = OriginFetcher.Configuration()
    configuration.allowedNetworks = [IPNetwork("\(allowedOriginHost)/32")!]
    adjust(&configuration)
    return configuration
}

extension OriginFetcher {
    /// Async convenience for tests only (the module itself has no async API).
    func fetch(_ url: String, priority: FetchPriority = .interactive) async -> Result<FetchedSource, FetchError> {
        await withCheckedContinuation { continuation in
            fetch(FetchRequest(url: url, priority: priority)) { continuation.resume(returning: $0) }
        }
    }

    /// Async convenience for conditional fetches in tests.
    func revalidate(_ url: String, validators: Validators) async -> Result<Revalidation, FetchError> {
        await withCheckedContinuation { continuation in
            revalidate(FetchRequest(url: url), validators: validators) { continuation.resume(returning: $0) }
        }
    }
}

extension Result {
    /// The error, or nil on success (for `#expect(result.failure == ...)`).
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The value, or nil on failure.
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// Collects completions from the fetch thread, in arrival order.
final class Collector<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// Deterministic bytes standing in for an image.
func sampleBody(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
}
