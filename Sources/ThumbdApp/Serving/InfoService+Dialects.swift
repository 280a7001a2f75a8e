// SPDX-License-Identifier: Apache-2.0
import EventLoops
import FoundationEssentials
import HTTP1
import OriginFetch
import Thumbnailing
import URLForms

/// thumbor's `meta/`: the JSON thumbor answers instead of the picture, made from the same plan as the thumbnail.
///
/// The source comes as for `/info` (the source cache, else the fetcher); on a render thread its header is read and
/// the plan rendered (thumbor runs its transformation for `meta/` too), so `target` is the size the thumbnail has,
/// not an estimate. A watermark is left out of that render (it does not change the size). Answers carry
/// `Cache-Control: no-store`.
///
///     {"thumbor": {"source": {"url": …, "width": 800, "height": 600, "frameCount": 1},
///                  "operations": [{"type": "crop", …}, {"type": "resize", "width": 300, "height": 200},
///                                 {"type": "flip_horizontally"}],
///                  "target": {"width": 300, "height": 200}},
///      "analysis": {"blurhash": …, "thumbhash": …, "average_colour": …, …}}
extension InfoService: ThumborMetaAnswering {
    struct ThumborMeta: Encodable {
        var thumbor: Body
        /// thumbd's own: the source's analysis (placeholders, colours, hashes; as `/info?analysis=1` shows it), beside
        /// thumbor's fields, while `image.analysis` is on. From the source's record, made if it has none.
        var analysis: AnalysisFields?

        struct Body: Encodable {
            let source: Source
            let operations: [Operation]
            let target: Size
            /// thumbor's `focal_points` (its `FocalPoint.to_dict`): what smart detection found, or the alignment's
            /// point; absent beside `focal()` filters (thumbd keeps only their centre of mass).
            var focalPoints: [FocalPoint]?

            enum CodingKeys: String, CodingKey {
                case source, operations, target
                case focalPoints = "focal_points"
            }
        }

        struct FocalPoint: Encodable {
            let x: Int
            let y: Int
            let z: Double
            let height: Int
            let width: Int
            let origin: String
        }

        struct Source: Encodable {
            let url: String
            let width: Int
            let height: Int
            let frameCount: Int
        }

        struct Operation: Encodable {
            let type: String
            var width: Int?
            var height: Int?
            var left: Int?
            var top: Int?
            var right: Int?
            var bottom: Int?
        }

        struct Size: Encodable {
            let width: Int
            let height: Int
        }
    }

    /// Answers a thumbor `meta/` URL whose request (the thumbnail's plan) the form has made and verified.
    func answerThumborMeta(_ request: ThumbnailRequest, path: ThumborPath, _ responder: HTTPResponder) {
        // The size does not depend on a watermark, which would need fetching: render without it.
        var operations = request.spec.operations
        operations.watermarks = []
        // Nor a frame (whose margins it does change: the target is the size before them; docs/compatibility.md).
        operations.frame = nil
        let spec: ThumbnailSpec
        do {
            let given = request.spec
            spec = try ThumbnailSpec(
                width: given.width, height: given.height, fit: given.fit, gravity: given.gravity,
                quality: given.quality, enlarge: given.enlarge, format: given.format, focalPoint: given.focalPoint,
                operations: operations)
        } catch {
            responder.respond(ErrorResponse(.request(.invalidValue(error.field, reason: error.reason))).response)
            return
        }
        let source = request.source
        withSource(source, responder) { [self] bytes, origin in
            let freshness = self.freshness(of: bytes)
            do {
                try renderPool.submit(priority: .interactive) { [thumbnailer, intermediates] in
                    let response: HTTPResponse
                    do throws(ThumbnailError) {
                        let probe = try thumbnailer.probe(bytes.body)
                        let normalized = thumbnailer.normalized(spec)
                        let regions =
                            path.smart
                            ? try intermediates?.regions(
                                of: bytes.body, url: source.string, thorough: true, thumbnailer: thumbnailer)
                            : nil
                        let rendered = try thumbnailer.render(bytes.body, spec: normalized, regions: regions)
                        var meta = Self.thumborMeta(
                            url: source.string, probe: probe, path: path,
                            target: (rendered.width, rendered.height))
                        meta.thumbor.focalPoints = Self.thumborFocalPoints(
                            path, picture: (probe.width, probe.height), regions: regions)
                        if let intermediates, intermediates.analyses?.isEager == true {
                            // Left out, not failed, if it cannot be made: the client asked for thumbor's fields.
                            meta.analysis =
                                (try? intermediates.analysis(
                                    of: bytes.body, url: source, freshness: freshness,
                                    thumbnailer: thumbnailer)).map { AnalysisFields($0.analysis) }
                        }
                        response = Self.json(meta, origin: origin)
                    } catch {
                        response = ErrorResponse(.thumbnail(error)).response
                    }
                    responder.respond(response)
                }
            } catch {
                responder.respond(ErrorResponse(.renderQueueFull).response)
            }
        }
    }

