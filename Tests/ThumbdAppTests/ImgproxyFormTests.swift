// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Testing
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// imgproxy's URL form (`ImgproxyForm`): its signature byte for byte as imgproxy computes it, checked before any
/// option; its options compiled into the same plan, so the same variant key, as the `/thumb` query of the same
/// picture; and every option thumbd cannot honour refused by the name the client wrote.
@Suite struct ImgproxyFormTests {
    static let source = "http://example.com/images/curiosity.jpg"
    /// `source` in URL-safe base64, split by slashes as imgproxy's documentation writes it.
    static let encodedSource = "aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn"
    static let thumbURL = "url=http%3A%2F%2Fexample.com%2Fimages%2Fcuriosity.jpg"

    /// imgproxy's documented example ("Signing the URL"): key `secret`, salt `hello`.
    static let documentedPair = ImgproxyForm.Keys.Pair(
        key: URLSignature.SharedKey(bytes: ImgproxyForm.Keys.bytes(hex: "736563726574")),
        salt: ImgproxyForm.Keys.bytes(hex: "68656c6c6f"))
    static let documentedPath = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
    static let documentedSignature = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"

    static func keys(_ pairs: [ImgproxyForm.Keys.Pair], size: Int = 32) -> ImgproxyForm.Keys {
        var values = ImgproxyForm.Keys()
        values.pairs = pairs
        values.signatureSize = size
        return values
    }

    static func form(
        prefix: String = "/", keys: ImgproxyForm.Keys = ImgproxyForm.Keys(), rules: ThumbQueryRules = .none,
        watermarks: WatermarkSource = .none
    ) -> ImgproxyForm {
        ImgproxyForm(
            prefix: prefix, keys: FormKeys(keys), rules: SharedThumbQueryRules(rules), watermarks: watermarks)
    }

    static func identity(_ target: String) throws -> RequestIdentity {
        RequestIdentity(try #require(HTTPRequest(method: .get, target: target, headers: [])))
    }

    /// The request an unsigned imgproxy path (after `/insecure`) names.
    static func request(
        _ path: String, form: ImgproxyForm = form(), signature: String = "insecure"
    ) throws -> ThumbnailRequest {
        try form.thumbnailRequest(for: identity("/\(signature)/\(path)")).request
    }

    /// The error an imgproxy target is refused with, nil when it is accepted.
    static func error(_ target: String, form: ImgproxyForm = form()) throws -> RequestError? {
        let identity = try identity(target)
        do {
            _ = try form.thumbnailRequest(for: identity)
            return nil
        } catch {
            return error
        }
    }

    /// The variant key of a request, its spec normalised as the service normalises it.
    static func key(_ request: ThumbnailRequest) throws -> VariantKey {
        VariantKey(source: request.source, spec: try Thumbnailer(vips: Vips.initialize()).normalized(request.spec))
    }

    static func thumbKey(
        _ query: String, rules: ThumbQueryRules = .none, watermarks: WatermarkSource = .none
    ) throws -> VariantKey {
        try key(
            ThumbnailRequest(
                parameters: QueryParameters(parsing: "\(thumbURL)&\(query)"), accept: nil, rules: rules,
                watermarks: watermarks))
    }

    // MARK: - Signature

    @Test func theDocumentedSignatureIsReproducedByteForByte() {
        // Given imgproxy's documented key, salt and path, when signed, then the signature is the documented one
        let signature = ImgproxySignature.signature(
            path: Self.documentedPath.utf8, pair: Self.documentedPair, size: 32)
        #expect(signature == Self.documentedSignature)
    }

    @Test func theDocumentedURLVerifiesAndIsTheSamePictureAsItsThumbQuery() throws {
        // Given a form mounted at /imgproxy/ with the documented key
        let form = Self.form(prefix: "/imgproxy/", keys: Self.keys([Self.documentedPair]))
        // When the documented URL is asked
        let request = try form.thumbnailRequest(
            for: Self.identity("/imgproxy/\(Self.documentedSignature)\(Self.documentedPath)")
        ).request
        // Then it is fill 300×400, smart gravity, not enlarged, PNG: /thumb's cover with attention
        #expect(request.source.string == Self.source)
        #expect(
            try Self.key(request)
                == Self.thumbKey("w=300&h=400&fit=cover&gravity=attention&enlarge=0&format=png"))
    }

