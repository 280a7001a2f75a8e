// SPDX-License-Identifier: Apache-2.0
// Renders through a deterministic intermediate (see CVipsShims.h, thumbd_vips_plan).
//
// A small box is rendered in two stages: source -> intermediate (fit into band x band, shrink-on-load,
// decoded, upright, 8-bit, metadata stripped, in memory; resized by thumbd_resample for most JPEG and PNG
// sources, by vips_thumbnail for the rest: thumbd_decode_into_band) -> the box (thumbd_resample, or libvips
// for alpha and enlargements). Which boxes go this way
// depends only on the spec and the source's header, and the intermediate only on the source and the band,
// so the output bytes are the same whether the intermediate was just made or taken from thumbd's cache.
// The same checks as the direct job apply (allowed loaders, pixel limit, fail_on=error) and the same steps
// are reported: a damaged source fails while its intermediate is decoded, with THUMBD_VIPS_STEP_DECODE.
#include <math.h>
#include <string.h>

#include "CVipsShimsInternal.h"

struct ThumbdVipsIntermediate {
    VipsImage *image;  // (owned) upright 8-bit pixels in memory; read-only once built, shared by threads
    int upright_width;  // the source's upright size, from which every box's geometry is computed
    int upright_height;
    int source_width;   // as stored, for results
    int source_height;
    int orientation;    // the source's EXIF orientation, already applied to `image`
    char *copyright;    // (owned) the source's EXIF copyright and artist values, or NULL
    char *artist;
    VipsBlob *icc;      // (owned) the source's ICC profile when made for a plan that keeps it (pixels unconverted)
    ThumbdVipsFormat source_format;
    const char *loader;  // static class name
};

// How much the box scales the upright source, per axis (the same geometry as the direct job).
void thumbd_box_scale(ThumbdVipsThumbnailParams p, int width, int height, double *hscale, double *vscale) {
    ResizeTarget t = thumbd_vips_resize_target(p, width, height);
    if (t.size == VIPS_SIZE_FORCE) {
        *hscale = (double)t.width / width;
        *vscale = (double)t.height / height;
        return;
    }
    // Cover's and outside's unbounded side bounds nothing: it stands for libvips's largest side only because
    // vips_thumbnail needs a number, and taken as a bound it would stop a 1 x 200000 source's cover scale at 50.
    double across = t.width == THUMBD_UNBOUNDED ? INFINITY : (double)t.width / width;
    double down = t.height == THUMBD_UNBOUNDED ? INFINITY : (double)t.height / height;
    double scale = VIPS_MIN(across, down);
    if (t.size == VIPS_SIZE_DOWN) scale = VIPS_MIN(scale, 1.0);
    *hscale = scale;
    *vscale = scale;
}

// The scale an intermediate in `band` has relative to the upright source (never above 1: size=down).
static double band_scale(int band, int width, int height) {
    return VIPS_MIN(1.0, (double)band / VIPS_MAX(width, height));
}

// The part of the oriented picture the box is made from, in source pixels, as far as the header tells:
// the crop region (trim is only known once decoded; the whole picture stands for it). 0 when the crop
// misses the picture.
static int region_of_header(ThumbdVipsThumbnailParams p, ThumbdVipsSourceInfo info, int *width, int *height) {
    ThumbdRect whole = {0, 0, info.upright_width, info.upright_height}, region;
    if (!thumbd_crop_rect(p, whole, 1, 1, &region)) return 0;
    *width = VIPS_MAX(1, (int)rint(region.width));
    *height = VIPS_MAX(1, (int)rint(region.height));
    return 1;
}

