// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// One operation of a plan, whole: its `/thumb` parameters, the parse of their text into its typed fields of
/// ``PlanValues``, the build of its step from those fields (whichever URL form set them), its range (one check, one
/// message, run on every plan built from a form's values and on a plan built in code), its variant-key token, its
/// canonical query text and its C fill. Modelled on Nuke's `ImageProcessing`, which owns its `identifier`. Every walk
/// over the operations is a loop over ``OperationRegistry``; a descriptor is a caseless enum, so the loops call static
/// functions and allocate nothing.
protocol OperationDescriptor: Sendable {
    /// The `/thumb` parameters it owns, in query order.
    static var parameters: [ThumbParameter] { get }
    /// Reads the text of one of its parameters into its typed field of `values` (`/thumb`'s query and the presets):
    /// the value's form only (`blur=abc`); its range is ``validate(_:)``'s, once the plan is built.
    /// - Throws: `SpecError` whose field is the `/thumb` parameter at fault.
    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError)
    /// Makes its field of `operations` from the plan's typed values (every layer put together): lengths given in CSS
    /// pixels times `context.dpr`, a named watermark looked up. ``validate(_:)`` follows, then ``check(_:_:)``.
    /// - Throws: `SpecError` whose field is the `/thumb` parameter at fault.
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError)
    /// Its range check, one message per value: for a plan built from any form's values and for a plan built in code.
    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError)
    /// What the plan's other choices forbid (an encoder option the format asked by name cannot honour).
    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError)
    /// Removes a value that does nothing (pixelate 1), so that equal plans are equal values.
    static func normalize(_ operations: inout ThumbnailSpec.Operations)
    /// Appends ` token=value` when the operation does something. Persisted (disk index, shared tier): never change
    /// the text of an existing token.
    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String)
    /// Appends its `/thumb` fields when they differ from the default, in query order.
    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField])
    /// Copies it into the shim's parameters (the steps in CVipsShims read them).
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams)
}

extension OperationDescriptor {
    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {}
    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {}
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {}
}

/// An operation that is one switch, off by default: `<parameter>=1` (`true`, `0`, `false`), the key's ` <token>` and
/// the query's `<parameter>=1` when on. The descriptor names its parameter, fields and token; the rest is here.
protocol FlagOperation: OperationDescriptor {
    /// Its `/thumb` parameter.
    static var parameter: ThumbParameter { get }
    /// Its typed field of the plan's values.
    static var value: WritableKeyPath<PlanValues, Bool?> { get }
    /// Its field of the operations.
    static var operation: WritableKeyPath<ThumbnailSpec.Operations, Bool> { get }
    /// Its variant-key token. Persisted (disk index, shared tier): never change it.
    static var token: String { get }
    /// Sets the switch in the shim's parameters.
    static func fill(_ on: Bool, into params: inout ThumbdVipsThumbnailParams)
}

extension FlagOperation {
    static var parameters: [ThumbParameter] { [parameter] }

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values[keyPath: value] = try ThumbValue.boolean(text, parameter)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let on = values[keyPath: value] { operations[keyPath: operation] = on }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations[keyPath: operation] { text += " " + token }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations[keyPath: operation] { fields.append(CanonicalField(parameter, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        fill(operations[keyPath: operation], into: &params)
    }
}

/// The value syntax `/thumb` shares between its parameters. A value's form is read by the parsers; its range is
/// checked once, by ``OperationDescriptor/validate(_:)``, which writes the message from the range (so a value out of
/// range and one that is no number at all get the same message).
package enum ThumbValue {
    /// Digits only (no sign, no spaces, no leading `+`), at most 9 of them.
    package static func integer(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(text)
    }

    /// An optional `-`, then ``integer(_:)``'s digits.
    static func signedInteger(_ text: String) -> Int? {
        guard text.hasPrefix("-") else { return integer(text) }
        return integer(String(text.dropFirst())).map { -$0 }
    }

    /// `1`, `true`, `0` or `false`.
    static func boolean(_ text: String, _ parameter: ThumbParameter) throws(SpecError) -> Bool {
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw SpecError(field: parameter.rawValue, reason: "must be 0, 1, true or false")
        }
    }

    /// An integer of the form `range` allows (signed when the range reaches below 0), not yet checked against it.
    static func integer(_ text: String, _ parameter: ThumbParameter, within range: ClosedRange<Int>) throws(SpecError)
        -> Int
    {
        let value = range.lowerBound < 0 ? signedInteger(text) : integer(text)
        guard let value else { throw integerError(parameter, range) }
        return value
    }

    /// A ``FixedDecimal``, not yet checked against `range` (which writes the message).
    static func decimal(
        _ text: String, _ parameter: ThumbParameter, within range: ClosedRange<FixedDecimal>
    ) throws(SpecError) -> FixedDecimal {
        guard let value = FixedDecimal(parsing: text) else { throw decimalError(parameter, range) }
        return value
    }

    /// `value` when `range` holds it.
    static func checked(_ value: Int, _ parameter: ThumbParameter, in range: ClosedRange<Int>) throws(SpecError)
        -> Int
    {
        guard range.contains(value) else { throw integerError(parameter, range) }
        return value
    }

    private static func integerError(_ parameter: ThumbParameter, _ range: ClosedRange<Int>) -> SpecError {
        SpecError(field: parameter.rawValue, reason: "must be an integer \(range.lowerBound)...\(range.upperBound)")
    }

    /// `value` when `range` holds it.
    static func checked(
        _ value: FixedDecimal, _ parameter: ThumbParameter, in range: ClosedRange<FixedDecimal>
    ) throws(SpecError) -> FixedDecimal {
        guard range.contains(value) else { throw decimalError(parameter, range) }
        return value
    }

    private static func decimalError(_ parameter: ThumbParameter, _ range: ClosedRange<FixedDecimal>) -> SpecError {
        SpecError(field: parameter.rawValue, reason: "must be a number \(range.lowerBound)...\(range.upperBound)")
    }

    /// A length in CSS pixels times `dpr`, rounded.
    static func scaled(_ value: Int, dpr: Double) -> Int { Int((Double(value) * dpr).rounded()) }
}
