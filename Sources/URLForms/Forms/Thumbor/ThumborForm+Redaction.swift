// SPDX-License-Identifier: Apache-2.0

extension ThumborForm {
    /// The secrets of a thumbor path (`/<signature>/[options/]<image>`): the signature segment (not `unsafe`), and
    /// the secret query values of the image and of `watermark()`'s URL, percent-encoded or plain.
    package static func secretRanges(in path: UnsafeBufferPointer<UInt8>, after start: Int) -> [Range<Int>] {
        guard let (signature, rest) = PathSecrets.signatureSegment(in: path, at: start) else { return [] }
        var ranges: [Range<Int>] = []
        if let signature { ranges.append(signature) }
        ranges += PathSecrets.encodedQueryValues(in: path, rest)
        return ranges
    }
}
