// SPDX-License-Identifier: Apache-2.0
// Declarations shared by the shim's C files; not part of the Swift-visible interface.
#pragma once

#include <vips/vips.h>

#include "CVipsShims.h"

// vips_thumbnail's "no bound on this side": the maximum of its width/height arguments (VIPS_MAX_COORD).
#define THUMBD_UNBOUNDED 10000000

// Finds the loader for buffer, checks its format against allowed_sources (a bit per ThumbdVipsFormat) and
// opens the header; no pixels are decoded. On THUMBD_VIPS_STEP_OK, *header is a new reference (transfer
// full, release with g_object_unref) that borrows buffer, and *format is the source format (HEIF refined to
// AVIF when the file is AV1). *loader is the static class name of the loader found, or NULL. On failure,
// *header is NULL and the reason is in libvips's error buffer.
ThumbdVipsStep thumbd_vips_open_header(const void *buffer, size_t length, uint32_t allowed_sources,
                                       VipsImage **header, ThumbdVipsFormat *format, const char **loader);

// The box vips_thumbnail gets (in stored orientation once the caller has swapped it).
typedef struct ResizeTarget {
    int width;
    int height;
    VipsSize size;
} ResizeTarget;

// What the header says about a source that passed the checks.
typedef struct ThumbdVipsSourceInfo {
    int orientation;     // EXIF orientation 1...8
    int swap;            // non-zero when the orientation swaps width and height
    int upright_width;   // dimensions once rotated upright
    int upright_height;
    int use_icc;         // non-zero: convert through the embedded ICC profile to sRGB
} ThumbdVipsSourceInfo;

// Runs `call`, which reads `in` (the current image) and writes `thumbd_next`; on success the current image
// is released and replaced by thumbd_next, on failure control goes to `failed` (with the step already set).
#define THUMBD_REPLACE(image, call)                                                                            \
    do {                                                                                                       \
        VipsImage *thumbd_next = NULL;                                                                         \
        VipsImage *in = (image);                                                                               \
        if (call) {                                                                                            \
            if (thumbd_next) g_object_unref(thumbd_next);                                                      \
            goto failed;                                                                                       \
        }                                                                                                      \
        g_object_unref(image);                                                                                 \
        (image) = thumbd_next;                                                                                 \
    } while (0)

// Computes what to ask vips_thumbnail for, given the upright source size. The result is in upright space.
ResizeTarget thumbd_vips_resize_target(ThumbdVipsThumbnailParams p, int upright_width, int upright_height);

// vips_thumbnail_buffer with shrink-on-load, no_rotate and fail_on=error (see CVipsThumbnail.c). `buffer`
// is borrowed by the lazy *out, which must not outlive it. export_profile may be NULL.
int thumbd_vips_thumbnail_call(const void *buffer, size_t length, VipsImage **out, ResizeTarget t,
                               const char *export_profile);

// Steps 1-2 of a job: header, allowed format, pixel limit. Fills result's source fields; on failure also
// its error_detail (via thumbd_vips_fail). Nothing is decoded.
ThumbdVipsStep thumbd_vips_check_source(const void *buffer, size_t length, uint32_t allowed_sources,
                                        int64_t max_source_pixels, ThumbdVipsThumbnailResult *result,
                                        ThumbdVipsSourceInfo *info);

// Steps 5-6 of a job on a private, in-memory resized image (transfer full: always released): rotate
// upright (orientation 1: nothing to do), 8-bit, crop for cover, pick the format, flatten for JPEG, strip,
// encode into result.
ThumbdVipsStep thumbd_vips_finish(VipsImage *image, int orientation, ThumbdVipsThumbnailParams p,
                                  ThumbdVipsThumbnailResult *result);

// Failure exit: releases image (transfer full, may be NULL) and any output, copies the error text into
// result->error_detail, returns step.
ThumbdVipsStep thumbd_vips_fail(VipsImage *image, ThumbdVipsStep step, ThumbdVipsThumbnailResult *result);

// vips_image_map callback that removes every metadata field of a private image.
void *thumbd_vips_remove_field(VipsImage *image, const char *name, GValue *value, void *unused);
