// SPDX-License-Identifier: Apache-2.0

/// A configuration value that could not be parsed or is out of range; `reason` says why, and the caller
/// adds the key that held it (see `SettingsError`).
package struct InvalidValue: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the value was refused, phrased for an operator.
    package var reason: String

    /// Creates an error with the operator-facing reason.
    package init(_ reason: String) {
        self.reason = reason
    }

    /// The reason, as is.
    package var description: String { reason }
}
