// SPDX-License-Identifier: Apache-2.0
// Unit tests of the C shim's geometry layer (Sources/CVipsShims/geometry.c), run by scripts/test-c-geometry.sh
// (make test). It is compiled with the public header only and no libvips include path or library: that it
// builds at all is the check that the layer is pure arithmetic.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../Sources/CVipsShims/internal/geometry.h"

static int failures;

#define EXPECT(condition)                                                                                      \
    do {                                                                                                       \
        if (!(condition)) {                                                                                    \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition);                           \
            failures++;                                                                                        \
        }                                                                                                      \
    } while (0)

static ThumbdVipsThumbnailParams params(int width, int height, ThumbdVipsFit fit) {
    ThumbdVipsThumbnailParams p;
    memset(&p, 0, sizeof(p));
    p.width = width;
    p.height = height;
    p.fit = fit;
    p.auto_orient = 1;
    return p;
}

static int same_rect(ThumbdRect a, ThumbdRect b) {
    return fabs(a.left - b.left) < 1e-9 && fabs(a.top - b.top) < 1e-9 && fabs(a.width - b.width) < 1e-9 &&
           fabs(a.height - b.height) < 1e-9;
}

static void orientations(void) {
    for (int exif = 1; exif <= 8; exif++) {
        ThumbdOrientation o = thumbd_orientation_from_exif(exif);
        ThumbdOrientation back = thumbd_orientation_then(o, thumbd_orientation_inverse(o));
        EXPECT(back.rotate == 0 && back.mirror == 0);  // an orientation then its inverse is none
        EXPECT(thumbd_orientation_swaps(o) == (exif >= 5));
    }
    // EXIF 6 (stored turned left) then a plan's 90: 180 in all.
    ThumbdVipsThumbnailParams p = params(100, 100, THUMBD_VIPS_FIT_CONTAIN);
    p.rotate = 90;
    ThumbdOrientation whole = thumbd_orientation_of_plan(&p, 6);
    EXPECT(whole.rotate == 180 && whole.mirror == 0);
    p.auto_orient = 0;
    whole = thumbd_orientation_of_plan(&p, 6);
    EXPECT(whole.rotate == 90 && whole.mirror == 0);
    // A region of the turned picture, back in the stored one: the top-left 10 x 20 of a 100 x 50 stored picture
    // turned 90 (50 x 100 once turned) is its bottom-left 20 x 10.
    ThumbdRect r = thumbd_stored_rect((ThumbdRect){0, 0, 10, 20}, (ThumbdOrientation){90, 0}, 50, 100);
    EXPECT(same_rect(r, (ThumbdRect){0, 40, 20, 10}));
    r = thumbd_stored_rect((ThumbdRect){0, 0, 10, 20}, (ThumbdOrientation){0, 1}, 50, 100);
    EXPECT(same_rect(r, (ThumbdRect){40, 0, 10, 20}));
}

