// SPDX-License-Identifier: Apache-2.0
import Foundation
import ThumbdTestSupport

/// The URL builders from PyPI that sign thumbor's and imgproxy's URLs for the tests (Tests/Builders/: libthumbor,
/// imgproxy), run with the virtual environment `make test` makes (`.venv-test/`, Makefile `test-venv`).
enum URLBuilders {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The package's root, found from this file's path.
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// Runs `Tests/Builders/<script>` on `spec` (JSON text) and returns what it printed, decoded as a list of URLs.
    static func run(_ script: String, spec: String) throws -> [String] {
        let python = packageRoot + "/.venv-test/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(
                description: "no \(python): run `make test-venv` (`make test` does) to install the URL builders")
        }
        let directory = try TempDirectory(prefix: "thumbd-builders")
        let specPath = directory.appending("spec.json")
        try Data(spec.utf8).write(to: URL(fileURLWithPath: specPath))
        let child = try ChildProcess(
            executable: python, arguments: [packageRoot + "/Tests/Builders/" + script, specPath])
        guard let termination = child.wait(timeout: .seconds(60)) else {
            _ = child.kill(SIGKILL)
            _ = child.wait(timeout: .seconds(5))
            throw Failure(description: "\(script) did not finish in 60 s")
        }
        guard termination == .exited(0),
            let urls = try JSONSerialization.jsonObject(with: Data(child.standardOutput.utf8)) as? [String]
        else {
            throw Failure(description: "\(script) \(termination): \(child.standardError.suffix(2000))")
        }
        return urls
    }
}