    /// thumbor's `focal_points` as its transformer leaves them (`adjust_focal_points`): the faces its face detector
    /// found (each centred below its top raised for the hair, weighted by its area, "Face Detection"), else the corners
    /// its feature detector found (weight 1, "alignment"), those outside a manual crop dropped and the rest moved into
    /// it; with none, the alignment's point of the (cropped) picture. `nil` beside `focal()` filters.
    static func thumborFocalPoints(
        _ path: ThumborPath, picture: (width: Int, height: Int), regions: DetectedRegions?
    )
        -> [ThumborMeta.FocalPoint]?
    {
        guard !path.filters.contains(where: { $0.name == "focal" || $0.name == "extract_focal" }) else { return nil }
        var points: [ThumborMeta.FocalPoint] = []
        if path.smart, let regions {
            let faces = regions.faces.map(DetectedRegions.Rect.init)
            points = Thumbnailer.thumborPoints(faces: faces, features: regions.features).map {
                .init(
                    x: $0.x, y: $0.y, z: $0.weight, height: $0.height, width: $0.width,
                    origin: $0.isFace ? "Face Detection" : "alignment")
            }
        }
        var size = picture
        if let crop = path.crop, let left = Int(crop.left), let top = Int(crop.top), let right = Int(crop.right),
            let bottom = Int(crop.bottom), right > left, bottom > top
        {
            points = points.compactMap { point in
                guard point.x >= left, point.x <= right, point.y >= top, point.y <= bottom else { return nil }
                return .init(
                    x: point.x - left, y: point.y - top, z: point.z, height: point.height, width: point.width,
                    origin: point.origin)
            }
            size = (min(right, picture.width) - left, min(bottom, picture.height) - top)
        }
        if points.isEmpty {
            let x = ["left": 0.0, "center": 0.5, "right": 1.0][path.horizontalAlignment.rawValue] ?? 0.5
            let y = ["top": 0.0, "middle": 0.5, "bottom": 1.0][path.verticalAlignment.rawValue] ?? 0.5
            points = [
                .init(
                    x: Int(Double(size.width) * x), y: Int(Double(size.height) * y), z: 1, height: 1, width: 1,
                    origin: "alignment")
            ]
        }
        return points
    }

    /// thumbor's fields: the manual crop (source pixels), the resize to the thumbnail's size, the flips.
    static func thumborMeta(url: String, probe: ImageProbe, path: ThumborPath, target: (width: Int, height: Int))
        -> ThumborMeta
    {
        var operations: [ThumborMeta.Operation] = []
        if let crop = path.crop, let left = Int(crop.left), let top = Int(crop.top), let right = Int(crop.right),
            let bottom = Int(crop.bottom), right > left, bottom > top
        {
            operations.append(.init(type: "crop", left: left, top: top, right: right, bottom: bottom))
        }
        operations.append(.init(type: "resize", width: target.width, height: target.height))
        if path.flipsHorizontally { operations.append(.init(type: "flip_horizontally")) }
        if path.flipsVertically { operations.append(.init(type: "flip_vertically")) }
        return ThumborMeta(
            thumbor: .init(
                source: .init(url: url, width: probe.width, height: probe.height, frameCount: probe.pageCount),
                operations: operations, target: .init(width: target.width, height: target.height)))
    }
}

