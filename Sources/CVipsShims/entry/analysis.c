// SPDX-License-Identifier: Apache-2.0
// Layer 7, the entry points of a source's analysis (see CVipsShims.h): the intermediate of a band made without a
// render (the one a render of the same source and band makes, so that a cache can share it), and its grey pixels
// and sizes for the detectors.
#include <math.h>
#include <string.h>

#include "../internal/jobs.h"

ThumbdVipsStep thumbd_vips_make_intermediate(const void *buffer, size_t length, uint32_t allowed_sources,
                                             int64_t max_source_pixels, int band, ThumbdVipsIntermediate **out,
                                             ThumbdVipsThumbnailResult *result) {
    *out = NULL;
    // The params of a plan that shares its intermediate: the header checks a render makes (allowed formats, pixel
    // limit), the source's profile converted to sRGB (keep_icc off), EXIF orientation applied by the intermediate
    // itself. Nothing else in them is read while an intermediate is made.
    ThumbdVipsThumbnailParams params;
    memset(&params, 0, sizeof(params));
    params.allowed_sources = allowed_sources;
    params.max_source_pixels = max_source_pixels;
    params.auto_orient = 1;
    ThumbdJob job;  // borrows params (this frame's), buffer and result for the call
    thumbd_job_init(&job, &params, result);
    ThumbdVipsStep step = thumbd_job_open(&job, buffer, length);
    if (step == THUMBD_VIPS_STEP_OK && band <= 0) {
        vips_error("thumbd", "no intermediate for band %d", band);
        step = thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result);
    }
    if (step == THUMBD_VIPS_STEP_OK) step = thumbd_job_make_intermediate(&job, band, out);
    thumbd_job_release(&job);
    return step;
}

// The grey band of `image` (transfer none), lazy, its temporaries in `t` (8 slots); NULL with libvips's error.
static VipsImage *grey_of(VipsImage *image, VipsImage **t) {
    // Grey, perhaps with alpha: the first band as it is.
    if (image->Bands < 3) return vips_extract_band(image, &t[0], 0, NULL) ? NULL : t[0];
    // Pillow's convert("L") (rgb2l): (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16, exact in integers (the sums
    // stay below 2^24, exact in libvips's float); alpha ignored. As steps/greyscale.c's Pillow mode.
    double weights[3] = {19595, 38470, 7471};
    t[1] = vips_image_new_matrix_from_array(3, 1, weights, 3);
    if (!t[1] || vips_extract_band(image, &t[2], 0, "n", 3, NULL) || vips_recomb(t[2], &t[3], t[1], NULL) ||
        vips_linear1(t[3], &t[4], 1, 32768, NULL) || vips_cast_uint(t[4], &t[5], NULL) ||
        vips_rshift_const1(t[5], &t[6], 16, NULL) || vips_cast_uchar(t[6], &t[7], NULL))
        return NULL;
    return t[7];
}