ThumbdVipsStep thumbd_vips_plan(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                const int *bands, int band_count, double margin, int *band, int *own,
                                ThumbdVipsThumbnailResult *result) {
    memset(result, 0, sizeof(*result));
    *band = 0;
    *own = 0;
    ThumbdVipsSourceInfo info;
    ThumbdVipsStep step = thumbd_vips_check_source(buffer, length, p, result, &info);
    if (step != THUMBD_VIPS_STEP_OK) return step;
    if (thumbd_renders_animation(p, info)) {
        // Every frame is rendered from the source in one pass (CVipsAnimation.c); intermediates hold one frame.
        vips_error_clear();
        return THUMBD_VIPS_STEP_OK;
    }
    int width = info.upright_width, height = info.upright_height;
    if (!region_of_header(p, info, &width, &height)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", info.upright_width,
                   info.upright_height);
        return thumbd_vips_fail(NULL, THUMBD_VIPS_STEP_REGION, result);
    }
    double hscale = 1, vscale = 1;
    thumbd_box_scale(p, width, height, &hscale, &vscale);
    // hscale, vscale: output pixels per source pixel, which is what an intermediate must hold (times margin),
    // whether the box is made from the whole picture or from a region of it.
    // Shared intermediates hold sRGB pixels: a plan that keeps the source's profile never uses one.
    int shared = !(p.keep_icc && info.use_icc);
    // The smallest band whose intermediate holds at least `margin` times the box's pixels on each axis.
    for (int i = 0; shared && i < band_count; i++) {
        if (bands[i] <= 0) continue;
        double limit = band_scale(bands[i], info.upright_width, info.upright_height) / VIPS_MAX(1.0, margin);
        if (hscale <= limit && vscale <= limit && (*band == 0 || bands[i] < *band)) *band = bands[i];
    }
    // Enlarged, then cut (cover's overflow, a crop) or left overflowing (outside), the whole picture made first
    // would be larger than the source, up to libvips's largest side and beyond: a 1 x 10000 source covering
    // 200 x 200 is 200 x 2,000,000 before its crop. Such a job renders from its own intermediate at the source's
    // size, which cuts before it enlarges (thumbd_vips_thumbnail_from_intermediate).
    ThumbdVipsFit fit = thumbd_effective_fit(p, width, height);
    int overflows =
        fit == THUMBD_VIPS_FIT_COVER || fit == THUMBD_VIPS_FIT_OUTSIDE || p.crop_unit != THUMBD_VIPS_CROP_NONE;
    if (*band == 0 && (p.trim || (overflows && VIPS_MAX(hscale, vscale) > 1))) {
        // A trim needs decoded pixels before the resize: this job's own intermediate, just large enough (with
        // the margin), never above the source. (A crop without a trim renders directly, resampled once.)
        int longest = VIPS_MAX(info.upright_width, info.upright_height);
        double needed = ceil(longest * VIPS_MAX(hscale, vscale) * VIPS_MAX(1.0, margin));
        *band = (int)VIPS_MAX(1.0, VIPS_MIN((double)longest, needed));
        *own = 1;
    }
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

// The largest shrink-on-load factor (1, 2, 4 or 8) that still leaves `band` pixels on the longest side.
// vips_thumbnail keeps a 2x margin above its target when it picks one (its own final resize antialiases from
// it); every box made from an intermediate is resized again with a full Lanczos-3, so the intermediate needs
// none: for a 1600 px JPEG and band 512 that is 1/2 instead of a full decode. Never above the shortest side:
// libvips 8.14's JPEG loader divides the sides rounding down, and a side of 0 aborts the process (its "bad
// dimensions" assertion), as a 1 x 10000 JPEG did.
static int load_shrink(ThumbdVipsSourceInfo info, int band) {
    int longest = VIPS_MAX(info.upright_width, info.upright_height);
    int shortest = VIPS_MIN(info.upright_width, info.upright_height);
    int shrink = 8;
    while (shrink > 1 && ((longest + shrink - 1) / shrink < band || shrink > shortest)) shrink /= 2;
    return shrink;
}