/// imgproxy's `/info/…`: imgproxy's JSON for what a source is, from its header (no pixel decoded) or its kept
/// analysis record, the source from the source cache or the fetcher as for `/info`:
///
///     {"format": "jpeg", "mime_type": "image/jpeg", "width": 800, "height": 600, "size": 123456,
///      "exif": {"Make": "…", "Model": "…", "DateTimeOriginal": "…"},
///      "blurhash": "…", "thumb_hash": "<hex>", "perceptual_hash": "<hex>",
///      "average": {"R": 139, "G": 132, "B": 121, "A": 255}, "palette": [{"R": …, "G": …, "B": …, "A": 255}, …],
///      "dominant_colors": {"vibrant": {"R": …, "G": …, "B": …}, …}}
///
/// `width` and `height` are upright (the EXIF orientation applied); `exif` only with `exif:1`, holding those three
/// tags when the source has them; the analysis's fields only when asked, answered from the source's record as
/// `/info?analysis=1` is (no fetch when it is kept and fresh).
extension InfoService: ImgproxyInfoAnswering {
    struct ImgproxyInfo: Encodable {
        var format: String?
        var mimeType: String?
        var width: Int?
        var height: Int?
        var orientation: Int?
        var size: Int?
        var exif: [String: String]?
        var colorspace: String?
        var pagesNumber: Int?
        var palette: [Colour]?
        var average: Colour?
        var dominantColors: [String: Colour]?
        var blurhash: String?
        var thumbHash: String?
        var perceptualHash: String?

        enum CodingKeys: String, CodingKey {
            case format
            case mimeType = "mime_type"
            case width, height, orientation, size, exif, colorspace
            case pagesNumber = "pages_number"
            case palette, average
            case dominantColors = "dominant_colors"
            case blurhash
            case thumbHash = "thumb_hash"
            case perceptualHash = "perceptual_hash"
        }

        /// imgproxy's colour object (`A` only where imgproxy writes it).
        struct Colour: Encodable {
            let R: Int
            let G: Int
            let B: Int
            var A: Int?

            init(_ colour: SourceAnalysis.Colour, alpha: Bool) {
                R = Int(colour.red)
                G = Int(colour.green)
                B = Int(colour.blue)
                A = alpha ? 255 : nil
            }
        }
    }

    func answerImgproxyInfo(_ source: SourceURL, options: ImgproxyForm.InfoOptions, _ responder: HTTPResponder) {
        var query = InfoQuery(source: source)
        if options.needsAnalysis, let defaults = intermediates?.analyses?.options {
            var wanted = defaults
            if let components = options.blurhash {
                (wanted.blurhashX, wanted.blurhashY) = (components[0], components[1])
            }
            if options.palette > 0 { wanted.paletteColours = options.palette }
            query.analysis = wanted
        } else if options.needsAnalysis {
            responder.respond(
                ErrorResponse(.request(.invalidValue("info", reason: "this server keeps no analyses"))).response)
            return
        }
        answer(query, responder) { info, origin in
            Self.json(Self.imgproxyInfo(info, options: options), origin: origin)
        }
    }

    /// imgproxy's fields of `info`, as `options` asks.
    static func imgproxyInfo(_ info: Info, options: ImgproxyForm.InfoOptions) -> ImgproxyInfo {
        var answer = ImgproxyInfo()
        if options.format {
            answer.format = info.format
            answer.mimeType = ImageFormat(rawValue: info.format)?.mimeType
        }
        if options.dimensions {
            (answer.width, answer.height, answer.orientation) = (info.width, info.height, info.orientation)
        }
        if options.size { answer.size = info.bytes }
        if options.exif {
            var exif: [String: String] = [:]
            exif["Make"] = info.exif.make
            exif["Model"] = info.exif.model
            exif["DateTimeOriginal"] = info.exif.takenAt
            answer.exif = exif
        }
        if options.colorspace { answer.colorspace = info.colourSpace }
        if options.pagesNumber { answer.pagesNumber = info.frames }
        guard let analysis = info.analysis?.source else { return answer }
        if options.palette > 0 { answer.palette = analysis.palette.map { .init($0.colour, alpha: true) } }
        if options.average { answer.average = .init(analysis.average, alpha: true) }
        if options.dominantColours {
            let dominant = options.buildsMissedColours ? analysis.dominant.withMissedRolesBuilt : analysis.dominant
            var colours: [String: ImgproxyInfo.Colour] = [:]
            for (role, swatch) in dominant.roles {
                if let swatch { colours[role] = .init(swatch.colour, alpha: false) }
            }
            answer.dominantColors = colours
        }
        if options.blurhash != nil { answer.blurhash = analysis.blurhash }
        if options.thumbhash { answer.thumbHash = Self.upperHex(base64: analysis.thumbhash) }
        if options.perceptualHash { answer.perceptualHash = analysis.phash.sixteenHexDigits }
        return answer
    }

    /// imgproxy writes the ThumbHash's bytes in upper-case hex.
    static func upperHex(base64: String) -> String {
        guard let bytes = Data(base64Encoded: base64) else { return "" }
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
