// SPDX-License-Identifier: Apache-2.0

/// thumbd's version, sent in `User-Agent` and shown by `--version`.
enum ThumbdVersion {
    static let current = "0.1.0"
}
