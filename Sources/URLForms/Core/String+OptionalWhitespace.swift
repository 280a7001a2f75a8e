// SPDX-License-Identifier: Apache-2.0

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's OWS).
    package var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}
