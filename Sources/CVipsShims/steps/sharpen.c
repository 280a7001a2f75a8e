// SPDX-License-Identifier: Apache-2.0
// Step: sharpen (libvips's unsharp mask in LabS, with the given sigma), back to 8 bits.
#include "../internal/steps.h"

int thumbd_wants_sharpen(const ThumbdJob *job) { return job->params->sharpen_sigma > 0; }

ThumbdVipsStep thumbd_step_sharpen(ThumbdJob *job, VipsImage **image) {
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    if (vips_sharpen(*image, &t[0], "sigma", job->params->sharpen_sigma, NULL)) return thumbd_scope_failed(scope);
    VipsImage *in = t[0];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    return thumbd_scope_keep(scope, image, in);
}
