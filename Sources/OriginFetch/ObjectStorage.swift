// SPDX-License-Identifier: Apache-2.0

/// An S3-compatible object store: where its requests go and how they are signed.
///
/// Requests are path-style (`<endpoint>/<bucket>/<key>`), because virtual-hosted names need DNS per bucket and
/// most S3-compatible servers (MinIO, Ceph, moto) expect the path form. They are signed with AWS Signature V4 by
/// libcurl itself (`CURLOPT_AWS_SIGV4`), on the fetch thread's multi handle, like every other transfer.
///
/// The endpoint is the operator's, never a client's: a client can pick neither its host nor its port, only a key
/// (and, for `s3://` sources, a bucket from `s3.source_buckets`). So object transfers are not judged by the
/// SSRF address policy, which exists for client-chosen URLs; they follow no redirect and keep the fetcher's
/// size limit and deadline (docs/threat-model.md).
package struct ObjectStorage: Sendable, Hashable {
    /// `http(s)://host[:port]`, no path: `http://127.0.0.1:9000`, `https://s3.eu-west-1.amazonaws.com`.
    package var endpoint: String
    /// The signing region: `us-east-1` for most S3-compatible servers.
    package var region: String
    /// The access key pair requests are signed with.
    package var credentials: ObjectStorageCredentials

    /// A store at `endpoint`.
    package init(endpoint: String, region: String, credentials: ObjectStorageCredentials) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.region = region
        self.credentials = credentials
    }

    /// The path-style URL of `key` in `bucket`, the key encoded as SigV4's canonical URI wants it.
    ///
    /// libcurl 7.88 signs the path exactly as written and S3 canonicalises each byte of the key by AWS's
    /// URI-encoding, so the two agree only if the path is already in that form: every byte outside
    /// `A-Z a-z 0-9 - . _ ~` and `/` as `%XX` (upper-case hex). No query string is ever sent (libcurl 7.88 signs
    /// it unsorted). The key must have passed ``keyRefusal(_:)``, and the transfer sends the path as is
    /// (`CURLOPT_PATH_AS_IS`): together they keep the request in `bucket`.
    package func url(bucket: String, key: String) -> String {
        endpoint + "/" + bucket + "/" + Self.canonicalPath(key)
    }

    /// The longest key S3 stores, in bytes of UTF-8.
    package static let maxKeyBytes = 1024

    /// Why `key` (its bytes, already percent-decoded once) could name anything but one object of its bucket, or nil
    /// when it names exactly one.
    ///
    /// The path thumbd sends is `/<bucket>/<key>`, and a store or a proxy on the way may resolve dot segments,
    /// merge slashes, read a backslash as a slash or decode an escape a second time (libcurl itself resolves dot
    /// segments unless told not to). Each of those could move the request into another bucket, so a key is refused
    /// when any spelling of it could: an empty segment (a leading, trailing or doubled `/`), a `.` or `..` segment,
    /// a backslash, an escape that decodes to `.`, `/` or `\` (`%2e`, `%2f`, `%5c` left after the one decoding),
    /// a control byte, or bytes that are not UTF-8 (overlong forms of `.` and `/` among them; S3 keys are UTF-8).
    package static func keyRefusal<Key: Collection<UInt8>>(_ key: Key) -> String? {
        guard !key.isEmpty else { return "empty key" }
        guard key.count <= maxKeyBytes else { return "key longer than \(maxKeyBytes) bytes" }
        guard String(validating: key, as: UTF8.self) != nil else { return "key is not UTF-8" }
        let bytes = Array(key)
        for segment in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if segment.isEmpty { return "empty segment in key" }
            if segment.elementsEqual(".".utf8) || segment.elementsEqual("..".utf8) { return "dot segment in key" }
        }
        for (index, byte) in bytes.enumerated() {
            if byte < 0x20 || byte == 0x7F { return "control byte in key" }
            if byte == UInt8(ascii: "\\") { return "backslash in key" }
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count {
                let escape = (bytes[index + 1], bytes[index + 2] | 0x20)  // the hex digit's letter lower-cased
                if escape == (UInt8(ascii: "2"), UInt8(ascii: "e")) || escape == (UInt8(ascii: "2"), UInt8(ascii: "f"))
                    || escape == (UInt8(ascii: "5"), UInt8(ascii: "c"))
                {
                    return "escaped dot, slash or backslash in key"
                }
            }
        }
        return nil
    }

    /// The URL of a ListObjectsV2 request for the keys under `prefix` in `bucket`: its query already in SigV4's
    /// canonical form (parameters sorted by name, every byte outside `A-Z a-z 0-9 - . _ ~` escaped, `/` too),
    /// because libcurl 7.88 signs the query exactly as written.
    package func listURL(bucket: String, prefix: String, continuation: String?) -> String {
        var query = ""
        if let continuation { query += "continuation-token=" + Self.canonicalQueryValue(continuation) + "&" }
        query += "list-type=2&prefix=" + Self.canonicalQueryValue(prefix)
        return endpoint + "/" + bucket + "?" + query
    }

    /// A query value in AWS's URI encoding (`/` escaped too).
    static func canonicalQueryValue(_ value: String) -> String {
        var encoded = ""
        for character in canonicalPath(value) {
            if character == "/" { encoded += "%2F" } else { encoded.append(character) }
        }
        return encoded
    }

    /// `key`'s bytes in AWS's URI encoding, slashes kept.
    static func canonicalPath(_ key: String) -> String {
        var encoded = ""
        encoded.reserveCapacity(key.utf8.count)
        let hex = Array("0123456789ABCDEF")
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded.append("%")
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0x0F)])
            }
        }
        return encoded
    }

    /// Whether `name` is a bucket name S3 accepts (3–63 of `a-z 0-9 . -`, starting and ending with a letter or
    /// digit): anything else could change the request's path.
    package static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard isAlphanumeric(bytes[0]), isAlphanumeric(bytes[bytes.count - 1]) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }
}

