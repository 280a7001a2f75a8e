// SPDX-License-Identifier: Apache-2.0

import Yams

extension ConfigFile {
    /// What the key check learnt about a file while walking it.
    struct FileShape {
        /// Line of each key set in the file, for error messages and `--check-config`.
        var lines: [String: Int] = [:]
        /// Keys written without a value (`allowed_hosts:`), read as empty text or an empty list.
        var nullKeys: Set<String> = []
        /// True when the file has no document at all (empty, or only comments): defaults apply.
        var isEmpty = false
        /// The entries of each mapping key (`presets`), as written.
        var mappings: [String: [String: String]] = [:]
        /// Line of each mapping entry (`presets.card`).
        var entryLines: [String: Int] = [:]
    }

    /// Walks the YAML tree and refuses anything that is not a known key with a value of the right shape.
    ///
    /// swift-configuration answers only the keys it is asked for, so without this walk a misspelt key
    /// (`max_conections`) would be ignored and its default silently kept.
    ///
    /// - Throws: `SettingsError` naming the unknown or misshapen key, its line, and the closest known key.
    static func checkKeys(yaml: String, path: String) throws(SettingsError) -> FileShape {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw SettingsError(key: path, reason: "not valid YAML: \(error)")
        }
        var shape = FileShape()
        guard let root else {
            shape.isEmpty = true
            return shape
        }
        if root.null != nil {
            shape.isEmpty = true
            return shape
        }
        guard let mapping = root.mapping else {
            throw SettingsError(key: path, reason: "the top level must be a mapping of sections (server:, fetch:, ...)")
        }
        let keys = Dictionary(uniqueKeysWithValues: Settings.keys.map { ($0.name, $0) })
        let sections = Set(
            Settings.keys.flatMap { key in
                key.components.indices.dropLast().map { key.components[...$0].joined(separator: ".") }
            }
        )
        try walk(mapping, prefix: [], keys: keys, sections: sections, path: path, into: &shape)
        return shape
    }

    private static func walk(
        _ mapping: Node.Mapping,
        prefix: [String],
        keys: [String: Settings.Key],
        sections: Set<String>,
        path: String,
        into shape: inout FileShape
    ) throws(SettingsError) {
        for (keyNode, value) in mapping {
            let line = keyNode.mark?.line
            let source = line.map { "\(path):\($0)" } ?? path
            guard let component = keyNode.scalar?.string else {
                throw SettingsError(
                    key: prefix.joined(separator: "."),
                    source: source,
                    reason: "keys must be plain words"
                )
            }
            let name = (prefix + [component]).joined(separator: ".")
            // Yams refuses duplicates within one mapping; this also catches `server.listen` written both nested
            // and dotted, which swift-configuration would merge silently.
            guard shape.lines[name] == nil, !shape.nullKeys.contains(name) else {
                throw SettingsError(key: name, source: source, reason: "is set twice")
            }
            if let key = keys[name] {
                try checkValue(value, of: key, source: source, path: path, into: &shape)
                shape.lines[name] = line ?? 0
            } else if sections.contains(name) {
                if value.null != nil { continue }  // `admin:` with nothing under it
                guard let nested = value.mapping else {
                    throw SettingsError(
                        key: name,
                        source: source,
                        reason: "is a section; put its keys under it, indented"
                    )
                }
                try walk(nested, prefix: prefix + [component], keys: keys, sections: sections, path: path, into: &shape)
            } else {
                var reason = "unknown key"
                if let suggestion = closestMatch(to: name, in: Set(keys.keys).union(sections)) {
                    reason += "; did you mean \(suggestion)?"
                }
                throw SettingsError(key: name, source: source, reason: reason)
            }
        }
    }

    private static func checkValue(
        _ value: Node,
        of key: Settings.Key,
        source: String,
        path: String,
        into shape: inout FileShape
    ) throws(SettingsError) {
        if value.null != nil, value.scalar?.style == .plain {
            switch key.kind {
            case .list, .string, .address, .mapping:
                shape.nullKeys.insert(key.name)
                return
            default:
                throw SettingsError(key: key.name, source: source, reason: "has no value; give one or remove the line")
            }
        }
        if key.kind == .mapping {
            guard let mapping = value.mapping else {
                throw SettingsError(
                    key: key.name, source: source, reason: "expected a mapping of names to values (name: \"text\")")
            }
            var entries: [String: String] = [:]
            for (nameNode, textNode) in mapping {
                guard let name = nameNode.scalar?.string, let text = textNode.scalar?.string, textNode.null == nil
                else {
                    throw SettingsError(
                        key: key.name, source: nameNode.mark.map { "\(path):\($0.line)" } ?? source,
                        reason: "each entry must be a name and one text value (name: \"text\")")
                }
                entries[name] = text
                shape.entryLines[key.name + "." + name] = nameNode.mark?.line
            }
            shape.mappings[key.name] = entries
            return
        }
        switch (key.kind.isList, value) {
        case (true, .sequence(let items)):
            guard items.allSatisfy({ $0.scalar != nil }) else {
                throw SettingsError(key: key.name, source: source, reason: "list items must be single values")
            }
        case (true, _):
            throw SettingsError(
                key: key.name,
                source: source,
                reason: "expected a list, such as [a, b] or one '- item' per line"
            )
        case (false, .scalar):
            break
        case (false, _):
            throw SettingsError(key: key.name, source: source, reason: "expected a single value, not a list or mapping")
        }
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely typo.
func closestMatch(to word: String, in candidates: Set<String>) -> String? {
    let limit = max(2, word.count / 4)
    let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= limit }
    return scored.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
}

/// Levenshtein distance over Unicode scalars (inputs are short key names).
private func editDistance(_ lhs: String, _ rhs: String) -> Int {
    let a = Array(lhs.unicodeScalars)
    let b = Array(rhs.unicodeScalars)
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return a.isEmpty ? b.count : previous[b.count]
}
