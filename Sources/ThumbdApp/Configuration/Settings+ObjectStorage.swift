// SPDX-License-Identifier: Apache-2.0
import Foundation
import OriginFetch
import ThumbdSettings

extension Settings {
    /// The `s3.*` store with its credentials, or nil without `s3.endpoint`. Read at start, at every reload (so
    /// rotated credentials in the file apply on SIGHUP) and by `--check-config`; never printed. The buckets named
    /// in `cache.shared.bucket` and `s3.source_buckets` are checked here with the store's own rule.
    ///
    /// Credentials come from `s3.credentials_file` (an AWS shared-credentials file: the `aws_access_key_id` and
    /// `aws_secret_access_key` of its `[default]` section, or of its top lines when it has no sections), else from
    /// the `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` environment variables. Session tokens are not
    /// supported (libcurl 7.88's SigV4 cannot send one).
    /// - Throws: `SettingsError` naming `s3.credentials_file` or `s3.endpoint` when no complete pair is found, or
    ///   the bucket key whose name S3 would refuse.
    func objectStorage(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SettingsError) -> ObjectStorage? {
        guard !s3.endpoint.isEmpty else { return nil }
        // S3's bucket-name rule: what keeps a bucket from changing a request's path.
        if cache.shared.isEnabled && !ObjectStorage.isValidBucket(cache.shared.bucket) {
            throw SettingsError(key: "cache.shared.bucket", reason: "must be a bucket name (3-63 of a-z 0-9 . -)")
        }
        if let bucket = s3.sourceBuckets.first(where: { !ObjectStorage.isValidBucket($0) }) {
            throw SettingsError(
                key: "s3.source_buckets", reason: "\"\(bucket)\" is not a bucket name (3-63 of a-z 0-9 . -)")
        }
        let credentials: ObjectStorageCredentials
        if !s3.credentialsFile.isEmpty {
            guard let data = FileManager.default.contents(atPath: s3.credentialsFile),
                let text = String(data: data, encoding: .utf8)
            else { throw SettingsError(key: "s3.credentials_file", reason: "cannot read \(s3.credentialsFile)") }
            guard let pair = Self.defaultCredentials(inSharedCredentialsFile: text) else {
                throw SettingsError(
                    key: "s3.credentials_file",
                    reason: "\(s3.credentialsFile) has no aws_access_key_id and aws_secret_access_key in [default]")
            }
            credentials = pair
        } else {
            guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
                let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
            else {
                throw SettingsError(
                    key: "s3.endpoint",
                    reason: "needs credentials: s3.credentials_file, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
            }
            credentials = ObjectStorageCredentials(accessKeyID: id, secretAccessKey: secret)
        }
        guard Self.isHeaderSafe(credentials.accessKeyID), Self.isHeaderSafe(credentials.secretAccessKey) else {
            throw SettingsError(key: "s3.credentials_file", reason: "credentials must be printable ASCII")
        }
        return ObjectStorage(endpoint: s3.endpoint, region: s3.region, credentials: credentials)
    }

    /// `fetch.*` with `s3://` sources from `storage` (nil refuses the scheme).
    func originFetcherConfiguration(objectStorage storage: ObjectStorage?) -> OriginFetcher.Configuration {
        var configuration = originFetcherConfiguration
        if let storage, !s3.sourceBuckets.isEmpty {
            configuration.s3Sources = .init(storage: storage, buckets: s3.sourceBuckets)
        }
        return configuration
    }

    /// The shared tier's settings, from `cache.shared.*`.
    var sharedTierSettings: SharedTier.Settings {
        SharedTier.Settings(
            bucket: cache.shared.bucket, prefix: cache.shared.prefix, timeout: cache.shared.timeout,
            breakerFailures: cache.shared.breakerFailures, breakerPause: cache.shared.breakerPause,
            putQueue: cache.shared.putQueue, keepsSources: cache.shared.keepsSources && cache.keepsSources)
    }

    /// The `[default]` pair of an AWS shared-credentials file.
    static func defaultCredentials(inSharedCredentialsFile text: String) -> ObjectStorageCredentials? {
        var section: String?
        var values: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == nil || section == "default", let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            values[name] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], !id.isEmpty, let secret = values["aws_secret_access_key"],
            !secret.isEmpty
        else { return nil }
        return ObjectStorageCredentials(accessKeyID: id, secretAccessKey: secret)
    }

    private static func isHeaderSafe(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
