// SPDX-License-Identifier: Apache-2.0
// Steps: saturation (chroma scaled in LCh: lightness and hue stay; or, saturation_model 1, thumbor's: each band's
// distance from the HSP brightness scaled), then brightness and contrast (contrast pivots
// on mid-grey, brightness is added: out = c * (in - 128) + 128 + b). Two rows of the table, because only the first
// is worth computing once (lazy); contrast and brightness apart for a plan that orders its filters.
#include <math.h>

#include "../internal/steps.h"

int thumbd_wants_saturation(const ThumbdJob *job) { return job->params->saturation != 1; }

// thumbor's saturation (ext/filters/_saturation.c), in its arithmetic: p = sqrt(r² × 0.299 + g² × 0.587 +
// b² × 0.114) in double kept as a float, each band p + (band − p) × factor in float, truncated toward zero and
// clamped. A grey picture is its one band three times (as thumbor's RGB copy of it is): it stays one band.
static ThumbdVipsStep thumbd_saturation_hsp(float factor, VipsImage **image) {
    VipsImage *in = *image;
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        vips_error("thumbd", "saturation: the picture is not 8-bit");
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    size_t length = 0;
    unsigned char *pixels = vips_image_write_to_memory(in, &length);
    if (!pixels) return THUMBD_VIPS_STEP_THUMBNAIL;
    int bands = in->Bands, colour = bands >= 3 ? 3 : 1;
    size_t count = (size_t)in->Xsize * (size_t)in->Ysize;
    for (size_t i = 0; i < count; i++) {
        unsigned char *pixel = pixels + i * (size_t)bands;
        int r = pixel[0], g = pixel[colour == 3 ? 1 : 0], b = pixel[colour == 3 ? 2 : 0];
        float p = (float)sqrt(r * r * 0.299 + g * g * 0.587 + b * b * 0.114);
        for (int band = 0; band < colour; band++) {
            float moved = p + ((float)pixel[band] - p) * factor;
            int level = (int)moved;
            pixel[band] = (unsigned char)(level > 255 ? 255 : level < 0 ? 0 : level);
        }
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    t[0] = vips_image_new_from_memory_copy(pixels, length, in->Xsize, in->Ysize, bands, VIPS_FORMAT_UCHAR);
    g_free(pixels);
    if (!t[0] || vips_copy(t[0], &t[1], "interpretation", in->Type, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[1]);
}

ThumbdVipsStep thumbd_step_saturation(ThumbdJob *job, VipsImage **image) {
    VipsImage *in = *image;
    if (job->params->saturation_model == 1) return thumbd_saturation_hsp((float)job->params->saturation, image);
    if (in->Bands < 3) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_LCH, NULL)) return thumbd_scope_failed(scope);
    double multipliers[4] = {1, job->params->saturation, 1, 1}, offsets[4] = {0, 0, 0, 0};
    if (vips_linear(t[0], &t[1], multipliers, offsets, VIPS_MIN(t[0]->Bands, 4), NULL) ||
        vips_colourspace(t[1], &t[2], VIPS_INTERPRETATION_sRGB, NULL))
        return thumbd_scope_failed(scope);
    in = t[2];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[3], NULL)) return thumbd_scope_failed(scope);
        in = t[3];
    }
    return thumbd_scope_keep(scope, image, in);
}

int thumbd_wants_tone(const ThumbdJob *job) { return job->params->contrast != 1 || job->params->brightness != 0; }

// out = c * in + offset on the colour bands, clamped to 8 bits; an alpha band passes unchanged.
static ThumbdVipsStep linear_colour(VipsImage **image, double c, double offset) {
    VipsImage *in = *image;
    int bands = in->Bands;
    int colour = vips_image_hasalpha(in) ? bands - 1 : bands;
    double multipliers[4] = {1, 1, 1, 1}, offsets[4] = {0, 0, 0, 0};
    for (int i = 0; i < colour && i < 3; i++) {
        multipliers[i] = c;
        offsets[i] = offset;
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    if (vips_linear(in, &t[0], multipliers, offsets, VIPS_MIN(bands, 4), "uchar", TRUE, NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}

ThumbdVipsStep thumbd_step_tone(ThumbdJob *job, VipsImage **image) {
    double c = job->params->contrast;
    return linear_colour(image, c, 128 * (1 - c) + job->params->brightness);
}

// The two halves of the tone row, for a plan that runs its filters in its own order (pipeline.c): each clamps to
// 8 bits before the next filter, as thumbor's filters do.
int thumbd_wants_contrast(const ThumbdJob *job) { return job->params->contrast != 1; }

ThumbdVipsStep thumbd_step_contrast(ThumbdJob *job, VipsImage **image) {
    double c = job->params->contrast;
    return linear_colour(image, c, 128 * (1 - c));
}

int thumbd_wants_brightness(const ThumbdJob *job) { return job->params->brightness != 0; }

ThumbdVipsStep thumbd_step_brightness(ThumbdJob *job, VipsImage **image) {
    return linear_colour(image, 1, job->params->brightness);
}
