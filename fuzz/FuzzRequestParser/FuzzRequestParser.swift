// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point over HTTP1.RequestParser (built with -sanitize=fuzzer,address; see fuzz/run.sh).
//
// Besides "no crash, no memory error", every input checks that parsing is independent of how the
// bytes are split: the whole input at once and the same bytes in pieces (sizes from the first
// byte) must yield the same requests, and must both fail or both not fail. The kind of failure
// may differ, because partial input is checked early (e.g. a bad byte is refused before a line is
// long enough to be "too long").
import CFuzzDriver
import HTTP1

private enum Outcome: Equatable {
    case request(String)
    case failure
    case incomplete
}

private func limits() -> RequestParser.Limits {
    // Small limits so the fuzzer reaches every limit path with short inputs.
    var limits = RequestParser.Limits()
    limits.maxRequestLineBytes = 64
    limits.maxHeaderBlockBytes = 256
    limits.maxHeaderFields = 8
    limits.maxBodyBytes = 128
    limits.maxChunkLineBytes = 32
    return limits
}

private func describe(_ request: HTTPRequest) -> String {
    var text = "\(request.method) \(request.path) \(request.query ?? "<nil>") \(request.version) \(request.keepAlive)"
    precondition(request.path.hasPrefix("/") || request.path == "*", "path must be origin-form or *")
    precondition(request.body.count <= 128, "body beyond the limit")
    for index in request.headers.indices {
        let field = request.headers[index]
        precondition(!field.name.isEmpty, "empty field name")
        precondition(request.headers[field.name] != nil, "lookup must find a present field")
        text += "|\(field.name)=\(field.value)"
    }
    text += "|body=\(request.body)"
    return text
}

private func run(_ input: [UInt8], pieces: (Int) -> Int) -> [Outcome] {
    var parser = RequestParser(limits: limits())
    var pending: [UInt8] = []
    var outcomes: [Outcome] = []
    var offset = 0
    var step = 0
    feeding: while offset < input.count {
        let take = min(max(1, pieces(step)), input.count - offset)
        step += 1
        pending.append(contentsOf: input[offset..<offset + take])
        offset += take
        while !pending.isEmpty {
            let (event, consumed) = pending.withUnsafeBytes { parser.parse($0) }
            precondition(consumed >= 0 && consumed <= pending.count, "consumed out of range")
            pending.removeFirst(consumed)
            switch event {
            case .needMoreData:
                continue feeding
            case .headReceived:
                continue
            case .request(let request):
                outcomes.append(.request(describe(request)))
            case .failure:
                outcomes.append(.failure)
                return outcomes
            }
        }
    }
    if !pending.isEmpty || !parser.isAtRequestBoundary { outcomes.append(.incomplete) }
    return outcomes
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let seed = Int(data[0])
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = run(input) { _ in Int.max }
    let split = run(input) { step in (seed >> (step % 4)) % 13 + 1 }
    precondition(whole == split, "parsing depends on how the input is split")
    return 0
}

/// The executable's entry point (SwiftPM aliases `main` to it): runs libFuzzer's driver.
@_cdecl("FuzzRequestParser_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    thumbd_fuzz_run(argc, argv)
}
