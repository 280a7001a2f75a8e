// SPDX-License-Identifier: Apache-2.0
// Layer 7, entry point: a raster the decoder sandbox's helper decoded (docs/threat-model.md) made into a PNG that
// the normal pipeline reads. See CVipsShims.h for the contract.
#include <string.h>

#include "../internal/job.h"

static int failed(VipsObject *scope, char **error_detail) {
    *error_detail = vips_error_buffer_copy();
    g_object_unref(scope);
    return -1;
}

int thumbd_vips_raster_to_png(const void *pixels, size_t length, int width, int height, int bands, int band_format,
                              void **data, size_t *data_length, char **error_detail) {
    *error_detail = NULL;
    *data = NULL;
    *data_length = 0;
    if (width < 1 || height < 1 || bands < 1 || bands > 4 || band_format < 0 || band_format >= VIPS_FORMAT_LAST) {
        vips_error("thumbd", "raster of %dx%d, %d bands, format %d is not an image", width, height, bands,
                   band_format);
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    size_t expected = (size_t)width * (size_t)height * (size_t)bands * vips_format_sizeof((VipsBandFormat)band_format);
    if (expected != length) {
        vips_error("thumbd", "raster of %zu bytes, %zu expected", length, expected);
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    // Not copied: `pixels` outlives this call, and the PNG below is the copy the pipeline reads.
    t[0] = vips_image_new_from_memory(pixels, length, width, height, bands, (VipsBandFormat)band_format);
    if (t[0] == NULL) return failed(scope, error_detail);
    VipsImage *in = t[0];
    // PNG holds 8 or 16 bits: a float raster (HDR JPEG XL) is cast to 8 bits.
    int sixteen = band_format == VIPS_FORMAT_USHORT;
    if (band_format != VIPS_FORMAT_UCHAR && !sixteen) {
        if (vips_cast(in, &t[1], VIPS_FORMAT_UCHAR, NULL)) return failed(scope, error_detail);
        in = t[1];
    }
    VipsInterpretation type = bands < 3 ? (sixteen ? VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W)
                                        : (sixteen ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB);
    if (vips_copy(in, &t[2], "interpretation", type, NULL)) return failed(scope, error_detail);
    // Level 0, no filter: a transient copy read once, so speed over size.
    int saved = vips_pngsave_buffer(t[2], data, data_length, "compression", 0, "filter", VIPS_FOREIGN_PNG_FILTER_NONE,
                                     NULL);
    if (saved) return failed(scope, error_detail);
    g_object_unref(scope);
    vips_error_clear();
    return 0;
}
