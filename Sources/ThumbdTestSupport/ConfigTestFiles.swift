// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// Files for configuration tests: a private temporary directory per test, removed when the value is released,
/// and the repository root (found from this file's path, so tests run from any working directory).
package final class ConfigTestFiles {
    package let directory: URL

    package init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("thumbd-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to a file in the directory and returns its path.
    package func write(_ text: String, named name: String = "thumbd.yaml") throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The path of a new, not yet existing file in the directory.
    package func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// The repository root: this file is `Sources/ThumbdTestSupport/ConfigTestFiles.swift`.
    package static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
