// SPDX-License-Identifier: Apache-2.0
// Renders through a deterministic intermediate (see internal/jobs.h and CVipsShims.h, thumbd_vips_render).
//
// A small box is rendered in two stages: source -> intermediate (fit into band x band, shrink-on-load,
// decoded, upright, 8-bit, metadata stripped, in memory; resized by thumbd_resample for most JPEG and PNG
// sources, by vips_thumbnail for the rest: decode_into_band) -> the box (thumbd_resample, or libvips for alpha
// and enlargements). Which boxes go this way depends only on the spec and the source's header, and the
// intermediate only on the source and the band, so the output bytes are the same whether the intermediate was
// just made or taken from thumbd's cache. The same checks as the direct job apply (allowed loaders, pixel limit,
// fail_on=error) and the same steps are reported: a damaged source fails while its intermediate is decoded,
// with THUMBD_VIPS_STEP_DECODE.
#include <math.h>

#include "../internal/jobs.h"

// MARK: - The plan

ThumbdVipsStep thumbd_job_plan(ThumbdJob *job, const int *bands, int band_count, double margin, int *band, int *own) {
    const ThumbdVipsThumbnailParams *p = job->params;
    *band = 0;
    *own = 0;
    int upright_width = job->upright_width, upright_height = job->upright_height;
    // The part of the oriented picture the box is made from, in source pixels, as far as the header tells: the
    // crop region (trim is only known once decoded; the whole picture stands for it).
    ThumbdRect whole = {0, 0, upright_width, upright_height}, region;
    if (!thumbd_crop_rect(p, whole, whole, 1, 1, &region)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", upright_width, upright_height);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_REGION, job->result);
    }
    thumbd_job_thumbor_region(job, whole, &region, 1, 1);
    int width = thumbd_whole(region.width), height = thumbd_whole(region.height);
    ThumbdBox box = thumbd_job_box(job);
    double hscale = 1, vscale = 1;
    thumbd_box_scale(box, width, height, &hscale, &vscale);
    // hscale, vscale: output pixels per source pixel, which is what an intermediate must hold (times margin),
    // whether the box is made from the whole picture or from a region of it.
    // Shared intermediates hold sRGB pixels: a plan that keeps the source's profile never uses one.
    int shared = !(p->keep_icc && job->source.use_icc);
    // The smallest band whose intermediate holds at least `margin` times the box's pixels on each axis.
    for (int i = 0; shared && i < band_count; i++) {
        if (bands[i] <= 0) continue;
        double limit = thumbd_band_scale(bands[i], upright_width, upright_height) / VIPS_MAX(1.0, margin);
        if (hscale <= limit && vscale <= limit && (*band == 0 || bands[i] < *band)) *band = bands[i];
    }
    // Enlarged, then cut (cover's overflow, a crop) or left overflowing (outside), the whole picture made first
    // would be larger than the source, up to libvips's largest side and beyond: a 1 x 10000 source covering
    // 200 x 200 is 200 x 2,000,000 before its crop. Such a job renders from its own intermediate at the source's
    // size, which cuts before it enlarges (thumbd_job_from_intermediate).
    ThumbdVipsFit fit = thumbd_effective_fit(box, width, height);
    int overflows =
        fit == THUMBD_VIPS_FIT_COVER || fit == THUMBD_VIPS_FIT_OUTSIDE || p->crop_unit != THUMBD_VIPS_CROP_NONE;
    if (*band == 0 && (p->trim || (overflows && VIPS_MAX(hscale, vscale) > 1))) {
        // A trim needs decoded pixels before the resize: this job's own intermediate, just large enough (with
        // the margin), never above the source. (A crop without a trim renders directly, resampled once.)
        int longest = VIPS_MAX(upright_width, upright_height);
        double needed = ceil(longest * VIPS_MAX(hscale, vscale) * VIPS_MAX(1.0, margin));
        *band = (int)VIPS_MAX(1.0, VIPS_MIN((double)longest, needed));
        *own = 1;
    }
    return THUMBD_VIPS_STEP_OK;
}

// MARK: - Making an intermediate

