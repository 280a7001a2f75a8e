// SPDX-License-Identifier: Apache-2.0
package import HTTP1
package import OriginFetch
package import ThumbdSettings

/// What imgproxy's `info/` asks of the app (its `InfoService`): imgproxy's JSON for what a source is.
package protocol ImgproxyInfoAnswering: Sendable {
    /// Answers an info URL whose source and options the form has read and verified.
    func answerImgproxyInfo(_ source: SourceURL, options: ImgproxyForm.InfoOptions, _ responder: HTTPResponder)
}

/// imgproxy's form as the app mounts it (`imgproxy.*`): `info/` is its side route.
extension ImgproxyForm: PathForm {
    package typealias SideAnswers = any ImgproxyInfoAnswering

    package static var name: String { "imgproxy" }

    package static func isEnabled(_ settings: Settings) -> Bool { settings.imgproxy.isEnabled }

    package static func prefix(_ settings: Settings) -> String { settings.imgproxy.prefix }

    package static func keys(_ settings: Settings) -> Keys { Keys(settings) }

    package static func keysChanged(from previous: Settings, to settings: Settings) -> Bool {
        settings.imgproxy != previous.imgproxy
    }

    package static func needsSignature(_ keys: Keys) -> Bool { !keys.pairs.isEmpty }

    @inline(__always)
    package func isSideRequest(_ request: HTTPRequest) -> Bool { isInfo(request) }

    package func answerSide(
        _ identity: RequestIdentity, with answers: any ImgproxyInfoAnswering, _ responder: HTTPResponder
    ) throws(RequestError) {
        let (source, options) = try infoRequest(for: identity)
        answers.answerImgproxyInfo(source, options: options, responder)
    }
}
