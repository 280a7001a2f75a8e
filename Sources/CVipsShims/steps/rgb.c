// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's rgb: levels added to the red, green and blue bands, clamped to 0...255; an alpha band passes
// unchanged. A grey picture becomes sRGB first unless the three levels are equal.
#include "../internal/steps.h"

int thumbd_wants_rgb(const ThumbdJob *job) {
    const int *shift = job->params->rgb_shift;
    return shift[0] != 0 || shift[1] != 0 || shift[2] != 0;
}

ThumbdVipsStep thumbd_step_rgb(ThumbdJob *job, VipsImage **image) {
    const int *shift = job->params->rgb_shift;
    VipsImage *in = *image;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    if (in->Bands < 3 && !(shift[0] == shift[1] && shift[1] == shift[2])) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    int bands = in->Bands;
    int colour = vips_image_hasalpha(in) ? bands - 1 : bands;
    double multipliers[4] = {1, 1, 1, 1}, offsets[4] = {0, 0, 0, 0};
    for (int i = 0; i < colour && i < 3; i++) offsets[i] = shift[colour == 1 ? 0 : i];
    if (vips_linear(in, &t[1], multipliers, offsets, VIPS_MIN(bands, 4), "uchar", TRUE, NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[1]);
}