// Decodes the source into `band` x `band` (never enlarged; a square box is the same in stored and upright
// orientation), converted to sRGB through its profile when `convert_profile` and it has one; *out is then in
// memory (transfer full). JPEG and PNG with 8-bit pixels and no
// alpha are decoded at their shrink-on-load scale (JPEG) or box-averaged to at most twice the band while
// decoding (PNG), then resized by thumbd_resample; other sources, and these with alpha, CMYK or more bits, go
// through vips_thumbnail. (WebP too: libwebp's scaled decode costs as much as a full one, and its rescaler
// followed by ours was no faster than vips_thumbnail and 0.2 of 255 levels further from a direct render.)
// Reports the step that failed (decode errors: DECODE).
static ThumbdVipsStep thumbd_decode_into_band(const void *buffer, size_t length, ThumbdVipsFormat format,
                                              ThumbdVipsSourceInfo info, int band, int convert_profile,
                                              VipsImage **out) {
    ThumbdVipsStep step = THUMBD_VIPS_STEP_THUMBNAIL;
    VipsImage *image = NULL;
    int convert = info.use_icc && convert_profile;
    // The loaders read the borrowed buffer lazily; fail_on=error as in the direct job.
    if (format == THUMBD_VIPS_FORMAT_JPEG) {
        image = vips_image_new_from_buffer(buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                           VIPS_FAIL_ON_ERROR, "shrink", load_shrink(info, band), NULL);
    } else if (format == THUMBD_VIPS_FORMAT_PNG) {
        image = vips_image_new_from_buffer(buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                           VIPS_FAIL_ON_ERROR, NULL);
    }
    if (format == THUMBD_VIPS_FORMAT_JPEG && !image) goto failed;
    if (image && format != THUMBD_VIPS_FORMAT_JPEG && !thumbd_resample_fits(image, 1, 1)) {
        // Alpha, 16 bits, ...: vips_thumbnail premultiplies and converts around its own resize.
        g_object_unref(image);
        image = NULL;
    }
    if (!image) {
        vips_error_clear();
        ResizeTarget target = {band, band, VIPS_SIZE_DOWN};
        if (thumbd_vips_thumbnail_call(buffer, length, &image, target, convert ? "srgb" : NULL)) goto failed;
        step = THUMBD_VIPS_STEP_DECODE;
        THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);
        *out = image;
        return THUMBD_VIPS_STEP_OK;
    }
    if (format == THUMBD_VIPS_FORMAT_PNG) {
        // No shrink-on-load: average integer blocks while decoding (streamed, so a large PNG is never held
        // whole) down to 2-4x the band, then resample the rest, as libvips's resize does. A block is never
        // wider or taller than the picture: libvips refuses a side it would shrink to nothing (a 1 x 10000
        // PNG keeps its one column, and the resample below sizes each axis on its own).
        int block = VIPS_MAX(image->Xsize, image->Ysize) / (2 * band);
        int across = VIPS_MIN(block, image->Xsize), down = VIPS_MIN(block, image->Ysize);
        if (block >= 2) THUMBD_REPLACE(image, vips_shrink(in, &thumbd_next, (double)across, (double)down, NULL));
    }
    step = THUMBD_VIPS_STEP_DECODE;
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);
    step = THUMBD_VIPS_STEP_THUMBNAIL;
    double excess = (double)VIPS_MAX(image->Xsize, image->Ysize) / band;
    int width = excess <= 1 ? image->Xsize : VIPS_MAX(1, (int)rint(image->Xsize / excess));
    int height = excess <= 1 ? image->Ysize : VIPS_MAX(1, (int)rint(image->Ysize / excess));
    if (thumbd_resample_fits(image, width, height)) {
        if (excess > 1) THUMBD_REPLACE(image, thumbd_resample(in, &thumbd_next, width, height));
        // After the resize, as vips_thumbnail does: fewer pixels to convert.
        if (convert) THUMBD_REPLACE(image, vips_icc_transform(in, &thumbd_next, "srgb", "embedded", TRUE, NULL));
    } else if (convert) {
        // CMYK or more bits (JPEG): libvips converts around its resize.
        THUMBD_REPLACE(image, vips_thumbnail_image(in, &thumbd_next, band, "height", band, "size", VIPS_SIZE_DOWN,
                                                   "no_rotate", TRUE, "export_profile", "srgb", NULL));
    } else {
        THUMBD_REPLACE(image, vips_thumbnail_image(in, &thumbd_next, band, "height", band, "size", VIPS_SIZE_DOWN,
                                                   "no_rotate", TRUE, NULL));
    }
    *out = image;
    return THUMBD_VIPS_STEP_OK;

failed:
    if (image) g_object_unref(image);
    return step;
}

