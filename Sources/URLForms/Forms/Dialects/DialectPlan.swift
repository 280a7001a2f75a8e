// SPDX-License-Identifier: Apache-2.0

/// What a foreign URL form (thumbor's, imgproxy's) compiles into: `/thumb`'s own parameters, so that the same
/// picture asked in any form is one plan, one variant key, one cache entry, one fetch and one render, and every
/// value passes the same checks and limits as a `/thumb` request.
///
/// A dialect's parser fills it option by option (``set(_:_:option:)``), remembering which of its own options set each
/// parameter, so that a refusal names what the client wrote (`rs`, `filters:blur`), not a `/thumb` parameter the
/// client never saw. ``request(accept:rules:hints:watermarks:)`` then expands the configured presets under it and
/// builds the ``ThumbnailRequest`` exactly as `/thumb` does.
package struct DialectPlan: Sendable {
    /// The `/thumb` parameters, as their canonical text.
    package private(set) var values: [ThumbnailRequest.Parameter: String] = [:]
    /// The dialect's option that set each parameter (for errors).
    private var options: [ThumbnailRequest.Parameter: String] = [:]
    /// The presets the request names (`name,name`), nil when none.
    package var presets: String?

    package init() {}

    /// Sets `parameter` to `value`, written by the dialect's `option`; a later option that sets the same parameter
    /// replaces it (imgproxy's and thumbor's rule: the last one wins).
    package mutating func set(_ parameter: ThumbnailRequest.Parameter, _ value: String, option: String) {
        values[parameter] = value
        options[parameter] = option
    }

    /// Removes `parameter`.
    package mutating func remove(_ parameter: ThumbnailRequest.Parameter) {
        values[parameter] = nil
        options[parameter] = nil
    }

    /// The value of `parameter`, if set.
    package subscript(_ parameter: ThumbnailRequest.Parameter) -> String? { values[parameter] }

    /// The request the plan names, built by `/thumb`'s own rules over the configured presets.
    /// - Parameters:
    ///   - rules: `/thumb`'s presets and `image.presets_only` (a dialect request may then name presets, a source
    ///     and a format, nothing else).
    ///   - hints: the request's client hints when they are read (they fill in `dpr` and a width left out).
    /// - Throws: `RequestError` naming the dialect's option where one set the parameter.
    package func request(
        accept: String?, rules: ThumbQueryRules, hints: ClientHints?, watermarks: any WatermarkNames
    ) throws(RequestError) -> ThumbnailRequest {
        if rules.allowsOnlyPresets {
            for (parameter, option) in options.sorted(by: { $0.value < $1.value })
            where !ThumbnailRequest.Parameter.allowedWithPresetsOnly.contains(parameter) {
                throw .onlyPresetsAllowed(option)
            }
            if presets == nil && !rules.presets.hasDefault { throw .missingParameter("preset") }
        }
        do throws(RequestError) {
            let expanded = try rules.presets.expand(presets, under: values)
            return try ThumbnailRequest(
                values: expanded, signature: nil, accept: accept, hints: hints, watermarks: watermarks)
        } catch {
            throw renamed(error)
        }
    }

    /// `error` with the `/thumb` parameter it names replaced by the dialect's option that set it.
    private func renamed(_ error: RequestError) -> RequestError {
        func option(_ name: String) -> String {
            ThumbnailRequest.Parameter(rawValue: name).flatMap { options[$0] } ?? name
        }
        switch error {
        case .missingParameter(let name): return .missingParameter(option(name))
        case .invalidValue(let name, let reason): return .invalidValue(option(name), reason: reason)
        default: return error
        }
    }
}
