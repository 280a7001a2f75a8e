// SPDX-License-Identifier: Apache-2.0
// Layer 7, entry points: reading a header (probe), and decoding and making images for tests and diagnostics.
// See CVipsShims.h for the contract of each function.
#include <string.h>

#include "../internal/job.h"

ThumbdVipsStep thumbd_vips_probe(const void *buffer, size_t length, uint32_t allowed_sources,
                                 ThumbdVipsProbeResult *result) {
    memset(result, 0, sizeof(*result));
    VipsImage *header = NULL;
    ThumbdVipsStep step =
        thumbd_vips_open_header(buffer, length, allowed_sources, &header, &result->format, &result->loader);
    if (step != THUMBD_VIPS_STEP_OK) {
        result->error_detail = vips_error_buffer_copy();
        return step;
    }
    thumbd_probe_read(header, result);
    g_object_unref(header);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

// MARK: - Decoding (tests and diagnostics)

static ThumbdVipsStep decode(const void *buffer, size_t length, int all_frames, ThumbdVipsDecoded *result);

ThumbdVipsStep thumbd_vips_decode(const void *buffer, size_t length, ThumbdVipsDecoded *result) {
    return decode(buffer, length, 0, result);
}

ThumbdVipsStep thumbd_vips_decode_frames(const void *buffer, size_t length, ThumbdVipsDecoded *result) {
    return decode(buffer, length, 1, result);
}

// `step` after a failure, with libvips's error in result->error_detail; ends `scope` (its images go with it).
static ThumbdVipsStep decode_failed(VipsObject *scope, ThumbdVipsStep step, ThumbdVipsDecoded *result) {
    result->error_detail = vips_error_buffer_copy();
    return thumbd_scope_fail(scope, step);
}

static ThumbdVipsStep decode(const void *buffer, size_t length, int all_frames, ThumbdVipsDecoded *result) {
    memset(result, 0, sizeof(*result));
    uint32_t every_format = ~0u;
    const char *loader = NULL;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    ThumbdVipsStep step = thumbd_vips_open_header(buffer, length, every_format, &t[0], &result->format, &loader);
    if (step != THUMBD_VIPS_STEP_OK) return decode_failed(scope, step, result);
    VipsImage *image = t[0];
    if (all_frames && vips_image_get_n_pages(image) > 1) {
        if (!(t[1] = vips_image_new_from_buffer((void *)buffer, length, "n=-1", NULL)))
            return decode_failed(scope, THUMBD_VIPS_STEP_HEADER, result);
        image = t[1];
    }

    result->width = image->Xsize;
    result->height = image->Ysize;
    result->bands = image->Bands;
    result->pages = vips_image_get_n_pages(image);
    result->has_exif = vips_image_get_typeof(image, VIPS_META_EXIF_NAME) ? 1 : 0;
    result->has_xmp = vips_image_get_typeof(image, VIPS_META_XMP_NAME) ? 1 : 0;
    result->has_icc_profile = vips_image_get_typeof(image, VIPS_META_ICC_NAME) ? 1 : 0;
    result->has_orientation = vips_image_get_typeof(image, VIPS_META_ORIENTATION) ? 1 : 0;
    int interlaced = 0;
    if (vips_image_get_typeof(image, "interlaced") && vips_image_get_int(image, "interlaced", &interlaced) == 0) {
        result->interlaced = interlaced ? 1 : 0;
    }
    result->page_height = vips_image_get_page_height(image);
    result->loop = -1;
    if (vips_image_get_typeof(image, "loop")) vips_image_get_int(image, "loop", &result->loop);
    int *delays = NULL, count = 0;
    if (vips_image_get_typeof(image, "delay") && vips_image_get_array_int(image, "delay", &delays, &count) == 0) {
        result->delay_count = VIPS_MIN(count, 16);
        for (int i = 0; i < result->delay_count; i++) result->delays[i] = delays[i];
    }

    // Tests compare 8-bit values; a 16-bit output would already be a failure they can see in `bands`/colours.
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(image, &t[2], NULL)) return decode_failed(scope, THUMBD_VIPS_STEP_DECODE, result);
        image = t[2];
    }
    size_t size = 0;
    if (!(result->pixels = vips_image_write_to_memory(image, &size)))
        return decode_failed(scope, THUMBD_VIPS_STEP_DECODE, result);
    result->length = size;
    g_object_unref(scope);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

int thumbd_vips_make_flat(int width, int height, int bands, int frames, ThumbdVipsFormat format, void **data,
                          size_t *length, char **error_detail) {
    *data = NULL;
    *length = 0;
    *error_detail = NULL;
    const char *suffix = format == THUMBD_VIPS_FORMAT_JPEG   ? ".jpg"
                         : format == THUMBD_VIPS_FORMAT_PNG  ? ".png"
                         : format == THUMBD_VIPS_FORMAT_WEBP ? ".webp"
                         : format == THUMBD_VIPS_FORMAT_GIF  ? ".gif"
                                                             : NULL;
    if (!suffix || width < 1 || height < 1 || bands < 1 || bands > 4 || frames < 1) {
        vips_error("thumbd", "make_flat: no %dx%d, %d bands, %d frames as format %d", width, height, bands, frames,
                   format);
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    VipsImage **pages = g_new0(VipsImage *, frames);
    VipsImage *image = NULL;
    int failed = 0;
    for (int i = 0; i < frames && !failed; i++) {
        // A colour per frame, so that an animation's frames differ (an encoder may merge equal ones).
        double ones[4] = {1, 1, 1, 1}, colour[4] = {200 - 40 * (i % 4), 120, 40 + 50 * (i % 4), 128};
        if (bands <= 2) colour[1] = 128;  // grey + alpha: the alpha is the second band
        VipsImage *black = NULL;
        failed = vips_black(&black, width, height, "bands", bands, NULL) ||
                 vips_linear(black, &pages[i], ones, colour, bands, "uchar", TRUE, NULL);
        if (black) g_object_unref(black);
    }
    VipsImage *joined = NULL;
    failed = failed || vips_arrayjoin(pages, &joined, frames, "across", 1, NULL) ||
             vips_copy(joined, &image, "interpretation",
                       bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, NULL);
    if (joined) g_object_unref(joined);
    for (int i = 0; i < frames; i++) {
        if (pages[i]) g_object_unref(pages[i]);
    }
    g_free(pages);
    if (!failed && frames > 1) {
        int *delays = g_new(int, frames);
        for (int i = 0; i < frames; i++) delays[i] = 100;
        vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, height);
        vips_image_set_array_int(image, "delay", delays, frames);
        vips_image_set_int(image, "loop", 0);
        g_free(delays);
    }
    failed = failed || vips_image_write_to_buffer(image, suffix, data, length, NULL);
    if (image) g_object_unref(image);
    if (failed) {
        g_free(*data);
        *data = NULL;
        *length = 0;
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    vips_error_clear();
    return 0;
}
