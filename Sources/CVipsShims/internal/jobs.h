// SPDX-License-Identifier: Apache-2.0
// Layer 6, the jobs: the ways a render goes once its header is read (jobs/direct.c, jobs/animation.c,
// jobs/intermediate.c, and jobs/pass_through.c, which does not render). Each takes an opened job (thumbd_job_open), fills job->result and returns the step
// (THUMBD_VIPS_STEP_OK, or what failed with result->error_detail set). The entry points (layer 7, entry/)
// choose between them. Includes only the pipeline (layer 5).
#pragma once

#include "pipeline.h"

// The intermediate's definition: the public header keeps it opaque to Swift.
struct ThumbdVipsIntermediate {
    VipsImage *image;   // (owned) upright 8-bit pixels in memory; read-only once built, shared by threads
    int upright_width;  // the source's EXIF-upright size, from which every box's geometry is computed
    int upright_height;
    int source_width;   // as stored, for results
    int source_height;
    int orientation;    // the source's EXIF orientation, already applied to `image`
    char *copyright;    // (owned) the source's EXIF copyright and artist values, or NULL
    char *artist;
    VipsBlob *icc;      // (owned) the source's ICC profile when made for a plan that keeps it (pixels unconverted)
    ThumbdVipsFormat source_format;
    const char *loader;  // static class name
    ThumbdVipsProbeResult probe;  // the source's header as the job that made it read it
};

// A placed crop whose gravity is THUMBD_VIPS_GRAVITY_ATTENTION (imgproxy's `c:W:H:sm`): *region, of the crop's size
// in `frame` (kx, ky: image pixels per source pixel), centred on libvips's attention point of the frame's pixels
// in `image` (upright; transfer none), or, when image is NULL, of a small upright preview of the job's source
// (frame then the whole picture, kx = ky = 1). THUMBD_VIPS_STEP_OK, REGION when it misses, or what failed.
int thumbd_job_wants_attention_crop(const ThumbdJob *job);
ThumbdVipsStep thumbd_job_attention_region(const ThumbdJob *job, VipsImage *image, ThumbdRect frame, double kx,
                                           double ky, ThumbdRect *region);

// A still straight from the source: the lazy shrink-on-load resize, the region cut from it before anything is
// decoded, one decode, then the pipeline. Refuses a plan with a trim (those go through an intermediate).
ThumbdVipsStep thumbd_job_direct(ThumbdJob *job);

// Every frame of an animation: limits from the header alone, one resize pass over every frame, each frame
// through the pipeline, joined and encoded with its delays and loop count.
ThumbdVipsStep thumbd_job_animation(ThumbdJob *job);

// How the opened job renders: *band = 0 directly, else through the intermediate of *band (*own: made for this
// job alone, never shared). Depends only on the params and the header. THUMBD_VIPS_STEP_REGION (with
// result->error_detail) when the crop misses the picture.
ThumbdVipsStep thumbd_job_plan(ThumbdJob *job, const int *bands, int band_count, double margin, int *band, int *own);

// Makes the intermediate of the opened job's source for `band`: shrink-on-load and decode (fail_on=error: a
// damaged source fails here with THUMBD_VIPS_STEP_DECODE), EXIF-upright, 8-bit, metadata kept aside.
// *out (transfer full) on success, else NULL.
ThumbdVipsStep thumbd_job_make_intermediate(ThumbdJob *job, int band, ThumbdVipsIntermediate **out);

// Renders the job from `intermediate` (transfer none, only read; may be in use by other threads), which stands for
// the source from here on: the job's source fields are set from it.
ThumbdVipsStep thumbd_job_from_intermediate(ThumbdJob *job, const ThumbdVipsIntermediate *intermediate);

// Whether the opened job answers the source's own bytes instead of rendering: params->pass_through, or the source's
// format listed in params->skip_formats.
int thumbd_job_passes_through(const ThumbdJob *job);

// The source's own bytes as the result (a g_malloc'ed copy, its format and sizes the header's), after the frame
// limits of a source of several frames (the header's pixel limit is thumbd_job_open's): FRAME_LIMIT or PIXEL_LIMIT.
ThumbdVipsStep thumbd_job_pass_through(ThumbdJob *job);