/// An access key pair. Its description never shows the secret.
package struct ObjectStorageCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// `AWS_ACCESS_KEY_ID`.
    package var accessKeyID: String
    /// `AWS_SECRET_ACCESS_KEY`: never logged or printed.
    package var secretAccessKey: String

    /// A key pair.
    package init(accessKeyID: String, secretAccessKey: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// The access key id only.
    package var description: String { "\(accessKeyID):<redacted>" }

    /// The same as ``description`` (a dump of a configuration holding this shows no secret either).
    package var debugDescription: String { description }
}

/// One request to an object store: GET an object, or PUT one.
package struct ObjectRequest: Sendable {
    /// What to do with the object.
    package enum Method: Sendable {
        /// Read it. The answer is a ``FetchedSource`` with the object's bytes and `x-amz-meta-*` headers, or
        /// ``FetchError/originNotFound(status:)`` when there is none.
        case get
        /// Write it. The answer is an empty ``FetchedSource`` (status 200), or
        /// ``FetchError/originClientError(status:)`` 412 when `onlyIfAbsent` and the object exists.
        case put(ObjectUpload)
        /// Delete it. The answer is an empty ``FetchedSource`` (S3 answers 204 whether or not it existed).
        case delete
        /// List the keys that start with ``ObjectRequest/key`` (ListObjectsV2, at most 1000 a page), after
        /// `continuation` (a previous page's `NextContinuationToken`). The answer's body is S3's XML
        /// (``ObjectListing/parse(_:)``).
        case list(continuation: String?)
    }

    /// The store.
    package var storage: ObjectStorage
    /// The bucket (``ObjectStorage/isValidBucket(_:)``).
    package var bucket: String
    /// The object's key, without a leading slash.
    package var key: String
    /// GET, PUT, DELETE or a listing of the keys under `key`.
    package var method: Method
    /// The whole request's time limit, connection included (a shared cache must answer fast or be skipped).
    package var timeout: Duration
    /// Its class in the endpoint's per-host queue: lookups are interactive, writes background.
    package var priority: FetchPriority

    /// A request.
    package init(
        storage: ObjectStorage, bucket: String, key: String, method: Method, timeout: Duration,
        priority: FetchPriority
    ) {
        self.storage = storage
        self.bucket = bucket
        self.key = key
        self.method = method
        self.timeout = timeout
        self.priority = priority
    }
}

