// SPDX-License-Identifier: Apache-2.0

/// The identity of one cached variant: its canonical description plus a 64-bit hash of it.
///
/// The hash is computed once (XXH64 of the UTF-8 bytes) and then used by both tiers: the memory
/// tier hashes only these 8 bytes on every lookup instead of a long URL, and the disk tier uses it
/// as the index's primary key and in the blob's file name. Equality still compares the full
/// description, and the disk tier checks it on every hit, so a 64-bit collision can cost a miss
/// but never serves the wrong variant.
///
/// ```swift
/// let key = CacheKey("https://img.example/a.jpg|w=256|h=256|fmt=webp")
/// memory.insert(bytes, forKey: key, cost: bytes.count, group: CacheGroup("https://img.example/a.jpg"))
/// ```
// `public` with `@inlinable` equality and hashing (not `package`, against STYLE.md) so that the memory
// tier's dictionary, specialised in the app's module, can inline them; see MemoryCache.swift.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The canonical variant description (source URL + every output parameter + format).
    public let variant: String
    /// XXH64 (seed 0) of `variant`'s UTF-8 bytes.
    public let hash: UInt64

    /// Hashes `variant` once.
    package init(_ variant: String) {
        self.variant = variant
        self.hash = XXHash64.hash(variant)
    }

    /// Equal when hash and full description match (the description check rules out collisions).
    @inlinable
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.hash == rhs.hash && lhs.variant == rhs.variant
    }

    /// Feeds only the precomputed 64-bit hash: cheap for long URLs.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// The variant description.
    public var description: String { variant }
}

/// What a purge removes together: every variant of one source (the caller passes the canonical source URL).
///
/// Only the 64-bit hash is kept; a collision would purge an unrelated source too, which costs a refetch
/// and nothing else.
public struct CacheGroup: Hashable, Sendable {
    /// XXH64 (seed 0) of the group's name.
    public let hash: UInt64

    /// Hashes the group's name, e.g. the canonical source URL.
    package init(_ name: String) {
        self.hash = XXHash64.hash(name)
    }

    /// Recreates a group from a stored hash.
    package init(hash: UInt64) {
        self.hash = hash
    }

    /// Feeds the 64-bit hash.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// Equal when the hashes are.
    @inlinable
    public static func == (lhs: CacheGroup, rhs: CacheGroup) -> Bool {
        lhs.hash == rhs.hash
    }
}
