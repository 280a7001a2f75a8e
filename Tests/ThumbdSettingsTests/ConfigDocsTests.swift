// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdSettings

@Suite struct ConfigDocsTests {
    /// The rows of the key tables in docs/configuration.md, by key: [default, unit, environment, reload, meaning].
    private func documentedRows() throws -> [String: [String]] {
        let url = ConfigTestFiles.repositoryRoot.appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 6 else {
                Issue.record("table row without 6 cells: \(line)")
                continue
            }
            let key = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            #expect(rows[key] == nil, "\(key) documented twice")
            rows[key] = Array(cells.dropFirst())
        }
        return rows
    }

    @Test func docsListEveryKeyWithItsDefaultEnvironmentNameAndReloadability() throws {
        // Given docs/configuration.md, then each key of Settings has a row whose default is the value in code,
        // whose environment variable is the derived name, and whose reload column matches the registry.
        let rows = try documentedRows()
        let defaults = Settings()
        for key in Settings.keys {
            guard let row = rows[key.name] else {
                Issue.record("docs/configuration.md does not list \(key.name)")
                continue
            }
            #expect(row[0] == "`\(key.displayValue(in: defaults))`", "default of \(key.name)")
            #expect(row[2] == "`\(key.environmentName)`", "environment name of \(key.name)")
            #expect(row[3] == key.reload.rawValue, "reload of \(key.name)")
            #expect(!row[4].isEmpty, "meaning of \(key.name)")
        }
        let known = Set(Settings.keys.map(\.name))
        for documented in rows.keys where !known.contains(documented) {
            Issue.record("docs/configuration.md lists \(documented), which Settings does not have")
        }
    }

    @Test func exampleConfigMarksRestartKeys() throws {
        // Given config/thumbd.yaml, then the comment above each key says [restart] exactly for restart keys.
        let url = ConfigTestFiles.repositoryRoot.appendingPathComponent("config/thumbd.yaml")
        let lines = try String(contentsOf: url, encoding: .utf8).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        var sections: [String] = []
        var comment = ""
        for line in lines {
            let trimmed = line.drop { $0 == " " }
            let depth = (line.count - trimmed.count) / 2
            if trimmed.hasPrefix("#") {
                comment += trimmed + "\n"
                continue
            }
            guard let colon = trimmed.firstIndex(of: ":") else {
                comment = ""
                continue
            }
            sections = Array(sections.prefix(depth)) + [String(trimmed[..<colon])]
            let name = sections.joined(separator: ".")
            if let key = Settings.keys.first(where: { $0.name == name }) {
                #expect(comment.contains("[restart]") == (key.reload == .restart), "[restart] marking of \(name)")
                #expect(comment.contains("Default"), "default stated for \(name)")
            }
            comment = ""
        }
    }
}
