// SPDX-License-Identifier: Apache-2.0
// Step: grey (an alpha band stays): libvips's B_W (greyscale 1), or Pillow's Rec. 601 luma (greyscale 2, thumbor's
// grayscale(): L = (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16, Pillow's rgb2l, exact in integers).
#include "../internal/steps.h"

int thumbd_wants_greyscale(const ThumbdJob *job) { return job->params->greyscale; }

static ThumbdVipsStep thumbd_grey_rec601(VipsImage **image) {
    VipsImage *in = *image;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 10);
    // The weights times 65536: the sums are whole numbers below 2^24, exact in libvips's float.
    double weights[3] = {19595, 38470, 7471};
    t[0] = vips_image_new_matrix_from_array(3, 1, weights, 3);
    if (!t[0] || vips_extract_band(in, &t[1], 0, "n", 3, NULL) || vips_recomb(t[1], &t[2], t[0], NULL) ||
        vips_linear1(t[2], &t[3], 1, 32768, NULL) || vips_cast_uint(t[3], &t[4], NULL) ||
        vips_rshift_const1(t[4], &t[5], 16, NULL) || vips_cast_uchar(t[5], &t[6], NULL))
        return thumbd_scope_failed(scope);
    VipsImage *out = t[6];
    if (in->Bands > 3) {
        if (vips_extract_band(in, &t[7], 3, "n", 1, NULL) || vips_bandjoin2(out, t[7], &t[8], NULL))
            return thumbd_scope_failed(scope);
        out = t[8];
    }
    if (vips_copy(out, &t[9], "interpretation", VIPS_INTERPRETATION_B_W, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[9]);
}

ThumbdVipsStep thumbd_step_greyscale(ThumbdJob *job, VipsImage **image) {
    if ((*image)->Bands < 3) return THUMBD_VIPS_STEP_OK;
    if (job->params->greyscale == 2) return thumbd_grey_rec601(image);
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    if (vips_colourspace(*image, &t[0], VIPS_INTERPRETATION_B_W, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}