ThumbdVipsStep thumbd_vips_intermediate_grey(const ThumbdVipsIntermediate *intermediate, ThumbdVipsGrey *grey) {
    memset(grey, 0, sizeof(*grey));
    VipsImage *image = intermediate->image;  // 8-bit, in memory, read-only: only new images are made from it
    grey->width = image->Xsize;
    grey->height = image->Ysize;
    grey->upright_width = intermediate->upright_width;
    grey->upright_height = intermediate->upright_height;
    VipsObject *scope = thumbd_scope_new();
    VipsImage *out = grey_of(image, (VipsImage **)vips_object_local_array(scope, 8));
    size_t length = 0;
    if (out) grey->pixels = vips_image_write_to_memory(out, &length);
    g_object_unref(scope);
    if (!grey->pixels) {
        grey->error_detail = vips_error_buffer_copy();
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_vips_intermediate_pixels(const ThumbdVipsIntermediate *intermediate, ThumbdVipsDecoded *pixels) {
    memset(pixels, 0, sizeof(*pixels));
    VipsImage *image = intermediate->image;
    pixels->format = intermediate->source_format;
    pixels->width = image->Xsize;
    pixels->height = image->Ysize;
    pixels->page_height = image->Ysize;
    pixels->bands = image->Bands;
    pixels->pages = 1;
    pixels->loop = -1;
    pixels->pixels = vips_image_write_to_memory(image, &pixels->length);
    if (!pixels->pixels) {
        pixels->error_detail = vips_error_buffer_copy();
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    return THUMBD_VIPS_STEP_OK;
}

// MARK: - The per-source analysis

// The grey band of `image` (8-bit, 1 to 4 bands) in memory (transfer full), as grey_of makes it (Pillow's
// convert("L"): the same integer formula, alpha ignored), in one pass of plain C: libvips's five operations took
// about 5 ms on a 512 x 512 intermediate, this takes a tenth of that, and the analysis runs on every new source.
// NULL with libvips's error.
static VipsImage *grey_in_memory(VipsImage *image) {
    VipsImage *source = vips_image_copy_memory(image);  // a new reference: an intermediate is in memory already
    if (!source) return NULL;
    int width = source->Xsize, height = source->Ysize, bands = source->Bands;
    unsigned char *grey = g_malloc((size_t)width * (size_t)height);
    for (int y = 0; y < height; y++) {
        const unsigned char *p = VIPS_IMAGE_ADDR(source, 0, y);
        unsigned char *q = grey + (size_t)y * (size_t)width;
        if (bands < 3)
            for (int x = 0; x < width; x++) q[x] = p[x * bands];
        else
            for (int x = 0; x < width; x++, p += bands)
                q[x] = (unsigned char)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
    }
    g_object_unref(source);
    VipsImage *out = vips_image_new_from_memory_copy(grey, (size_t)width * (size_t)height, width, height, 1,
                                                     VIPS_FORMAT_UCHAR);
    g_free(grey);
    return out;
}

// `grey` (an in-memory grey band, transfer none) resized to exactly width x height, squashed, into *out (transfer
// full), as Pillow's resize(LANCZOS) does: one Lanczos-3 over the whole ratio on each axis (thumbd's resampler,
// which is that filter); an intermediate smaller than the copy (a source of a few pixels) is enlarged by libvips's
// Lanczos-3 instead. -1 with libvips's error.
static int grey_copy(VipsImage *grey, int width, int height, VipsImage **out) {
    *out = NULL;
    if (thumbd_resample_fits(grey, width, height)) return thumbd_resample(grey, out, width, height);
    if (vips_resize(grey, out, (double)width / grey->Xsize, "vscale", (double)height / grey->Ysize, "kernel",
                    VIPS_KERNEL_LANCZOS3, NULL))
        return -1;
    if ((*out)->Xsize == width && (*out)->Ysize == height) return 0;
    vips_error("thumbd", "analysis: %dx%d grey copy came out %dx%d", width, height, (*out)->Xsize, (*out)->Ysize);
    g_object_unref(*out);
    *out = NULL;
    return -1;
}

// What the analysers read: a miniature fitting this. Every analyser costs a pass (or one per component) over its
// pixels: on a 64 px miniature ThumbHash took 1.7 M instructions a source, BlurHash 0.9 M, libimagequant 2.6 M; on
// 32 px a quarter of that. An opaque picture's is a box average (by the whole factor that fits it) of what the
// analysis reads, one pass of plain C; one with alpha goes through a premultiplied Lanczos-3 to MINIATURE_SIDE, then is
// halved by 2 x 2 boxes. Boxes, not a Lanczos-3 to 32 px, which rang at the edges of flat areas (a picture of four
// flat quadrants got colours of their own there). The oracles' distances stay within their bounds
// (Tests/ThumbnailingTests/AnalysisOracleTests.swift).
#define ANALYSED_SIDE 32

// The longer side of the Lanczos-3 miniature of a picture with alpha, which box halving then takes to ANALYSED_SIDE.
#define MINIATURE_SIDE 64

// What the analysis reads of a larger intermediate: it box-averaged by a whole factor to at least this longer side,
// in one pass of plain C, so the Lanczos-3 resamples below cover a few taps instead of dozens (a full-ratio Lanczos
// from 512 px was most of the analysis's instructions; libvips's vips_shrink cost more than it saved, 193 M against
// 175 M instructions a miss).
#define ANALYSIS_SIDE 128

// `image` (8-bit, in memory) averaged over factor x factor boxes (the last partial row and column of boxes dropped),
// as a new in-memory image (transfer full); NULL with libvips's error.
static VipsImage *box_average(VipsImage *image, int factor) {
    VipsImage *source = vips_image_copy_memory(image);  // a new reference: an intermediate is in memory already
    if (!source) return NULL;
    int width = source->Xsize / factor, height = source->Ysize / factor, bands = source->Bands;
    size_t row = (size_t)width * (size_t)bands;         // bytes of an output row
    size_t span = row * (size_t)factor;                 // bytes of the input row it reads
    unsigned char *out = g_malloc(row * (size_t)height);
    unsigned short *columns = g_malloc(span * sizeof(unsigned short));  // at most 255 x factor (factor <= 128)
    unsigned int area = (unsigned int)(factor * factor);
    for (int y = 0; y < height; y++) {
        // The box's rows summed element by element first (a loop the compiler vectorises), then each box's columns.
        const unsigned char *first = VIPS_IMAGE_ADDR(source, 0, y * factor);
        for (size_t i = 0; i < span; i++) columns[i] = first[i];
        for (int dy = 1; dy < factor; dy++) {
            const unsigned char *p = VIPS_IMAGE_ADDR(source, 0, y * factor + dy);
            for (size_t i = 0; i < span; i++) columns[i] += p[i];
        }
        unsigned char *q = out + (size_t)y * row;
        for (int x = 0; x < width; x++) {
            const unsigned short *box = columns + (size_t)x * (size_t)factor * (size_t)bands;
            for (int b = 0; b < bands; b++) {
                unsigned int sum = 0;
                for (int dx = 0; dx < factor; dx++) sum += box[dx * bands + b];
                q[(size_t)x * bands + b] = (unsigned char)((sum + area / 2) / area);
            }
        }
    }
    g_free(columns);
    VipsImage *result = vips_image_new_from_memory_copy(out, row * (size_t)height, width, height, bands,
                                                        VIPS_FORMAT_UCHAR);
    g_free(out);
    if (result) result->Type = source->Type;
    g_object_unref(source);
    return result;
}

// The miniature of `image` (8-bit, 1 to 4 bands), its aspect kept, never enlarged (transfer none: one of `t`'s 12
// slots, or `image`), RGB or RGBA; NULL with libvips's error. An opaque picture is box-averaged to fit ANALYSED_SIDE
// and stays RGB (rgba_in_memory adds its alpha: 1.3 M instructions a source in vips_bandjoin_const1); one with alpha
// is premultiplied while libvips resizes it to fit MINIATURE_SIDE, so the colour of transparent pixels does not bleed
// into their neighbours.
static VipsImage *miniature_of(VipsImage *image, VipsImage **t) {
    int longest = VIPS_MAX(image->Xsize, image->Ysize);
    int width = image->Xsize, height = image->Ysize;
    if (longest > MINIATURE_SIDE) {
        width = VIPS_MAX(1, (int)lround(image->Xsize * (double)MINIATURE_SIDE / longest));
        height = VIPS_MAX(1, (int)lround(image->Ysize * (double)MINIATURE_SIDE / longest));
    }
    int alpha = vips_image_hasalpha(image);
    VipsImage *rgb;
    if (image->Bands == 3) {
        rgb = image;  // in memory already: extracting its three bands would copy every pixel once more
    } else if (image->Bands > 3) {
        if (vips_extract_band(image, &t[0], 0, "n", 3, NULL)) return NULL;
        rgb = t[0];
    } else {
        // Grey: its band three times (sRGB's grey is R = G = B).
        if (vips_extract_band(image, &t[0], 0, NULL)) return NULL;
        VipsImage *same[3] = {t[0], t[0], t[0]};
        if (vips_bandjoin(same, &t[1], 3, NULL)) return NULL;
        rgb = t[1];
    }
    if (!alpha) {
        int factor = (longest + ANALYSED_SIDE - 1) / ANALYSED_SIDE;
        if (factor < 2) return rgb;
        return (t[2] = box_average(rgb, factor)) ? t[2] : NULL;
    }
    if (vips_extract_band(image, &t[4], image->Bands - 1, NULL)) return NULL;
    VipsImage *both[2] = {rgb, t[4]};
    if (vips_bandjoin(both, &t[5], 2, NULL)) return NULL;
    if (width == image->Xsize && height == image->Ysize) return t[5];
    if (vips_premultiply(t[5], &t[6], NULL) ||
        vips_resize(t[6], &t[7], (double)width / image->Xsize, "vscale", (double)height / image->Ysize, "kernel",
                    VIPS_KERNEL_LANCZOS3, NULL) ||
        vips_unpremultiply(t[7], &t[8], NULL) || vips_cast_uchar(t[8], &t[9], NULL))
        return NULL;
    return t[9];
}

// `miniature` (8-bit RGB or RGBA) as RGBA pixels in memory (transfer full, g_free), RGB given alpha 255 in the same
// pass that copies it out (vips_bandjoin_const1 cost about as much as the resample before it: 1.3 M instructions a
// source); NULL with libvips's error.
static unsigned char *rgba_in_memory(VipsImage *miniature) {
    size_t length = 0;
    unsigned char *pixels = vips_image_write_to_memory(miniature, &length);
    if (!pixels || miniature->Bands == 4) return pixels;
    size_t count = (size_t)miniature->Xsize * (size_t)miniature->Ysize;
    unsigned char *rgba = g_malloc(count * 4);
    for (size_t i = 0; i < count; i++) {
        rgba[4 * i] = pixels[3 * i];
        rgba[4 * i + 1] = pixels[3 * i + 1];
        rgba[4 * i + 2] = pixels[3 * i + 2];
        rgba[4 * i + 3] = 255;
    }
    g_free(pixels);
    return rgba;
}

// `rgba` (width x height) averaged over 2 x 2 boxes (an odd last row or column dropped), the colours weighted by
// their alpha (a transparent pixel's colour counts for nothing), into a new buffer (transfer full, g_free).
static unsigned char *rgba_halved(const unsigned char *rgba, int width, int height) {
    int w = width / 2, h = height / 2;
    unsigned char *out = g_malloc((size_t)w * (size_t)h * 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned int sums[3] = {0, 0, 0}, alpha = 0;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    const unsigned char *p = rgba + ((size_t)(2 * y + dy) * (size_t)width + (size_t)(2 * x + dx)) * 4;
                    for (int b = 0; b < 3; b++) sums[b] += p[b] * (unsigned int)p[3];
                    alpha += p[3];
                }
            unsigned char *q = out + ((size_t)y * (size_t)w + (size_t)x) * 4;
            for (int b = 0; b < 3; b++) q[b] = alpha ? (unsigned char)((sums[b] + alpha / 2) / alpha) : 0;
            q[3] = (unsigned char)((alpha + 2) / 4);
        }
    return out;
}

ThumbdVipsStep thumbd_vips_intermediate_analysis(const ThumbdVipsIntermediate *intermediate, int palette_colours,
                                                 ThumbdVipsAnalysisPixels *out) {
    memset(out, 0, sizeof(*out));
    VipsImage *image = intermediate->image;  // 8-bit, in memory, read-only: only new images are made from it
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 32);
    int failed = 1;
    do {
        // Transparency: the smallest alpha of the whole intermediate (not the miniature, which would average a
        // single transparent pixel away).
        if (vips_image_hasalpha(image)) {
            double smallest = 255;
            if (vips_extract_band(image, &t[0], image->Bands - 1, NULL) || vips_min(t[0], &smallest, NULL)) break;
            out->has_transparency = smallest < 255;
        }
        // (Not with alpha: a plain box average would bleed the colour of transparent pixels into their neighbours;
        // the miniature premultiplies instead.)
        int factor = VIPS_MAX(image->Xsize, image->Ysize) / ANALYSIS_SIDE;
        if (factor >= 2 && !vips_image_hasalpha(image)) {
            if (!(t[24] = box_average(image, factor))) break;
            image = t[24];
        }
        // The grey copies, from one grey picture computed once (both read it whole).
        if (!(t[9] = grey_in_memory(image))) break;
        if (grey_copy(t[9], 32, 32, &t[10]) || grey_copy(t[9], 9, 8, &t[11])) break;
        size_t length = 0;
        if (!(out->phash_grey = vips_image_write_to_memory(t[10], &length)) ||
            !(out->dhash_grey = vips_image_write_to_memory(t[11], &length)))
            break;
        VipsImage *miniature = miniature_of(image, &t[12]);  // t[12...23]
        if (!miniature || !(out->rgba = rgba_in_memory(miniature))) break;
        out->miniature_width = miniature->Xsize;
        out->miniature_height = miniature->Ysize;
        while (VIPS_MAX(out->miniature_width, out->miniature_height) > ANALYSED_SIDE &&
               VIPS_MIN(out->miniature_width, out->miniature_height) >= 2) {
            unsigned char *halved = rgba_halved(out->rgba, out->miniature_width, out->miniature_height);
            g_free(out->rgba);
            out->rgba = halved;
            out->miniature_width /= 2;
            out->miniature_height /= 2;
        }
        if (thumbd_quantize_palette(out->rgba, out->miniature_width, out->miniature_height, palette_colours,
                                    &out->palette, &out->palette_count))
            break;
        failed = 0;
    } while (0);
    g_object_unref(scope);
    if (failed) {
        out->error_detail = vips_error_buffer_copy();
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}
