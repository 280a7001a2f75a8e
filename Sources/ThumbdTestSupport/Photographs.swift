// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Real photographs for tests that need faces and scenes: scikit-image's, from its wheel in `.venv-test/`
/// (`make test-venv`, which `make test` runs, installs it from Tests/Builders/requirements.txt).
package enum Photographs {
    package struct Missing: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    /// The package's root directory (where `.venv-test/` is).
    package static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// The path of one of scikit-image's photographs (`astronaut.png`, `coffee.png`, …); a clear failure when it is
    /// not installed.
    package static func path(_ name: String) throws -> String {
        let lib = packageRoot + "/.venv-test/lib"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        for version in versions.sorted() where version.hasPrefix("python3") {
            let path = "\(lib)/\(version)/site-packages/skimage/data/\(name)"
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        throw Missing(
            description: "no skimage/data/\(name) under \(lib): run `make test-venv` (`make test` does) to install "
                + "scikit-image (Tests/Builders/requirements.txt)")
    }

    /// Its bytes.
    package static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }
}
