// SPDX-License-Identifier: Apache-2.0
package import HTTP1
package import ThumbdSettings

/// What thumbor's `meta/` asks of the app (its `InfoService`): the JSON thumbor answers instead of the picture, made
/// from the request the form has verified and compiled.
package protocol ThumborMetaAnswering: Sendable {
    /// Answers a `meta/` URL whose request (the thumbnail's plan) and path the form has made and verified.
    func answerThumborMeta(_ request: ThumbnailRequest, path: ThumborPath, _ responder: HTTPResponder)
}

/// thumbor's form as the app mounts it (`thumbor.*`): `meta/` is its side route.
extension ThumborForm: PathForm {
    package typealias SideAnswers = any ThumborMetaAnswering

    package static var name: String { "thumbor" }

    package static func isEnabled(_ settings: Settings) -> Bool { settings.thumbor.isEnabled }

    package static func prefix(_ settings: Settings) -> String { settings.thumbor.prefix }

    package static func keys(_ settings: Settings) -> Keys { Keys(settings) }

    package static func keysChanged(from previous: Settings, to settings: Settings) -> Bool {
        settings.thumbor != previous.thumbor
    }

    package static func needsSignature(_ keys: Keys) -> Bool { !keys.allowsUnsafe }

    @inline(__always)
    package func isSideRequest(_ request: HTTPRequest) -> Bool { isMeta(request) }

    package func answerSide(
        _ identity: RequestIdentity, with answers: any ThumborMetaAnswering, _ responder: HTTPResponder
    ) throws(RequestError) {
        let (request, path) = try metaRequest(for: identity)
        answers.answerThumborMeta(request, path: path, responder)
    }
}
