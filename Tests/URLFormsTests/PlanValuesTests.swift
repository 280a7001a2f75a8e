// SPDX-License-Identifier: Apache-2.0
import Testing
import Thumbnailing

@testable import URLForms

/// The plan's typed values: every `/thumb` parameter's text is read into a field of its own, and layering (presets
/// under the request, a dialect's options over one another) carries every one of them.
@Suite struct PlanValuesTests {
    /// One valid text per parameter.
    static let samples: [ThumbParameter: String] = [
        .url: "https://example.com/a.jpg", .w: "200", .h: "100", .fit: "cover", .gravity: "north", .format: "webp",
        .q: "80", .dpr: "2", .enlarge: "1", .page: "2", .animated: "0", .autorotate: "0", .rotate: "90", .flip: "h",
        .adaptive: "1", .orig: "h", .scale: "0.5", .min_w: "150", .min_h: "80", .dpr_limit: "1",
        .rounding: "thumbor-crop", .trim: "10", .crop: "1,2,3,4",
        .crop_gravity: "east",
        .crop_offset: "5,0.5", .crop_frame: "source",
        .gravity_offset: "3,0.25", .face_zoom: "0.5", .face_pad: "1.5", .brightness: "10", .contrast: "1.5",
        .saturation: "0.5",
        .saturation_model: "hsp", .grayscale: "1", .blur: "2", .sharpen: "1", .pixelate: "4", .rgb: "1,-2,3",
        .colorize: "10,20,30,ff0000",
        .equalize: "1", .curve: "0:0|0:255,255:0|0:0|0:0",
        .convolution: "1;2;1,3", .noise: "10,2", .order: "noise,blur", .redact: "faces,pixelate,8",
        .redact_margin: "0.5", .radius: "8,4", .radius_bg: "ff000000",
        .extend: "box", .padding: "1,2", .bg: "ffffff", .frame: "border", .frame_url: "https://example.com/f.png",
        .frame_optional: "1",
        .wm: "logo",
        .wm_url: "https://example.com/w.png", .wm_pos: "north", .wm_x: "1", .wm_y: "2", .wm_opacity: "0.5",
        .wm_hscale: "0.2", .wm_place: "20p,-0", .wm_fade: "30",
        .wm_scale: "0.3",
        .wm2: "logo", .wm2_url: "https://example.com/w2.png", .wm2_pos: "west", .wm2_x: "3", .wm2_y: "4",
        .wm2_opacity: "0.25", .wm2_scale: "0.1", .wm2_hscale: "0.4", .wm2_place: "center,repeat", .wm2_fade: "10",
        .wm3: "logo", .wm3_url: "https://example.com/w3.png", .wm3_pos: "tile", .wm3_x: "5", .wm3_y: "6",
        .wm3_opacity: "0.75", .wm3_scale: "0.2", .wm3_hscale: "0.5", .wm3_place: "10,-10p", .wm3_fade: "20",
        .wm4: "logo", .wm4_url: "https://example.com/w4.png", .wm4_pos: "south", .wm4_x: "7", .wm4_y: "8",
        .wm4_opacity: "0.9", .wm4_scale: "0.6", .wm4_hscale: "0.7", .wm4_place: "-0,0", .wm4_fade: "40",
        .progressive: "1", .chroma: "444", .lossless: "1", .avif_effort: "3", .jxl_effort: "5", .max_bytes: "2000",
        .keep_copyright: "1", .icc: "keep", .expires: "1900000000", .max_age: "60", .filename: "photo",
        .attachment: "1", .tags: "product-7,home", .fq: "webp:70", .skip: "gif,jpeg", .raw: "1",
    ]

    @Test func everyParameterHasASample() {
        #expect(Set(Self.samples.keys) == Set(ThumbParameter.allCases))
    }

    /// A parameter's value read into the plan survives layering over nothing and replaces what a lower layer set.
    @Test(arguments: ThumbParameter.allCases)
    func layeringCarriesTheParameter(_ parameter: ThumbParameter) throws {
        var upper = PlanValues()
        try ThumbnailRequest.parse(parameter, Self.samples[parameter] ?? "", into: &upper)
        #expect(upper != PlanValues())
        var layered = PlanValues()
        layered.layer(upper)
        #expect(layered == upper)
        var lower = PlanValues()
        for (other, text) in Self.samples where other != parameter {
            try ThumbnailRequest.parse(other, text, into: &lower)
        }
        var expected = lower
        try ThumbnailRequest.parse(parameter, Self.samples[parameter] ?? "", into: &expected)
        lower.layer(upper)
        #expect(lower == expected)
    }

    /// A dialect's typed value and the same value written as `/thumb` text are one plan.
    @Test func aTypedValueIsTheTextsValue() throws {
        var plan = ThumbnailPlan()
        plan.set(.blur, FixedDecimal(units: 25_000), option: "bl")
        plan.set(.crop, ThumbnailSpec.Crop.fractions(left: .zero, top: .zero, width: .one, height: .one), option: "c")
        var text = PlanValues()
        try ThumbnailRequest.parse(.blur, "2.5", into: &text)
        try ThumbnailRequest.parse(.crop, "0.0,0.0,1.0,1.0", into: &text)
        #expect(plan.values == text)
    }

    /// A range is checked when the plan is built, once, under the name of the option that set the value.
    @Test func aDialectsValueOutOfRangeNamesItsOption() {
        var plan = ThumbnailPlan()
        plan.set(.url, "https://example.com/a.jpg", option: "source")
        plan.set(.w, 5000, option: "rs")
        plan.set(.blur, FixedDecimal(units: 150 * FixedDecimal.unitsPerOne), option: "filters:blur")
        #expect(throws: RequestError.invalidValue("rs", reason: "must be an integer 1...4096")) {
            try plan.request(accept: nil, rules: .none, hints: nil, watermarks: .none)
        }
        plan.set(.w, 100, option: "rs")
        #expect(throws: RequestError.invalidValue("filters:blur", reason: "must be a number 0...100")) {
            try plan.request(accept: nil, rules: .none, hints: nil, watermarks: .none)
        }
    }
}
