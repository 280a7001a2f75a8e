// SPDX-License-Identifier: Apache-2.0
// Layer 5, the pipeline (see internal/pipeline.h): the one table of steps after the resize.
#include "internal/pipeline.h"

// In the order they run. A still starts at orient (its region was cut before the resize); a render from an
// intermediate has been turned and cut already (orient and cut not wanted); an animation frame is cut here.
// The rows with a filter (saturation to noise) run in the plan's own order when it has one (params->filter_order,
// thumbor's URL order), at the place of the first of them; the tone row stands for contrast and brightness
// together, which an order runs apart (`halves`).
static const ThumbdStepRow steps[] = {
    {"orient", thumbd_wants_orient, thumbd_step_orient, 0},
    {"cut", thumbd_wants_cut, thumbd_step_cut, 0},
    {"uchar", thumbd_wants_uchar, thumbd_step_uchar, 0},
    {"cover-crop", thumbd_wants_cover_crop, thumbd_step_cover_crop, 0},
    {"saturation", thumbd_wants_saturation, thumbd_step_saturation, 1, THUMBD_VIPS_FILTER_SATURATION},
    {"tone", thumbd_wants_tone, thumbd_step_tone, 0, THUMBD_VIPS_FILTER_CONTRAST},
    {"greyscale", thumbd_wants_greyscale, thumbd_step_greyscale, 0, THUMBD_VIPS_FILTER_GREYSCALE},
    {"blur", thumbd_wants_blur, thumbd_step_blur, 1, THUMBD_VIPS_FILTER_BLUR},
    {"sharpen", thumbd_wants_sharpen, thumbd_step_sharpen, 1, THUMBD_VIPS_FILTER_SHARPEN},
    {"pixelate", thumbd_wants_pixelate, thumbd_step_pixelate, 1, THUMBD_VIPS_FILTER_PIXELATE},
    {"rgb", thumbd_wants_rgb, thumbd_step_rgb, 0, THUMBD_VIPS_FILTER_RGB},
    {"colorize", thumbd_wants_colorize, thumbd_step_colorize, 0, THUMBD_VIPS_FILTER_COLORIZE},
    {"curve", thumbd_wants_curve, thumbd_step_curve, 0, THUMBD_VIPS_FILTER_CURVE},
    {"equalize", thumbd_wants_equalize, thumbd_step_equalize, 1, THUMBD_VIPS_FILTER_EQUALIZE},
    {"convolution", thumbd_wants_convolution, thumbd_step_convolution, 1, THUMBD_VIPS_FILTER_CONVOLUTION},
    {"noise", thumbd_wants_noise, thumbd_step_noise, 1, THUMBD_VIPS_FILTER_NOISE},
    {"redact", thumbd_wants_redact, thumbd_step_redact, 1},
    {"round-corner", thumbd_wants_round_corner, thumbd_step_round_corner, 1},
    {"canvas-limit", thumbd_wants_canvas_limit, thumbd_step_canvas_limit, 0},
    {"background-fill", thumbd_wants_background_fill, thumbd_step_background_fill, 1},
    {"pad", thumbd_wants_pad, thumbd_step_pad, 1},
    {"padding", thumbd_wants_padding, thumbd_step_padding, 0},
    {"frame", thumbd_wants_frame, thumbd_step_frame, 0},
    {"watermark", thumbd_wants_watermark, thumbd_step_watermark, 1},
    {"memory", thumbd_wants_memory, thumbd_step_memory, 0},
    {"format", thumbd_wants_format, thumbd_step_format, 0},
    {"flatten", thumbd_wants_flatten, thumbd_step_flatten, 0},
    {"colour", thumbd_wants_colour, thumbd_step_colour, 0},
};

#define ROWS (sizeof(steps) / sizeof(steps[0]))

// The tone row's halves, each its own filter in an ordered plan.
static const ThumbdStepRow halves[] = {
    {"contrast", thumbd_wants_contrast, thumbd_step_contrast, 0, THUMBD_VIPS_FILTER_CONTRAST},
    {"brightness", thumbd_wants_brightness, thumbd_step_brightness, 0, THUMBD_VIPS_FILTER_BRIGHTNESS},
};

// `wanted` is asked when the row is reached: the memory, format and flatten rows depend on the rows before them.
static ThumbdVipsStep run_row(ThumbdJob *job, VipsImage **image, const ThumbdStepRow *row) {
    if (!row->wanted(job)) return THUMBD_VIPS_STEP_OK;
    ThumbdVipsStep step = row->run(job, image);
    if (step == THUMBD_VIPS_STEP_OK && row->lazy) job->lazy = 1;
    return step;
}

// The row that runs `filter` in an ordered plan.
static const ThumbdStepRow *filter_row(unsigned char filter) {
    for (size_t i = 0; i < sizeof(halves) / sizeof(halves[0]); i++)
        if (halves[i].filter == filter) return &halves[i];
    for (size_t i = 0; i < ROWS; i++)
        if (steps[i].filter == filter) return &steps[i];
    return NULL;
}

// The plan's filters in its own order (Swift lists each wanted filter once, every one of them).
static ThumbdVipsStep run_ordered_filters(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    for (int i = 0; i < p->filter_order_count && i < (int)sizeof(p->filter_order); i++) {
        const ThumbdStepRow *row = filter_row(p->filter_order[i]);
        if (row == NULL) continue;
        ThumbdVipsStep step = run_row(job, image, row);
        if (step != THUMBD_VIPS_STEP_OK) return step;
    }
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_pipeline_run(ThumbdJob *job, VipsImage **image) {
    int ordered = job->params->filter_order_count > 0, filters_ran = 0;
    for (size_t i = 0; i < ROWS; i++) {
        ThumbdVipsStep step;
        if (ordered && steps[i].filter != THUMBD_VIPS_FILTER_NONE) {
            if (filters_ran) continue;
            filters_ran = 1;
            step = run_ordered_filters(job, image);
        } else {
            step = run_row(job, image, &steps[i]);
        }
        if (step != THUMBD_VIPS_STEP_OK) return step;
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