static void boxes(void) {
    ThumbdVipsThumbnailParams p = params(200, 100, THUMBD_VIPS_FIT_AUTO);
    ThumbdBox box = thumbd_box_of_params(&p);
    EXPECT(thumbd_effective_fit(box, 400, 300) == THUMBD_VIPS_FIT_COVER);    // both landscape
    EXPECT(thumbd_effective_fit(box, 300, 400) == THUMBD_VIPS_FIT_CONTAIN);  // portrait picture
    p.adaptive = 1;
    box = thumbd_box_of_params(&p);
    ThumbdBox settled = thumbd_box_settled(box, 300, 400);  // the box turns for a portrait picture
    EXPECT(settled.width == 100 && settled.height == 200 && settled.fit == THUMBD_VIPS_FIT_COVER);
    EXPECT(settled.adaptive == 0);
    ThumbdBox again = thumbd_box_settled(settled, 400, 300);  // settling again changes nothing
    EXPECT(again.width == 100 && again.height == 200 && again.fit == THUMBD_VIPS_FIT_COVER);

    // Cover leaves one side unbounded; its scale is the larger one, never above 1 without enlarge.
    p = params(100, 100, THUMBD_VIPS_FIT_COVER);
    box = thumbd_box_of_params(&p);
    ThumbdResizeTarget t = thumbd_resize_target(box, 400, 200);
    EXPECT(t.width == THUMBD_UNBOUNDED && t.height == 100 && t.size == THUMBD_SIZE_DOWN);
    double h, v;
    thumbd_box_scale(box, 400, 200, &h, &v);
    EXPECT(fabs(h - 0.5) < 1e-12 && fabs(v - 0.5) < 1e-12);
    thumbd_box_scale(box, 1, 200000, &h, &v);  // a 1 x 200000 strip: not stopped at 50 by the unbounded side
    EXPECT(h == 1 && v == 1);
    p.enlarge = 1;
    thumbd_box_scale(thumbd_box_of_params(&p), 1, 200000, &h, &v);
    EXPECT(h == 100 && v == 100);
    // Fill without enlarge never upscales an axis: the box shrinks, keeping its aspect, to fit the source.
    p = params(400, 200, THUMBD_VIPS_FIT_FILL);
    t = thumbd_resize_target(thumbd_box_of_params(&p), 100, 300);
    EXPECT(t.width == 100 && t.height == 50 && t.size == THUMBD_SIZE_FORCE);
    // An original side is the picture's (thumbor's `orig` beside a number), at most the box's side given.
    p = params(300, 4096, THUMBD_VIPS_FIT_COVER);
    p.original_sides = 2;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 480, 160);
    EXPECT(settled.width == 300 && settled.height == 160 && settled.original_sides == 0);
    again = thumbd_box_settled(settled, 100, 50);  // settled: the sides stay
    EXPECT(again.width == 300 && again.height == 160);
    p = params(4096, 100, THUMBD_VIPS_FIT_CONTAIN);
    p.original_sides = 1;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 5000, 200);  // bounded by the width given
    EXPECT(settled.width == 4096 && settled.height == 100);
    t = thumbd_resize_target(thumbd_box_of_params(&p), 480, 160);
    EXPECT(t.width == 480 && t.height == 100);
    // thumbor's proportion scales what the box gives: 48x64 inside 400x100, unenlarged, a quarter 12x16.
    p = params(400, 100, THUMBD_VIPS_FIT_CONTAIN);
    p.output_scale = 0.25;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 48, 64);
    EXPECT(settled.width == 12 && settled.height == 16 && settled.fit == THUMBD_VIPS_FIT_FILL);
    // thumbor's arithmetic: fit-in/100x0 of 480x160 derives 33 (half to even), then fit-in rounds the width: 99x33.
    p = params(100, 4096, THUMBD_VIPS_FIT_CONTAIN);
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN | THUMBD_VIPS_ROUNDING_NO_HEIGHT;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 480, 160);
    EXPECT(settled.width == 99 && settled.height == 33 && settled.fit == THUMBD_VIPS_FIT_FILL && settled.enlarge);
    again = thumbd_box_settled(settled, 480, 160);  // settled: the sides stay
    EXPECT(again.width == 99 && again.height == 33 && again.thumbor == 0);
    t = thumbd_resize_target(thumbd_box_of_params(&p), 480, 160);
    EXPECT(t.width == 99 && t.height == 33 && t.size == THUMBD_SIZE_FORCE);
    // full-fit-in/150x10 of 200x150: 112.5 rounds up (thumbor adds 1e-5), 150x113.
    p = params(150, 10, THUMBD_VIPS_FIT_OUTSIDE);
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FULL_FIT_IN;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 200, 150);
    EXPECT(settled.width == 150 && settled.height == 113);
    // The crop mode's derived side is rounded half to even: 150x0 of 200x150 is 150x112.
    p = params(150, 4096, THUMBD_VIPS_FIT_CONTAIN);
    p.enlarge = 1;
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_CROP | THUMBD_VIPS_ROUNDING_NO_HEIGHT;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 200, 150);
    EXPECT(settled.width == 150 && settled.height == 112);
    // upscale(): only a picture smaller on both sides of a box with both sides, truncated (64x48 in 100x100:
    // 100x75); with a side not given, nothing.
    p = params(100, 100, THUMBD_VIPS_FIT_CONTAIN);
    p.enlarge = 1;
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 64, 48);
    EXPECT(settled.width == 100 && settled.height == 75);
    p = params(320, 4096, THUMBD_VIPS_FIT_CONTAIN);
    p.enlarge = 1;
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN | THUMBD_VIPS_ROUNDING_NO_HEIGHT;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 64, 48);
    EXPECT(settled.width == 64 && settled.height == 48);
    // A letterbox keeps thumbd's box (the canvas is the box).
    p = params(100, 100, THUMBD_VIPS_FIT_PAD);
    p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN;
    settled = thumbd_box_settled(thumbd_box_of_params(&p), 480, 160);
    EXPECT(settled.width == 100 && settled.height == 100 && settled.fit == THUMBD_VIPS_FIT_PAD);
    // The canvas: pad extends to the box, padding adds to it.
    p = params(100, 80, THUMBD_VIPS_FIT_PAD);
    p.padding_left = p.padding_right = 5;
    EXPECT(thumbd_canvas_pixels(&p, thumbd_box_of_params(&p), 60, 80) == (int64_t)110 * 80);
}