ThumbdVipsStep thumbd_vips_intermediate_new(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                            int band, ThumbdVipsIntermediate **out,
                                            ThumbdVipsThumbnailResult *result) {
    memset(result, 0, sizeof(*result));
    *out = NULL;
    VipsImage *image = NULL;
    ThumbdVipsSourceInfo info;
    // An intermediate is shared by every plan of its source: always upright by EXIF, never rotated by a plan.
    p.auto_orient = 1;
    p.rotate = 0;
    p.mirror = 0;
    ThumbdVipsStep step = thumbd_vips_check_source(buffer, length, p, result, &info);
    if (step != THUMBD_VIPS_STEP_OK) return step;

    step = thumbd_decode_into_band(buffer, length, result->source_format, info, band, !p.keep_icc, &image);
    if (step != THUMBD_VIPS_STEP_OK) goto failed;

    step = THUMBD_VIPS_STEP_DECODE;
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);

    step = THUMBD_VIPS_STEP_THUMBNAIL;
    if (thumbd_step_orient(&image, info.job)) goto failed;
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        VipsInterpretation space = image->Bands < 3 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
        THUMBD_REPLACE(image, vips_colourspace(in, &thumbd_next, space, NULL));
        if (image->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(image, vips_cast_uchar(in, &thumbd_next, NULL));
    }
    // Pixels in memory (autorot and the casts are lazy), then no metadata at all: the intermediate is shared
    // read-only by every render thread and must carry nothing (orientation, ICC) a later step would act on.
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);
    // What a plan may keep is saved first (copy_memory keeps the source's fields).
    ThumbdVipsIntermediate *intermediate = g_new0(ThumbdVipsIntermediate, 1);
    ThumbdVipsThumbnailParams keep = p;
    keep.keep_copyright = 1;
    keep.keep_icc = p.keep_icc;
    thumbd_keep_metadata(image, keep, &intermediate->copyright, &intermediate->artist, &intermediate->icc);
    vips_image_map(image, thumbd_vips_remove_field, NULL);

    intermediate->image = image;
    intermediate->upright_width = info.upright_width;
    intermediate->upright_height = info.upright_height;
    intermediate->source_width = result->source_width;
    intermediate->source_height = result->source_height;
    intermediate->orientation = info.orientation;
    intermediate->source_format = result->source_format;
    intermediate->loader = result->loader;
    *out = intermediate;
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;

failed:
    return thumbd_vips_fail(image, step, result);
}

size_t thumbd_vips_intermediate_bytes(const ThumbdVipsIntermediate *intermediate) {
    VipsImage *image = intermediate->image;
    return (size_t)image->Xsize * image->Ysize * image->Bands;
}

void thumbd_vips_intermediate_release(ThumbdVipsIntermediate *intermediate) {
    if (!intermediate) return;
    g_object_unref(intermediate->image);
    g_free(intermediate->copyright);
    g_free(intermediate->artist);
    if (intermediate->icc) vips_area_unref(VIPS_AREA(intermediate->icc));
    g_free(intermediate);
}

