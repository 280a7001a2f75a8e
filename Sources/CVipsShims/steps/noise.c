// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's noise: for each pixel, row by row, one level  random() % amount - amount / 2  from glibc's
// generator seeded with noise_seed (random_r: the same sequence as srandom + random, without their global state),
// added to every colour band and clamped; an alpha band unchanged. Every frame of an animation gets the same
// levels, as thumbor's seeded noise does (it seeds again for each frame).
#include <stdlib.h>
#include <string.h>

#include "../internal/steps.h"

int thumbd_wants_noise(const ThumbdJob *job) { return job->params->noise_amount > 0; }

ThumbdVipsStep thumbd_step_noise(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsImage *in = *image;
    int width = in->Xsize, height = in->Ysize, amount = p->noise_amount;
    // glibc's default state: the 128-byte TYPE_3 generator that srandom seeds.
    char state[128];
    struct random_data generator;
    memset(state, 0, sizeof(state));
    memset(&generator, 0, sizeof(generator));
    if (initstate_r(p->noise_seed, state, sizeof(state), &generator)) {
        vips_error("thumbd", "noise: the generator could not start");
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    size_t count = (size_t)width * (size_t)height;
    short *levels = g_malloc(count * sizeof(short));
    for (size_t i = 0; i < count; i++) {
        int32_t value = 0;
        random_r(&generator, &value);
        levels[i] = (short)(value % amount - (amount >> 1));
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 7);
    t[0] = vips_image_new_from_memory_copy(levels, count * sizeof(short), width, height, 1, VIPS_FORMAT_SHORT);
    g_free(levels);
    if (!t[0]) return thumbd_scope_failed(scope);
    int colour = vips_image_hasalpha(in) ? in->Bands - 1 : in->Bands;
    VipsImage *bands = in;
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[1], 0, "n", colour, NULL)) return thumbd_scope_failed(scope);
        bands = t[1];
    }
    // (The sum takes the noise's interpretation: the picture's is put back.)
    if (vips_add(bands, t[0], &t[2], NULL) || vips_cast_uchar(t[2], &t[6], NULL) ||
        vips_copy(t[6], &t[3], "interpretation", bands->Type, NULL))
        return thumbd_scope_failed(scope);
    VipsImage *out = t[3];
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[4], colour, "n", in->Bands - colour, NULL) ||
            vips_bandjoin2(out, t[4], &t[5], NULL))
            return thumbd_scope_failed(scope);
        out = t[5];
    }
    return thumbd_scope_keep(scope, image, out);
}