static void regions(void) {
    ThumbdVipsThumbnailParams p = params(100, 100, THUMBD_VIPS_FIT_CONTAIN);
    ThumbdRect out;
    p.crop_unit = THUMBD_VIPS_CROP_PIXELS;
    p.crop_left = 90, p.crop_top = -10, p.crop_width = 50, p.crop_height = 40;  // overhangs: what is outside goes
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 100}, (ThumbdRect){0, 0, 100, 100}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){90, 0, 10, 30}));
    p.crop_left = 100;  // entirely outside
    EXPECT(!thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 100}, (ThumbdRect){0, 0, 100, 100}, 1, 1, &out));
    p.crop_unit = THUMBD_VIPS_CROP_FRACTIONS;
    p.crop_left = 0.5, p.crop_top = 0, p.crop_width = 0.5, p.crop_height = 1;  // fractions of a trimmed frame
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){10, 20, 40, 60}, (ThumbdRect){10, 20, 40, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){30, 20, 20, 60}));

    // Placed crops (imgproxy's c:W:H:gravity:x:y) on a 100 x 60 picture.
    p.crop_unit = THUMBD_VIPS_CROP_PLACED;
    p.crop_fractions = 0;
    p.crop_width = 40, p.crop_height = 20, p.crop_left = 0, p.crop_top = 0;
    p.crop_gravity = THUMBD_VIPS_GRAVITY_CENTRE;  // (100 - 40 + 1) / 2 = 30.5 -> 30 (half to even), 41 / 2 -> 20
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 60}, (ThumbdRect){0, 0, 100, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){30, 20, 40, 20}));
    p.crop_gravity = THUMBD_VIPS_GRAVITY_SOUTH_EAST, p.crop_left = 5, p.crop_top = 3;  // offsets point inward
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 60}, (ThumbdRect){0, 0, 100, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){55, 37, 40, 20}));
    p.crop_gravity = THUMBD_VIPS_GRAVITY_WEST, p.crop_left = -10;  // kept inside the picture
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 60}, (ThumbdRect){0, 0, 100, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){0, 23, 40, 20}));
    p.crop_gravity = THUMBD_VIPS_GRAVITY_NORTH_EAST, p.crop_left = 0.1, p.crop_top = 0.5;  // fractional offsets
    p.crop_fractions = THUMBD_VIPS_CROP_FRACTION_LEFT | THUMBD_VIPS_CROP_FRACTION_TOP;
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 60}, (ThumbdRect){0, 0, 100, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){50, 30, 40, 20}));
    // thumbor's pixel crop beside a flip (0x9:14x56 of a 64x48 picture, mirrored): cut at the bottom edge, 14x39
    // from the top-right corner, not moved inside the picture
    p.crop_fractions = 0, p.thumbor_rounding = THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN;
    p.crop_gravity = THUMBD_VIPS_GRAVITY_NORTH_EAST, p.crop_width = 14, p.crop_height = 47, p.crop_left = 0;
    p.crop_top = 9;
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 64, 48}, (ThumbdRect){0, 0, 64, 48}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){50, 9, 14, 39}));
    p.crop_top = 60;  // emptied by the clamp: no crop, as thumbor drops it
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 64, 48}, (ThumbdRect){0, 0, 64, 48}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){0, 0, 64, 48}));
    p.thumbor_rounding = 0, p.crop_width = 40, p.crop_height = 20;
    p.crop_gravity = THUMBD_VIPS_GRAVITY_FOCAL, p.crop_left = 0.9, p.crop_top = 0.1;  // centred on the point
    p.crop_fractions = THUMBD_VIPS_CROP_FRACTION_HEIGHT, p.crop_height = 0.5;          // pixels and a fraction
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){0, 0, 100, 60}, (ThumbdRect){0, 0, 100, 60}, 1, 1, &out));
    EXPECT(same_rect(out, (ThumbdRect){60, 0, 40, 30}));
    p.crop_gravity = THUMBD_VIPS_GRAVITY_EAST, p.crop_left = 0, p.crop_top = 0, p.crop_width = 500;  // clamped
    p.crop_fractions = 0, p.crop_height = 20;
    EXPECT(thumbd_crop_rect(&p, (ThumbdRect){10, 20, 50, 30}, (ThumbdRect){10, 20, 50, 30}, 0.5, 0.5, &out));  // a frame at half scale
    EXPECT(same_rect(out, (ThumbdRect){10, 30, 50, 10}));
    p.crop_unit = THUMBD_VIPS_CROP_NONE;

    // thumbor's crop mode (auto_crop), with the figures thumbor 7.8 itself gives: 100x300 of a 100x100 picture
    // keeps ceil(33.3) = 34 columns from round(50 - 17) = 33; 10x240 of 480x160 keeps 7 from round(236.5) = 236
    // (half to even); 1x100 of 64x48 keeps column round(31.5) = 32; 300x100 of 100x100 keeps round(33.3) = 33 rows
    // from the top (its alignment's point is 0); aspects equal to two decimals keep everything.
    EXPECT(same_rect(thumbd_thumbor_crop_region(100, 100, 100, 300, 50, 50), (ThumbdRect){33, 0, 34, 100}));
    EXPECT(same_rect(thumbd_thumbor_crop_region(480, 160, 10, 240, 240, 80), (ThumbdRect){236, 0, 7, 160}));
    EXPECT(same_rect(thumbd_thumbor_crop_region(64, 48, 1, 100, 32, 24), (ThumbdRect){32, 0, 1, 48}));
    EXPECT(same_rect(thumbd_thumbor_crop_region(100, 100, 300, 100, 50, 0), (ThumbdRect){0, 0, 100, 33}));
    EXPECT(same_rect(thumbd_thumbor_crop_region(100, 100, 300, 100, 50, 100), (ThumbdRect){0, 67, 100, 33}));
    EXPECT(same_rect(thumbd_thumbor_crop_region(301, 200, 150, 100, 150, 100), (ThumbdRect){0, 0, 301, 200}));
    // the box filled exactly once the region is thumbor's (each axis its own scale)
    p = params(100, 300, THUMBD_VIPS_FIT_COVER);
    p.enlarge = 1;
    ThumbdBox crop_box = thumbd_box_of_params(&p);
    crop_box.thumbor = THUMBD_VIPS_ROUNDING_THUMBOR_CROP | THUMBD_ROUNDING_THUMBOR_REGION;
    ThumbdBox filled = thumbd_box_settled(crop_box, 34, 100);
    EXPECT(filled.fit == THUMBD_VIPS_FIT_FILL && filled.width == 100 && filled.height == 300);
    crop_box.thumbor = THUMBD_VIPS_ROUNDING_THUMBOR_CROP;  // without the region (attention): thumbd's cover
    EXPECT(thumbd_box_settled(crop_box, 100, 100).fit == THUMBD_VIPS_FIT_COVER);
    p = params(100, 100, THUMBD_VIPS_FIT_CONTAIN);

    int left, top, width, height;
    thumbd_pixel_rect((ThumbdRect){0.5, 0, 5.0, 3}, 10, 10, &left, &top, &width, &height);
    EXPECT(width == 5 && height == 3);  // the size rounded once: never a pixel more than asked
    thumbd_pixel_rect((ThumbdRect){9.8, 0, 0.3, 20}, 10, 10, &left, &top, &width, &height);
    EXPECT(width == 1 && left == 9 && height == 10);  // at least one pixel, inside the image
    EXPECT(thumbd_whole(0.2) == 1 && thumbd_whole(2.5) == 2 && thumbd_whole(3.5) == 4);
}

