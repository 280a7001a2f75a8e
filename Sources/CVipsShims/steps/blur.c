// SPDX-License-Identifier: Apache-2.0
// Step: Gaussian blur, premultiplied when there is alpha (colour hidden under transparent pixels must not bleed
// into the visible ones).
#include <math.h>

#include "../internal/steps.h"

// A Gaussian blur whose cost does not grow with sigma beyond 10: a Gaussian's cost is the pixels times its
// mask (about 6 sigma), and sigma 100 over a 4096 x 4096 output took 47 s of one core. Above 10, the image is
// first averaged in blocks of ceil(sigma / 10), blurred there with the rest of sigma, and resized back: the
// block average is itself a blur, and what is left has no detail the smaller grid cannot hold.
// *out (transfer full); in is borrowed.
static int gaussian(VipsImage *in, VipsImage **out, double sigma) {
    int width = in->Xsize, height = in->Ysize;
    int factor = (int)ceil(sigma / 10);
    factor = VIPS_MIN(factor, VIPS_MAX(1, VIPS_MIN(width, height) / 4));
    if (factor <= 1) return vips_gaussblur(in, out, sigma, NULL);
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    int failed = vips_shrink(in, &t[0], (double)factor, (double)factor, NULL) ||
                 vips_gaussblur(t[0], &t[1], sigma / factor, NULL) ||
                 vips_resize(t[1], &t[2], (double)width / t[1]->Xsize, "vscale", (double)height / t[1]->Ysize,
                             NULL) ||
                 thumbd_fit_to(t[2], out, width, height);
    g_object_unref(scope);
    return failed ? -1 : 0;
}

int thumbd_wants_blur(const ThumbdJob *job) { return job->params->blur_sigma > 0; }

ThumbdVipsStep thumbd_step_blur(ThumbdJob *job, VipsImage **image) {
    return thumbd_blur_image(image, job->params->blur_sigma);
}

ThumbdVipsStep thumbd_blur_image(VipsImage **image, double sigma) {
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    VipsImage *in = *image;
    if (vips_image_hasalpha(in)) {
        if (vips_premultiply(in, &t[0], NULL) || gaussian(t[0], &t[1], sigma) ||
            vips_unpremultiply(t[1], &t[2], NULL) || vips_cast_uchar(t[2], &t[3], NULL))
            return thumbd_scope_failed(scope);
        return thumbd_scope_keep(scope, image, t[3]);
    }
    if (gaussian(in, &t[0], sigma)) return thumbd_scope_failed(scope);
    in = t[0];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    return thumbd_scope_keep(scope, image, in);
}
