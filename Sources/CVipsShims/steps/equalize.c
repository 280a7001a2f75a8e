// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's equalize: each colour band mapped through its own cumulative histogram,
//   out = (cdf[v] - cdf_min) / (pixels - cdf_min) * 255, truncated,
// with thumbor's cdf_min: the bands' first non-zero cumulative counts are looked for together, and the look stops
// at the first level where any band has one, so the other bands keep 0 (a quirk kept on purpose: the pictures
// match thumbor's). A band of one level (pixels == cdf_min) becomes 0, as thumbor's 0/0 does on x86. An alpha band
// passes unchanged.
#include "../internal/steps.h"

int thumbd_wants_equalize(const ThumbdJob *job) { return job->params->equalize != 0; }

ThumbdVipsStep thumbd_step_equalize(ThumbdJob *job, VipsImage **image) {
    (void)job;
    VipsImage *in = *image;
    int colour = vips_image_hasalpha(in) ? in->Bands - 1 : in->Bands;
    if (colour > 3) colour = 3;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 8);
    // Read twice (the histogram, then the mapping): computed once, into memory.
    if (!(t[6] = vips_image_copy_memory(in))) return thumbd_scope_failed(scope);
    in = t[6];
    VipsImage *bands = in;
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[0], 0, "n", colour, NULL)) return thumbd_scope_failed(scope);
        bands = t[0];
    }
    // hist_find: a 256 x 1 image of uint counts, one band per colour band.
    if (vips_hist_find(bands, &t[1], NULL) || vips_image_wio_input(t[1])) return thumbd_scope_failed(scope);
    const unsigned int *counts = (const unsigned int *)VIPS_IMAGE_ADDR(t[1], 0, 0);
    double pixels = (double)in->Xsize * in->Ysize;
    unsigned int cumulative[3][256];
    unsigned int sum[3] = {0, 0, 0};
    for (int level = 0; level < 256; level++) {
        for (int b = 0; b < colour; b++) {
            unsigned int count = counts[level * colour + b];
            sum[b] += count;
            cumulative[b][level] = count > 0 ? sum[b] : 0;
        }
    }
    unsigned int minimum[3] = {0, 0, 0};
    for (int level = 0; level < 256 && minimum[0] == 0 && minimum[1] == 0 && minimum[2] == 0; level++)
        for (int b = 0; b < colour; b++)
            if (minimum[b] == 0 && cumulative[b][level] != 0) minimum[b] = cumulative[b][level];
    unsigned char lut[256 * 3];
    for (int level = 0; level < 256; level++) {
        for (int b = 0; b < colour; b++) {
            double range = pixels - minimum[b];
            double value = range > 0 ? ((double)cumulative[b][level] - minimum[b]) / range * 255.0 : 0;
            lut[level * colour + b] = (unsigned char)VIPS_CLIP(0, (int)value, 255);
        }
    }
    t[2] = vips_image_new_from_memory_copy(lut, (size_t)256 * colour, 256, 1, colour, VIPS_FORMAT_UCHAR);
    if (!t[2] || vips_maplut(bands, &t[3], t[2], NULL)) return thumbd_scope_failed(scope);
    VipsImage *out = t[3];
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[4], colour, "n", in->Bands - colour, NULL) || vips_bandjoin2(out, t[4], &t[5], NULL))
            return thumbd_scope_failed(scope);
        out = t[5];
    }
    return thumbd_scope_keep(scope, image, out);
}
