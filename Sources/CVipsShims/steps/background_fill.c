// SPDX-License-Identifier: Apache-2.0
// Step: a background taken from the picture itself (thumbor's `fill(auto)` and `fill(blur)`), before the pad step.
// THUMBD_VIPS_BACKGROUND_AUTO: the background colour is the mean of the red, green and blue bands over every pixel
// of the resized picture (alpha ignored, so transparent pixels count with their colour), each truncated, opaque; the
// pad and flatten steps then use it as they use `background`. THUMBD_VIPS_BACKGROUND_BLUR: the canvas THUMBD_VIPS_
// FIT_PAD (or `extend`) adds is the picture blurred (a Gaussian of sigma 50 cut at one sigma, each band on its own, edges
// repeated) and stretched to the box, the picture laid on it by gravity, its pixels replacing the canvas's.
#include <math.h>

#include "../internal/steps.h"

int thumbd_wants_background_fill(const ThumbdJob *job) {
    int fill = job->params->background_fill;
    return fill == THUMBD_VIPS_BACKGROUND_AUTO ||
           (fill == THUMBD_VIPS_BACKGROUND_BLUR && (job->box.fit == THUMBD_VIPS_FIT_PAD || job->params->extend));
}

static ThumbdVipsStep mean_colour(ThumbdJob *job, VipsImage *in) {
    VipsImage *stats = NULL;
    if (vips_stats(in, &stats, NULL)) return THUMBD_VIPS_STEP_THUMBNAIL;
    // Row 0 is every band together, row 1 + b band b; column 4 is the mean.
    int colour_bands = in->Bands >= 3 ? 3 : 1;
    for (int i = 0; i < 3; i++) {
        double mean = *VIPS_MATRIX(stats, 4, 1 + (colour_bands == 3 ? i : 0));
        job->fill_colour[i] = floor(mean);
    }
    job->fill_colour[3] = 255;
    job->has_fill_colour = 1;
    g_object_unref(stats);
    return THUMBD_VIPS_STEP_OK;
}

// The blurred copy is made on the picture shrunk by up to 5 (sigma 10 and more there): the mask's cost grows with
// sigma, and a block average is itself a blur far narrower than this one.
static ThumbdVipsStep blurred_canvas(ThumbdJob *job, VipsImage **image) {
    VipsImage *in = *image;
    int width, height;
    thumbd_pad_canvas(job, in->Xsize, in->Ysize, &width, &height);
    if (width == in->Xsize && height == in->Ysize) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 9);
    // sRGB with alpha: the picture as if pasted on a transparent canvas of its size.
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    if (!vips_image_hasalpha(in)) {
        if (vips_addalpha(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[2], NULL)) return thumbd_scope_failed(scope);
        in = t[2];
    }
    int factor = VIPS_MAX(1, VIPS_MIN(5, VIPS_MIN(in->Xsize, in->Ysize) / 4));
    VipsImage *small = in;
    if (factor > 1) {
        if (vips_shrink(in, &t[3], (double)factor, (double)factor, NULL)) return thumbd_scope_failed(scope);
        small = t[3];
    }
    // min_ampl e^-1/2: the mask ends one sigma from its centre, as thumbor's blur(50) does (radius = sigma = 50).
    if (vips_gaussblur(small, &t[4], 50.0 / factor, "min_ampl", exp(-0.5) - 0.01, "precision", VIPS_PRECISION_FLOAT,
                       NULL) ||
        vips_resize(t[4], &t[5], (double)width / t[4]->Xsize, "vscale", (double)height / t[4]->Ysize, NULL) ||
        thumbd_fit_to(t[5], &t[6], width, height) || vips_cast_uchar(t[6], &t[7], NULL))
        return thumbd_scope_failed(scope);
    ThumbdCompass c = thumbd_compass(job->params->gravity);
    int left = thumbd_place(width - in->Xsize, c.west, c.east);
    int top = thumbd_place(height - in->Ysize, c.north, c.south);
    if (vips_insert(t[7], in, &t[8], left, top, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[8]);
}

ThumbdVipsStep thumbd_step_background_fill(ThumbdJob *job, VipsImage **image) {
    if (job->params->background_fill == THUMBD_VIPS_BACKGROUND_AUTO) return mean_colour(job, *image);
    return blurred_canvas(job, image);
}
