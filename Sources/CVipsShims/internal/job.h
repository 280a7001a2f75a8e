// SPDX-License-Identifier: Apache-2.0
// Layer 3, the job: what one render knows besides its current image. The request's params exactly as Swift
// sent them (const, never written), what the header said, the geometry derived from both (settled once the
// region is known), the decoded watermark (once per job), the metadata kept from an intermediate, and the
// owner of every temporary. Also the job-wide helpers every entry point needs: the header check, the failure
// exit and the one vips_thumbnail_buffer call. Includes only geometry (layer 1) and libvips.
#pragma once

#include <vips/vips.h>

#include "geometry.h"

// What the header says about a source that passed the checks (or what an intermediate remembers of it).
typedef struct ThumbdSource {
    int stored_width;  // one page, as stored (before any orientation)
    int stored_height;
    int exif;          // EXIF orientation 1...8
    int pages;         // frames (pages) in the source
    int use_icc;       // non-zero: convert through the embedded ICC profile to sRGB (unless the plan keeps it)
} ThumbdSource;

// What a plan keeps of the source's EXIF when its pixels come from an intermediate (which carries no metadata).
typedef struct ThumbdKeptMetadata {
    const char *copyright;  // (transfer none) or NULL
    const char *artist;
} ThumbdKeptMetadata;

// A nine-patch's markers (steps/frame.c): the runs of equal stretch along its inside's columns and rows, and the
// content area's margins.
#define THUMBD_FRAME_MAX_RUNS 16
typedef struct ThumbdFrameRuns {
    int count;
    int length[THUMBD_FRAME_MAX_RUNS];
    int stretchy[THUMBD_FRAME_MAX_RUNS];
    int stretch_total, fixed_total;
} ThumbdFrameRuns;

typedef struct ThumbdFrameMarks {
    ThumbdFrameRuns columns, rows;
    int left, top, right, bottom;
} ThumbdFrameMarks;

// One watermark as a job keeps it: decoded once, and resized and faded for the output width it was last laid on
// (every frame of a job has one size).
typedef struct ThumbdJobMark {
    VipsImage *decoded;  // 8-bit sRGB with alpha, in memory
    VipsImage *sized;    // resized for `width` and its opacity applied (lazy over `decoded`)
    int width;
} ThumbdJobMark;

typedef struct ThumbdJob {
    const ThumbdVipsThumbnailParams *params;  // (transfer none) as Swift sent them; never written
    const void *buffer;                       // (transfer none) the encoded source, borrowed for the call; NULL
    size_t length;                            // when the job renders from an intermediate
    ThumbdVipsThumbnailResult *result;        // (transfer none) the caller's; the job fills it

    ThumbdSource source;
    ThumbdVipsProbeResult probe;  // the header as thumbd_vips_probe reads it (once opened; error_detail unused)
    ThumbdOrientation turn;  // the plan's whole orientation of the stored picture (EXIF when auto_orient, rotate,
                             // mirror)
    int upright_width;       // the source's size once turned by `turn`
    int upright_height;

    // Derived geometry, settled once the region is known (thumbd_job_settle): the steps read these, not p's box.
    ThumbdBox box;
    // thumbor's box once thumbd_job_thumbor_region has cut its region (its `orig` sides the picture's before that
    // cut, not the cut's), which thumbd_job_box then gives; 0 x 0 before.
    int thumbor_width, thumbor_height;
    double focal_x, focal_y;  // THUMBD_VIPS_GRAVITY_FOCAL's point, fractions of the region
    // Where the current image lies in the turned, untrimmed picture, for a step that places what is given in its
    // pixels (redact): the region the box is made from, in those pixels (settled), and the part of it the cover
    // cuts kept, in fractions of the region: {0, 0, 1, 1} until a cover cut, and again when a frame's cut makes the
    // image the whole region (steps/region.c); each cover cut narrows it (steps/cover_crop.c).
    ThumbdRect region;
    ThumbdRect window;

    // What the pipeline does to each image it runs over (a still, an intermediate's render, each frame).
    ThumbdOrientation orient;  // applied by the orient step; {0, 0} when the image is already turned
    int has_cut;               // animation frames: `cut` is the region in the oriented, resized frame's pixels
    ThumbdRect cut;
    int animated;              // frames of an animation: the output format is fixed and frames stay in colour
    ThumbdVipsFormat format;   // the output format, UNKNOWN until the pipeline's format step chooses it
    int lazy;                  // a lazy row of the pipeline ran since the image was last computed into memory
    int has_kept;              // `kept` replaces the image's own EXIF copyright and artist
    ThumbdKeptMetadata kept;

    // The watermarks, each decoded once per job on first use (steps/watermark.c); owned by the job (transfer
    // full), released by thumbd_job_release.
    ThumbdJobMark marks[THUMBD_VIPS_MAX_WATERMARKS];
    // THUMBD_VIPS_BACKGROUND_AUTO's colour, RGBA 0...255, found by steps/background_fill.c; pad and flatten use it.
    int has_fill_colour;
    double fill_colour[4];

    // The frame's nine-patch, decoded and read once per job on first use (steps/frame.c); owned by the job,
    // released by thumbd_job_release.
    VipsImage *frame_patch;    // its inside (the marker border cut off), premultiplied float RGBA, in memory
    ThumbdFrameMarks frame_marks;
    VipsImage *frame_overlay;  // the frame drawn for frame_overlay_width x _height, 8-bit RGBA, in memory
    int frame_overlay_width, frame_overlay_height;
} ThumbdJob;

