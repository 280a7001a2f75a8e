// SPDX-License-Identifier: Apache-2.0
// Layer 2, codecs: the encoders (encode/), thumbd's Lanczos-3 resampler (resample/) and the palette quantizer
// (quantize/, libimagequant). They take a finished libvips image (or its pixels) and know nothing of jobs, steps or
// plans beyond the encoder settings in the params.
#pragma once

#include <vips/vips.h>

#include "CVipsShims.h"

// Non-zero when `format`'s writer takes a picture of width x height. Only an outside fit makes a side longer than
// the box (a 1 x 20000 source is 1 x 20000 in any box): a side the format cannot hold is a CANVAS_LIMIT (the
// request asks for more than the output can be), not an encoder failure.
int thumbd_format_holds(ThumbdVipsFormat format, int width, int height);

// Encodes `image` (transfer none) as `format` with p's encoder settings into result->data / length
// (g_malloc'ed, transfer full to the result), searching lower qualities for p->max_bytes; sets
// result->quality. `strip`: the savers write no metadata (nothing kept). 0 on success, -1 on failure.
int thumbd_vips_encode(VipsImage *image, ThumbdVipsFormat format, const ThumbdVipsThumbnailParams *p, int strip,
                       ThumbdVipsThumbnailResult *result);

// Lanczos-3 downscaling done by thumbd (resample/lanczos3.c): non-zero when `image` is something it takes
// (8-bit, one or three bands, no alpha, not CMYK) and width x height is no larger on either axis.
int thumbd_resample_fits(VipsImage *image, int width, int height);
// Resizes `in` (transfer none; computed into memory first when it is lazy) to exactly width x height into a
// new in-memory image *out (transfer full) with in's metadata; at in's own size, *out is a new image over in's
// pixels (a header copy, private to the caller). -1 with libvips's error set when it does not fit.
int thumbd_resample(VipsImage *in, VipsImage **out, int width, int height);

// A palette of at most `colours` (2...256) colours for width x height RGBA pixels (`rgba`, transfer none, rows
// packed) by libimagequant (quantize/palette.c), each with the alpha-weighted count of the pixels remapped to it
// without dithering (a pixel counts alpha / 255). *palette (transfer full: g_free) has *count entries. 0 on success,
// -1 with libvips's error set to libimagequant's.
int thumbd_quantize_palette(const unsigned char *rgba, int width, int height, int colours,
                            ThumbdVipsPaletteColour **palette, int *count);
