// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// What a foreign URL form (thumbor's, imgproxy's) compiles into: the plan's typed values (``PlanValues``, one field per
/// `/thumb` parameter), so that the same picture asked in any form is one plan, one variant key, one cache entry, one
/// fetch and one render, and every value passes the same checks and limits as a `/thumb` request.
///
/// A dialect sets typed fields option by option (``set(_:_:option:)``: `plan.set(.w, 200, option: "rs")`), no number
/// written as `/thumb` text, remembering which of its own options set each parameter, so that a refusal names what the
/// client wrote (`rs`, `filters:blur`), not a `/thumb` parameter the client never saw.
/// ``request(accept:rules:hints:watermarks:)`` then puts the configured presets under it, parameter by parameter, and
/// builds the ``ThumbnailRequest`` exactly as `/thumb` does (each value's range checked once there).
package struct ThumbnailPlan: Sendable {
    /// The typed values set so far (`nil`: not set).
    package private(set) var values = PlanValues()
    /// The dialect's option that set each parameter (for errors and `image.presets_only`).
    private var options: [ThumbParameter: String] = [:]
    /// The presets the request names (`name,name`), nil when none.
    package var presets: String?

    package init() {}

    /// Sets the field of `field`'s parameter to `value`, written by the dialect's `option`; a later option that sets
    /// the same parameter replaces it (imgproxy's and thumbor's rule: the last one wins).
    package mutating func set<Value>(_ field: PlanField<Value>, _ value: Value, option: String) {
        values[keyPath: field.keyPath] = value
        options[field.parameter] = option
    }

    /// Unsets `field`'s parameter.
    package mutating func remove<Value>(_ field: PlanField<Value>) {
        values[keyPath: field.keyPath] = nil
        options[field.parameter] = nil
    }

    /// The option that set `parameter`, nil when it is not set.
    package func option(setting parameter: ThumbParameter) -> String? { options[parameter] }

    /// What `upper` sets over what this plan sets, parameter by parameter (with the options that set them).
    package mutating func layer(_ upper: ThumbnailPlan) {
        values.layer(upper.values)
        options.merge(upper.options) { _, upper in upper }
    }

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
            let layered = try ThumbnailRequest.layered(values, under: rules.presets, named: presets)
            return try ThumbnailRequest(
                values: layered, signature: nil, accept: accept, hints: hints, watermarks: watermarks)
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