// A job for `p` (transfer none: must outlive the job) that fills `result` (zeroed here). No source yet.
void thumbd_job_init(ThumbdJob *job, const ThumbdVipsThumbnailParams *p, ThumbdVipsThumbnailResult *result);
// Releases what the job owns (the watermark, the frame); the job's params, buffer and result stay the caller's.
void thumbd_job_release(ThumbdJob *job);

// Finds the loader for buffer, checks its format against allowed_sources (a bit per ThumbdVipsFormat) and
// opens the header; no pixels are decoded. On THUMBD_VIPS_STEP_OK, *header is a new reference (transfer
// full, release with g_object_unref) that borrows buffer, and *format is the source format (HEIF refined to
// AVIF when the file is AV1). *loader is the static class name of the loader found, or NULL. On failure,
// *header is NULL and the reason is in libvips's error buffer.
ThumbdVipsStep thumbd_vips_open_header(const void *buffer, size_t length, uint32_t allowed_sources,
                                       VipsImage **header, ThumbdVipsFormat *format, const char **loader);

// What a probe shows of an opened header (`header`: transfer none): every field of `result` but format, loader
// and error_detail.
void thumbd_probe_read(VipsImage *header, ThumbdVipsProbeResult *result);

// The header, once per job: allowed format, pixel limit (before anything is decoded), the source's size,
// orientation, pages and profile. `buffer` is borrowed by the job for the call. Fills result's source fields;
// on failure also its error_detail. Nothing is decoded.
ThumbdVipsStep thumbd_job_open(ThumbdJob *job, const void *buffer, size_t length);
// Sets what is known of the source (from the header, or from an intermediate) and the plan's orientation of it.
void thumbd_job_set_source(ThumbdJob *job, ThumbdSource source);
// Settles the geometry for the region the box is made from (in pixels that are kx, ky times the turned
// picture's; `frame`, in the same pixels, is the trimmed picture, the whole one without a trim): a focal point in
// pixels made fractions of it, an AUTO fit made COVER or CONTAIN, an adaptive box turned, the region kept in
// the turned picture's pixels (job->region, job->window). Every render path calls it once, before the steps after
// the resize.
void thumbd_job_settle(ThumbdJob *job, ThumbdRect frame, ThumbdRect region, double kx, double ky);
// The plan's box for this source: p's, with thumbor's no_upscale (rounding for full-fit-in, the crop mode or a
// fit-in letterbox, without enlarge) bounding each side given by the upright picture's, before trim and crop.
ThumbdBox thumbd_job_box(const ThumbdJob *job);
// Non-zero when the box is thumbor's crop mode with both sides (rounding thumbor-crop, fit cover) placed by a
// compass point or a focal point: its region is thumbor's crop (thumbd_job_thumbor_region), filled exactly.
int thumbd_job_thumbor_crops(const ThumbdJob *job);
// `region` (in `frame`'s coordinates, kx, ky per source pixel) narrowed to thumbor's crop of it when
// thumbd_job_thumbor_crops: in whole source pixels, centred on the focal point or placed by the compass point as
// thumbor places its alignment's point. Every path calls it once it has the crop's region, before settling.
void thumbd_job_thumbor_region(ThumbdJob *job, ThumbdRect frame, ThumbdRect *region, double kx, double ky);
// Non-zero when the job renders every frame of an animation (several pages and an animated output format).
int thumbd_job_renders_animation(const ThumbdJob *job);

// vips_thumbnail_buffer over the job's source with shrink-on-load, no_rotate and fail_on=error, converting
// to sRGB through the source's profile unless the plan keeps it; every page when all_pages. `target` is in
// stored orientation. *out (transfer full) is lazy and borrows the job's buffer: it must not outlive the call.
int thumbd_job_thumbnail_buffer(const ThumbdJob *job, ThumbdResizeTarget target, int all_pages, VipsImage **out);
// The export profile for the job's source: "srgb" when it carries one to convert through, else NULL.
const char *thumbd_job_export_profile(const ThumbdJob *job);

// Failure exit: releases image (transfer full, may be NULL) and any output, copies libvips's error text into
// result->error_detail, returns step.
ThumbdVipsStep thumbd_fail(VipsImage *image, ThumbdVipsStep step, ThumbdVipsThumbnailResult *result);

// Temporaries owned the libvips way: a scope is an empty image whose local arrays
// (vips_object_local_array(scope, n)) are released with it, as libvips's own operations hold theirs. One costs
// about 7 us (a libvips object), so a step makes one only once it knows it has something to do.
VipsObject *thumbd_scope_new(void);
// Ends `scope` keeping `out` (one of its images, or *image itself): *image (transfer full in and out) becomes
// out. Returns THUMBD_VIPS_STEP_OK.
ThumbdVipsStep thumbd_scope_keep(VipsObject *scope, VipsImage **image, VipsImage *out);
// Ends `scope` after a failure, *image untouched (still the caller's). Returns `step`.
ThumbdVipsStep thumbd_scope_fail(VipsObject *scope, ThumbdVipsStep step);
// thumbd_scope_fail for a libvips call that failed: THUMBD_VIPS_STEP_THUMBNAIL.
ThumbdVipsStep thumbd_scope_failed(VipsObject *scope);

// vips_image_map callback that removes every metadata field of a private image.
void *thumbd_remove_field(VipsImage *image, const char *name, GValue *value, void *unused);

// Cuts or extends (repeating the edge) `in` (transfer none) to exactly width x height from its top-left corner,
// into *out (transfer full; a new reference to in when it already is that size). 0, or -1 with libvips's error.
int thumbd_fit_to(VipsImage *in, VipsImage **out, int width, int height);
