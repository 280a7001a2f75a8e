// SPDX-License-Identifier: Apache-2.0
// Layer 2, codecs: a picture's palette by libimagequant (see internal/codecs.h, thumbd_quantize_palette). Not libvips
// code: libvips links libimagequant for its PNG and GIF palettes but exposes no palette, so thumbd asks it directly
// (https://pngquant.org/lib/: attr -> image -> quantize -> remap).
#include <libimagequant.h>
#include <stdlib.h>

#include "../internal/codecs.h"

// Debian's libimagequant is built with OpenMP (libgomp): each call would start a team of threads as wide as the
// machine, on top of thumbd's render threads, which are the parallelism (as libvips runs with concurrency 1). One
// thread per calling thread, set through OpenMP's own call; declared weak and looked up at run time so that a
// libimagequant built without OpenMP (no libgomp loaded) still links and runs.
extern void omp_set_num_threads(int threads) __attribute__((weak));

int thumbd_quantize_palette(const unsigned char *rgba, int width, int height, int colours,
                            ThumbdVipsPaletteColour **palette, int *count) {
    *palette = NULL;
    *count = 0;
    size_t pixels = (size_t)width * (size_t)height;
    if (omp_set_num_threads) omp_set_num_threads(1);  // this thread's OpenMP setting: its later regions run on it
    liq_attr *attr = liq_attr_create();
    // The image borrows `rgba` until it is destroyed (below). Gamma 0: libimagequant's sRGB default.
    liq_image *image = attr ? liq_image_create_rgba(attr, rgba, width, height, 0) : NULL;
    liq_result *result = NULL;
    unsigned char *indices = malloc(pixels ? pixels : 1);
    liq_error error = LIQ_OUT_OF_MEMORY;
    if (image && indices && (error = liq_set_max_colors(attr, colours)) == LIQ_OK &&
        // Speed 10, the fastest: a palette of a 100 px miniature to describe it, not to encode it.
        (error = liq_set_speed(attr, 10)) == LIQ_OK && (error = liq_image_quantize(image, attr, &result)) == LIQ_OK &&
        // No dithering: each pixel goes to its nearest colour, so the counts say how much of the picture each is.
        (error = liq_set_dithering_level(result, 0)) == LIQ_OK &&
        (error = liq_write_remapped_image(result, image, indices, pixels)) == LIQ_OK) {
        const liq_palette *found = liq_get_palette(result);
        *palette = g_new0(ThumbdVipsPaletteColour, found->count ? found->count : 1);
        *count = (int)found->count;
        for (unsigned int i = 0; i < found->count; i++) {
            (*palette)[i].red = found->entries[i].r;
            (*palette)[i].green = found->entries[i].g;
            (*palette)[i].blue = found->entries[i].b;
            (*palette)[i].alpha = found->entries[i].a;
        }
        for (size_t i = 0; i < pixels; i++)
            if (indices[i] < found->count) (*palette)[indices[i]].weight += rgba[4 * i + 3] / 255.0;
    }
    free(indices);
    if (result) liq_result_destroy(result);
    if (image) liq_image_destroy(image);
    if (attr) liq_attr_destroy(attr);
    if (!*palette) {
        vips_error("thumbd", "libimagequant: error %d quantizing %dx%d pixels to %d colours", (int)error, width,
                   height, colours);
        return -1;
    }
    return 0;
}