// Decodes the source into `band` x `band` (never enlarged; a square box is the same in stored and upright
// orientation), converted to sRGB through its profile unless the plan keeps it; *out is then in memory
// (transfer full). JPEG and PNG with 8-bit pixels and no alpha are decoded at their shrink-on-load scale (JPEG)
// or box-averaged to at most twice the band while decoding (PNG), then resized by thumbd_resample; other
// sources, and these with alpha, CMYK or more bits, go through vips_thumbnail. (WebP too: libwebp's scaled
// decode costs as much as a full one, and its rescaler followed by ours was no faster than vips_thumbnail and
// 0.2 of 255 levels further from a direct render.) Reports the step that failed (decode errors: DECODE).
static ThumbdVipsStep decode_into_band(ThumbdJob *job, int band, VipsImage **out) {
    ThumbdVipsFormat format = job->result->source_format;
    const ThumbdSource *source = &job->source;
    int convert = thumbd_job_export_profile(job) != NULL;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 8);
    // The loaders read the borrowed buffer lazily; fail_on=error as in the direct job.
    if (format == THUMBD_VIPS_FORMAT_JPEG) {
        int shrink = thumbd_load_shrink(source->stored_width, source->stored_height, band);
        t[0] = vips_image_new_from_buffer(job->buffer, job->length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                          VIPS_FAIL_ON_ERROR, "shrink", shrink, NULL);
        if (!t[0]) return thumbd_scope_failed(scope);
    } else if (format == THUMBD_VIPS_FORMAT_PNG) {
        t[0] = vips_image_new_from_buffer(job->buffer, job->length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                          VIPS_FAIL_ON_ERROR, NULL);
    }
    VipsImage *in = t[0];
    if (in && format != THUMBD_VIPS_FORMAT_JPEG && !thumbd_resample_fits(in, 1, 1)) {
        in = NULL;  // alpha, 16 bits, ...: vips_thumbnail premultiplies and converts around its own resize
    }
    if (!in) {
        vips_error_clear();
        ThumbdResizeTarget target = {band, band, THUMBD_SIZE_DOWN};
        if (thumbd_job_thumbnail_buffer(job, target, 0, &t[1])) return thumbd_scope_failed(scope);
        if (!(*out = vips_image_copy_memory(t[1]))) return thumbd_scope_fail(scope, THUMBD_VIPS_STEP_DECODE);
        g_object_unref(scope);
        return THUMBD_VIPS_STEP_OK;
    }
    if (format == THUMBD_VIPS_FORMAT_PNG) {
        // No shrink-on-load: average integer blocks while decoding (streamed, so a large PNG is never held
        // whole) down to 2-4x the band, then resample the rest, as libvips's resize does. A block is never
        // wider or taller than the picture: libvips refuses a side it would shrink to nothing (a 1 x 10000
        // PNG keeps its one column, and the resample below sizes each axis on its own).
        int block = VIPS_MAX(in->Xsize, in->Ysize) / (2 * band);
        int across = VIPS_MIN(block, in->Xsize), down = VIPS_MIN(block, in->Ysize);
        if (block >= 2) {
            if (vips_shrink(in, &t[2], (double)across, (double)down, NULL))
                return thumbd_scope_failed(scope);
            in = t[2];
        }
    }
    if (!(t[3] = vips_image_copy_memory(in))) return thumbd_scope_fail(scope, THUMBD_VIPS_STEP_DECODE);
    in = t[3];
    double excess = (double)VIPS_MAX(in->Xsize, in->Ysize) / band;
    int width = excess <= 1 ? in->Xsize : VIPS_MAX(1, (int)rint(in->Xsize / excess));
    int height = excess <= 1 ? in->Ysize : VIPS_MAX(1, (int)rint(in->Ysize / excess));
    int failed = 0;
    if (thumbd_resample_fits(in, width, height)) {
        if (excess > 1 && !(failed = thumbd_resample(in, &t[4], width, height))) in = t[4];
        // After the resize, as vips_thumbnail does: fewer pixels to convert.
        if (!failed && convert && !(failed = vips_icc_transform(in, &t[5], "srgb", "embedded", TRUE, NULL))) in = t[5];
    } else if (convert) {
        // CMYK or more bits (JPEG): libvips converts around its resize.
        failed = vips_thumbnail_image(in, &t[6], band, "height", band, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE,
                                      "export_profile", "srgb", NULL);
        in = t[6];
    } else {
        failed = vips_thumbnail_image(in, &t[7], band, "height", band, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE,
                                      NULL);
        in = t[7];
    }
    if (failed) return thumbd_scope_failed(scope);
    *out = in;
    g_object_ref(in);
    g_object_unref(scope);
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_job_make_intermediate(ThumbdJob *job, int band, ThumbdVipsIntermediate **out) {
    *out = NULL;
    ThumbdVipsThumbnailResult *result = job->result;
    VipsImage *image = NULL;
    ThumbdVipsStep step = decode_into_band(job, band, &image);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(NULL, step, result);
    VipsImage *decoded = vips_image_copy_memory(image);
    g_object_unref(image);
    if (!decoded) return thumbd_fail(NULL, THUMBD_VIPS_STEP_DECODE, result);
    image = decoded;
    // An intermediate is shared by every plan of its source: always upright by EXIF, never turned by a plan.
    ThumbdOrientation upright = thumbd_orientation_from_exif(job->source.exif);
    step = thumbd_turn(&image, upright);
    if (step == THUMBD_VIPS_STEP_OK) step = thumbd_step_uchar(job, &image);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    // Pixels in memory (the turn and the casts are lazy), then no metadata at all: the intermediate is shared
    // read-only by every render thread and must carry nothing (orientation, ICC) a later step would act on.
    decoded = vips_image_copy_memory(image);
    g_object_unref(image);
    if (!decoded) return thumbd_fail(NULL, THUMBD_VIPS_STEP_DECODE, result);
    image = decoded;
    // What a plan may keep is saved first (copy_memory keeps the source's fields).
    ThumbdVipsIntermediate *intermediate = g_new0(ThumbdVipsIntermediate, 1);
    thumbd_keep_metadata(image, 1, job->params->keep_icc, &intermediate->copyright, &intermediate->artist,
                         &intermediate->icc);
    vips_image_map(image, thumbd_remove_field, NULL);

    int swap = thumbd_orientation_swaps(upright);
    intermediate->image = image;
    intermediate->upright_width = swap ? job->source.stored_height : job->source.stored_width;
    intermediate->upright_height = swap ? job->source.stored_width : job->source.stored_height;
    intermediate->source_width = result->source_width;
    intermediate->source_height = result->source_height;
    intermediate->orientation = job->source.exif;
    intermediate->source_format = result->source_format;
    intermediate->loader = result->loader;
    intermediate->probe = job->probe;
    *out = intermediate;
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

size_t thumbd_vips_intermediate_bytes(const ThumbdVipsIntermediate *intermediate) {
    VipsImage *image = intermediate->image;
    return (size_t)image->Xsize * image->Ysize * image->Bands;
}

void thumbd_vips_intermediate_probe(const ThumbdVipsIntermediate *intermediate, ThumbdVipsProbeResult *result) {
    *result = intermediate->probe;
    result->error_detail = NULL;
}

void thumbd_vips_intermediate_release(ThumbdVipsIntermediate *intermediate) {
    if (!intermediate) return;
    g_object_unref(intermediate->image);
    g_free(intermediate->copyright);
    g_free(intermediate->artist);
    if (intermediate->icc) vips_area_unref(VIPS_AREA(intermediate->icc));
    g_free(intermediate);
}

// MARK: - Rendering from an intermediate

// The box's size from the intermediate's pixels: `image` (transfer full in and out) resized to exactly
// width x height, into memory.
static ThumbdVipsStep resize(VipsImage **image, int width, int height) {
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    VipsImage *in = *image;
    if (thumbd_resample_fits(in, width, height)) {
        // thumbd's own Lanczos-3 (resample/lanczos3.c) over the whole ratio, on the intermediate's pixels.
        if (thumbd_resample(in, &t[0], width, height)) return thumbd_scope_failed(scope);
        return thumbd_scope_keep(scope, image, t[0]);
    }
    // Alpha, or a box larger than the intermediate (enlarging): libvips. Its reduce widens its kernel with
    // the ratio (lanczos3 over 8x = 49 taps per axis), so, as shrink-on-load does for the direct job, first
    // average integer blocks down to 2-4x the box, then let the resize antialias the rest. (vips_resize's own
    // gap=2, since 8.13, shrinks by an integer first too, so this mostly repeats it; deleting it changes output
    // bytes: compat/README.md.)
    // Alpha images skip the block step, which would average colour under transparent pixels;
    // vips_thumbnail_image premultiplies around its resize.
    int block = (int)VIPS_MIN(in->Xsize / (2.0 * width), in->Ysize / (2.0 * height));
    if (block >= 2 && !vips_image_hasalpha(in)) {
        if (vips_shrink(in, &t[1], (double)block, (double)block, NULL))
            return thumbd_scope_failed(scope);
        in = t[1];
    }
    if (vips_thumbnail_image(in, &t[2], width, "height", height, "size", VIPS_SIZE_FORCE, "no_rotate", TRUE, NULL) ||
        !(t[3] = vips_image_copy_memory(t[2])))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[3]);
}

