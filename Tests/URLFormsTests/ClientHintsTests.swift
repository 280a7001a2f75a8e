// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Testing
import Thumbnailing

@testable import URLForms

/// Client hints (`image.client_hints`): how `Sec-CH-DPR`, `Sec-CH-Width` and `Sec-CH-Viewport-Width` are read,
/// clamped and used to fill in what a request's plan leaves out, and which of them the answer varies on.
@Suite struct ClientHintsTests {
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg"

    static func request(
        _ query: String, dpr: String? = nil, width: String? = nil, viewport: String? = nil,
        rules: ThumbQueryRules = .none
    ) throws -> ThumbnailRequest {
        try ThumbnailRequest(
            parameters: try QueryParameters(parsing: query), accept: nil, rules: rules,
            hints: ClientHints(dpr: dpr, width: width, viewportWidth: viewport))
    }

    @Test(arguments: [
        ("2", 2.0), ("2.625", 2.63), ("1.5", 1.5), ("0.5", 1.0), ("5", 4.0), ("1, 3", 3.0), (" 2 ", 2.0),
    ])
    func dprIsClampedTo1To4AndRoundedTo2Decimals(text: String, value: Double) {
        #expect(ClientHints(dpr: text, width: nil, viewportWidth: nil).devicePixelRatio == value)
    }

    @Test(arguments: ["abc", "-1", "", "2.", ".5", "1e3", "2,", "99999999999999"])
    func aHintThatIsNotANumberIsIgnored(text: String) {
        let hints = ClientHints(dpr: text, width: text, viewportWidth: text)
        #expect(hints.devicePixelRatio == nil)
        #expect(hints.physicalWidth == nil)
        #expect(hints.viewportPixels(dpr: 2) == nil)
    }

    @Test func widthsAreRoundedUpAndClampedTo1To4096() {
        #expect(ClientHints(dpr: nil, width: "800", viewportWidth: nil).physicalWidth == 800)
        #expect(ClientHints(dpr: nil, width: "800.2", viewportWidth: nil).physicalWidth == 801)
        #expect(ClientHints(dpr: nil, width: "0", viewportWidth: nil).physicalWidth == 1)
        #expect(ClientHints(dpr: nil, width: "5000", viewportWidth: nil).physicalWidth == 4096)
        #expect(ClientHints(dpr: nil, width: nil, viewportWidth: "375").viewportPixels(dpr: 2) == 750)
        #expect(ClientHints(dpr: nil, width: nil, viewportWidth: "3000").viewportPixels(dpr: 2) == 4096)
    }

    // MARK: - In the plan

    @Test func dprFromTheHintMultipliesTheRequestsSizeAndTheKeyHoldsTheEffectiveValue() throws {
        // Given a request with a width and no dpr, from a 2x screen
        let hinted = try Self.request("\(Self.url)&w=40&h=30", dpr: "2")
        // Then its plan is the one `dpr=2` written out gives (one key), and it consulted only the DPR hint
        let written = try ThumbnailRequest(rawQuery: "\(Self.url)&w=40&h=30&dpr=2", accept: nil)
        #expect(hinted.spec == written.spec)
        #expect(hinted.spec.width == 80 && hinted.spec.height == 60)
        #expect(hinted.hintsUsed == [.dpr])
        // And with no hint sent, it is 1x, still varying on the DPR hint
        let plain = try Self.request("\(Self.url)&w=40&h=30")
        #expect(plain.spec.width == 40 && plain.hintsUsed == [.dpr])
        // And an explicit dpr wins and consults nothing
        let own = try Self.request("\(Self.url)&w=40&dpr=1.5", dpr: "3")
        #expect(own.spec.width == 60 && own.hintsUsed == [])
    }

    @Test func widthHintsFillInOnlyWhenThePlanHasNoSize() throws {
        // Sec-CH-Width is physical pixels: not multiplied by the DPR
        let physical = try Self.request(Self.url, dpr: "2", width: "300", viewport: "1000")
        #expect(physical.spec.width == 300 && physical.spec.height == nil)
        #expect(physical.hintsUsed == [.dpr, .width])
        // Without it, the viewport's CSS pixels times the DPR
        let viewport = try Self.request(Self.url, dpr: "2", viewport: "375")
        #expect(viewport.spec.width == 750)
        #expect(viewport.hintsUsed == [.dpr, .width, .viewportWidth])
        // A height in the request means no width hint (the other side follows the aspect ratio)
        let tall = try Self.request("\(Self.url)&h=100", width: "300")
        #expect(tall.spec.width == nil && tall.spec.height == 100 && tall.hintsUsed == [.dpr])
        // A preset's width counts as the plan's own
        let rules = ThumbQueryRules(presets: try Presets(["card": "w=50"]))
        let preset = try Self.request("\(Self.url)&preset=card", width: "300", rules: rules)
        #expect(preset.spec.width == 50 && preset.hintsUsed == [.dpr])
        // And with no size and no width hint, the request is a 400 as without hints
        #expect(throws: RequestError.missingParameter("w or h")) { try Self.request(Self.url, dpr: "2") }
    }

    @Test func aHintNeverMakesARequestFail() throws {
        // w=3000 at 2x would be 6000 px: the hinted DPR is lowered so that w×dpr stays within 4096
        let wide = try Self.request("\(Self.url)&w=3000", dpr: "2")
        #expect(wide.spec.width == 4080)
        // and padding×dpr within 1024
        let padded = try Self.request("\(Self.url)&w=10&padding=1000", dpr: "3")
        #expect(padded.spec.operations.padding.top <= 1024)
        // while the same values written out are refused as always
        #expect(throws: RequestError.self) { try Self.request("\(Self.url)&w=3000&dpr=2") }
    }

    // MARK: - Identity and headers

    @Test func theIdentityWithHintsNeverEqualsOneWithout() {
        let hints = ClientHints(dpr: "2", width: nil, viewportWidth: nil)
        #expect(hints.identityText(accept: "image/webp") == "=image/webp\n=2\n-\n-")
        #expect(ClientHints.none.identityText(accept: nil) == "-\n-\n-\n-")
        #expect(ClientHints.none.identityText(accept: nil) != hints.identityText(accept: nil))
    }

    @Test func varyNamesExactlyTheHintsUsedAfterAccept() {
        func fields(_ auto: Bool, _ used: ClientHints.Used?) -> [String] {
            ClientHints.responseFields(variesOnAccept: auto, used: used).map { "\($0.name): \($0.value)" }
        }
        #expect(fields(true, nil) == ["Vary: Accept"])
        #expect(fields(false, nil) == [])
        let acceptCH = "Accept-CH: Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width"
        #expect(fields(false, []) == [acceptCH])
        #expect(fields(true, [.dpr]) == [acceptCH, "Vary: Accept, Sec-CH-DPR"])
        #expect(fields(false, [.dpr, .width]) == [acceptCH, "Vary: Sec-CH-DPR, Sec-CH-Width"])
        #expect(
            fields(true, [.dpr, .width, .viewportWidth]) == [
                acceptCH, "Vary: Accept, Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width",
            ])
    }

    @Test func theHintsAreReadFromTheRequestsHeaders() throws {
        let request = try #require(
            HTTPRequest(
                method: .get, target: "/thumb?x",
                headers: [("Sec-CH-DPR", "2"), ("sec-ch-width", "300"), ("Sec-CH-Viewport-Width", "1280")]))
        let hints = ClientHints(request)
        #expect(hints == ClientHints(dpr: "2", width: "300", viewportWidth: "1280"))
    }
}
