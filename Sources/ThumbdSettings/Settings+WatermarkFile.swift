// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// An entry of `image.watermarks`: `name=path`. The name is what a request writes (`wm=logo`): 1 to 64
    /// characters of `a-z`, `0-9`, `_` and `-`; the path is an image file, read and checked at start.
    package struct WatermarkFile: Sendable, Hashable, CustomStringConvertible {
        package var name: String
        package var path: String

        /// Parses `name=path`.
        /// - Throws: `InvalidValue` when there is no `=`, the name has other characters, or the path is empty.
        package init(parsing text: String) throws(InvalidValue) {
            guard let equals = text.firstIndex(of: "=") else {
                throw InvalidValue("\"\(text)\" is not name=path")
            }
            name = String(text[..<equals])
            path = String(text[text.index(after: equals)...])
            let allowed = name.utf8.allSatisfy { byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F || byte == 0x2D
            }
            guard (1...64).contains(name.utf8.count), allowed else {
                throw InvalidValue("\"\(name)\": a watermark name is 1-64 characters of a-z, 0-9, _ and -")
            }
            guard !path.isEmpty else { throw InvalidValue("\"\(text)\": the path is empty") }
        }

        /// `name=path`.
        package var description: String { "\(name)=\(path)" }
    }
}
