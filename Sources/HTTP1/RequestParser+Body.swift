// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

extension RequestParser {
    /// Reads body bytes (Content-Length or chunked), consuming them as they come.
    mutating func parseBody(_ input: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        let end = input.count
        var i = 0
        while true {
            switch phase {
            case .body(let remaining):
                let take = min(remaining, end - i)
                appendBody(input, i, take)
                i += take
                if take == remaining { return (.request(completeBody()), i) }
                phase = .body(remaining: remaining - take)
                return (.needMoreData, i)

            case .chunkSize:
                guard let lineFeed = findLineFeed(input, from: i) else {
                    if end - i > limits.maxChunkLineBytes { return failBody(.invalidChunkedEncoding) }
                    return (.needMoreData, i)
                }
                if lineFeed - i > limits.maxChunkLineBytes { return failBody(.invalidChunkedEncoding) }
                guard lineFeed > i, input[lineFeed - 1] == 0x0D else { return failBody(.bareLineFeed) }
                guard let size = parseChunkSize(input, i, lineFeed - 1) else {
                    return failBody(.invalidChunkedEncoding)
                }
                i = lineFeed + 1
                if size == 0 {
                    phase = .trailers
                } else {
                    guard size <= limits.maxBodyBytes - bodyBytes else { return failBody(.bodyTooLarge) }
                    phase = .chunkData(remaining: size)
                }

            case .chunkData(let remaining):
                let take = min(remaining, end - i)
                appendBody(input, i, take)
                i += take
                if take < remaining {
                    phase = .chunkData(remaining: remaining - take)
                    return (.needMoreData, i)
                }
                phase = .chunkDataEnd

            case .chunkDataEnd:
                if end - i < 2 {
                    // A lone byte may still be checked now: anything but CR is already wrong.
                    if end - i == 1 && input[i] != 0x0D { return failBody(.invalidChunkedEncoding) }
                    return (.needMoreData, i)
                }
                guard input[i] == 0x0D, input[i + 1] == 0x0A else { return failBody(.invalidChunkedEncoding) }
                i += 2
                phase = .chunkSize

            case .trailers:
                guard let lineFeed = findLineFeed(input, from: i) else {
                    if trailerBytes + (end - i) > limits.maxHeaderBlockBytes { return failBody(.headerBlockTooLarge) }
                    return (.needMoreData, i)
                }
                guard lineFeed > i, input[lineFeed - 1] == 0x0D else { return failBody(.bareLineFeed) }
                trailerBytes += lineFeed + 1 - i
                if trailerBytes > limits.maxHeaderBlockBytes { return failBody(.headerBlockTooLarge) }
                if lineFeed - 1 == i {
                    return (.request(completeBody()), lineFeed + 1)
                }
                trailerFields += 1
                if trailerFields > limits.maxHeaderFields { return failBody(.tooManyHeaderFields) }
                // Trailers are validated like fields and then dropped: nothing here needs them.
                if let error = validateTrailer(input, i, lineFeed - 1) { return failBody(error) }
                i = lineFeed + 1

            case .head, .failed:
                preconditionFailure("parseBody called outside a body")
            }
        }
    }

    private mutating func appendBody(_ input: UnsafeRawBufferPointer, _ start: Int, _ count: Int) {
        guard count > 0 else { return }
        pending!.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[start..<start + count]))
        bodyBytes += count
    }

    private mutating func completeBody() -> HTTPRequest {
        let request = pending!
        pending = nil
        bodyBytes = 0
        phase = .head
        return request
    }

    private func findLineFeed(_ input: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < input.count, let base = input.baseAddress,
            let found = memchr(base + start, 0x0A, input.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// `chunk-size [ chunk-ext ]` (RFC 9112 §7.1.1): 1–15 hex digits, then optional whitespace and
    /// `;`-extensions made of visible characters, which are ignored.
    private func parseChunkSize(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int? {
        var i = start
        var size = 0
        while i < end, let digit = hexValue(p[i]) {
            guard i - start < 15 else { return nil }
            size = size << 4 | digit
            i += 1
        }
        guard i > start else { return nil }
        while i < end && (p[i] == 0x20 || p[i] == 0x09) { i += 1 }
        if i < end {
            guard p[i] == UInt8(ascii: ";") else { return nil }
            for j in (i + 1)..<end {
                let byte = p[j]
                guard byte == 0x09 || (byte >= 0x20 && byte < 0x7F) else { return nil }
            }
        }
        return size
    }

    private func validateTrailer(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> RequestParseError? {
        if p[start] == 0x20 || p[start] == 0x09 { return .obsoleteLineFolding }
        var i = start
        while i < end && isTokenByte(p[i]) { i += 1 }
        guard i > start, i < end, p[i] == UInt8(ascii: ":") else { return .invalidFieldName }
        for j in (i + 1)..<end {
            let byte = p[j]
            guard byte == 0x09 || (byte >= 0x20 && byte != 0x7F) else { return .invalidFieldValue }
        }
        return nil
    }

    private mutating func failBody(_ error: RequestParseError) -> (event: Event, consumed: Int) {
        phase = .failed(error)
        pending = nil
        return (.failure(error), 0)
    }
}

@inline(__always)
private func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 0x30...0x39: Int(byte - 0x30)
    case 0x41...0x46: Int(byte - 0x41 + 10)
    case 0x61...0x66: Int(byte - 0x61 + 10)
    default: nil
    }
}
