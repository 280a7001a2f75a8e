// SPDX-License-Identifier: Apache-2.0
// Layer 5, the pipeline (see internal/pipeline.h): the one table of steps after the resize.
#include "internal/pipeline.h"

// In the order they run. A still starts at orient (its region was cut before the resize); a render from an
// intermediate has been turned and cut already (orient and cut not wanted); an animation frame is cut here.
static const ThumbdStepRow steps[] = {
    {"orient", thumbd_wants_orient, thumbd_step_orient, 0},
    {"cut", thumbd_wants_cut, thumbd_step_cut, 0},
    {"uchar", thumbd_wants_uchar, thumbd_step_uchar, 0},
    {"cover-crop", thumbd_wants_cover_crop, thumbd_step_cover_crop, 0},
    {"saturation", thumbd_wants_saturation, thumbd_step_saturation, 1},
    {"tone", thumbd_wants_tone, thumbd_step_tone, 0},
    {"greyscale", thumbd_wants_greyscale, thumbd_step_greyscale, 0},
    {"blur", thumbd_wants_blur, thumbd_step_blur, 1},
    {"sharpen", thumbd_wants_sharpen, thumbd_step_sharpen, 1},
    {"pixelate", thumbd_wants_pixelate, thumbd_step_pixelate, 1},
    {"rgb", thumbd_wants_rgb, thumbd_step_rgb, 0},
    {"colorize", thumbd_wants_colorize, thumbd_step_colorize, 0},
    {"curve", thumbd_wants_curve, thumbd_step_curve, 0},
    {"equalize", thumbd_wants_equalize, thumbd_step_equalize, 1},
    {"convolution", thumbd_wants_convolution, thumbd_step_convolution, 1},
    {"noise", thumbd_wants_noise, thumbd_step_noise, 1},
    {"round-corner", thumbd_wants_round_corner, thumbd_step_round_corner, 1},
    {"canvas-limit", thumbd_wants_canvas_limit, thumbd_step_canvas_limit, 0},
    {"pad", thumbd_wants_pad, thumbd_step_pad, 1},
    {"padding", thumbd_wants_padding, thumbd_step_padding, 0},
    {"frame", thumbd_wants_frame, thumbd_step_frame, 0},
    {"watermark", thumbd_wants_watermark, thumbd_step_watermark, 1},
    {"memory", thumbd_wants_memory, thumbd_step_memory, 0},
    {"format", thumbd_wants_format, thumbd_step_format, 0},
    {"flatten", thumbd_wants_flatten, thumbd_step_flatten, 0},
    {"colour", thumbd_wants_colour, thumbd_step_colour, 0},
};

ThumbdVipsStep thumbd_pipeline_run(ThumbdJob *job, VipsImage **image) {
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        // `wanted` is asked when the row is reached: the memory, format and flatten rows depend on the rows
        // before them.
        if (!steps[i].wanted(job)) continue;
        ThumbdVipsStep step = steps[i].run(job, image);
        if (step != THUMBD_VIPS_STEP_OK) return step;
        if (steps[i].lazy) job->lazy = 1;
    }
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_pipeline_still(ThumbdJob *job, VipsImage *image) {
    ThumbdVipsThumbnailResult *result = job->result;
    ThumbdVipsStep step = thumbd_pipeline_run(job, &image);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    if (!thumbd_format_holds(job->format, image->Xsize, image->Ysize)) {
        vips_error("thumbd", "a %dx%d output is too large for its format", image->Xsize, image->Ysize);
        return thumbd_fail(image, THUMBD_VIPS_STEP_CANVAS_LIMIT, result);
    }
    // Metadata (what the plan keeps; nothing by default), then encode. The savers are asked to strip when
    // nothing is kept: libvips 8.14.1's webpsave ignores "strip" and would rebuild EXIF from the exif-* fields,
    // which the metadata step has removed (compat/README.md).
    int strip = thumbd_step_metadata(job, image);
    if (thumbd_vips_encode(image, job->format, job->params, strip, result))
        return thumbd_fail(image, THUMBD_VIPS_STEP_SAVE, result);
    result->format = job->format;
    result->width = image->Xsize;
    result->height = image->Ysize;
    result->frames = 1;
    g_object_unref(image);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}
