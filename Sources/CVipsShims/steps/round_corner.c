// SPDX-License-Identifier: Apache-2.0
// Step: round corners (thumbor's round_corner). A mask is 255 inside the rounded rectangle and falls to 0 outside
// an ellipse of rx by ry in each corner (4x4 samples a pixel at the edge, thumbor blends its edge pixel too). The
// colour bands become  in * m + colour * (1 - m)  (m = mask / 255); an alpha band is kept as it is when the colour
// is opaque (as thumbor leaves it), and multiplied by  m + (1 - m) * colour_alpha / 255  when it is not (an alpha
// band is added first). When the output cannot hold alpha (a still whose transparent format is JPEG), the colour
// is painted opaque: what thumbor's JPEG shows, whose alpha is dropped on save.
#include "../internal/steps.h"

int thumbd_wants_round_corner(const ThumbdJob *job) {
    return job->params->round_corner_x > 0 && job->params->round_corner_y > 0;
}

// The top-left corner's coverage, rx x ry bytes: 255 inside the ellipse centred on (rx, ry), 0 outside.
static VipsImage *corner_tile(int rx, int ry) {
    unsigned char *bytes = g_malloc((size_t)rx * (size_t)ry);
    const int samples = 4;
    for (int y = 0; y < ry; y++) {
        for (int x = 0; x < rx; x++) {
            int inside = 0;
            for (int sy = 0; sy < samples; sy++) {
                double dy = (y + (sy + 0.5) / samples - ry) / ry;
                for (int sx = 0; sx < samples; sx++) {
                    double dx = (x + (sx + 0.5) / samples - rx) / rx;
                    if (dx * dx + dy * dy <= 1) inside++;
                }
            }
            bytes[(size_t)y * rx + x] = (unsigned char)((inside * 255 + samples * samples / 2) / (samples * samples));
        }
    }
    VipsImage *tile = vips_image_new_from_memory_copy(bytes, (size_t)rx * (size_t)ry, rx, ry, 1, VIPS_FORMAT_UCHAR);
    g_free(bytes);
    return tile;
}

ThumbdVipsStep thumbd_step_round_corner(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsImage *in = *image;
    int width = in->Xsize, height = in->Ysize;
    int rx = VIPS_MIN(p->round_corner_x, width / 2), ry = VIPS_MIN(p->round_corner_y, height / 2);
    if (rx < 1 || ry < 1) return THUMBD_VIPS_STEP_OK;
    const double *colour = p->round_corner_colour;
    int keeps_alpha = job->animated || p->format_alpha != THUMBD_VIPS_FORMAT_JPEG;
    int transparent = colour[3] < 255 && keeps_alpha;
    int grey = colour[0] == colour[1] && colour[1] == colour[2];

    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 21);
    // Colour corners on a grey picture make it sRGB.
    if (in->Bands < 3 && !grey) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    int has_alpha = vips_image_hasalpha(in);
    int colour_bands = has_alpha ? in->Bands - 1 : in->Bands;

    // The mask: 255 everywhere, the four corner tiles (the top-left one, mirrored) inserted.
    t[1] = corner_tile(rx, ry);
    if (!t[1] || vips_black(&t[2], width, height, NULL) || vips_linear1(t[2], &t[3], 1, 255, "uchar", TRUE, NULL) ||
        vips_flip(t[1], &t[4], VIPS_DIRECTION_HORIZONTAL, NULL) || vips_flip(t[1], &t[5], VIPS_DIRECTION_VERTICAL, NULL) ||
        vips_flip(t[4], &t[6], VIPS_DIRECTION_VERTICAL, NULL) || vips_insert(t[3], t[1], &t[7], 0, 0, NULL) ||
        vips_insert(t[7], t[4], &t[8], width - rx, 0, NULL) || vips_insert(t[8], t[5], &t[9], 0, height - ry, NULL) ||
        vips_insert(t[9], t[6], &t[10], width - rx, height - ry, NULL) ||
        vips_linear1(t[10], &t[11], 1.0 / 255, 0, NULL))
        return thumbd_scope_failed(scope);
    VipsImage *m = t[11];

    // The colour bands: (in - colour) * m + colour.
    double minus[4], plus[4], ones[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++) {
        int band = colour_bands == 1 ? 0 : VIPS_MIN(i, 2);
        minus[i] = -colour[band];
        plus[i] = colour[band];
    }
    VipsImage *bands = in;
    if (has_alpha) {
        if (vips_extract_band(in, &t[12], 0, "n", colour_bands, NULL)) return thumbd_scope_failed(scope);
        bands = t[12];
    }
    if (vips_linear(bands, &t[13], ones, minus, VIPS_MIN(colour_bands, 4), NULL) || vips_multiply(t[13], m, &t[14], NULL) ||
        vips_linear(t[14], &t[15], ones, plus, VIPS_MIN(colour_bands, 4), "uchar", TRUE, NULL))
        return thumbd_scope_failed(scope);
    VipsImage *out = t[15];

    if (transparent) {
        // alpha * (m + (1 - m) * colour_alpha / 255) = alpha * (m * (1 - a) + a), a = colour_alpha / 255.
        double a = colour[3] / 255;
        if (vips_linear1(m, &t[16], 1 - a, a, NULL)) return thumbd_scope_failed(scope);
        if (has_alpha) {
            if (vips_extract_band(in, &t[17], in->Bands - 1, NULL) || vips_multiply(t[17], t[16], &t[18], NULL))
                return thumbd_scope_failed(scope);
        } else if (vips_linear1(t[16], &t[18], 255, 0, NULL)) {
            return thumbd_scope_failed(scope);
        }
        if (vips_linear1(t[18], &t[19], 1, 0, "uchar", TRUE, NULL) || vips_bandjoin2(out, t[19], &t[20], NULL))
            return thumbd_scope_failed(scope);
        out = t[20];
    } else if (has_alpha) {
        if (vips_extract_band(in, &t[16], in->Bands - 1, NULL) || vips_bandjoin2(out, t[16], &t[17], NULL))
            return thumbd_scope_failed(scope);
        out = t[17];
    }
    return thumbd_scope_keep(scope, image, out);
}
