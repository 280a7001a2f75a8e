// SPDX-License-Identifier: Apache-2.0
// Layer 7, the entry points of a source's analysis (see CVipsShims.h): the intermediate of a band made without a
// render (the one a render of the same source and band makes, so that a cache can share it), and its grey pixels
// and sizes for the detectors.
#include <string.h>

#include "../internal/jobs.h"

ThumbdVipsStep thumbd_vips_make_intermediate(const void *buffer, size_t length, uint32_t allowed_sources,
                                             int64_t max_source_pixels, int band, ThumbdVipsIntermediate **out,
                                             ThumbdVipsThumbnailResult *result) {
    *out = NULL;
    // The params of a plan that shares its intermediate: the header checks a render makes (allowed formats, pixel
    // limit), the source's profile converted to sRGB (keep_icc off), EXIF orientation applied by the intermediate
    // itself. Nothing else in them is read while an intermediate is made.
    ThumbdVipsThumbnailParams params;
    memset(&params, 0, sizeof(params));
    params.allowed_sources = allowed_sources;
    params.max_source_pixels = max_source_pixels;
    params.auto_orient = 1;
    ThumbdJob job;  // borrows params (this frame's), buffer and result for the call
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    if (step == THUMBD_VIPS_STEP_OK && band <= 0) {
        vips_error("thumbd", "no intermediate for band %d", band);
        step = thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result);
    }
    if (step == THUMBD_VIPS_STEP_OK) step = thumbd_job_make_intermediate(&job, band, out);
    thumbd_job_release(&job);
    return step;
}

// The grey band of `image` (transfer none), lazy, its temporaries in `t` (8 slots); NULL with libvips's error.
static VipsImage *grey_of(VipsImage *image, VipsImage **t) {
    // Grey, perhaps with alpha: the first band as it is.
    if (image->Bands < 3) return vips_extract_band(image, &t[0], 0, NULL) ? NULL : t[0];
    // Pillow's convert("L") (rgb2l): (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16, exact in integers (the sums
    // stay below 2^24, exact in libvips's float); alpha ignored. As steps/greyscale.c's Pillow mode.
    double weights[3] = {19595, 38470, 7471};
    t[1] = vips_image_new_matrix_from_array(3, 1, weights, 3);
    if (!t[1] || vips_extract_band(image, &t[2], 0, "n", 3, NULL) || vips_recomb(t[2], &t[3], t[1], NULL) ||
        vips_linear1(t[3], &t[4], 1, 32768, NULL) || vips_cast_uint(t[4], &t[5], NULL) ||
        vips_rshift_const1(t[5], &t[6], 16, NULL) || vips_cast_uchar(t[6], &t[7], NULL))
        return NULL;
    return t[7];
}

ThumbdVipsStep thumbd_vips_intermediate_grey(const ThumbdVipsIntermediate *intermediate, ThumbdVipsGrey *grey) {
    memset(grey, 0, sizeof(*grey));
    VipsImage *image = intermediate->image;  // 8-bit, in memory, read-only: only new images are made from it
    grey->width = image->Xsize;
    grey->height = image->Ysize;
    grey->upright_width = intermediate->upright_width;
    grey->upright_height = intermediate->upright_height;
    VipsObject *scope = thumbd_scope_new();
    VipsImage *out = grey_of(image, (VipsImage **)vips_object_local_array(scope, 8));
    size_t length = 0;
    if (out) grey->pixels = vips_image_write_to_memory(out, &length);
    g_object_unref(scope);
    if (!grey->pixels) {
        grey->error_detail = vips_error_buffer_copy();
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_vips_intermediate_pixels(const ThumbdVipsIntermediate *intermediate, ThumbdVipsDecoded *pixels) {
    memset(pixels, 0, sizeof(*pixels));
    VipsImage *image = intermediate->image;
    pixels->format = intermediate->source_format;
    pixels->width = image->Xsize;
    pixels->height = image->Ysize;
    pixels->page_height = image->Ysize;
    pixels->bands = image->Bands;
    pixels->pages = 1;
    pixels->loop = -1;
    pixels->pixels = vips_image_write_to_memory(image, &pixels->length);
    if (!pixels->pixels) {
        pixels->error_detail = vips_error_buffer_copy();
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    return THUMBD_VIPS_STEP_OK;
}
