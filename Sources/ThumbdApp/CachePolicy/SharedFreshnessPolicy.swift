// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The `FreshnessPolicy` in force, shared by the components that store variants (`RenderCoordinator`,
/// `Revalidator`): a config reload replaces it once and every one of them decides with the new TTLs from
/// then on. Entries already stored keep the deadlines they were given.
final class SharedFreshnessPolicy: Sendable {
    private let policy: Mutex<FreshnessPolicy>

    /// A holder starting at `policy`.
    init(_ policy: FreshnessPolicy) {
        self.policy = Mutex(policy)
    }

    /// The policy in force (one lock per read: read it once per decision).
    var current: FreshnessPolicy { policy.withLock { $0 } }

    /// Replaces the policy (config hot reload). Any thread.
    func update(_ new: FreshnessPolicy) {
        policy.withLock { $0 = new }
    }
}
