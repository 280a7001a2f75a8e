// SPDX-License-Identifier: Apache-2.0
// Step: the lazy steps before it (those marked lazy in the pipeline's table: effects and canvases) computed once,
// into memory, rather than again by the alpha scan, the flatten and the encoder. Frames skip it: they are
// computed once when they are joined.
#include "../internal/steps.h"

int thumbd_wants_memory(const ThumbdJob *job) { return job->lazy && !job->animated; }

ThumbdVipsStep thumbd_step_memory(ThumbdJob *job, VipsImage **image) {
    VipsImage *computed = vips_image_copy_memory(*image);
    if (!computed) return THUMBD_VIPS_STEP_THUMBNAIL;
    g_object_unref(*image);
    *image = computed;
    job->lazy = 0;
    return THUMBD_VIPS_STEP_OK;
}
