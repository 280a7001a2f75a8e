// SPDX-License-Identifier: Apache-2.0
// Layer 1, geometry: boxes, fits, regions, orientations and canvases as plain arithmetic. No libvips, no
// images: every function here is pure (same arguments, same answer), so the render paths (direct, from an
// intermediate, animated) compute the same numbers from the same header. Includes only the public types.
#pragma once

#include <stdint.h>

#include "CVipsShims.h"

#define THUMBD_MIN(a, b) ((a) < (b) ? (a) : (b))
#define THUMBD_MAX(a, b) ((a) > (b) ? (a) : (b))
#define THUMBD_CLIP(low, x, high) THUMBD_MAX((low), THUMBD_MIN((x), (high)))

// vips_thumbnail's "no bound on this side": the maximum of its width/height arguments (VIPS_MAX_COORD).
#define THUMBD_UNBOUNDED 10000000

// A bit of ThumbdBox.thumbor beside p's THUMBD_VIPS_ROUNDING_* values, set by the job (thumbd_job_box): the
// region the box is made from is thumbor's crop (thumbd_thumbor_crop_region), which the box then fills exactly.
#define THUMBD_ROUNDING_THUMBOR_REGION (1 << 16)

// A rotation (clockwise: 0, 90, 180 or 270) followed, when `mirror` is set, by a left-right mirror. Every
// orientation of a picture (the eight EXIF ones, and those after a plan's rotate and flips) is one of these.
typedef struct ThumbdOrientation {
    int rotate;
    int mirror;
} ThumbdOrientation;

// A rectangle with fractional edges, in the coordinates of whatever image it describes.
typedef struct ThumbdRect {
    double left, top, width, height;
} ThumbdRect;

// The box a plan fits into, as the steps after the resize read it: the request's, or (settled) with an AUTO
// fit made COVER or CONTAIN and an adaptive box turned for the picture it is applied to.
typedef struct ThumbdBox {
    ThumbdVipsFit fit;
    int width;
    int height;
    int enlarge;
    int adaptive;
    int original_sides;  // params' original_sides: 1 width, 2 height (0 once settled)
    double scale;        // params' output_scale (0 once settled)
    int min_width;       // params' min_width, min_height (kept when settled: thumbd_resize_target applies them)
    int min_height;
    double dpr_limit;    // params' dpr_limit (0 once settled)
    int thumbor;         // params' thumbor_rounding (0 once settled)
} ThumbdBox;

// How vips_thumbnail may change the size: libvips's VipsSize, spelled here so that geometry needs no libvips.
typedef enum ThumbdSizeMode {
    THUMBD_SIZE_BOTH = 0,
    THUMBD_SIZE_DOWN = 2,
    THUMBD_SIZE_FORCE = 3,
} ThumbdSizeMode;

// The box vips_thumbnail gets (in stored orientation once the caller has swapped it).
typedef struct ThumbdResizeTarget {
    int width;
    int height;
    ThumbdSizeMode size;
} ThumbdResizeTarget;

// The edges a compass gravity places against (none on an axis: centred on it).
typedef struct ThumbdCompass {
    int west, east, north, south;
} ThumbdCompass;

// MARK: - Orientation

// The orientation that makes a picture stored with EXIF orientation `exif` upright (1 or unknown: none).
ThumbdOrientation thumbd_orientation_from_exif(int exif);
// `first`, then `second`.
ThumbdOrientation thumbd_orientation_then(ThumbdOrientation first, ThumbdOrientation second);
// What undoes `o`.
ThumbdOrientation thumbd_orientation_inverse(ThumbdOrientation o);
// The whole orientation a job applies to the stored picture: EXIF (when p->auto_orient), then p's rotate/mirror.
ThumbdOrientation thumbd_orientation_of_plan(const ThumbdVipsThumbnailParams *p, int exif);
// Non-zero when `o` swaps width and height.
int thumbd_orientation_swaps(ThumbdOrientation o);
// The rectangle `r` of a picture turned by `o` (width x height once turned), in the picture as stored.
ThumbdRect thumbd_stored_rect(ThumbdRect r, ThumbdOrientation o, double width, double height);

