// SPDX-License-Identifier: Apache-2.0
// The images a plan lays over its output (a watermark, a frame's nine-patch), decoded from their encoded bytes
// with the same checks as a source: an allowed format, the pixel limit read from the header before anything is
// decoded, and a whole decode here, so that a damaged image fails as such (not later, inside the output's encode).
#include "../internal/steps.h"

ThumbdVipsStep thumbd_decode_overlay(const ThumbdJob *job, const void *bytes, size_t length, const char *what,
                                     int min_side, int max_side, ThumbdVipsStep unusable, VipsImage **out) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsFormat format;
    const char *loader;
    VipsImage *header = NULL;
    if (thumbd_vips_open_header(bytes, length, p->allowed_sources, &header, &format, &loader) != THUMBD_VIPS_STEP_OK)
        return unusable;
    int width = header->Xsize, height = header->Ysize;
    g_object_unref(header);
    if ((int64_t)width * height > p->max_source_pixels) {
        vips_error("thumbd", "%s of %dx%d exceeds the pixel limit", what, width, height);
        return unusable;
    }
    if (width < min_side || height < min_side || width > max_side || height > max_side) {
        vips_error("thumbd", "a %dx%d %s is outside %dx%d...%dx%d", width, height, what, min_side, min_side,
                   max_side, max_side);
        return unusable;
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 6);
    if (!(t[0] = vips_image_new_from_buffer((void *)bytes, length, "", "fail_on", VIPS_FAIL_ON_ERROR, NULL)))
        return thumbd_scope_fail(scope, unusable);
    VipsImage *in = t[0];
    if (in->Type != VIPS_INTERPRETATION_sRGB || in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_colourspace(in, &t[1], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_fail(scope, unusable);
        in = t[1];
        if (in->BandFmt != VIPS_FORMAT_UCHAR) {
            if (vips_cast_uchar(in, &t[2], NULL)) return thumbd_scope_failed(scope);
            in = t[2];
        }
    }
    if (!vips_image_hasalpha(in)) {
        if (vips_addalpha(in, &t[3], NULL)) return thumbd_scope_failed(scope);
        in = t[3];
    }
    if (in->Bands != 4) {
        if (vips_extract_band(in, &t[4], 0, "n", 4, NULL)) return thumbd_scope_failed(scope);
        in = t[4];
    }
    // Computed here, whole: the decode's failure is the image's.
    if (!(t[5] = vips_image_copy_memory(in))) return thumbd_scope_fail(scope, unusable);
    *out = t[5];
    g_object_ref(*out);  // before the scope, which holds the other reference, goes
    g_object_unref(scope);
    return THUMBD_VIPS_STEP_OK;
}
