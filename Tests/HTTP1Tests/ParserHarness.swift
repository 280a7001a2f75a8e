// SPDX-License-Identifier: Apache-2.0
@testable import HTTP1

/// What the parser made of some input, in a comparable form.
enum Parsed: Equatable, CustomStringConvertible {
    case request(method: String, path: String, query: String?, version: String, keepAlive: Bool, body: String)
    case failure(RequestParseError)
    case incomplete

    var description: String {
        switch self {
        case .request(let m, let p, let q, let v, let k, let b):
            "\(m) \(p) ?\(q ?? "nil") \(v) keepAlive=\(k) body=\(b.count)B"
        case .failure(let e): "failure(\(e))"
        case .incomplete: "incomplete"
        }
    }

    static func get(_ path: String, query: String? = nil, version: String = "HTTP/1.1", keepAlive: Bool = true)
        -> Parsed
    {
        .request(method: "GET", path: path, query: query, version: version, keepAlive: keepAlive, body: "")
    }
}

/// Feeds `input` to a parser `chunk` bytes at a time, keeping unconsumed bytes the way a
/// connection does, and records every request or failure (stopping at the first failure).
/// Also reports whether any `.headReceived(expectsContinue: true)` was seen.
func parse(
    _ input: [UInt8], limits: RequestParser.Limits = .init(), chunk: Int = .max
) -> (results: [Parsed], sawContinue: Bool, requests: [HTTPRequest]) {
    var parser = RequestParser(limits: limits)
    var pending: [UInt8] = []
    var results: [Parsed] = []
    var requests: [HTTPRequest] = []
    var sawContinue = false
    var offset = 0
    feeding: while offset < input.count {
        let take = min(chunk, input.count - offset)
        pending.append(contentsOf: input[offset..<offset + take])
        offset += take
        while !pending.isEmpty {
            let (event, consumed) = pending.withUnsafeBytes { parser.parse($0) }
            pending.removeFirst(consumed)
            switch event {
            case .needMoreData:
                continue feeding
            case .headReceived(let expectsContinue):
                sawContinue = sawContinue || expectsContinue
            case .request(let request):
                requests.append(request)
                results.append(
                    .request(
                        method: request.method.rawValue, path: request.path, query: request.query,
                        version: request.version.description, keepAlive: request.keepAlive,
                        body: String(decoding: request.body, as: UTF8.self)))
            case .failure(let error):
                results.append(.failure(error))
                break feeding
            }
        }
    }
    if results.isEmpty
        || (!pending.isEmpty && !(results.last.map { if case .failure = $0 { true } else { false } } ?? false))
    {
        if !parser.isAtRequestBoundary || !pending.isEmpty { results.append(.incomplete) }
    }
    return (results, sawContinue, requests)
}

func parse(_ text: String, limits: RequestParser.Limits = .init(), chunk: Int = .max) -> [Parsed] {
    parse(Array(text.utf8), limits: limits, chunk: chunk).results
}