// MARK: - Box and fit

// The box as Swift sent it in p.
ThumbdBox thumbd_box_of_params(const ThumbdVipsThumbnailParams *p);
// The box for a picture of width x height: its sides traded when box.adaptive and the orientations differ.
void thumbd_adapted_box(ThumbdBox box, int width, int height, int *box_width, int *box_height);
// The fit for a picture of width x height: box's, with AUTO made COVER or CONTAIN by the orientations.
ThumbdVipsFit thumbd_effective_fit(ThumbdBox box, int width, int height);
// The box settled for a picture of width x height: its original sides made the picture's (at most the box's),
// effective fit, adapted sides, adaptive off (settling again changes nothing).
ThumbdBox thumbd_box_settled(ThumbdBox box, int width, int height);
// What to ask vips_thumbnail for, given the upright source size. The result is in upright space.
ThumbdResizeTarget thumbd_resize_target(ThumbdBox box, int upright_width, int upright_height);
// How much the box scales a picture (or region) of width x height, per axis.
void thumbd_box_scale(ThumbdBox box, int width, int height, double *hscale, double *vscale);
// Pixels of the output canvas for a resized picture of width x height: the box when padding to it, plus p's
// padding.
int64_t thumbd_canvas_pixels(const ThumbdVipsThumbnailParams *p, ThumbdBox box, int width, int height);

// MARK: - Regions

// p's crop region inside `frame` (the picture, trimmed), in the frame's coordinates, where kx, ky are those
// coordinates per source pixel; `picture` is the untrimmed picture in the same coordinates (what a crop measured
// before the trim is placed in). Returns 1 when something is left, 0 when the region misses the frame.
int thumbd_crop_rect(const ThumbdVipsThumbnailParams *p, ThumbdRect picture, ThumbdRect frame, double kx, double ky,
                     ThumbdRect *out);
// A THUMBD_VIPS_CROP_PLACED crop resolved in `frame` (the picture, trimmed, in coordinates of kx, ky per source
// pixel; `picture` untrimmed): its size and place in whole source pixels as imgproxy computes them, inside the
// frame (with crop_before_trim: placed in `picture`, the frame when it misses it; thumbd_crop_rect cuts it).
ThumbdRect thumbd_placed_crop(const ThumbdVipsThumbnailParams *p, ThumbdRect picture, ThumbdRect frame, double kx,
                              double ky);
// The whole pixels a cut of `r` takes from a width x height image: at least one, inside the image, as many as
// r's size rounded (so a cut sized for the box is never a pixel larger).
void thumbd_pixel_rect(ThumbdRect r, int width, int height, int *left, int *top, int *cut_width, int *cut_height);
// A size in whole pixels, at least 1 (rint, as every path rounds region sizes).
int thumbd_whole(double size);
// thumbor 7.8's crop mode (its transformer's auto_crop) on a width x height picture for a box_width x
// box_height box: the part it keeps, in whole pixels of the picture, centred on (focal_x, focal_y) (pixels of the
// picture) as far as the picture allows, which thumbor then resizes to the box, each axis by its own scale. The
// whole picture when the two aspects agree to two decimals.
ThumbdRect thumbd_thumbor_crop_region(int width, int height, int box_width, int box_height, double focal_x,
                                      double focal_y);

// MARK: - Placement

ThumbdCompass thumbd_compass(ThumbdVipsGravity g);
// Where a span `free_space` smaller than its room starts: against the low edge, the high edge, or centred.
int thumbd_place(int free_space, int gravity_low, int gravity_high);
// The offset that centres `length` on `centre` (a fraction of `total`) without leaving the picture.
int thumbd_focal_offset(int total, int length, double centre);

// MARK: - Intermediates

// The scale an intermediate in `band` has relative to the upright source (never above 1: size=down).
double thumbd_band_scale(int band, int width, int height);
// The largest shrink-on-load factor (1, 2, 4 or 8) that still leaves `band` pixels on the longest side of a
// width x height source and never exceeds its shortest side.
int thumbd_load_shrink(int width, int height, int band);
