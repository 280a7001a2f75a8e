// SPDX-License-Identifier: Apache-2.0
// Layer 2, codecs: Lanczos-3 downscaling of 8-bit pixels held in memory (see internal/codecs.h, thumbd_resample).
//
// libvips 8.14's reduce runs its taps in scalar C here (liborc is off: entry/init.c), and it was the largest
// single cost of a render: about a third of the CPU of the peers' ZIPF run. This does the same filter as two
// passes of whole-line weighted sums, which the compiler vectorises (an AVX2 clone is picked at load time
// where the CPU has it): 512 x 341 -> 256 x 170 took 0.8 ms against vips_resize's 3.4 ms, and 1280 x 852 ->
// 512 x 341 3.3 ms against 15 ms, with outputs within 0.1 of 255 levels on average (max 2) of libvips's.
// Each output pixel is the Lanczos-3 sum over the whole ratio (no box-filter step first), with the edges
// copied, in 14-bit fixed point.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../internal/codecs.h"

#define FRACTION_BITS 14
#define CHUNK 32

// x86-64's baseline is SSE2; an AVX2 clone of the hot loops doubles their width where the CPU has it (picked
// once, at load time). Other architectures (arm64: NEON is baseline) compile them once.
#if defined(__x86_64__)
#define THUMBD_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define THUMBD_VECTOR_CLONES
#endif

// Per output line: the first source line it reads and its `taps` weights (summing to 1 << FRACTION_BITS).
typedef struct {
    int out, taps;
    int *start;
    int16_t *weights;
} Kernel;

static double lanczos3(double x) {
    if (x == 0) return 1;
    if (x <= -3 || x >= 3) return 0;
    double third = M_PI * x / 3, s = sin(third);
    // sin(3a) = 3 sin(a) - 4 sin(a)^3: one sin() per tap.
    return 3 * (3 * s - 4 * s * s * s) * s / (9 * third * third);
}

static void kernel_free(Kernel *k) {
    free(k->start);
    free(k->weights);
    k->start = NULL;
    k->weights = NULL;
}

static int kernel_make(int in, int out, Kernel *k) {
    double scale = (double)in / out, stretch = VIPS_MAX(scale, 1.0), support = 3 * stretch;
    int full = 2 * (int)ceil(support) + 1;
    int taps = VIPS_MIN(full, in);
    k->out = out;
    k->taps = taps;
    k->start = malloc(sizeof(int) * out);
    k->weights = malloc(sizeof(int16_t) * (size_t)out * taps);
    double *f = malloc(sizeof(double) * taps);
    if (!k->start || !k->weights || !f) {
        free(f);
        kernel_free(k);
        return -1;
    }
    for (int o = 0; o < out; o++) {
        // Pixel centres line up: output o covers source [o * scale, (o + 1) * scale).
        double centre = (o + 0.5) * scale - 0.5;
        int left = (int)floor(centre - support) + 1;
        int start = VIPS_CLIP(0, left, in - taps);
        memset(f, 0, sizeof(double) * taps);
        double sum = 0;
        for (int j = left; j < left + full; j++) {
            double v = lanczos3((j - centre) / stretch);
            f[VIPS_CLIP(0, j, in - 1) - start] += v;  // beyond an edge: the edge pixel again
            sum += v;
        }
        int total = 0, largest = 0;
        int16_t *w = k->weights + (size_t)o * taps;
        for (int t = 0; t < taps; t++) {
            w[t] = (int16_t)lrint(f[t] / sum * (1 << FRACTION_BITS));
            total += w[t];
            if (fabs(f[t]) > fabs(f[largest])) largest = t;
        }
        w[largest] += (int16_t)((1 << FRACTION_BITS) - total);  // rounding: the weights sum to exactly one
        k->start[o] = start;
    }
    free(f);
    return 0;
}

static inline uint8_t round_clip(int32_t v) {
    v = (v + (1 << (FRACTION_BITS - 1))) >> FRACTION_BITS;
    return (uint8_t)VIPS_CLIP(0, v, 255);
}

// sums[i] = sum over t of w[t] * row[t * stride + i], for i < length. Chunked so the sums stay in registers.
THUMBD_VECTOR_CLONES static void accumulate(const uint8_t *row, size_t stride, int length, const int16_t *w,
                                            int taps, int32_t *sums) {
    int i = 0;
    for (; i + CHUNK <= length; i += CHUNK) {
        int32_t a[CHUNK] = {0};
        for (int t = 0; t < taps; t++) {
            const uint8_t *r = row + (size_t)t * stride + i;
            int32_t weight = w[t];
            for (int j = 0; j < CHUNK; j++) a[j] += weight * r[j];
        }
        memcpy(sums + i, a, sizeof(a));
    }
    for (; i < length; i++) {
        int32_t a = 0;
        for (int t = 0; t < taps; t++) a += w[t] * row[(size_t)t * stride + i];
        sums[i] = a;
    }
}

THUMBD_VECTOR_CLONES static void round_line(const int32_t *sums, int length, uint8_t *line) {
    for (int i = 0; i < length; i++) line[i] = round_clip(sums[i]);
}

