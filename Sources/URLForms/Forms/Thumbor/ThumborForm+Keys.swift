// SPDX-License-Identifier: Apache-2.0
package import ThumbdSettings

extension ThumborForm {
    /// What thumbor's form verifies with (`thumbor.security_keys`, `.allow_unsafe`), held in a ``FormKeys``.
    package struct Keys: Sendable {
        /// thumbor's security keys (HMAC-SHA1), newest first.
        package var securityKeys: [URLSignature.SharedKey] = []
        /// Whether thumbor's `unsafe/` URLs are accepted.
        package var allowsUnsafe = false
        /// Whether a filter thumbor would skip is refused (`thumbor.skipped_filters: refuse`).
        package var refusesSkippedFilters = false
        /// Whether the crop mode with both sides crops as thumbor does (`thumbor.exact_crop`).
        package var cropsAsThumbor = false

        /// No keys: thumbor's form answers nothing.
        package init() {}

        /// The keys of validated settings.
        package init(_ settings: Settings) {
            securityKeys = settings.thumbor.securityKeys.map { URLSignature.SharedKey(bytes: Array($0.utf8)) }
            allowsUnsafe = settings.thumbor.allowsUnsafe
            refusesSkippedFilters = settings.thumbor.skippedFilters == .refuse
            cropsAsThumbor = settings.thumbor.exactCrop
        }
    }
}
