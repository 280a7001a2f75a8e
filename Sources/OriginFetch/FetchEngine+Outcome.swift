// SPDX-License-Identifier: Apache-2.0
import CCurl
import CCurlShims

extension FetchEngine {
    /// What a finished hop means: a final result, or a redirect to follow.
    enum HopOutcome {
        case done(Result<Revalidation, FetchError>)
        case redirect(SourceURL)
    }

    /// Classifies a finished hop from libcurl's code, the transfer's own records (SSRF
    /// refusal, size limit) and the origin's status. Order matters: our own reasons for
    /// stopping a transfer explain libcurl's generic code (a refusal shows up as
    /// CURLE_COULDNT_CONNECT, the size limit as CURLE_WRITE_ERROR).
    func outcome(of transfer: Transfer, code: CURLcode) -> HopOutcome {
        if code == CURLE_COULDNT_CONNECT, let refusal = transfer.refusal {
            return .done(.failure(.addressForbidden(address: refusal.address.description, range: refusal.range)))
        }
        if transfer.exceededLimit {
            return .done(.failure(.tooLarge(limit: configuration.maxSourceBytes)))
        }
        guard code == CURLE_OK || (code == CURLE_WRITE_ERROR && transfer.stoppedNonSuccessBody) else {
            return .done(.failure(Self.error(for: code, detail: detail(transfer, code))))
        }
        var status = 0
        _ = thumbd_curl_getinfo_long(transfer.easy, CURLINFO_RESPONSE_CODE, &status)
        switch status {
        case 200..<300:
            return .done(.success(.modified(source(of: transfer, status: status))))
        case 304 where transfer.key.validators != nil:
            return .done(.success(.notModified(freshnessHeaders(transfer))))
        case 301, 302, 303, 307, 308:
            // An object store's redirect is not followed: its endpoint is fixed by the operator.
            if transfer.object != nil { return .done(.failure(.unexpectedStatus(status: status))) }
            return redirect(transfer, status: status)
        case 404, 410:
            return .done(.failure(.originNotFound(status: status)))
        case 400..<500:
            return .done(.failure(.originClientError(status: status)))
        case 500..<600:
            return .done(.failure(.originServerError(status: status)))
        default:
            return .done(.failure(.unexpectedStatus(status: status)))
        }
    }

    private func redirect(_ transfer: Transfer, status: Int) -> HopOutcome {
        var pointer: UnsafeMutableRawPointer?
        _ = thumbd_curl_getinfo_ptr(transfer.easy, CURLINFO_REDIRECT_URL, &pointer)
        // CURLINFO_REDIRECT_URL is the Location header resolved against the current URL.
        guard let pointer else { return .done(.failure(.unexpectedStatus(status: status))) }
        let location = String(cString: pointer.assumingMemoryBound(to: CChar.self))
        guard transfer.redirectCount < configuration.maxRedirects else {
            return .done(.failure(.tooManyRedirects(limit: configuration.maxRedirects)))
        }
        let target: SourceURL
        do {
            target = try SourceURL(location)
        } catch {
            return .done(.failure(error))
        }
        if let refusal = hostRefusal(target) { return .done(.failure(refusal)) }
        guard !transfer.visited.contains(target.string) else {
            return .done(.failure(.redirectLoop(url: target.string)))
        }
        return .redirect(target)
    }

    private func source(of transfer: Transfer, status: Int) -> FetchedSource {
        FetchedSource(
            body: transfer.takeBody(), requestedURL: transfer.source.string, finalURL: transfer.current.string,
            status: status, contentType: header("Content-Type", of: transfer), headers: freshnessHeaders(transfer),
            metadata: transfer.object == nil ? [:] : objectMetadata(transfer))
    }

    /// An object store's `x-amz-meta-*` response headers, by lower-case name without the prefix.
    private func objectMetadata(_ transfer: Transfer) -> [String: String] {
        guard let easy = transfer.easy else { return [:] }
        var metadata: [String: String] = [:]
        var previous: UnsafeMutablePointer<curl_header>?
        while let header = curl_easy_nextheader(easy, UInt32(CURLH_HEADER), -1, previous) {
            previous = header
            let name = String(cString: header.pointee.name).lowercased()
            guard name.hasPrefix("x-amz-meta-") else { continue }
            metadata[String(name.dropFirst("x-amz-meta-".count))] = String(cString: header.pointee.value)
        }
        return metadata
    }

    private func freshnessHeaders(_ transfer: Transfer) -> FreshnessHeaders {
        FreshnessHeaders(
            cacheControl: header("Cache-Control", of: transfer), expires: header("Expires", of: transfer),
            date: header("Date", of: transfer), age: header("Age", of: transfer),
            etag: header("ETag", of: transfer), lastModified: header("Last-Modified", of: transfer))
    }

    /// A response header of the last request on the handle (`curl_easy_header`, libcurl ≥ 7.84),
    /// repeated occurrences joined with ", ".
    private func header(_ name: String, of transfer: Transfer) -> String? {
        guard let easy = transfer.easy else { return nil }
        var values: [String] = []
        var index = 0
        var total = 1
        while index < total {
            var header: UnsafeMutablePointer<curl_header>?
            guard curl_easy_header(easy, name, index, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
                let header
            else { break }
            total = header.pointee.amount
            values.append(String(cString: header.pointee.value))
            index += 1
        }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    private func detail(_ transfer: Transfer, _ code: CURLcode) -> String {
        let text = transfer.errorDetail
        let reason = text.isEmpty ? String(cString: curl_easy_strerror(code)) : text
        return "\(transfer.current): \(reason) (CURLcode \(code.rawValue))"
    }

    /// Maps a libcurl failure to an error class.
    static func error(for code: CURLcode, detail: String) -> FetchError {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return .dnsFailure(detail: detail)
        case CURLE_COULDNT_CONNECT:
            return .connectionRefused(detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(detail: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tlsFailure(detail: detail)
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .schemeForbidden(scheme: detail)
        case CURLE_OUT_OF_MEMORY, CURLE_BAD_FUNCTION_ARGUMENT, CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN,
            CURLE_FAILED_INIT, CURLE_URL_MALFORMAT:
            return .internalFailure(detail: detail)
        default:
            // Resets, truncated bodies (PARTIAL_FILE), malformed responses, receive/send errors.
            return .connectionFailed(detail: detail)
        }
    }
}