/// One page of a ListObjectsV2 answer: the keys, and the token of the next page when there is one.
package struct ObjectListing: Sendable, Equatable {
    package var keys: [String]
    package var nextContinuation: String?

    /// Reads `<Key>`, `<IsTruncated>` and `<NextContinuationToken>` out of S3's XML (keys of thumbd's own, hex and
    /// `/`; the five predefined entities are decoded).
    package static func parse(_ body: [UInt8]) -> ObjectListing {
        func values(of element: String) -> [String] {
            let open = Array(("<" + element + ">").utf8)
            let close = Array(("</" + element + ">").utf8)
            var found: [String] = []
            var index = 0
            while let start = firstIndex(of: open, in: body, from: index) {
                let valueStart = start + open.count
                guard let end = firstIndex(of: close, in: body, from: valueStart) else { break }
                found.append(unescape(String(decoding: body[valueStart..<end], as: UTF8.self)))
                index = end + close.count
            }
            return found
        }
        let truncated = values(of: "IsTruncated").first == "true"
        return ObjectListing(
            keys: values(of: "Key"), nextContinuation: truncated ? values(of: "NextContinuationToken").first : nil)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let entities: [(String, String)] = [("lt", "<"), ("gt", ">"), ("quot", "\""), ("apos", "'"), ("amp", "&")]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            rest = rest[rest.index(after: ampersand)...]
            if let semicolon = rest.firstIndex(of: ";"),
                let entity = entities.first(where: { $0.0 == rest[..<semicolon] })
            {
                result += entity.1
                rest = rest[rest.index(after: semicolon)...]
            } else {
                result += "&"
            }
        }
        return result + rest
    }
}

/// What a PUT sends.
package struct ObjectUpload: Sendable {
    /// The object's bytes.
    package var body: [UInt8]
    /// The lower-case hex SHA-256 of `body`: sent as `x-amz-content-sha256`, which libcurl 7.88 does not add by
    /// itself and S3 checks the body against.
    package var bodySHA256: String
    /// Its `Content-Type` (libcurl would otherwise send a form's).
    package var contentType: String
    /// `x-amz-meta-<name>: <value>` pairs, names lower-case; values printable ASCII.
    package var metadata: [(name: String, value: String)]
    /// Sends `If-None-Match: *`: the store refuses with 412 when the object exists.
    package var onlyIfAbsent: Bool

    /// An upload.
    package init(
        body: [UInt8], bodySHA256: String, contentType: String, metadata: [(name: String, value: String)],
        onlyIfAbsent: Bool
    ) {
        self.body = body
        self.bodySHA256 = bodySHA256
        self.contentType = contentType
        self.metadata = metadata
        self.onlyIfAbsent = onlyIfAbsent
    }
}

/// What the engine needs to run one transfer to an operator's endpoint: an object store's (a shared-tier request or
/// an `s3://` source, signed) or a notification's (``NotificationRequest``, unsigned).
struct ObjectTarget {
    /// The store whose credentials sign the request; nil for a notification.
    let storage: ObjectStorage?
    let url: String
    let upload: ObjectUpload?
    let timeout: Duration?
    /// `DELETE` for a deletion, a notification's method; nil for a GET (or a PUT, which `upload` makes).
    var customMethod: String? = nil
    /// A notification's header lines and body.
    var plain: PlainRequest? = nil

    /// SHA-256 of no bytes: the `x-amz-content-sha256` of a GET.
    static let emptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}

/// A notification's header lines and body (``NotificationRequest``).
struct PlainRequest {
    let headers: [String]
    let body: [UInt8]
}
