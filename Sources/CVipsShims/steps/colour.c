// SPDX-License-Identifier: Apache-2.0
// Step: animation frames stay in colour (GIF and WebP frames are RGB): a grey frame is widened back to sRGB.
#include "../internal/steps.h"

int thumbd_wants_colour(const ThumbdJob *job) { return job->animated; }

ThumbdVipsStep thumbd_step_colour(ThumbdJob *job, VipsImage **image) {
    (void)job;
    if ((*image)->Bands >= 3) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    if (vips_colourspace(*image, &t[0], VIPS_INTERPRETATION_sRGB, NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}
