// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// thumbor's `noise`: one random level per pixel, added to every colour band.
    package struct Noise: Hashable, Sendable {
        /// Each level is `random() % amount − amount / 2`; 0 does nothing.
        package var amount: Int
        /// glibc `srandom`'s seed; 0 is glibc's own default (as seed 1), so the picture is always the same.
        package var seed: Int

        package init(amount: Int, seed: Int = 0) {
            self.amount = amount
            self.seed = seed
        }

        /// The largest amount (above 510 every pixel saturates anyway).
        package static let maxAmount = 1000
        /// The largest seed (C's `unsigned int`, kept to 31 bits).
        package static let maxSeed = Int(Int32.max)
    }
}

/// `noise=<amount>[,<seed>]`: thumbor's monochrome noise, with glibc's generator so a seed gives thumbor's very
/// levels. Deterministic (thumbd caches the picture): without a seed, glibc's default sequence (seed 1). Key
/// ` noise=amount,seed`.
enum NoiseOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.noise]

    static let reason =
        "must be AMOUNT[,SEED]: 0…\(ThumbnailSpec.Noise.maxAmount) and 0…\(ThumbnailSpec.Noise.maxSeed)"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { part -> Int? in
            guard part.utf8.count <= 10, !part.isEmpty, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return Int(part)
        }
        guard (1...2).contains(parts.count), numbers.count == parts.count else {
            throw SpecError(field: "noise", reason: reason)
        }
        values.noise = ThumbnailSpec.Noise(amount: numbers[0], seed: numbers.count > 1 ? numbers[1] : 0)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        // (What ``normalize(_:)`` folds, folded here already: no amount is no noise, glibc's seed 0 is its seed 1.)
        guard var noise = values.noise, noise.amount != 0 else { return }
        if noise.seed == 1 { noise.seed = 0 }
        operations.noise = noise
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let noise = operations.noise else { return }
        guard (0...ThumbnailSpec.Noise.maxAmount).contains(noise.amount),
            (0...ThumbnailSpec.Noise.maxSeed).contains(noise.seed)
        else { throw SpecError(field: "noise", reason: reason) }
    }

    /// No amount, no noise; glibc takes seed 0 as seed 1.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        guard let noise = operations.noise else { return }
        if noise.amount == 0 {
            operations.noise = nil
        } else if noise.seed == 1 {
            operations.noise?.seed = 0
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let noise = operations.noise { text += " noise=\(noise.amount),\(noise.seed)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let noise = operations.noise else { return }
        fields.append(CanonicalField(.noise, noise.seed == 0 ? "\(noise.amount)" : "\(noise.amount),\(noise.seed)"))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let noise = operations.noise else { return }
        params.noise_amount = Int32(noise.amount)
        params.noise_seed = UInt32(noise.seed)
    }
}
