// SPDX-License-Identifier: Apache-2.0

/// The foreign URL forms' parse step on its own, for the fuzz target (fuzz/FuzzDialectURLs): a path as a form's
/// route hands it over, compiled into a request with no presets and no keys. Each form adds its own in its folder
/// (`DialectParsing+<Form>.swift`).
package enum DialectParsing {}
