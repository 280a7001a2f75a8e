// SPDX-License-Identifier: Apache-2.0
// Layer 7, the entry point of a render (see CVipsShims.h, thumbd_vips_render): one job, one header read, and
// the only place that chooses between the pass-through, animation, direct and intermediate jobs.
#include <string.h>

#include "../internal/jobs.h"

// The opened job, rendered the way its params and header say.
static ThumbdVipsStep render(ThumbdJob *job, const int *bands, int band_count, double margin,
                             ThumbdVipsIntermediateCallback intermediate, void *context) {
    // Nothing to render: the source's own bytes, its header checked (before any intermediate is asked for).
    if (thumbd_job_passes_through(job)) return thumbd_job_pass_through(job);
    // Every frame of an animation is rendered from the source in one pass; intermediates hold one frame.
    if (thumbd_job_renders_animation(job)) return thumbd_job_animation(job);
    int band = 0, own = 0;
    ThumbdVipsStep step = thumbd_job_plan(job, bands, band_count, margin, &band, &own);
    if (step != THUMBD_VIPS_STEP_OK) return step;
    if (band == 0) return thumbd_job_direct(job);
    // (transfer none) the callback's: kept alive by it until this call returns.
    const ThumbdVipsIntermediate *made = NULL;
    step = intermediate ? intermediate(context, job, band, own, &made) : THUMBD_VIPS_STEP_THUMBNAIL;
    if (step == THUMBD_VIPS_STEP_OK && !made) step = THUMBD_VIPS_STEP_THUMBNAIL;
    if (step != THUMBD_VIPS_STEP_OK) {
        vips_error("thumbd", "no intermediate for band %d", band);
        return thumbd_fail(NULL, step, job->result);
    }
    return thumbd_job_from_intermediate(job, made);
}

ThumbdVipsStep thumbd_vips_render(const void *buffer, size_t length, ThumbdVipsThumbnailParams params,
                                  const int *bands, int band_count, double margin,
                                  ThumbdVipsIntermediateCallback intermediate, void *context,
                                  ThumbdVipsThumbnailResult *result) {
    ThumbdJob job;  // borrows params (this frame's copy), buffer and result for the call
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    if (step == THUMBD_VIPS_STEP_OK) step = render(&job, bands, band_count, margin, intermediate, context);
    thumbd_job_release(&job);
    return step;
}

ThumbdVipsStep thumbd_vips_job_make_intermediate(ThumbdVipsJob *job, int band, ThumbdVipsIntermediate **out,
                                                 ThumbdVipsThumbnailResult *result) {
    // The caller's own result for this step (its failure is the callback's to report), with the source fields
    // the render has read; the render's result is put back after.
    ThumbdVipsThumbnailResult *render_result = job->result;
    memset(result, 0, sizeof(*result));
    result->source_format = render_result->source_format;
    result->source_width = render_result->source_width;
    result->source_height = render_result->source_height;
    result->source_frames = render_result->source_frames;
    result->loader = render_result->loader;
    job->result = result;
    ThumbdVipsStep step = thumbd_job_make_intermediate(job, band, out);
    job->result = render_result;
    return step;
}
