// SPDX-License-Identifier: Apache-2.0

/// A request head's bytes (request line, fields, then the field-offset table: ``HTTPRequest``) in one
/// allocation that never changes after it is made.
///
/// Not `[UInt8]`: making an array on Linux looks up the generic metadata of its storage class on every
/// allocation (`getContiguousArrayStorageType` through `swift_getCanonicalPrespecializedGenericMetadata`),
/// ~330 of a memory hit's instructions measured with `bench/hit-instructions.sh`; the metadata of
/// ``Storage``, a class of its own, is a plain global.
struct RequestHeadBytes: @unchecked Sendable {  // Sendable: the bytes are never written after `init`.
    final class Storage: ManagedBuffer<Int, UInt8> {}

    private let storage: Storage

    /// `count` bytes that `initialize` fills completely.
    init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: count) { _ in count }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements {
            initialize(UnsafeMutableRawBufferPointer(start: $0, count: count))
        }
    }

    /// Calls `body` with the bytes.
    @inline(__always)
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { count, elements in
            try body(UnsafeRawBufferPointer(start: elements, count: count.pointee))
        }
    }
}
