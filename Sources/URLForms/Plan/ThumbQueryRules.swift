// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// What `/thumb`'s parser reads besides the request: the presets (`presets`), whether only presets may shape a
/// thumbnail (`image.presets_only`), and whether client hints fill in `dpr` and the width (`image.client_hints`).
/// From the configuration (Settings+ModuleConfigurations.swift); the same request can parse to another plan when
/// they change.
package struct ThumbQueryRules: Sendable, Equatable {
    package var presets = Presets()
    /// `image.presets_only`: every parameter but ``ThumbnailRequest/Parameter/allowedWithPresetsOnly``, `preset`
    /// and `sig` is refused.
    package var allowsOnlyPresets = false
    /// `image.client_hints`.
    package var readsClientHints = false

    /// No presets, every parameter allowed, no hints: `/thumb` as it was before presets.
    package static let none = ThumbQueryRules()

    package init(presets: Presets = Presets(), allowsOnlyPresets: Bool = false, readsClientHints: Bool = false) {
        self.presets = presets
        self.allowsOnlyPresets = allowsOnlyPresets
        self.readsClientHints = readsClientHints
    }
}

/// The ``ThumbQueryRules`` in force, replaced on a configuration reload, with a *generation* like the signing
/// keys' (``URLSignatureVerifier``): what was parsed under other rules (the alias table's entries, each loop's hot
/// set) must not answer once the rules change, since the same target may now mean another plan (`preset=card`
/// after `card` changed, any request after `default` changed) or be refused (`image.presets_only`), or the hints
/// may now be part of its identity (`image.client_hints`).
///
/// ``ThumbQueryForm`` adds this generation to the signing keys' one in its `keyGeneration`: both only grow, so the
/// sum changes whenever either does. ``update(_:)`` stores the rules and bumps the generation under one lock, and
/// a parse reads both together, so a parse reports the generation of the rules it used. The generation is a count
/// of updates times two, plus one when the rules read client hints: every request learns both from one atomic
/// load (``readsClientHints(_:)``), and it still grows with every update.
package final class SharedThumbQueryRules: Sendable {
    private let state: Mutex<(rules: ThumbQueryRules, generation: UInt64)>
    /// A copy of the generation, for the hit path: one atomic load. Stored after the rules under the lock.
    private let currentGeneration: Atomic<UInt64>
    /// Runs after every ``update(_:)`` that changed something (the service forgets its aliases then).
    private let observers = Mutex<[@Sendable () -> Void]>([])

    package init(_ rules: ThumbQueryRules = .none) {
        let generation = Self.generation(updates: 0, rules)
        state = Mutex((rules, generation))
        currentGeneration = Atomic(generation)
    }

    /// `updates` × 2, + 1 when `rules` read client hints.
    private static func generation(updates: UInt64, _ rules: ThumbQueryRules) -> UInt64 {
        updates &* 2 &+ (rules.readsClientHints ? 1 : 0)
    }

    /// Whether the rules of `generation` read client hints.
    @inline(__always)
    package static func readsClientHints(_ generation: UInt64) -> Bool { generation & 1 == 1 }

    /// The rules and the generation they belong to, read together.
    package var current: (rules: ThumbQueryRules, generation: UInt64) { state.withLock { $0 } }

    /// The generation of the rules in force (lock-free).
    @inline(__always)
    package var generation: UInt64 { currentGeneration.load(ordering: .acquiring) }

    /// Whether requests are read with their client hints now (lock-free).
    package var readsClientHints: Bool { Self.readsClientHints(generation) }

    /// Replaces the rules (a reload); nothing parsed under the previous ones answers again. Nothing happens when
    /// `rules` equal the ones in force. Any thread.
    package func update(_ rules: ThumbQueryRules) {
        let changed = state.withLock { state -> Bool in
            guard state.rules != rules else { return false }
            state.rules = rules
            state.generation = Self.generation(updates: state.generation / 2 &+ 1, rules)
            currentGeneration.store(state.generation, ordering: .releasing)
            return true
        }
        guard changed else { return }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Registers `observer` to run (on the updating thread) after each ``update(_:)`` that changed the rules.
    package func onUpdate(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