ThumbdVipsStep thumbd_vips_thumbnail_from_intermediate(const ThumbdVipsIntermediate *intermediate,
                                                       ThumbdVipsThumbnailParams p,
                                                       ThumbdVipsThumbnailResult *result) {
    memset(result, 0, sizeof(*result));
    result->source_format = intermediate->source_format;
    result->source_width = intermediate->source_width;
    result->source_height = intermediate->source_height;
    result->loader = intermediate->loader;
    ThumbdVipsStep step = THUMBD_VIPS_STEP_THUMBNAIL;
    // The intermediate is only read: new images reference its pixels, which it never changes.
    VipsImage *image = intermediate->image;
    g_object_ref(image);

    // Orient as the plan says, from EXIF-upright: undo EXIF first when the plan keeps the stored orientation.
    ThumbdOrientation exif = thumbd_orientation_from_exif(intermediate->orientation);
    ThumbdOrientation plan = {p.rotate, p.mirror ? 1 : 0};
    ThumbdOrientation turn = p.auto_orient ? plan : thumbd_orientation_then(thumbd_orientation_inverse(exif), plan);
    if (thumbd_step_orient(&image, turn)) goto failed;
    int swap = (turn.rotate == 90 || turn.rotate == 270);
    int width = swap ? intermediate->upright_height : intermediate->upright_width;
    int height = swap ? intermediate->upright_width : intermediate->upright_height;

    // The region the box is made from (trim, then crop), in the intermediate's pixels; kx, ky convert
    // source pixels into them.
    double kx = (double)image->Xsize / width, ky = (double)image->Ysize / height;
    ThumbdRect frame, region;
    if (thumbd_step_trim(image, p, &frame)) goto failed;
    if (!thumbd_crop_rect(p, frame, kx, ky, &region)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", width, height);
        step = THUMBD_VIPS_STEP_REGION;
        goto failed;
    }
    thumbd_settle_region(&p, region, kx, ky);
    // At least one pixel, inside the image: a region narrower than one of its pixels (a 1 px crop of a picture
    // whose intermediate is narrower than it) can round to its edge.
    int left, top, cut_width, cut_height;
    thumbd_pixel_rect(region, image->Xsize, image->Ysize, &left, &top, &cut_width, &cut_height);
    if (cut_width < image->Xsize || cut_height < image->Ysize) {
        THUMBD_REPLACE(image, vips_extract_area(in, &thumbd_next, left, top, cut_width, cut_height, NULL));
        width = VIPS_MAX(1, (int)rint(region.width / kx));
        height = VIPS_MAX(1, (int)rint(region.height / ky));
    }

    // The size a direct render would resize to (before any cover crop), from the region's size in source
    // pixels, so the geometry does not depend on the intermediate's rounding; the image is forced to it.
    double hscale = 1, vscale = 1;
    thumbd_box_scale(p, width, height, &hscale, &vscale);
    double scaled_width = width * hscale, scaled_height = height * vscale;
    if (p.fit == THUMBD_VIPS_FIT_COVER && VIPS_MAX(hscale, vscale) > 1) {
        // Enlarging: the cover crop comes first, at this image's resolution, so that only the box is enlarged
        // (thumbd_vips_plan sends such jobs here); the crop after the resize then has nothing left to cut.
        ThumbdVipsThumbnailParams window = p;
        window.width = VIPS_CLIP(1, (int)rint(p.width * image->Xsize / scaled_width), image->Xsize);
        window.height = VIPS_CLIP(1, (int)rint(p.height * image->Ysize / scaled_height), image->Ysize);
        if (thumbd_step_cover_crop(&image, window)) goto failed;
        scaled_width = VIPS_MIN(scaled_width, p.width);
        scaled_height = VIPS_MIN(scaled_height, p.height);
    }
    // An enlarged outside fit is as large as the whole picture made larger: refused before it is made, not after.
    if (scaled_width > THUMBD_UNBOUNDED || scaled_height > THUMBD_UNBOUNDED ||
        thumbd_canvas_pixels(p, (int)scaled_width, (int)scaled_height) > p.max_source_pixels) {
        vips_error("thumbd", "the output canvas exceeds the pixel limit");
        step = THUMBD_VIPS_STEP_CANVAS_LIMIT;
        goto failed;
    }
    int target_width = VIPS_MAX(1, (int)rint(scaled_width));
    int target_height = VIPS_MAX(1, (int)rint(scaled_height));
    if (thumbd_resample_fits(image, target_width, target_height)) {
        // thumbd's own Lanczos-3 (CVipsResample.c) over the whole ratio, on the intermediate's pixels.
        THUMBD_REPLACE(image, thumbd_resample(in, &thumbd_next, target_width, target_height));
    } else {
        // Alpha, or a box larger than the intermediate (enlarging): libvips. Its 8.14 reduce widens its kernel
        // with the ratio (lanczos3 over 8x = 48 taps per axis), so, as shrink-on-load does for the direct job,
        // first average integer blocks down to 2-4x the box, then let the resize antialias the rest. Alpha
        // images skip the block step, which would average colour under transparent pixels;
        // vips_thumbnail_image premultiplies around its resize.
        int block = (int)VIPS_MIN(image->Xsize / (2.0 * target_width), image->Ysize / (2.0 * target_height));
        if (block >= 2 && !vips_image_hasalpha(image)) {
            THUMBD_REPLACE(image, vips_shrink(in, &thumbd_next, (double)block, (double)block, NULL));
        }
        THUMBD_REPLACE(image, vips_thumbnail_image(in, &thumbd_next, target_width, "height", target_height,
                                                   "size", VIPS_SIZE_FORCE, "no_rotate", TRUE, NULL));
        THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);
    }
    // Our copy is private: the kept profile can go back on it for the metadata step.
    if (intermediate->icc && p.keep_icc) {
        vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, VIPS_AREA(intermediate->icc)->data,
                                 VIPS_AREA(intermediate->icc)->length);
    }
    ThumbdKeptMetadata kept = {intermediate->copyright, intermediate->artist};
    return thumbd_vips_finish(image, (ThumbdOrientation){0, 0}, p, &kept, result);

failed:
    return thumbd_vips_fail(image, step, result);
}
