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
