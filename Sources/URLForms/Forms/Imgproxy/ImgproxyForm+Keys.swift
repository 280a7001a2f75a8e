// SPDX-License-Identifier: Apache-2.0
package import ThumbdSettings

extension ImgproxyForm {
    /// What imgproxy's form verifies with (`imgproxy.keys`, `.salts`, `.signature_size`), held in a ``FormKeys``.
    package struct Keys: Sendable {
        /// One key with its salt.
        package struct Pair: Sendable {
            package let key: URLSignature.SharedKey
            package let salt: [UInt8]

            package init(key: URLSignature.SharedKey, salt: [UInt8]) {
                self.key = key
                self.salt = salt
            }
        }

        /// The key and salt pairs (HMAC-SHA256 under the key, over the salt then the path).
        package var pairs: [Pair] = []
        /// How many bytes of the MAC a signature carries (1...32).
        package var signatureSize = 32

        /// No keys: imgproxy's form takes unsigned URLs.
        package init() {}

        /// The keys of validated settings (hexadecimal there).
        package init(_ settings: Settings) {
            pairs = zip(settings.imgproxy.keys, settings.imgproxy.salts).map { key, salt in
                Pair(key: URLSignature.SharedKey(bytes: Self.bytes(hex: key)), salt: Self.bytes(hex: salt))
            }
            signatureSize = settings.imgproxy.signatureSize
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
}