ThumbdVipsStep thumbd_job_from_intermediate(ThumbdJob *job, const ThumbdVipsIntermediate *intermediate) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsThumbnailResult *result = job->result;
    result->source_format = intermediate->source_format;
    result->source_width = intermediate->source_width;
    result->source_height = intermediate->source_height;
    result->loader = intermediate->loader;
    thumbd_job_set_source(job, (ThumbdSource){.stored_width = intermediate->source_width,
                                              .stored_height = intermediate->source_height,
                                              .exif = intermediate->orientation,
                                              .pages = 1});
    // The intermediate is only read: new images reference its pixels, which it never changes.
    VipsImage *image = intermediate->image;
    g_object_ref(image);

    // Orient as the plan says, from EXIF-upright: undo EXIF first when the plan keeps the stored orientation.
    ThumbdOrientation exif = thumbd_orientation_from_exif(intermediate->orientation);
    ThumbdOrientation plan = {p->rotate, p->mirror ? 1 : 0};
    ThumbdOrientation turn = p->auto_orient ? plan : thumbd_orientation_then(thumbd_orientation_inverse(exif), plan);
    ThumbdVipsStep step = thumbd_turn(&image, turn);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    int width = job->upright_width, height = job->upright_height;

    // The region the box is made from (trim, then crop), in the intermediate's pixels; kx, ky convert
    // source pixels into them.
    double kx = (double)image->Xsize / width, ky = (double)image->Ysize / height;
    ThumbdRect frame, region;
    step = thumbd_trim_frame(job, image, &frame);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    if (!thumbd_crop_rect(p, (ThumbdRect){0, 0, image->Xsize, image->Ysize}, frame, kx, ky, &region)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", width, height);
        return thumbd_fail(image, THUMBD_VIPS_STEP_REGION, result);
    }
    if (thumbd_job_wants_attention_crop(job)) {
        step = thumbd_job_attention_region(job, image, frame, kx, ky, &region);
        if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    }
    thumbd_job_thumbor_region(job, frame, &region, kx, ky);
    thumbd_job_settle(job, frame, region, kx, ky);
    // At least one pixel, inside the image: a region narrower than one of its pixels (a 1 px crop of a picture
    // whose intermediate is narrower than it) can round to its edge.
    job->cut = region;
    int left, top, cut_width, cut_height;
    thumbd_pixel_rect(region, image->Xsize, image->Ysize, &left, &top, &cut_width, &cut_height);
    if (cut_width < image->Xsize || cut_height < image->Ysize) {
        step = thumbd_step_cut(job, &image);
        if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
        width = thumbd_whole(region.width / kx);
        height = thumbd_whole(region.height / ky);
    }

    // The size a direct render would resize to (before any cover crop), from the region's size in source
    // pixels, so the geometry does not depend on the intermediate's rounding; the image is forced to it.
    double hscale = 1, vscale = 1;
    thumbd_box_scale(job->box, width, height, &hscale, &vscale);
    double scaled_width = width * hscale, scaled_height = height * vscale;
    if (job->box.fit == THUMBD_VIPS_FIT_COVER && VIPS_MAX(hscale, vscale) > 1) {
        // Enlarging: the cover crop comes first, at this image's resolution, so that only the box is enlarged
        // (thumbd_job_plan sends such jobs here); the crop after the resize then has nothing left to cut.
        int window_width = VIPS_CLIP(1, (int)rint(job->box.width * image->Xsize / scaled_width), image->Xsize);
        int window_height = VIPS_CLIP(1, (int)rint(job->box.height * image->Ysize / scaled_height), image->Ysize);
        step = thumbd_cover_cut(job, &image, window_width, window_height, image->Xsize / scaled_width);
        if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
        scaled_width = VIPS_MIN(scaled_width, job->box.width);
        scaled_height = VIPS_MIN(scaled_height, job->box.height);
    }
    // An enlarged outside fit is as large as the whole picture made larger: refused before it is made, not after.
    if (scaled_width > THUMBD_UNBOUNDED || scaled_height > THUMBD_UNBOUNDED ||
        thumbd_canvas_pixels(p, job->box, (int)scaled_width, (int)scaled_height) > p->max_source_pixels) {
        vips_error("thumbd", "the output canvas exceeds the pixel limit");
        return thumbd_fail(image, THUMBD_VIPS_STEP_CANVAS_LIMIT, result);
    }
    step = resize(&image, thumbd_whole(scaled_width), thumbd_whole(scaled_height));
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    // Our copy is private: the kept profile can go back on it for the metadata step.
    if (intermediate->icc && p->keep_icc) {
        vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, VIPS_AREA(intermediate->icc)->data,
                                 VIPS_AREA(intermediate->icc)->length);
    }
    job->has_kept = 1;
    job->kept = (ThumbdKeptMetadata){intermediate->copyright, intermediate->artist};
    job->orient = (ThumbdOrientation){0, 0};  // turned and cut above
    return thumbd_pipeline_still(job, image);
}
