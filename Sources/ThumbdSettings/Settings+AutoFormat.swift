// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// An entry of `image.auto_formats`: a format `format=auto` may answer besides JPEG and PNG.
    package enum AutoFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case avif
        case jxl
        case webp

        /// Parses `avif`, `jxl` or `webp` (case-insensitive).
        ///
        /// - Throws: `InvalidValue` for any other name (JPEG and PNG are always the fallbacks; HEIC is never
        ///   negotiated).
        package init(parsing text: String) throws(InvalidValue) {
            guard let format = Self(rawValue: text.lowercased()) else {
                throw InvalidValue("\"\(text)\" is not a format auto can answer: avif, jxl or webp")
            }
            self = format
        }

        /// The name as written in the configuration.
        package var description: String { rawValue }
    }
}
