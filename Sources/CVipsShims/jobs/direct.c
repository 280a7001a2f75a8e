// SPDX-License-Identifier: Apache-2.0
// The direct job: a still straight from the source (see internal/jobs.h).
//
// Stages, and the step reported when each fails:
//   1. header, allowed format, pixel limit (thumbd_job_open, before this) ..... UNRECOGNISED / REFUSED / HEADER /
//                                                                                PIXEL_LIMIT
//   2. vips_thumbnail_buffer (shrink-on-load, fail_on=error, no_rotate) ...... THUMBNAIL (builds a lazy pipeline;
//      a crop's region is cut from it here, so only its pixels are computed)
//   3. vips_image_copy_memory: decode + shrink happen here ................... DECODE
//   4. the pipeline: orient, 8-bit, cover crop, effects, canvas, flatten ..... THUMBNAIL / CANVAS_LIMIT / WATERMARK
//   5. metadata and encode ................................................... SAVE
// Rotation and cropping are done by the pipeline rather than by vips_thumbnail (no_rotate, no crop) so that every
// pixel decode happens in stage 3: vips_thumbnail would otherwise decode inside its own build when it rotates or
// smart-crops, and a truncated file would then be reported as a pipeline failure instead of a decode failure.
// Stage 4 works on a small in-memory image, so doing it ourselves costs nothing measurable.
#include "../internal/jobs.h"

// Stages 2-3: the resized picture (its region cut from it when `cut`), decoded into memory. *out transfer full.
static ThumbdVipsStep decode(ThumbdJob *job, ThumbdResizeTarget target, const ThumbdRect *cut, VipsImage **out) {
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    if (thumbd_job_thumbnail_buffer(job, target, 0, &t[0])) return thumbd_scope_failed(scope);
    VipsImage *in = t[0];
    if (cut) {
        int left, top, width, height;
        thumbd_pixel_rect(*cut, in->Xsize, in->Ysize, &left, &top, &width, &height);
        if (vips_extract_area(in, &t[1], left, top, width, height, NULL))
            return thumbd_scope_failed(scope);
        in = t[1];
    }
    // Decode and shrink: the only place source pixels are read.
    if (!(t[2] = vips_image_copy_memory(in))) return thumbd_scope_fail(scope, THUMBD_VIPS_STEP_DECODE);
    *out = t[2];
    g_object_ref(*out);
    g_object_unref(scope);
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_job_direct(ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    if (p->trim) {
        // A trim works on decoded pixels before the resize: thumbd_job_plan sends those jobs through an
        // intermediate, never here.
        vips_error("thumbd", "a plan with a trim renders from an intermediate");
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, job->result);
    }
    // The lazy shrink-on-load pipeline, sized in stored orientation (the pipeline turns it afterwards).
    int upright_width = job->upright_width, upright_height = job->upright_height;
    ThumbdRect whole = {0, 0, upright_width, upright_height}, region = whole;
    int made_width = upright_width, made_height = upright_height;  // what the box is made from, source pixels
    ThumbdResizeTarget target = thumbd_resize_target(thumbd_job_box(job), upright_width, upright_height);
    // thumbor's crop mode keeps a region of whole pixels, cut as a crop is (the whole picture when the aspects agree).
    int cuts = p->crop_unit != THUMBD_VIPS_CROP_NONE || thumbd_job_thumbor_crops(job);
    if (!cuts) {
        thumbd_job_settle(job, whole, whole, 1, 1);
    } else {
        // A crop, resampled once: the whole picture is resized to the scale the region needs, and only the
        // region's pixels are computed (the lazy pipeline is cut before it is decoded).
        if (!thumbd_crop_rect(p, whole, whole, 1, 1, &region)) {
            vips_error("thumbd", "the crop region lies outside the %dx%d picture", upright_width, upright_height);
            return thumbd_fail(NULL, THUMBD_VIPS_STEP_REGION, job->result);
        }
        if (thumbd_job_wants_attention_crop(job)) {
            ThumbdVipsStep placed = thumbd_job_attention_region(job, NULL, whole, 1, 1, &region);
            if (placed != THUMBD_VIPS_STEP_OK) return thumbd_fail(NULL, placed, job->result);
        }
        thumbd_job_thumbor_region(job, whole, &region, 1, 1);
        thumbd_job_settle(job, whole, region, 1, 1);
        double hscale = 1, vscale = 1;
        int region_width = thumbd_whole(region.width), region_height = thumbd_whole(region.height);
        made_width = region_width;
        made_height = region_height;
        thumbd_box_scale(job->box, region_width, region_height, &hscale, &vscale);
        target = (ThumbdResizeTarget){thumbd_whole(upright_width * hscale), thumbd_whole(upright_height * vscale),
                                      THUMBD_SIZE_FORCE};
        double kx = (double)target.width / upright_width, ky = (double)target.height / upright_height;
        // The cut is as large as the box asks of the region (the whole picture's rounding aside), never larger.
        region = thumbd_stored_rect((ThumbdRect){region.left * kx, region.top * ky, region_width * hscale,
                                                 region_height * vscale},
                                    job->turn, target.width, target.height);
    }
    if (thumbd_orientation_swaps(job->turn)) {
        int w = target.width;
        target.width = target.height;
        target.height = w;
    }
    if (p->min_width > 0 || p->min_height > 0) {
        // A scale raised to a minimum side can ask for more than any box: refused before anything is decoded.
        double hscale = 1, vscale = 1;
        thumbd_box_scale(job->box, made_width, made_height, &hscale, &vscale);
        double scaled_width = made_width * hscale, scaled_height = made_height * vscale;
        if (scaled_width > THUMBD_UNBOUNDED || scaled_height > THUMBD_UNBOUNDED ||
            thumbd_canvas_pixels(p, job->box, thumbd_whole(VIPS_MIN(scaled_width, job->box.fit == THUMBD_VIPS_FIT_COVER
                                                                                      ? job->box.width
                                                                                      : scaled_width)),
                                 thumbd_whole(VIPS_MIN(scaled_height, job->box.fit == THUMBD_VIPS_FIT_COVER
                                                                          ? job->box.height
                                                                          : scaled_height))) >
                p->max_source_pixels) {
            vips_error("thumbd", "the output canvas exceeds the pixel limit");
            return thumbd_fail(NULL, THUMBD_VIPS_STEP_CANVAS_LIMIT, job->result);
        }
    }
    VipsImage *image = NULL;
    ThumbdVipsStep step = decode(job, target, cuts ? &region : NULL, &image);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(NULL, step, job->result);
    job->orient = job->turn;
    return thumbd_pipeline_still(job, image);
}
