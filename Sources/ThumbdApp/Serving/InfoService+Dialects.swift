// SPDX-License-Identifier: Apache-2.0
import EventLoops
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
///                  "target": {"width": 300, "height": 200}}}
extension InfoService: ThumborMetaAnswering {
    struct ThumborMeta: Encodable {
        let thumbor: Body

        struct Body: Encodable {
            let source: Source
            let operations: [Operation]
            let target: Size
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
            do {
                try renderPool.submit(priority: .interactive) { [thumbnailer] in
                    let response: HTTPResponse
                    do throws(ThumbnailError) {
                        let probe = try thumbnailer.probe(bytes.body)
                        let rendered = try thumbnailer.render(bytes.body, spec: thumbnailer.normalized(spec))
                        let meta = Self.thumborMeta(
                            url: source.string, probe: probe, path: path,
                            target: (rendered.width, rendered.height))
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

/// imgproxy's `/info/…`: imgproxy's JSON for what a source is, from its header (no pixel decoded), the source from
/// the source cache or the fetcher as for `/info`:
///
///     {"format": "jpeg", "width": 800, "height": 600, "size": 123456,
///      "exif": {"Make": "…", "Model": "…", "DateTimeOriginal": "…"}}
///
/// `width` and `height` are upright (the EXIF orientation applied); `exif` only with `exif:1`, holding those three
/// tags when the source has them.
extension InfoService: ImgproxyInfoAnswering {
    struct ImgproxyInfo: Encodable {
        var format: String?
        var width: Int?
        var height: Int?
        var size: Int?
        var exif: [String: String]?
    }

    func answerImgproxyInfo(_ source: SourceURL, options: ImgproxyForm.InfoOptions, _ responder: HTTPResponder) {
        withSource(source, responder) { [self] bytes, origin in
            do {
                try renderPool.submit(priority: .interactive) { [thumbnailer] in
                    let response: HTTPResponse
                    do throws(ThumbnailError) {
                        let probe = try thumbnailer.probe(bytes.body)
                        var info = ImgproxyInfo()
                        if options.format { info.format = probe.format.rawValue }
                        if options.dimensions { (info.width, info.height) = (probe.width, probe.height) }
                        if options.size { info.size = bytes.body.count }
                        if options.exif {
                            var exif: [String: String] = [:]
                            exif["Make"] = probe.cameraMake
                            exif["Model"] = probe.cameraModel
                            exif["DateTimeOriginal"] = probe.takenAt
                            info.exif = exif
                        }
                        response = Self.json(info, origin: origin)
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
}
