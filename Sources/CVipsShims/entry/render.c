// SPDX-License-Identifier: Apache-2.0
// Layer 7, entry points of a render (see CVipsShims.h): each opens one job, lets the jobs layer render it, and
// releases what the job owns. The only files that choose between the direct, animation and intermediate jobs.
#include "../internal/jobs.h"

ThumbdVipsStep thumbd_vips_thumbnail(const void *buffer, size_t length, ThumbdVipsThumbnailParams params,
                                     ThumbdVipsThumbnailResult *result) {
    ThumbdJob job;
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    if (step == THUMBD_VIPS_STEP_OK) {
        step = thumbd_job_renders_animation(&job) ? thumbd_job_animation(&job) : thumbd_job_direct(&job);
    }
    thumbd_job_release(&job);
    return step;
}

ThumbdVipsStep thumbd_vips_plan(const void *buffer, size_t length, ThumbdVipsThumbnailParams params,
                                const int *bands, int band_count, double margin, int *band, int *own,
                                ThumbdVipsThumbnailResult *result) {
    *band = 0;
    *own = 0;
    ThumbdJob job;
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    // Every frame of an animation is rendered from the source in one pass; intermediates hold one frame.
    if (step == THUMBD_VIPS_STEP_OK && !thumbd_job_renders_animation(&job)) {
        step = thumbd_job_plan(&job, bands, band_count, margin, band, own);
    }
    if (step == THUMBD_VIPS_STEP_OK) vips_error_clear();
    thumbd_job_release(&job);
    return step;
}

ThumbdVipsStep thumbd_vips_intermediate_new(const void *buffer, size_t length, ThumbdVipsThumbnailParams params,
                                            int band, ThumbdVipsIntermediate **out,
                                            ThumbdVipsThumbnailResult *result) {
    *out = NULL;
    ThumbdJob job;
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    if (step == THUMBD_VIPS_STEP_OK) step = thumbd_job_make_intermediate(&job, band, out);
    thumbd_job_release(&job);
    return step;
}

ThumbdVipsStep thumbd_vips_thumbnail_from_intermediate(const ThumbdVipsIntermediate *intermediate,
                                                       ThumbdVipsThumbnailParams params,
                                                       ThumbdVipsThumbnailResult *result) {
    ThumbdJob job;
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_from_intermediate(&job, intermediate);
    thumbd_job_release(&job);
    return step;
}