static void placement(void) {
    ThumbdCompass c = thumbd_compass(THUMBD_VIPS_GRAVITY_SOUTH_EAST);
    EXPECT(c.east && c.south && !c.west && !c.north);
    EXPECT(thumbd_place(10, 0, 0) == 5 && thumbd_place(10, 1, 0) == 0 && thumbd_place(10, 0, 1) == 10);
    EXPECT(thumbd_focal_offset(100, 20, 0.95) == 80);  // as far as the picture allows
    EXPECT(thumbd_focal_offset(100, 20, 0.5) == 40);
}

static void intermediates(void) {
    EXPECT(thumbd_band_scale(512, 1024, 768) == 0.5);
    EXPECT(thumbd_band_scale(512, 100, 50) == 1);
    EXPECT(thumbd_load_shrink(1600, 1200, 512) == 2);
    EXPECT(thumbd_load_shrink(1, 10000, 64) == 1);  // never above the shortest side (compat/README.md)
    EXPECT(thumbd_load_shrink(4000, 3000, 100) == 8);
}

int main(void) {
    orientations();
    boxes();
    regions();
    placement();
    intermediates();
    if (failures) {
        fprintf(stderr, "geometry: %d failed\n", failures);
        return 1;
    }
    printf("geometry: all passed\n");
    return 0;
}
