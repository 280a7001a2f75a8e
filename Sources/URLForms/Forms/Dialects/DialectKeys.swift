// SPDX-License-Identifier: Apache-2.0
import Synchronization
package import ThumbdSettings

/// The keys thumbor's and imgproxy's URL forms verify with (`thumbor.*`, `imgproxy.*`), replaceable while the service
/// runs (``update(_:)``, for a configuration reload), with a generation as ``URLSignatureVerifier`` has: what was
/// derived from a request verified under other keys (the alias table's entries) stops hitting at once.
package final class DialectKeys: Sendable {
    /// Everything both forms verify with, read together.
    package struct Values: Sendable {
        /// thumbor's security keys (HMAC-SHA1), newest first.
        package var thumbor: [URLSignature.SharedKey] = []
        /// Whether thumbor's `unsafe/` URLs are accepted.
        package var allowsUnsafeThumbor = false
        /// imgproxy's key and salt pairs (HMAC-SHA256 under the key, over the salt then the path).
        package var imgproxy: [ImgproxyKey] = []
        /// How many bytes of the MAC an imgproxy signature carries (1...32).
        package var imgproxySignatureSize = 32

        /// No keys: thumbor answers nothing, imgproxy takes unsigned URLs.
        package init() {}

        /// The values of validated settings (the keys are hexadecimal there for imgproxy).
        package init(_ settings: Settings) {
            thumbor = settings.thumbor.securityKeys.map { URLSignature.SharedKey(bytes: Array($0.utf8)) }
            allowsUnsafeThumbor = settings.thumbor.allowsUnsafe
            imgproxy = zip(settings.imgproxy.keys, settings.imgproxy.salts).map { key, salt in
                ImgproxyKey(key: URLSignature.SharedKey(bytes: Self.bytes(hex: key)), salt: Self.bytes(hex: salt))
            }
            imgproxySignatureSize = settings.imgproxy.signatureSize
        }

        /// The bytes of validated hexadecimal text (two digits a byte).
        package static func bytes(hex: String) -> [UInt8] {
            let digits = Array(hex.utf8).compactMap { digit -> UInt8? in
                switch digit {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
                default: nil
                }
            }
            return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
        }
    }

    /// One imgproxy key with its salt.
    package struct ImgproxyKey: Sendable {
        package let key: URLSignature.SharedKey
        package let salt: [UInt8]
    }

    private let state: Mutex<(values: Values, generation: UInt64)>
    /// A copy of the generation for the hit path (one atomic load), stored under `state`'s lock after the swap.
    private let currentGeneration = Atomic<UInt64>(0)
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
