// SPDX-License-Identifier: Apache-2.0
// Step: grey (libvips's B_W; an alpha band stays).
#include "../internal/steps.h"

int thumbd_wants_greyscale(const ThumbdJob *job) { return job->params->greyscale; }

ThumbdVipsStep thumbd_step_greyscale(ThumbdJob *job, VipsImage **image) {
    (void)job;
    if ((*image)->Bands < 3) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    if (vips_colourspace(*image, &t[0], VIPS_INTERPRETATION_B_W, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}
