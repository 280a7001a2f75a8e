// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import OriginFetch

/// How object-store requests are addressed: the `s3://` source form and the path libcurl signs as written.
@Suite struct ObjectStorageTests {
    @Test(arguments: [
        ("s3://photos/a.jpg", "photos", "a.jpg"),
        ("s3://photos/dir/a%20b%2Bc.png", "photos", "dir/a b+c.png"),
        ("S3://photos/%C3%A9t%C3%A9.jpg", "photos", "été.jpg"),
    ])
    func readsBucketAndKey(_ text: String, _ bucket: String, _ key: String) throws {
        let url = try SourceURL(text)
        #expect(url.scheme == "s3" && url.host == bucket && url.objectKey == key)
    }

    @Test(arguments: [
        "s3://photos/", "s3://photos", "s3://photos:9000/a.jpg", "s3://photos/a.jpg?versionId=1", "s3://Ph_otos/a.jpg",
        "s3://ab/a.jpg", "s3://-photos/a.jpg", "s3://photos/a%00b.jpg",
    ])
    func refusesWhatWouldNotBeOneObject(_ text: String) {
        #expect(throws: FetchError.self) { try SourceURL(text) }
    }

    /// Every spelling that a store, a proxy or libcurl could resolve out of the bucket: dot segments (escaped or
    /// not, any case), escaped slashes and backslashes, double encoding, overlong UTF-8, empty segments, controls.
    @Test(arguments: [
        "s3://photos/%2e%2e/other/key", "s3://photos/.%2e/other/key", "s3://photos/%2e./other/key",
        "s3://photos/..%2fother/key", "s3://photos/%2E%2E/other/key", "s3://photos/x/%2e%2e/%2e%2e/other/key",
        "s3://photos/../other/key", "s3://photos/./key", "s3://photos/x/../../other/key", "s3://photos/x/..",
        "s3://photos/%252e%252e/other/key", "s3://photos/%252F", "s3://photos/a%255Cb", "s3://photos/..%5cother",
        "s3://photos/a%5Cb", "s3://photos/%c0%ae%c0%ae/other", "s3://photos/%c0%af", "s3://photos/%ff",
        "s3://photos//key", "s3://photos/%2fkey", "s3://photos/dir/", "s3://photos/a%0ab", "s3://photos/a%7fb",
        "s3://photos/%zz", "s3://photos/a%2", "s3://photos/" + String(repeating: "k", count: 1025),
    ])
    func refusesKeysThatCouldLeaveTheBucket(_ text: String) {
        #expect(throws: FetchError.self) { try SourceURL(text) }
    }

    @Test func keepsKeysThatOnlyLookLikeEscapes() throws {
        // dots inside a segment, and a longest key, are one object's key
        #expect(try SourceURL("s3://photos/a..b/..c/d.").objectKey == "a..b/..c/d.")
        #expect(try SourceURL("s3://photos/%2e%2ea").objectKey == "..a")
        let longest = String(repeating: "k", count: 1024)
        #expect(try SourceURL("s3://photos/" + longest).objectKey == longest)
    }

    @Test func theSharedTiersKeysFollowTheSameRule() {
        #expect(ObjectStorage.keyRefusal("thumbs/v/0123abcd".utf8) == nil)
        #expect(ObjectStorage.keyRefusal("../v/0123abcd".utf8) != nil)
        #expect(ObjectStorage.keyRefusal("a//v/0123abcd".utf8) != nil)
    }

    @Test func plainURLsHaveNoObjectKey() throws {
        #expect(try SourceURL("http://example.com/a.jpg").objectKey == nil)
    }

    @Test func keysAreWrittenInAWSURIEncodingWithSlashesKept() {
        let storage = ObjectStorage(
            endpoint: "http://127.0.0.1:9000/", region: "us-east-1",
            credentials: .init(accessKeyID: "AKIA", secretAccessKey: "secret"))
        #expect(
            storage.url(bucket: "b", key: "dir/a b+c~_.-é.png") == "http://127.0.0.1:9000/b/dir/a%20b%2Bc~_.-%C3%A9.png"
        )
        #expect(ObjectStorage.canonicalPath("%2F?#&=") == "%252F%3F%23%26%3D")
    }

    @Test func credentialsNeverDescribeTheSecret() {
        let credentials = ObjectStorageCredentials(accessKeyID: "AKIAEXAMPLE", secretAccessKey: "very-secret")
        let storage = ObjectStorage(endpoint: "http://s3", region: "r", credentials: credentials)
        #expect(!"\(credentials)".contains("very-secret") && !String(reflecting: credentials).contains("very-secret"))
        #expect(!"\(storage)".contains("very-secret") && !String(reflecting: storage).contains("very-secret"))
    }
}
