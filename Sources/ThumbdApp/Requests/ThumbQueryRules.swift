// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// What `/thumb`'s parser reads besides the request: the presets (`presets`), whether only presets may shape a
/// thumbnail (`image.presets_only`), and whether client hints fill in `dpr` and the width (`image.client_hints`).
/// From the configuration (Settings+ModuleConfigurations.swift); the same request can parse to another plan when
/// they change.
struct ThumbQueryRules: Sendable, Equatable {
    var presets = Presets()
    /// `image.presets_only`: every parameter but ``ThumbnailRequest/Parameter/allowedWithPresetsOnly``, `preset`
    /// and `sig` is refused.
    var allowsOnlyPresets = false
    /// `image.client_hints`.
    var readsClientHints = false

    /// No presets, every parameter allowed, no hints: `/thumb` as it was before presets.
    static let none = ThumbQueryRules()
}

/// The ``ThumbQueryRules`` in force, replaced on a configuration reload, with a *generation* like the signing
/// keys' (``URLSignatureVerifier``): what was parsed under other rules (the alias table's entries, each loop's hot
/// set) must not answer once the rules change, since the same target may now mean another plan (`preset=card`
/// after `card` changed, any request after `default` changed) or be refused (`image.presets_only`).
///
/// ``ThumbQueryForm`` adds this generation to the signing keys' one in its `keyGeneration`: both only grow, so the
/// sum changes whenever either does. ``update(_:)`` stores the rules and bumps the generation under one lock, and
/// a parse reads both together, so a parse reports the generation of the rules it used.
final class SharedThumbQueryRules: Sendable {
    private let state: Mutex<(rules: ThumbQueryRules, generation: UInt64)>
    /// A copy of the generation, for the hit path: one atomic load. Stored after the rules under the lock.
    private let currentGeneration = Atomic<UInt64>(0)
    /// A copy of `rules.readsClientHints`, read by every request before any lookup (its identity depends on it).
    private let hintsOn: Atomic<Bool>
    /// Runs after every ``update(_:)`` that changed something (the service forgets its aliases then).
    private let observers = Mutex<[@Sendable () -> Void]>([])

    init(_ rules: ThumbQueryRules = .none) {
        state = Mutex((rules, 0))
        hintsOn = Atomic(rules.readsClientHints)
    }

    /// The rules and the generation they belong to, read together.
    var current: (rules: ThumbQueryRules, generation: UInt64) { state.withLock { $0 } }

    /// The generation of the rules in force (lock-free).
    @inline(__always)
    var generation: UInt64 { currentGeneration.load(ordering: .acquiring) }

    /// Whether requests are read with their client hints now (lock-free).
    @inline(__always)
    var readsClientHints: Bool { hintsOn.load(ordering: .relaxed) }

    /// Replaces the rules (a reload); nothing parsed under the previous ones answers again. Nothing happens when
    /// `rules` equal the ones in force. Any thread.
    func update(_ rules: ThumbQueryRules) {
        let changed = state.withLock { state -> Bool in
            guard state.rules != rules else { return false }
            state.rules = rules
            state.generation &+= 1
            hintsOn.store(rules.readsClientHints, ordering: .relaxed)
            currentGeneration.store(state.generation, ordering: .releasing)
            return true
        }
        guard changed else { return }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Registers `observer` to run (on the updating thread) after each ``update(_:)`` that changed the rules.
    func onUpdate(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
