// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's colorize: each colour band moved toward the colour by its percentage,
//   out = in * (100 - p) / 100 + colour * p / 100, truncated and clamped to 0...255 (libvips's uchar linear),
// an alpha band unchanged. A grey picture becomes sRGB first.
#include "../internal/steps.h"

int thumbd_wants_colorize(const ThumbdJob *job) { return job->params->colorize != 0; }

ThumbdVipsStep thumbd_step_colorize(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsImage *in = *image;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    int bands = in->Bands;
    double multipliers[4] = {1, 1, 1, 1}, offsets[4] = {0, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        multipliers[i] = (100.0 - p->colorize_percent[i]) / 100.0;
        offsets[i] = p->colorize_colour[i] * p->colorize_percent[i] / 100.0;
    }
    if (vips_linear(in, &t[1], multipliers, offsets, VIPS_MIN(bands, 4), "uchar", TRUE, NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[1]);
}
