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

// A rotation (clockwise: 0, 90, 180 or 270) followed, when `mirror` is set, by a left-right mirror. Every
// orientation of a picture (the eight EXIF ones, and those after a plan's rotate and flips) is one of these.
typedef struct ThumbdOrientation {
    int rotate;
    int mirror;
} ThumbdOrientation;

// The box vips_thumbnail gets (in stored orientation once the caller has swapped it).
typedef struct ResizeTarget {
    int width;
    int height;
    VipsSize size;
} ResizeTarget;

// What the header says about a source that passed the checks.
typedef struct ThumbdVipsSourceInfo {
    int orientation;     // EXIF orientation 1...8
    ThumbdOrientation job;  // what the job applies to the stored picture (EXIF if auto_orient, rotate, mirror)
    int swap;            // non-zero when `job` swaps width and height
    int upright_width;   // dimensions once oriented as the job says
    int upright_height;
    int use_icc;         // non-zero: convert through the embedded ICC profile to sRGB
    int pages;           // frames (pages) in the source
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

// A rectangle with fractional edges, in the coordinates of whatever image it describes.
typedef struct ThumbdRect {
    double left, top, width, height;
} ThumbdRect;

// The orientation that makes a picture stored with EXIF orientation `exif` upright (1 or unknown: none).
ThumbdOrientation thumbd_orientation_from_exif(int exif);
// `first`, then `second`.
ThumbdOrientation thumbd_orientation_then(ThumbdOrientation first, ThumbdOrientation second);
// What undoes `o`.
ThumbdOrientation thumbd_orientation_inverse(ThumbdOrientation o);
// The whole orientation a job applies to the stored picture: EXIF (when p.auto_orient), then p's rotate/mirror.
ThumbdOrientation thumbd_orientation_of_job(ThumbdVipsThumbnailParams p, int exif);

// The rectangle `r` of a picture turned by `o` (width x height once turned), in the picture as stored.
ThumbdRect thumbd_stored_rect(ThumbdRect r, ThumbdOrientation o, double width, double height);

// Steps (CVipsSteps.c): 0 on success, -1 on failure; *image (transfer full in and out) stays the caller's.
int thumbd_step_orient(VipsImage **image, ThumbdOrientation o);
// The trim frame of `image` (whole image when p.trim is off or everything is background); image unchanged.
int thumbd_step_trim(VipsImage *image, ThumbdVipsThumbnailParams p, ThumbdRect *frame);
// p's crop region inside `frame`, in the frame's coordinates, where kx, ky are those coordinates per source
// pixel. Returns 1 when something is left, 0 when the region misses the frame.
int thumbd_crop_rect(ThumbdVipsThumbnailParams p, ThumbdRect frame, double kx, double ky, ThumbdRect *out);
// The whole pixels a cut of `r` takes from a width x height image: at least one, inside the image, as many as
// r's size rounded (so a cut sized for the box is never a pixel larger).
void thumbd_pixel_rect(ThumbdRect r, int width, int height, int *left, int *top, int *cut_width, int *cut_height);
int thumbd_step_cover_crop(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_tone(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_greyscale(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_blur(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_sharpen(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_pixelate(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_pad(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_padding(VipsImage **image, ThumbdVipsThumbnailParams p);
int thumbd_step_flatten(VipsImage **image, ThumbdVipsThumbnailParams p, ThumbdVipsFormat format);
// Lays p's watermark over the image: 0, -1 (libvips failed), or -2 (the watermark image is unusable:
// THUMBD_VIPS_STEP_WATERMARK).
int thumbd_step_watermark(VipsImage **image, ThumbdVipsThumbnailParams p);
// Pixels of the output canvas for a resized picture of width x height: the box when padding to it, plus padding.
int64_t thumbd_canvas_pixels(ThumbdVipsThumbnailParams p, int width, int height);
// Non-zero when the plan needs decoded pixels before the resize (trim or crop): such jobs go through an
// intermediate.
int thumbd_needs_region(ThumbdVipsThumbnailParams p);

// How much the box scales a picture (or region) of width x height, per axis (the geometry of the direct job).
void thumbd_box_scale(ThumbdVipsThumbnailParams p, int width, int height, double *hscale, double *vscale);

// Non-zero when the job renders every frame of an animation (several pages and an animated output format).
int thumbd_renders_animation(ThumbdVipsThumbnailParams p, ThumbdVipsSourceInfo info);

// The animation job (CVipsAnimation.c), after steps 1-2: every frame resized in one pass, each frame through
// the plan's steps, joined, encoded with its delays and loop count.
ThumbdVipsStep thumbd_vips_animation(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                     ThumbdVipsSourceInfo info, ThumbdVipsThumbnailResult *result);

// What a plan keeps of the source's EXIF when its pixels come from an intermediate (which carries no metadata).
typedef struct ThumbdKeptMetadata {
    const char *copyright;  // (transfer none) or NULL
    const char *artist;
} ThumbdKeptMetadata;

// The metadata step (CVipsEncode.c): removes every field of the private `image` except what p keeps (EXIF
// copyright and artist, from `kept` when given, else from the image's own fields; the ICC profile). Returns 1
// when the savers must strip (nothing kept), 0 when they must write what is left.
int thumbd_step_metadata(VipsImage *image, ThumbdVipsThumbnailParams p, const ThumbdKeptMetadata *kept);

// Copies what p keeps of `image`'s metadata: EXIF copyright and artist values (transfer full, NULL when absent
// or not kept) and the ICC profile (transfer full, NULL likewise).
void thumbd_keep_metadata(VipsImage *image, ThumbdVipsThumbnailParams p, char **copyright, char **artist,
                          VipsBlob **icc);

// Non-zero when `format`'s writer takes a picture of width x height. Only an outside fit makes a side longer than
// the box (a 1 x 20000 source is 1 x 20000 in any box): a side the format cannot hold is a CANVAS_LIMIT (the
// request asks for more than the output can be), not an encoder failure.
int thumbd_format_holds(ThumbdVipsFormat format, int width, int height);

// Encodes `image` (borrowed) as `format` with p's encoder settings into result->data / length (g_malloc'ed),
// searching lower qualities for p.max_bytes; sets result->quality. 0 on success, -1 on failure.
int thumbd_vips_encode(VipsImage *image, ThumbdVipsFormat format, ThumbdVipsThumbnailParams p, int strip,
                       ThumbdVipsThumbnailResult *result);

// Computes what to ask vips_thumbnail for, given the upright source size. The result is in upright space.
ResizeTarget thumbd_vips_resize_target(ThumbdVipsThumbnailParams p, int upright_width, int upright_height);
// What depends on the region (in pixels that are kx, ky times the turned picture's), settled once it is known: a
// focal point in pixels made fractions of it, an AUTO fit made COVER or CONTAIN, an adaptive box turned. Every
// render path calls it before the steps after the resize (thumbd_vips_finish), which then read p as it is.
void thumbd_settle_region(ThumbdVipsThumbnailParams *p, ThumbdRect region, double kx, double ky);
// The fit for a picture of width x height: p's, with AUTO made COVER or CONTAIN by the orientations.
ThumbdVipsFit thumbd_effective_fit(ThumbdVipsThumbnailParams p, int width, int height);
// The box for a picture of width x height: p's, its sides traded when p.adaptive and the orientations differ.
void thumbd_adapted_box(ThumbdVipsThumbnailParams p, int width, int height, int *box_width, int *box_height);

// vips_thumbnail_buffer with shrink-on-load, no_rotate and fail_on=error (see CVipsThumbnail.c). `buffer`
// is borrowed by the lazy *out, which must not outlive it. export_profile may be NULL.
int thumbd_vips_thumbnail_call(const void *buffer, size_t length, VipsImage **out, ResizeTarget t,
                               const char *export_profile);

// Steps 1-2 of a job: header, allowed format, pixel limit. Fills result's source fields; on failure also
// its error_detail (via thumbd_vips_fail). Nothing is decoded.
// Uses p.allowed_sources, p.max_source_pixels and p's orientation fields.
ThumbdVipsStep thumbd_vips_check_source(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                        ThumbdVipsThumbnailResult *result, ThumbdVipsSourceInfo *info);

// Steps 5-6 of a job on a private, in-memory resized image (transfer full: always released): orient (as
// `orientation` says; {0, 0}: nothing to do), 8-bit, crop for cover, effects, pad, pick the format, flatten,
// strip, encode into result.
ThumbdVipsStep thumbd_vips_finish(VipsImage *image, ThumbdOrientation orientation, ThumbdVipsThumbnailParams p,
                                  const ThumbdKeptMetadata *kept, ThumbdVipsThumbnailResult *result);

// Failure exit: releases image (transfer full, may be NULL) and any output, copies the error text into
// result->error_detail, returns step.
ThumbdVipsStep thumbd_vips_fail(VipsImage *image, ThumbdVipsStep step, ThumbdVipsThumbnailResult *result);

// vips_image_map callback that removes every metadata field of a private image.
void *thumbd_vips_remove_field(VipsImage *image, const char *name, GValue *value, void *unused);

// Lanczos-3 downscaling done by thumbd (CVipsResample.c): non-zero when `image` is something it takes (8-bit,
// one or three bands, no alpha, not CMYK) and width x height is no larger on either axis.
int thumbd_resample_fits(VipsImage *image, int width, int height);
// Resizes `in` (transfer none; computed into memory first when it is lazy) to exactly width x height into a
// new in-memory image *out (transfer full) with in's metadata; at in's own size, *out is a new image over in's
// pixels (a header copy, private to the caller). -1 with libvips's error set when it does not fit.
int thumbd_resample(VipsImage *in, VipsImage **out, int width, int height);
