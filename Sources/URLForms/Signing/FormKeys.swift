// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// One path-mounted form's signing keys (thumbor's `ThumborForm.Keys`, imgproxy's `ImgproxyForm.Keys`: whatever the
/// form verifies with), replaceable while the service runs (``update(_:)``, for a configuration reload), with a
/// generation as ``URLSignatureVerifier`` has: what was derived from a request verified under other keys (the alias
/// table's entries) stops hitting at once.
///
/// Each form holds its own; the app registers the same observer on each (the alias table forgets every alias when
/// any form's keys change), and a form's ``URLForm/keyGeneration`` is its own keys' generation plus the rules'.
///
/// ```swift
/// let keys = FormKeys(ThumborForm.Keys(settings))
/// keys.onUpdate { cache.forgetAliases() }
/// let form = ThumborForm(prefix: "/thumbor/", keys: keys, rules: rules, watermarks: watermarks)
/// keys.update(ThumborForm.Keys(reloaded))   // the next request verifies with the new keys
/// ```
package final class FormKeys<Values: Sendable>: Sendable {
    /// A copy of the generation for the hit path (one atomic load), stored under `state`'s lock after the swap.
    /// The first stored property, so its offset does not depend on `Values`.
    private let currentGeneration = Atomic<UInt64>(0)
    private let state: Mutex<(values: Values, generation: UInt64)>
    private let observers = Mutex<[@Sendable () -> Void]>([])

    package init(_ values: Values) {
        state = Mutex((values, 0))
    }

    /// The keys in force and their generation.
    package var current: (values: Values, generation: UInt64) { state.withLock { $0 } }

    /// The generation of the keys in force (lock-free).
    @inline(__always)
    package var generation: UInt64 { currentGeneration.load(ordering: .acquiring) }

    /// Replaces every key at once; requests verified from now on use `values`. Any thread.
    package func update(_ values: Values) {
        state.withLock { state in
            state.values = values
            state.generation &+= 1
            currentGeneration.store(state.generation, ordering: .releasing)
        }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Registers `observer` to run (on the updating thread) after each ``update(_:)``.
    package func onUpdate(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