// Output lines computed before they are written out turned: BLOCK consecutive lines make BLOCK x bands
// contiguous bytes in each destination line, instead of scattering single pixels across cache lines.
#define BLOCK 8

// One pass: output line o of `k` is the weighted sum of its source lines (each `pixels` x `bands` bytes,
// `stride` apart), written turned: its pixel x goes to line x of dst, at column o. `lines` holds BLOCK lines.
static void pass(const uint8_t *src, size_t stride, int pixels, int bands, const Kernel *k, uint8_t *dst,
                 size_t dst_stride, int32_t *sums, uint8_t *lines) {
    size_t length = (size_t)pixels * bands;
    for (int first = 0; first < k->out; first += BLOCK) {
        int count = VIPS_MIN(BLOCK, k->out - first);
        for (int b = 0; b < count; b++) {
            int o = first + b;
            accumulate(src + (size_t)k->start[o] * stride, stride, (int)length, k->weights + (size_t)o * k->taps,
                       k->taps, sums);
            round_line(sums, (int)length, lines + b * length);
        }
        uint8_t *d = dst + (size_t)first * bands;
        if (bands == 3) {
            for (int x = 0; x < pixels; x++, d += dst_stride) {
                const uint8_t *from = lines + (size_t)x * 3;
                for (int b = 0; b < count; b++, from += length) {
                    d[3 * b] = from[0];
                    d[3 * b + 1] = from[1];
                    d[3 * b + 2] = from[2];
                }
            }
        } else {
            for (int x = 0; x < pixels; x++, d += dst_stride) {
                const uint8_t *from = lines + x;
                for (int b = 0; b < count; b++, from += length) d[b] = *from;
            }
        }
    }
}

int thumbd_resample_fits(VipsImage *image, int width, int height) {
    return image->BandFmt == VIPS_FORMAT_UCHAR && (image->Bands == 1 || image->Bands == 3) &&
           image->Type != VIPS_INTERPRETATION_CMYK && !vips_image_hasalpha(image) && width >= 1 && height >= 1 &&
           width <= image->Xsize && height <= image->Ysize;
}

int thumbd_resample(VipsImage *in, VipsImage **out, int width, int height) {
    *out = NULL;
    if (!thumbd_resample_fits(in, width, height)) {
        vips_error("thumbd", "resample: %dx%d from %dx%d with %d bands is not a downscale of 8-bit pixels", width,
                   height, in->Xsize, in->Ysize, in->Bands);
        return -1;
    }
    VipsImage *source = vips_image_copy_memory(in);  // only a new reference when `in` is in memory already
    if (!source) return -1;
    if (width == source->Xsize && height == source->Ysize) {
        // Lanczos at a ratio of one is the identity (every tap but the centre is at a zero of the kernel). A
        // copy of the header only: the caller may change its metadata, and `in` may be a shared intermediate.
        int failed = vips_copy(source, out, NULL);
        g_object_unref(source);
        return failed ? -1 : 0;
    }
    int bands = source->Bands, in_width = source->Xsize, in_height = source->Ysize;
    int longest_line = VIPS_MAX(in_width, height) * bands;
    Kernel rows = {0}, columns = {0};
    uint8_t *turned = NULL, *lines = NULL;
    int32_t *sums = NULL;
    VipsImage *result = vips_image_new_memory();
    if (kernel_make(in_height, height, &rows) || kernel_make(in_width, width, &columns)) goto failed;
    turned = malloc((size_t)in_width * height * bands);
    sums = malloc(sizeof(int32_t) * longest_line);
    lines = malloc((size_t)BLOCK * longest_line);
    if (!turned || !sums || !lines) goto failed;
    // Same header and metadata as the source, new size, pixels in memory.
    if (vips_image_pipelinev(result, VIPS_DEMAND_STYLE_ANY, source, NULL)) goto failed;
    result->Xsize = width;
    result->Ysize = height;
    if (vips_image_write_prepare(result)) goto failed;
    // Vertically first (each output row a weighted sum of source rows), written turned (one line per source
    // column); then the same pass over those lines resamples horizontally and turns the picture back upright.
    // Both passes sum whole lines, which is what vectorises.
    pass(VIPS_IMAGE_ADDR(source, 0, 0), VIPS_IMAGE_SIZEOF_LINE(source), in_width, bands, &rows, turned,
         (size_t)height * bands, sums, lines);
    pass(turned, (size_t)height * bands, height, bands, &columns, VIPS_IMAGE_ADDR(result, 0, 0),
         VIPS_IMAGE_SIZEOF_LINE(result), sums, lines);
    *out = result;
    result = NULL;

done:
    // Both ways out: the scratch buffers and our reference to the source go; `result` is NULL on success.
    free(turned);
    free(sums);
    free(lines);
    kernel_free(&rows);
    kernel_free(&columns);
    g_object_unref(source);
    if (!result) return 0;
    g_object_unref(result);
    return -1;

failed:
    vips_error("thumbd", "resample: out of memory or no image for %dx%d", width, height);
    goto done;
}