    @Test(arguments: [
        "/rs:fill:301:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
        "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.jpg",
        "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBo.png",
    ])
    func aTamperedPathIsAnInvalidSignature(path: String) throws {
        let form = Self.form(keys: Self.keys([Self.documentedPair]))
        #expect(try Self.error("/\(Self.documentedSignature)\(path)", form: form) == .invalidSignature)
    }

    @Test func aTamperedSignatureIsInvalid() throws {
        let form = Self.form(keys: Self.keys([Self.documentedPair]))
        let tampered = "pKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"
        #expect(try Self.error("/\(tampered)\(Self.documentedPath)", form: form) == .invalidSignature)
        #expect(try Self.error("/\(Self.documentedSignature)=\(Self.documentedPath)", form: form) == .invalidSignature)
        #expect(try Self.error("/insecure\(Self.documentedPath)", form: form) == .invalidSignature)
    }

    @Test func aTruncatedSignatureVerifiesUnderItsSize() throws {
        // Given signature_size 8 and the first 8 bytes of the documented MAC
        let full = try #require(URLSignature.base64URLDecoded(Self.documentedSignature.utf8))
        let short = URLSignature.base64URLEncoded(Array(full.prefix(8)))
        let form = Self.form(keys: Self.keys([Self.documentedPair], size: 8))
        // Then the short one verifies and the full one does not
        #expect(try Self.error("/\(short)\(Self.documentedPath)", form: form) == nil)
        #expect(try Self.error("/\(Self.documentedSignature)\(Self.documentedPath)", form: form) == .invalidSignature)
        #expect(
            short == ImgproxySignature.signature(path: Self.documentedPath.utf8, pair: Self.documentedPair, size: 8))
    }

    @Test func anyConfiguredPairVerifies() throws {
        // Given two pairs, the documented one second
        let other = ImgproxyForm.Keys.Pair(
            key: URLSignature.SharedKey(bytes: [1, 2, 3]), salt: ImgproxyForm.Keys.bytes(hex: "abcd"))
        let form = Self.form(keys: Self.keys([other, Self.documentedPair]))
        #expect(try Self.error("/\(Self.documentedSignature)\(Self.documentedPath)", form: form) == nil)
        // And with the first alone, the same URL does not verify
        let alone = Self.form(keys: Self.keys([other]))
        #expect(try Self.error("/\(Self.documentedSignature)\(Self.documentedPath)", form: alone) == .invalidSignature)
    }

    @Test func withoutKeysAnySignatureSegmentIsAccepted() throws {
        for signature in ["insecure", "_", "unsafe", "anything-at-all"] {
            #expect(try Self.error("/\(signature)\(Self.documentedPath)") == nil)
        }
        // But an option where the signature belongs is not taken for one
        #expect(try Self.error("/rs:fit:300:0/plain/http://example.com/a.jpg") == .invalidSignature)
    }

    @Test func anEmptySignatureSegmentIsAMissingSignature() throws {
        let form = Self.form(keys: Self.keys([Self.documentedPair]))
        #expect(try Self.error("///plain/http://example.com/a.jpg", form: form) == .missingSignature)
    }

    @Test func theSignatureIsCheckedBeforeAnyOption() throws {
        // Given signed mode and paths whose options or source are wrong, with a wrong signature
        let form = Self.form(keys: Self.keys([Self.documentedPair]))
        for path in ["/g:obj/plain/http://e.com/a.jpg", "/rs:fit:99999:0/plain/s3://b/a", "/w:1/plain/%zz", "/x:1/!!"] {
            // Then the refusal is the signature's, whatever the options say
            #expect(try Self.error("/\(Self.documentedSignature)\(path)", form: form) == .invalidSignature)
        }
    }

    @Test func aColonEscapedByAProxyStillVerifies() throws {
        // Given a URL signed with `:` whose options a CDN escaped as %3A, and a plain source whose // it merged
        let form = Self.form(keys: Self.keys([Self.documentedPair]))
        let signedPath = "/rs:fit:300:200/plain/http://example.com/images/curiosity.jpg"
        let signature = ImgproxySignature.signature(path: signedPath.utf8, pair: Self.documentedPair, size: 32)
        let mangled = "/rs%3Afit%3A300%3A200/plain/http:/example.com/images/curiosity.jpg"
        // Then it verifies and means what was signed
        let request = try Self.request(String(mangled.dropFirst()), form: form, signature: signature)
        #expect(try Self.key(request) == Self.thumbKey("w=300&h=200"))
    }

    @Test func theKeyGenerationMovesWithTheKeysAndTheRules() {
        let keys = FormKeys(ImgproxyForm.Keys())
        let rules = SharedThumbQueryRules()
        let form = ImgproxyForm(prefix: "/", keys: keys, rules: rules, watermarks: .none)
        let first = form.keyGeneration
        keys.update(Self.keys([Self.documentedPair]))
        let second = form.keyGeneration
        rules.update(ThumbQueryRules(readsClientHints: true))
        #expect(first < second && second < form.keyGeneration)
        #expect(form.frontDoorState.keyGeneration == form.keyGeneration)
        #expect(form.frontDoorState.readsClientHints && form.readsClientHints)
    }

    // MARK: - One picture, one key

    static let sameAsThumb: [(String, String)] = [
        ("rs:fit:300:200", "w=300&h=200&fit=contain"),
        ("rs:fill:300:200/g:sm", "w=300&h=200&fit=cover&gravity=attention"),
        // Pro's object-oriented gravity with the face class: gravity=face
        ("rs:fill:300:200/g:obj:face", "w=300&h=200&fit=cover&gravity=face"),
        ("rt:force/w:300/h:200/el:1", "w=300&h=200&fit=fill&enlarge=1"),
        ("rs:fill:300:200/g:fp:0.25:0.75", "w=300&h=200&fit=cover&gravity=fp:0.25,0.75"),
        ("rs:fill:300:200/g:noea", "w=300&h=200&fit=cover&gravity=northeast"),
        ("rs:fill-down:300:200:1", "w=300&h=200&fit=cover&enlarge=1"),
        ("rs:fill-down:300:200/g:so", "w=300&h=200&fit=cover-down&gravity=south"),
        ("w:300/mw:100", "w=300&min_w=100"),
        ("rs:fit:300:200/exar:1", "w=300&h=200&extend=aspect&gravity=centre"),
        ("w:300/ex:1:so", "w=300&extend=box&gravity=south"),
        ("rs:fill:300:200/ex:1", "w=300&h=200&fit=cover&extend=box"),
        ("rs:fill:300:200:0:1", "w=300&h=200&fit=cover&extend=box"),
        ("w:300/c:0.5:0.5:sm", "w=300&crop=0.5,0.5&crop_gravity=attention"),
        ("w:300/g:sm/c:200:100", "w=300&crop=200,100&crop_gravity=attention&gravity=attention"),
        ("rs:force:300:200/exar:1:ea", "w=300&h=200&fit=fill&extend=aspect&gravity=east"),
        ("rs:fill:300:200/min-height:250/dpr:2", "w=300&h=200&fit=cover&min_h=250&dpr=2&dpr_limit=1"),
        ("rs:fill:300:200:1/dpr:2", "w=300&h=200&fit=cover&enlarge=1&dpr=2"),
        ("rs:fit:300:200/dpr:2", "w=300&h=200&dpr=2"),
        ("rs:fit:5000:5000", "w=4096&h=4096&fit=contain"),
        ("rs:fit:5000:300/dpr:2", "w=2048&h=300&dpr=2&fit=contain"),
        ("w:9000", "w=4096"),
        ("rs:fit:300:200:0:1:no/bg:255:0:0", "w=300&h=200&fit=pad&gravity=north&bg=ff0000"),
        ("rs:fit:300:200:1/exar:1:sowe", "w=300&h=200&fit=pad&gravity=southwest&enlarge=1"),
        ("w:300/c:0.5:0.5", "w=300&crop=0.25,0.25,0.5,0.5"),
        ("w:300/g:so/c:0.5:0.2", "w=300&crop=0.25,0.8,0.5,0.2"),
        ("w:300/c:0.5:0.5:fp:0.9:0.1", "w=300&crop=0.5,0.0,0.5,0.5"),
        ("w:300/c:400:300:nowe", "w=300&crop=0,0,400,300"),
        ("w:300/c:400:0:we", "w=300&crop=0,0,400,1000000"),
        ("w:300/c:300:200", "w=300&crop=300,200"),
        ("rs:fill:300:200/g:no:10:0.25", "w=300&h=200&fit=cover&gravity=north&gravity_offset=10,0.25"),
        ("rs:fill:300:200/dpr:2/g:ce:-3.5", "w=300&h=200&fit=cover&dpr=2&dpr_limit=1&gravity_offset=-4,0"),
        ("w:300/g:ea:10/c:300:200", "w=300&crop=300,200&crop_gravity=east&crop_offset=10,0"),
        ("w:300/c:300:200:soea", "w=300&crop=300,200&crop_gravity=southeast"),
        ("w:300/g:ea/c:300:200", "w=300&crop=300,200&crop_gravity=east"),
        ("w:300/c:300:200:no:10:0.25", "w=300&crop=300,200&crop_gravity=north&crop_offset=10,0.25"),
        ("w:300/c:300:200:ce:-2.5", "w=300&crop=300,200&crop_offset=-2,0"),
        ("w:300/c:0.5:200:nowe", "w=300&crop=0.5,200&crop_gravity=northwest"),
        ("w:300/c:0.5:0.5:ea:0.1", "w=300&crop=0.5,0.5&crop_gravity=east&crop_offset=0.1,0"),
        ("w:300/c:300:0:fp:0.2:0.7", "w=300&crop=300,1.0&crop_gravity=fp:0.2,0.7"),
        ("w:300/rot:450/fl:1:0", "w=300&rotate=90&flip=h"),
        ("w:300/fl:1:1", "w=300&rotate=180"),
        ("w:300/ar:0", "w=300&autorotate=0"),
        ("w:300/bl:2.5/sh:0.5/pix:4", "w=300&blur=2.5&sharpen=0.5&pixelate=4"),
        // Pro's detections with the face class: redact
        ("w:300/bd:7:face", "w=300&redact=faces,blur,7"),
        ("w:300/blur_detections:2.5:face", "w=300&redact=faces,blur,2.5"),
        ("w:300/dd:1:face", "w=300&redact=faces,box&redact_margin=0"),
        ("w:300/draw_detections:true:face", "w=300&redact=faces,box&redact_margin=0"),
        ("w:300/dd:1:face/bd:5:face", "w=300&redact=faces,blur,5"),
        ("w:300/bd:5:face/bd:0:face", "w=300"),
        ("w:300/bd:5:face/dd:0:face", "w=300"),
        ("w:300/br:-10/co:1.2/sa:.5", "w=300&brightness=-10&contrast=1.2&saturation=0.5"),
        ("w:300/a:10::0.5", "w=300&brightness=10&saturation=0.5"),
        ("w:300/q:70/f:webp", "w=300&q=70&format=webp"),
        ("w:300/fq:webp:55:jpeg:90/f:webp", "w=300&q=55&format=webp"),
        ("w:300/kcr:1/scp:0/mb:20000/ext:jpg", "w=300&keep_copyright=1&icc=keep&max_bytes=20000&format=jpeg"),
        ("w:300/f:jxl", "w=300&format=jxl"),
        // pages count from 0 in imgproxy, from 1 in /thumb
        ("w:300/pg:1", "w=300&page=2"),
        ("w:300/page:0", "w=300"),
        ("w:300/pg:4/pg:0", "w=300"),
        ("w:300/pg:99999", "w=300&page=100000"),
        ("w:300/ext:jxl", "w=300&format=jxl"),
        ("w:300/format:heic", "w=300&format=heif"),
        ("w:300/pd:10:20", "w=300&padding=10,20,10,20"),
        ("w:300/pd:10::30", "w=300&padding=10,10,30,10"),
        ("w:300/dpr:2/pd:5", "w=300&dpr=2&padding=5"),
        ("w:300/t:10:fff", "w=300&trim=10,ffffff"),
        ("rs:auto:300:200/g:no", "w=300&h=200&fit=auto&gravity=north"),
        ("w:300/t:10:fff/rot:180", "w=300&trim=10,ffffff&rotate=180"),
        // Without a colour, the untouched picture's top-left pixel, wherever the turn puts it
        ("w:300/t:10/rot:90", "w=300&trim=10,tr&rotate=90"),
        ("w:300/t:10/fl:0:1", "w=300&trim=10,bl&flip=v"),
        ("w:300/t:10/t::ff00ff", "w=300"),
        ("z:2/rs:fit:100:50", "w=200&h=100"),
        ("rs:fill/h:200", "h=200"),
        ("w:300/sm:1/cb:v2/raw:0/exp:0/ra:lanczos3", "w=300"),
        ("", "w=4096&h=4096&enlarge=0"),
        ("dpr:2/pd:4", "w=4096&h=4096&padding=4"),
        ("w:300/bg:abc/bg:/f:png", "w=300&format=png"),
        ("w:300/wm:0:re:10:10", "w=300"),
        ("w:300/skp:jpg:png", "w=300&skip=jpeg,png"),
        ("w:300/skip_processing:heic/skp:tiff:jpeg", "w=300&skip=jpeg,tiff,heif"),
        ("w:300/f:png/skp:jpg:png", "w=300&format=png&skip=png"),
        ("raw:1", "raw=1"),
        ("raw:t/fn:photo/att:1/exp:1900000000/cb:2", "raw=1"),
        ("raw:true/raw:0/w:300", "w=300"),
    ]

    @Test(arguments: sameAsThumb)
    func anImgproxyURLIsTheSamePictureAsItsThumbQuery(path: String, query: String) throws {
        // Given an imgproxy path and the /thumb query that means the same picture
        let imgproxy = try Self.request((path.isEmpty ? "" : path + "/") + "plain/" + Self.source)
        // Then both are one variant key
        #expect(try Self.key(imgproxy) == Self.thumbKey(query), "\(path)")
    }

    @Test func theWatermarkIsTheOneNamedImgproxy() throws {
        // Given a configured watermark named `imgproxy`
        let watermarks = WatermarkSource.standIn(named: ImgproxyOptions.watermarkName)
        let form = Self.form(watermarks: watermarks)
        let request = try Self.request("w:300/wm:0.5:soea:10:12:0.2/plain/\(Self.source)", form: form)
        let query = "w=300&wm=imgproxy&wm_pos=southeast&wm_opacity=0.5&wm_x=10&wm_y=12&wm_scale=0.2"
        #expect(try Self.key(request) == Self.thumbKey(query, watermarks: watermarks))
        // And imgproxy's default position is the centre, a mark from a URL replaces the configured one, opacity 0
        // draws none
        let centred = try Self.request("w:300/wm:1/plain/\(Self.source)", form: form)
        #expect(try Self.key(centred) == Self.thumbKey("w=300&wm=imgproxy&wm_pos=centre", watermarks: watermarks))
        let mark = URLSignature.base64URLEncoded(Array("https://example.com/mark.png".utf8))
        let fromURL = try Self.request("w:300/wm:1:re/wmu:\(mark)/plain/\(Self.source)", form: form)
        #expect(
            try Self.key(fromURL)
                == Self.thumbKey("w=300&wm_url=https%3A%2F%2Fexample.com%2Fmark.png&wm_pos=tile"))
        // And offsets below 1 are fractions of the output's side; with `re` the offsets space the tiles
        let relative = try Self.request("w:300/wm:1:nowe:0.1:0.25/plain/\(Self.source)", form: form)
        #expect(
            try Self.key(relative)
                == Self.thumbKey("w=300&wm=imgproxy&wm_pos=northwest&wm_x=0.1&wm_y=0.25", watermarks: watermarks))
        let spaced = try Self.request("w:300/wm:1:re:10:0.5/plain/\(Self.source)", form: form)
        #expect(
            try Self.key(spaced)
                == Self.thumbKey("w=300&wm=imgproxy&wm_pos=tile&wm_x=10&wm_y=0.5", watermarks: watermarks))
        let none = try Self.request("w:300/wm:0/plain/\(Self.source)", form: form)
        #expect(try Self.key(none) == Self.thumbKey("w=300"))
    }

    @Test func plainAndBase64SourcesAndTheirExtensionsAreOnePicture() throws {
        let plain = try Self.request("w:300/plain/http%3A%2F%2Fexample.com%2Fimages%2Fcuriosity.jpg@png")
        let encoded = try Self.request("w:300/\(Self.encodedSource).png")
        let padded = try Self.request("w:300/\(URLSignature.base64URLEncoded(Array(Self.source.utf8)))==.png")
        let option = try Self.request("w:300/f:jpg/plain/\(Self.source)@png")
        let expected = try Self.thumbKey("w=300&format=png")
        #expect(try Self.key(plain) == expected)
        #expect(try Self.key(encoded) == expected)
        #expect(try Self.key(padded) == expected)
        // The extension has the last word over `f`, as in imgproxy
        #expect(try Self.key(option) == expected)
    }

    @Test func aQueryStringIsIgnoredAsImgproxyIgnoresIt() throws {
        let plain = try Self.request("w:300/plain/\(Self.source)")
        let queried = try Self.request("w:300/plain/\(Self.source)?w=5000&x=1")
        #expect(try Self.key(queried) == Self.key(plain))
    }

    static let aliases: [[String]] = [
        [
            "rs:fill:300:200", "resize:fill:300:200", "rt:fill/s:300:200", "resizing_type:fill/width:300/height:200",
            "rt:fill/size:300:200", "rt:fill/w:300/h:200",
        ],
        ["w:300/g:we/c:0.5", "w:300/gravity:we/crop:0.5", "w:300/c:0.5:0:we"],
        ["w:300/bl:1/sh:2/pix:3", "w:300/blur:1/sharpen:2/pixelate:3"],
        ["w:300/rot:90/fl:1", "w:300/rotate:90/flip:t"],
        ["w:300/pd:4/bg:fff", "w:300/padding:4:4:4:4/background:255:255:255"],
        ["w:300/q:50/f:webp", "w:300/quality:50/format:webp", "w:300/q:50/ext:webp"],
        ["w:300/el:1/ex:1", "w:300/enlarge:true/extend:1", "w:300/enlarge:T"],
        ["w:300/dpr:2/z:1", "w:300/dpr:2.0/zoom:1:1"],
        ["w:300/ar:0/kcr:1/scp:1", "w:300/auto_rotate:false/keep_copyright:1/strip_color_profile:t"],
        ["w:300/t:5/mb:4096", "w:300/trim:5/max_bytes:4096"],
        ["w:300/br:5/co:2/sa:0", "w:300/brightness:5/contrast:2/saturation:0", "w:300/adjust:5:2:0"],
    ]

    @Test(arguments: aliases)
    func aliasesAreTheSamePlan(_ spellings: [String]) throws {
        let keys = try spellings.map { path in try Self.key(Self.request("\(path)/plain/\(Self.source)")) }
        #expect(Set(keys).count == 1, "\(spellings)")
    }

    // MARK: - Presets

    static func rules(_ presets: [String: String], onlyPresets: Bool = false) throws -> ThumbQueryRules {
        ThumbQueryRules(presets: try Presets(presets), allowsOnlyPresets: onlyPresets)
    }

    @Test func presetsAreThumbsPresets() throws {
        // Given /thumb presets, one of which sets the box
        let rules = try Self.rules(["card": "w=400&h=300&fit=cover", "sharp": "sharpen=1", "default": "q=75"])
        let form = Self.form(rules: rules)
        // When an imgproxy URL names them, then it is /thumb's plan with the same presets
        let named = try Self.request("pr:card:sharp/plain/\(Self.source)", form: form)
        #expect(try Self.key(named) == Self.thumbKey("preset=card,sharp", rules: rules))
        let overridden = try Self.request("preset:card/g:sm/plain/\(Self.source)", form: form)
        #expect(try Self.key(overridden) == Self.thumbKey("preset=card&gravity=attention", rules: rules))
        // And with no size anywhere, the default preset still applies under imgproxy's "source size"
        let unsized = try Self.request("plain/\(Self.source)", form: form)
        #expect(try Self.key(unsized) == Self.thumbKey("w=4096&h=4096&enlarge=0", rules: rules))
    }

    @Test func presetsOnlyReadsImgproxysPresetsOnlyForm() throws {
        // Given image.presets_only
        let rules = try Self.rules(["card": "w=400&h=300&fit=cover", "sharp": "sharpen=1"], onlyPresets: true)
        let form = Self.form(rules: rules)
        // When the first segment lists presets, then it is the presets' plan, the extension giving the format
        let request = try Self.request("card:sharp/plain/\(Self.source)@webp", form: form)
        #expect(try Self.key(request) == Self.thumbKey("preset=card,sharp&format=webp", rules: rules))
        // And options are read as preset names, as imgproxy reads them
        #expect(
            try Self.error("/insecure/rs:fit:10/plain/\(Self.source)", form: form)
                == .invalidValue("preset", reason: "unknown preset \"rs\""))
    }

    // MARK: - Refusals

    static let refused: [(String, RequestError)] = [
        ("g:obj:cat", .unsupportedOption("obj")),
        ("g:obj:face:cat", .unsupportedOption("obj")),
        ("rs:fill:300:200/c:100:100:obj:face", .unsupportedOption("c with obj:face")),
        ("rs:fill:300:200/g:obj:face/c:100:100", .unsupportedOption("c with obj:face")),
        ("rs:fill:300:200/gravity:objw:face:2", .unsupportedOption("objw")),
        ("rt:force/w:300", .unsupportedOption("rt:force")),
        ("rs:fit:300:200/ex:1:fp:0.5:0.5", .unsupportedOption("ex:fp")),
        ("rs:fill:300:200/g:no/ex:1", .unsupportedOption("ex placed otherwise than g")),
        ("z:2", .unsupportedOption("z")),
        ("z:2:3/rs:fit:10:10", .unsupportedOption("z:x:y")),
        ("dpr:2/el:1", .unsupportedOption("dpr")),
        ("w:300/sm:0", .unsupportedOption("sm:0")),
        ("w:300/skp:svg", .unsupportedOption("skp:svg")),
        (
            "w:300/skp:jpg:pdf",
            .invalidValue("skp", reason: "the formats must be jpg, png, webp, avif, gif, heic or tiff")
        ),
        // raw: what would change the picture is refused by name (imgproxy ignores it)
        ("w:300/raw:1", .invalidValue("w", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:1/rs:fit:10:10", .invalidValue("rs", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:1/bl:2", .invalidValue("bl", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:1/f:png", .invalidValue("f", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:1/skp:jpg", .invalidValue("skp", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:1/pr:card", .invalidValue("preset", reason: ThumbnailRequest.notWithRawReason)),
        ("raw:yes", .invalidValue("raw", reason: "yes is not a boolean (1, t, true, 0, f, false)")),
        ("w:300/msr:100", .unsupportedOption("msr")),
        ("w:300/pg:-1", .invalidValue("pg", reason: "the page must be a whole number ≥ 0")),
        ("w:300/page:100000", .invalidValue("page", reason: "the page must be 0...99999 (counted from 0)")),
        ("w:300/pg:1:2", .invalidValue("pg", reason: "takes one argument")),
        ("w:300/pgs:2", .unsupportedOption("pgs")),
        ("w:300/bd:7", .unsupportedOption("bd")),
        ("w:300/bd:7:car", .unsupportedOption("bd")),
        ("w:300/bd:7:face:car", .unsupportedOption("bd")),
        ("w:300/dd:1", .unsupportedOption("dd")),
        ("w:300/draw_detections:1:person", .unsupportedOption("draw_detections")),
        ("w:300/bd:200:face", .invalidValue("bd", reason: "blur's strength must be a number 0.1...100")),
        ("raw:1/bd:7:face", .invalidValue("bd", reason: ThumbnailRequest.notWithRawReason)),
        ("w:300/ra:nearest", .unsupportedOption("ra:nearest")),
        ("w:300/f:tiff", .unsupportedOption("f:tiff")),
        ("w:300/f:best", .unsupportedOption("f:best")),
        ("w:300/t:10:fff:1", .unsupportedOption("t:equal_hor")),
        ("w:300/t:10:fff:0:t", .unsupportedOption("t:equal_ver")),
        ("w:300/wm:0.5:ch", .unsupportedOption("wm:ch")),
        ("w:300/wm:0.5:ce:-5", .invalidValue("wm", reason: "offsets must be ≥ 0 (inward from the edges)")),
        ("w:300/wm:0.5:ce:1.5", .invalidValue("wm", reason: "offsets must be whole pixels or a fraction below 1")),
        ("w:300/mc:1", .unsupportedOption("mc")),
        ("w:300/rss:1", .unknownParameter("rss")),
        ("w:300/f:bmpx", .invalidValue("f", reason: "the format must be jpg, png, webp, avif, jxl, heic or gif")),
        ("w:300/el:yes", .invalidValue("el", reason: "yes is not a boolean (1, t, true, 0, f, false)")),
        ("w:300/rot:45", .invalidValue("rot", reason: "the angle must be a multiple of 90")),
        ("w:300/sa:-1", .invalidValue("sa", reason: "the saturation must be a number 0...10")),
        ("rs:fill:5000:100", .invalidValue("rs", reason: "must be an integer 1...4096")),
        ("w:300/q:101", .invalidValue("q", reason: "the quality must be a whole number 0...100")),
        ("w:300/bl:200", .invalidValue("bl", reason: "must be a number 0...100")),
        ("w:300/dpr:0.5", .invalidValue("dpr", reason: "must be a number 1...4")),
        ("w:300/g:fp:1.5:0", .invalidValue("g", reason: "the focal point's x and y must be 0...1")),
        ("w:300/pr:nope", .invalidValue("preset", reason: "unknown preset \"nope\"")),
        ("w:300/wm:0.5", .invalidValue("wm", reason: "no watermark of that name is configured")),
        (
            "w:300/wmu:aHR0cHM6Ly9lLmNvbS9tLnBuZw",
            .invalidValue("wmu", reason: "needs wm (the watermark's opacity and position)")
        ),
        ("w:300/mb:10", .invalidValue("mb", reason: "must be an integer 1024...100000000")),
        ("w:300/f:png/mb:2048", .invalidValue("mb", reason: "png output has no quality to lower")),
    ]

    /// `expires`, `filename` and `return_attachment` ask the answer's headers, not the picture: the request carries
    /// them and its variant key is the one without them.
    @Test func answerOptionsAreCarriedOutsideTheKey() throws {
        let plain = try Self.request("rs:fit:300:200/plain/\(Self.source)@png")
        let asked = try Self.request(
            "rs:fit:300:200/exp:1900000000/fn:U2Now7Zu:1/att:1/plain/\(Self.source)@png")
        #expect(asked.answer.expiresAt == 1_900_000_000)
        #expect(asked.answer.filename == "Schön")
        #expect(asked.answer.attachment == true)
        #expect(plain.answer.isEmpty)
        #expect(
            VariantKeyText.description(source: asked.source, spec: asked.spec)
                == VariantKeyText.description(source: plain.source, spec: plain.spec))
        // A name as written is percent-decoded as imgproxy's Go path is; `exp:0` is no deadline
        let named = try Self.request("rs:fit:300:200/fn:a%20b/exp:0/plain/\(Self.source)")
        #expect(named.answer.filename == "a b" && named.answer.expiresAt == nil && named.answer.attachment == nil)
        #expect(
            try Self.error("/insecure/w:300/exp:soon/plain/\(Self.source)")
                == .invalidValue("exp", reason: "must be a unix timestamp"))
        #expect(try Self.error("/insecure/w:300/att:maybe/plain/\(Self.source)") != nil)
    }

    @Test(arguments: refused)
    func anOptionThumbdCannotHonourIsRefusedByName(path: String, expected: RequestError) throws {
        #expect(try Self.error("/insecure/\(path)/plain/\(Self.source)") == expected)
    }

    /// `raw:1` answers the source's own format: an extension, which imgproxy ignores beside it, is refused; the
    /// answer's options are kept, and the answer does not vary on `Accept`.
    @Test func rawRefusesAnExtensionAndKeepsTheAnswersOptions() throws {
        #expect(
            try Self.error("/insecure/raw:1/plain/\(Self.source)@png")
                == .invalidValue("extension", reason: ThumbnailRequest.notWithRawReason))
        let request = try Self.request("raw:1/fn:photo/att:1/plain/\(Self.source)")
        #expect(request.spec == .raw && !request.variesOnAccept)
        #expect(request.answer.filename == "photo" && request.answer.attachment == true)
        #expect(ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec).hasSuffix("&raw=1"))
    }

    static let malformed: [(String, RequestError)] = [
        ("/insecure", .malformedPath("no source after the signature")),
        ("/insecure/rs:fit:300:0", .malformedPath("no source URL")),
        (
            "/insecure/fill/300/400/no/0/aHR0cDovL2UuY29tL2EuanBn",
            .malformedPath(
                "imgproxy's old basic URL form is not supported; write options as name:value")
        ),
        (
            "/insecure/plain/http://example.com/a%zz.jpg",
            .malformedPath(
                "the plain source URL has a broken percent-escape or is not UTF-8")
        ),
        (
            "/insecure/plain/http://example.com/a.jpg@png@jpg",
            .malformedPath(
                "more than one extension after the source URL")
        ),
        ("/insecure/w:1/plain/@png", .malformedPath("empty source URL")),
        (
            "/insecure/aHR0cDovL2UuY29tL2EuanBn!",
            .malformedPath(
                "the source URL is not URL-safe base64 of UTF-8 text")
        ),
        ("/insecure/plain/gs://bucket/a.jpg", .unsupportedOption("gs://")),
        ("/insecure/plain/local:///a.jpg", .unsupportedOption("local://")),
        (
            "/insecure/plain/ftp://example.com/a.jpg",
            .invalidValue(
                "source", reason: "must be an absolute http(s) URL or s3://bucket/key")
        ),
    ]

    @Test(arguments: malformed)
    func aMalformedPathIsRefusedSayingWhy(target: String, expected: RequestError) throws {
        #expect(try Self.error(target) == expected)
    }

    @Test func aTargetOutsideThePrefixIsMalformed() throws {
        let form = Self.form(prefix: "/imgproxy/")
        #expect(
            try Self.error("/other/insecure/plain/\(Self.source)", form: form) == .malformedPath("not under /imgproxy/")
        )
    }
}
