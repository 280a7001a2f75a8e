// SPDX-License-Identifier: Apache-2.0
// Step: 8-bit sRGB or grey. vips_thumbnail and the intermediates already give 8-bit pixels; this is a guard for
// odd inputs, and costs nothing otherwise.
#include "../internal/steps.h"

int thumbd_wants_uchar(const ThumbdJob *job) {
    (void)job;
    return 1;  // decided by the image, not the plan
}

ThumbdVipsStep thumbd_step_uchar(ThumbdJob *job, VipsImage **image) {
    (void)job;
    VipsImage *in = *image;
    if (in->BandFmt == VIPS_FORMAT_UCHAR) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    VipsInterpretation space = in->Bands < 3 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
    if (vips_colourspace(in, &t[0], space, NULL)) return thumbd_scope_failed(scope);
    in = t[0];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    return thumbd_scope_keep(scope, image, in);
}
