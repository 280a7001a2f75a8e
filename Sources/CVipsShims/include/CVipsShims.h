// SPDX-License-Identifier: Apache-2.0
// One-call libvips jobs for thumbd. Swift cannot call libvips's variadic, NULL-terminated option lists
// (vips_thumbnail_buffer, vips_jpegsave_buffer, ...) nor the VIPS_INIT macro, so every such call lives in
// this target's C files, compiled with -Wall -Werror (which catches a missing NULL sentinel). They form layers
// (docs/architecture.md, scripts/check-c-layers.sh): geometry -> codecs -> job -> steps -> pipeline -> jobs ->
// entry points (entry/), which implement this header.
//
// This header deliberately includes no libvips or glib header: Swift sees only plain C types, so the
// Swift side never imports vips.h and every libvips object stays inside one C call.
//
// Threads: every function may be called from any thread after thumbd_vips_init() has returned, except
// thumbd_vips_init itself (once, before any other call). libvips keeps ONE process-wide error buffer, so
// error_detail strings may contain text from a concurrent job; they are for logs only. What failed is
// always the returned ThumbdVipsStep.
#pragma once

#include <stddef.h>
#include <stdint.h>

/// Image formats as thumbd names them. Values are bit positions in allowed_sources masks.
typedef enum ThumbdVipsFormat {
    THUMBD_VIPS_FORMAT_UNKNOWN = 0,
    THUMBD_VIPS_FORMAT_JPEG = 1,
    THUMBD_VIPS_FORMAT_PNG = 2,
    THUMBD_VIPS_FORMAT_WEBP = 3,
    THUMBD_VIPS_FORMAT_GIF = 4,
    THUMBD_VIPS_FORMAT_TIFF = 5,
    THUMBD_VIPS_FORMAT_HEIF = 6,
    THUMBD_VIPS_FORMAT_AVIF = 7,
    THUMBD_VIPS_FORMAT_JXL = 8,
} ThumbdVipsFormat;

/// How the picture is fitted into the width x height box.
typedef enum ThumbdVipsFit {
    THUMBD_VIPS_FIT_CONTAIN = 0,  // inside the box, aspect kept
    THUMBD_VIPS_FIT_COVER = 1,    // fills the box, aspect kept, overflow cropped by gravity
    THUMBD_VIPS_FIT_FILL = 2,     // exactly the box, aspect ignored
    THUMBD_VIPS_FIT_PAD = 3,      // inside the box like CONTAIN, then extended to exactly the box (background)
    THUMBD_VIPS_FIT_OUTSIDE = 4,  // covers the box, aspect kept, nothing cropped
    THUMBD_VIPS_FIT_AUTO = 5,     // COVER when picture and box are both landscape-or-square or both portrait, else CONTAIN
    THUMBD_VIPS_FIT_COVER_DOWN = 6,  // COVER; without enlarge, a box larger than the picture first shrinks, keeping its
                                     // aspect, until it fits inside (imgproxy's fill-down)
} ThumbdVipsFit;

/// Which part a cover crop keeps.
typedef enum ThumbdVipsGravity {
    THUMBD_VIPS_GRAVITY_CENTRE = 0,
    THUMBD_VIPS_GRAVITY_NORTH = 1,
    THUMBD_VIPS_GRAVITY_NORTH_EAST = 2,
    THUMBD_VIPS_GRAVITY_EAST = 3,
    THUMBD_VIPS_GRAVITY_SOUTH_EAST = 4,
    THUMBD_VIPS_GRAVITY_SOUTH = 5,
    THUMBD_VIPS_GRAVITY_SOUTH_WEST = 6,
    THUMBD_VIPS_GRAVITY_WEST = 7,
    THUMBD_VIPS_GRAVITY_NORTH_WEST = 8,
    THUMBD_VIPS_GRAVITY_ATTENTION = 9,  // vips_smartcrop VIPS_INTERESTING_ATTENTION
    THUMBD_VIPS_GRAVITY_ENTROPY = 10,   // vips_smartcrop VIPS_INTERESTING_ENTROPY
    THUMBD_VIPS_GRAVITY_FOCAL = 11,     // centred on (focal_x, focal_y), as far as the picture allows
} ThumbdVipsGravity;

/// How a crop region is given.
typedef enum ThumbdVipsCropUnit {
    THUMBD_VIPS_CROP_NONE = 0,
    THUMBD_VIPS_CROP_PIXELS = 1,     // source pixels, in the picture as oriented (after rotate and flip)
    THUMBD_VIPS_CROP_FRACTIONS = 2,  // fractions 0...1 of the oriented picture's width and height
    THUMBD_VIPS_CROP_PLACED = 3,     // crop_width x crop_height placed by crop_gravity, once the picture's size is known
    THUMBD_VIPS_CROP_UNTRIMMED = 4,  // source pixels of the picture before the trim: the part inside the trimmed
                                     // frame is kept, the whole frame when none is (thumbor's trim, then crop)
} ThumbdVipsCropUnit;

/// Which of a placed crop's values are fractions (bits of crop_fractions).
enum {
    THUMBD_VIPS_CROP_FRACTION_WIDTH = 1,
    THUMBD_VIPS_CROP_FRACTION_HEIGHT = 2,
    THUMBD_VIPS_CROP_FRACTION_LEFT = 4,
    THUMBD_VIPS_CROP_FRACTION_TOP = 8,
};

/// Which way the canvas is extended after the fit (bits of `extend`).
enum {
    THUMBD_VIPS_EXTEND_WIDTH = 1,   // to the box's width
    THUMBD_VIPS_EXTEND_HEIGHT = 2,  // to the box's height
    THUMBD_VIPS_EXTEND_ASPECT = 4,  // around the picture, to the box's aspect ratio
};

/// A background taken from the picture (background_fill).
enum {
    THUMBD_VIPS_BACKGROUND_AUTO = 1,  // the mean colour of the resized picture
    THUMBD_VIPS_BACKGROUND_BLUR = 2,  // the picture blurred and stretched under THUMBD_VIPS_FIT_PAD's canvas
};

/// The step of a job that failed; THUMBD_VIPS_STEP_OK on success. The step, not the error text, decides
/// how the failure is reported, because libvips's error buffer is shared by all threads.
typedef enum ThumbdVipsStep {
    THUMBD_VIPS_STEP_OK = 0,
    THUMBD_VIPS_STEP_UNRECOGNISED = 1,    // no libvips loader recognises the bytes
    THUMBD_VIPS_STEP_REFUSED_FORMAT = 2,  // recognised, but not an allowed source format
    THUMBD_VIPS_STEP_HEADER = 3,          // allowed loader, but the header could not be read
    THUMBD_VIPS_STEP_PIXEL_LIMIT = 4,     // width x height above max_source_pixels (nothing decoded)
    THUMBD_VIPS_STEP_THUMBNAIL = 5,       // building the resize pipeline, rotating or cropping
    THUMBD_VIPS_STEP_DECODE = 6,          // computing the pixels (decode + shrink): corrupt or truncated data
    THUMBD_VIPS_STEP_SAVE = 7,            // encoding the output
    THUMBD_VIPS_STEP_REGION = 8,          // the crop region lies outside the picture: nothing left to render
    THUMBD_VIPS_STEP_CANVAS_LIMIT = 9,    // the output canvas (box + padding, times frames) is above max_source_pixels,
                                          // or has a side longer than its format holds
    THUMBD_VIPS_STEP_FRAME_LIMIT = 10,    // an animation to render has more frames than max_frames (nothing decoded)
    THUMBD_VIPS_STEP_NOT_ANIMATABLE = 11, // the plan has a step that cannot run on an animation (trim)
    THUMBD_VIPS_STEP_WATERMARK = 12,      // the watermark image is not an allowed image, is damaged or too large
    THUMBD_VIPS_STEP_FRAME = 13,          // the frame is not an allowed image, is damaged, too small or too large,
                                          // or has no nine-patch stretch markers
} ThumbdVipsStep;

/// thumbor's watermark placement on one axis (watermark_place_kind): from the start (left/top) or the end
/// (right/bottom) edge in output pixels or in percent of the output's side (round(side * N / 100)), centred, or
/// repeated across it with thumbor's spread spacing.
typedef enum ThumbdVipsWatermarkPlace {
    THUMBD_VIPS_WM_START = 0,
    THUMBD_VIPS_WM_END = 1,
    THUMBD_VIPS_WM_START_PERCENT = 2,
    THUMBD_VIPS_WM_END_PERCENT = 3,
    THUMBD_VIPS_WM_CENTRE = 4,
    THUMBD_VIPS_WM_REPEAT = 5,
} ThumbdVipsWatermarkPlace;

/// How `redact` hides each box (ThumbdVipsThumbnailParams.redact_mode).
typedef enum ThumbdVipsRedactMode {
    THUMBD_VIPS_REDACT_NONE = 0,
    THUMBD_VIPS_REDACT_BLUR = 1,
    THUMBD_VIPS_REDACT_PIXELATE = 2,
    THUMBD_VIPS_REDACT_BOX = 3,  // the box's outline drawn, the inside left as it is
} ThumbdVipsRedactMode;

/// Most boxes one plan redacts (Swift merges any beyond into the last one, so none is left out).
#define THUMBD_VIPS_MAX_REDACT 32

/// A box to redact, in pixels of the turned, untrimmed picture.
typedef struct ThumbdVipsRedactBox {
    double x, y, width, height;
} ThumbdVipsRedactBox;

/// Most watermarks one plan lays over its output (thumbor's URLs may carry several `watermark()` filters).
#define THUMBD_VIPS_MAX_WATERMARKS 4

/// One watermark (steps/watermark.c): the encoded image (borrowed for the call; the same allowed formats and pixel
/// limit as a source), placed at `gravity` (a compass point) moved inward by the offsets, or tiled when `tile` (the
/// offsets then the space between the tiles); alpha multiplied by `opacity`; resized to `scale` x the output's
/// width when above 0.
typedef struct ThumbdVipsWatermark {
    const void *image;
    size_t length;
    ThumbdVipsGravity gravity;
    int tile;
    int x, y;
    /// Above 0: the offset on that axis is this fraction of the output's side (rounded half to even, as imgproxy
    /// rounds), in place of x or y.
    double x_fraction, y_fraction;
    double opacity;
    double scale;
    /// Above 0: the mark's height at most this fraction of the output's height (with `scale` too, the mark fits
    /// inside both; rounded as thumbor's h_ratio).
    double height_scale;
    /// Non-zero: thumbor's placement, axis by axis (x, then y), in place of the gravity, offsets and tile: each a
    /// THUMBD_VIPS_WM_* kind and its value (output pixels, or percent of the output's side).
    int place;
    int place_kind[2];
    int place_value[2];
    /// 0...100: 255 x fade / 100 (whole) subtracted from each of the mark's alpha values, before it is resized
    /// (thumbor's alpha); 0: none.
    int fade;
} ThumbdVipsWatermark;

/// The filters a plan may run in its own order (filter_order), by the step they run.
typedef enum ThumbdVipsFilter {
    THUMBD_VIPS_FILTER_NONE = 0,
    THUMBD_VIPS_FILTER_SATURATION,
    THUMBD_VIPS_FILTER_CONTRAST,
    THUMBD_VIPS_FILTER_BRIGHTNESS,
    THUMBD_VIPS_FILTER_GREYSCALE,
    THUMBD_VIPS_FILTER_BLUR,
    THUMBD_VIPS_FILTER_SHARPEN,
    THUMBD_VIPS_FILTER_PIXELATE,
    THUMBD_VIPS_FILTER_RGB,
    THUMBD_VIPS_FILTER_COLORIZE,
    THUMBD_VIPS_FILTER_CURVE,
    THUMBD_VIPS_FILTER_EQUALIZE,
    THUMBD_VIPS_FILTER_CONVOLUTION,
    THUMBD_VIPS_FILTER_NOISE,
} ThumbdVipsFilter;

/// Everything one thumbnail job needs, passed by value.
/// params.thumbor_rounding's mode (its low byte).
#define THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN 1
#define THUMBD_VIPS_ROUNDING_THUMBOR_CROP 2
#define THUMBD_VIPS_ROUNDING_THUMBOR_FULL_FIT_IN 3
#define THUMBD_VIPS_ROUNDING_NO_WIDTH (1 << 8)
#define THUMBD_VIPS_ROUNDING_NO_HEIGHT (1 << 9)

typedef struct ThumbdVipsThumbnailParams {
    /// The box, in output (upright) pixels, both >= 1. The caller substitutes its own bound for an omitted
    /// side and passes THUMBD_VIPS_FIT_CONTAIN in that case.
    int width;
    int height;
    ThumbdVipsFit fit;
    ThumbdVipsGravity gravity;  // used by THUMBD_VIPS_FIT_COVER only
    int enlarge;                // non-zero: may upscale; zero: never upscales an axis
    int adaptive;               // non-zero: the box's sides trade places when its orientation is not the picture's
    /// Bit 1: the box's width is the picture's (after orientation, trim and crop), at most `width`; bit 2: the
    /// same for the height (thumbor's `orig` beside a number). Resolved by thumbd_box_settled.
    int original_sides;
    /// Above 0 and below 1: the resized picture's sides times this, truncated (thumbor's `proportion`), decided by
    /// thumbd_box_settled from the size the box gives; otherwise nothing.
    double output_scale;
    /// Above 0: the scale the box gives is raised, if need be, until the resized picture's width (height) is at
    /// least this many output pixels, enlarging if it must whatever `enlarge` says (imgproxy's `mw`/`mh`); when
    /// both raise it, the one that raises it more is met exactly. Resolved by thumbd_resize_target.
    int min_width, min_height;
    /// Above 1, without `enlarge`: the plan's dpr, lowered (to 1 at least) until the box asks no more pixels of the
    /// picture than it has (imgproxy's dpr): the box is scaled by min(1, max(shrink, 1 / dpr_limit)), the shrink
    /// the fit gives (cover's and fill's the smaller of the sides', contain's and pad's the larger). Resolved by
    /// thumbd_box_settled.
    double dpr_limit;
    /// Non-zero: thumbor's size arithmetic (THUMBD_VIPS_ROUNDING_*): the box's missing side derived from the picture
    /// (rounded half to even), then fit-in's, full-fit-in's or the crop mode's own rounding; resolved by
    /// thumbd_box_settled. Bits 1 << 8 and 1 << 9: the width / the height was not given.
    int thumbor_rounding;
    /// Output format when the thumbnail has no transparent pixel / has one (JPEG, PNG, WEBP, AVIF, JXL or HEIF).
    ThumbdVipsFormat format_opaque;
    ThumbdVipsFormat format_alpha;
    int quality;           // 1...100, JPEG/WebP/AVIF/JXL/HEIC
    int jpeg_progressive;  // non-zero: interlaced JPEG
    int png_compression;   // 0...9 (zlib level)
    int webp_effort;       // 0...6
    int avif_effort;       // 0...9
    int jxl_effort;        // 3...9 (libvips 8.14's jxlsave refuses 1 and 2)
    uint32_t allowed_sources;    // bit (1 << ThumbdVipsFormat) set for each accepted source format
    int64_t max_source_pixels;   // width x height of the decoded page, checked before any decoding

    // The plan's steps around the resize, in the order they run (steps/, in the order of pipeline.c's table).
    // Zeroed fields do nothing, except auto_orient, contrast and saturation, whose neutral values are 1.
    /// Orientation: the EXIF orientation when auto_orient is non-zero, then `rotate` degrees clockwise
    /// (0, 90, 180 or 270), then a left-right mirror when `mirror` is non-zero. Boxes, crops and gravities
    /// are all in this oriented picture.
    int auto_orient;
    int rotate;
    int mirror;
    /// Trim: when non-zero, borders within trim_threshold (0...255) of the background are removed before
    /// the crop; the background is trim_colour when trim_has_colour, else the pixel in trim_corner.
    int trim;
    double trim_threshold;
    int trim_has_colour;
    double trim_colour[3];
    int trim_corner;            // without a colour, whose pixel: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right
    /// Non-zero: thumbor's measure (its _bounding_box.c) instead of vips_find_trim's: a pixel is background when
    /// its Euclidean distance to the reference over every band, alpha and the colour under it included, is at most
    /// trim_threshold (no median filter, no flattening); the reference colour given is opaque.
    int trim_euclidean;
    /// Crop region, before the resize, in the oriented (and trimmed) picture.
    ThumbdVipsCropUnit crop_unit;
    double crop_left, crop_top, crop_width, crop_height;
    /// THUMBD_VIPS_CROP_PLACED (imgproxy's `c:W:H:gravity:x:y`): crop_width, crop_height are source pixels, or
    /// fractions of the (trimmed) picture's side where crop_fractions has THUMBD_VIPS_CROP_FRACTION_WIDTH /
    /// _HEIGHT, each clamped to the picture; the region is placed by crop_gravity (a compass point: crop_left,
    /// crop_top are offsets inward from the edges it names, or a shift at the centre, pixels or, with _LEFT /
    /// _TOP, fractions of the picture's side; THUMBD_VIPS_GRAVITY_FOCAL: crop_left, crop_top are the point, as
    /// fractions, the region centred on it), then kept inside the picture.
    ThumbdVipsGravity crop_gravity;
    int crop_fractions;
    /// With THUMBD_VIPS_CROP_PLACED: the region is placed in the picture before the trim, then
    /// cut to the trimmed frame (none left: the whole frame), as thumbor moves its crop by the trimmed frame's corner
    /// and clamps it (THUMBD_VIPS_CROP_UNTRIMMED's rule, for a crop measured from a corner of the turned picture).
    int crop_before_trim;
    /// THUMBD_VIPS_GRAVITY_FOCAL's point, fractions 0...1 of the (cropped) picture.
    double focal_x, focal_y;
    int focal_in_pixels;        // focal_x, focal_y are pixels of the turned picture (crop's frame), not fractions
    /// With focal_in_pixels: the corner (a diagonal compass point) of the trimmed picture, as turned, the pixels
    /// are measured from, inward; THUMBD_VIPS_GRAVITY_CENTRE: the untrimmed picture's top-left.
    ThumbdVipsGravity focal_corner;
    /// The cover crop of a compass gravity moved inward from the edges it names (at the centre: right and down), in
    /// output pixels, or fractions of the resized picture's side where gravity_offset_fractions has
    /// THUMBD_VIPS_CROP_FRACTION_LEFT (x) / _TOP (y); kept inside the picture.
    double gravity_offset_x, gravity_offset_y;
    int gravity_offset_fractions;
    /// Effects on the resized picture: tone (brightness -255...255 added, contrast and saturation as
    /// multipliers, neutral 1), grey, then blur and sharpen (Gaussian sigma, 0 = none) and pixelate (block
    /// size, 0 or 1 = none).
    double brightness;
    double contrast;
    double saturation;
    int greyscale;              // 1: libvips's B_W; 2: Pillow's Rec. 601 luma (thumbor's grayscale())
    int saturation_model;       // 0: chroma in LCh; 1: thumbor's, each band's distance from the HSP brightness
    double blur_sigma;
    double sharpen_sigma;
    int pixelate;
    /// thumbor's tone filters, in this order: rgb_shift levels added to red, green, blue (steps/rgb.c); colorize
    /// (non-zero: on) each colour band moved colorize_percent toward colorize_colour (steps/colorize.c); equalize
    /// (non-zero: on) each colour band's histogram equalised as thumbor does (steps/equalize.c).
    int rgb_shift[3];
    int colorize;
    int colorize_percent[3];
    double colorize_colour[3];
    int curve;                          // non-zero: each colour band through curve_table (steps/curve.c)
    unsigned char curve_table[256 * 3]; // level by level, red, green, blue: thumbor's curves, composed by Swift
    int equalize;
    /// thumbor's convolution (steps/convolution.c) when both sides are above 0: a kernel of convolution_columns x
    /// convolution_rows values (row by row, at most 121), divided by its sum when convolution_normalize and the sum
    /// is not 0; then thumbor's noise (steps/noise.c) when noise_amount is above 0: glibc's random_r sequence of
    /// noise_seed (0 as 1), one level  r % amount - amount / 2  per pixel added to every colour band.
    int convolution_columns, convolution_rows;
    int convolution_normalize;
    double convolution_kernel[121];
    int noise_amount;
    unsigned int noise_seed;
    /// The filters above in the order the client wrote them (thumbor runs its filters in URL order), when it is not
    /// the table's (pipeline.c): filter_order_count ThumbdVipsFilter values, each at most once; 0 keeps the table's
    /// order (saturation, contrast with brightness, grey, blur, sharpen, pixelate, rgb, colorize, curve, equalize,
    /// convolution, noise).
    unsigned char filter_order[16];
    int filter_order_count;
    /// Redaction (steps/redact.c): redact_count boxes (at most THUMBD_VIPS_MAX_REDACT; 0: none) in pixels of the
    /// turned, untrimmed picture (the frame of focal_in_pixels with focal_corner THUMBD_VIPS_GRAVITY_CENTRE), each
    /// blurred (Gaussian sigma), pixelated (block size) or outlined (line width) in the output, where it shows after
    /// the trim, the crop and the cover crop, by redact_mode; redact_strength in output pixels, 0: in proportion to
    /// each box's size in the output (blur: its larger side / 6, pixelate: / 8, at least 2; box: 2).
    ThumbdVipsRedactMode redact_mode;
    double redact_strength;
    int redact_count;
    ThumbdVipsRedactBox redact_boxes[THUMBD_VIPS_MAX_REDACT];
    /// Rounded corners (steps/round_corner.c) when both radii are above 0: outside an ellipse of round_corner_x by
    /// round_corner_y output pixels in each corner, the colour bands take round_corner_colour's (RGBA 0...255);
    /// with its alpha below 255 those pixels also become that transparent, unless the output cannot hold alpha.
    int round_corner_x, round_corner_y;
    double round_corner_colour[4];
    /// THUMBD_VIPS_EXTEND_* bits: after any fit, the canvas extended (never shrunk) to the box's width and/or
    /// height, or around the picture to the box's aspect ratio (imgproxy's `ex`/`exar`), placed by `gravity`, the
    /// area added as THUMBD_VIPS_FIT_PAD's (steps/canvas.c).
    int extend;
    /// Output pixels added on each side after the resize (and after THUMBD_VIPS_FIT_PAD's extension).
    int padding_top, padding_right, padding_bottom, padding_left;
    /// RGBA 0...255 for padded areas; when opaque, every transparent pixel is also flattened onto it. Without
    /// it, padded areas are transparent (and white once flattened for JPEG).
    int has_background;
    double background[4];
    /// THUMBD_VIPS_BACKGROUND_AUTO or _BLUR (steps/background_fill.c), instead of `background`; 0: none.
    int background_fill;

    /// Animation: a source with several frames renders every frame into this format (GIF or WEBP), keeping
    /// each frame's delay and the loop count; THUMBD_VIPS_FORMAT_UNKNOWN renders the first frame only, into
    /// format_opaque / format_alpha. An animation is refused (FRAME_LIMIT) above max_frames frames, and
    /// (PIXEL_LIMIT) when frames x width x height is above max_source_pixels, before anything is decoded.
    ThumbdVipsFormat format_animated;
    int max_frames;

    /// Watermarks, laid over every output frame after padding, in order (the first underneath): watermarks[0]
    /// up to watermark_count (0 for none, at most THUMBD_VIPS_MAX_WATERMARKS).
    ThumbdVipsWatermark watermarks[THUMBD_VIPS_MAX_WATERMARKS];
    int watermark_count;

    /// Frame (steps/frame.c), drawn around every output frame after padding, before the watermark: the encoded
    /// nine-patch (borrowed for the call, NULL for none; the same allowed formats and pixel limit as a source,
    /// 3x3...2048x2048). The picture grows by the content area's margins (opaque white), then the nine-patch's
    /// inside is drawn over it, its stretching runs resized to fit. frame_optional non-zero: a nine-patch the step
    /// cannot use (what would fail with THUMBD_VIPS_STEP_FRAME) is left out, the render going on without it, and
    /// the result's frame_skipped says so.
    const void *frame;
    size_t frame_length;
    int frame_optional;

    /// Encoder options (encode/encode.c): chroma subsampling for JPEG and AVIF (0 libvips's choice, 1 always
    /// 4:2:0, 2 never: 4:4:4); lossless WebP and AVIF; max_bytes (0 = none): lossy output is encoded again at
    /// lower qualities, down to min_quality, until it fits (the floor's result is kept when nothing fits).
    int chroma;
    int lossless;
    int64_t max_bytes;
    int min_quality;
    /// Metadata, stripped by default: keep the source's EXIF copyright and artist (JPEG, WebP and AVIF carry
    /// them); keep the source's ICC profile with its pixels unconverted (instead of converting to sRGB).
    int keep_copyright;
    int keep_icc;

    /// Pass-through (jobs/pass_through.c): non-zero answers the source's own bytes, once its header has passed the
    /// checks every source passes (an allowed format, the pixel limit; frames above max_frames, or frames x width x
    /// height above max_source_pixels, for a source of several frames), instead of rendering it (imgproxy's `raw`).
    /// A source whose format's bit (1 << ThumbdVipsFormat) is in skip_formats is answered the same way (imgproxy's
    /// `skip_processing`; Swift's normalisation has already kept only the requested format's bit when the plan names
    /// one). Every other field is then unused.
    int pass_through;
    uint32_t skip_formats;
} ThumbdVipsThumbnailParams;

/// What a job produced. Pointers are (transfer full): release each non-NULL one with thumbd_vips_free.
typedef struct ThumbdVipsThumbnailResult {
    void *data;       // encoded output (g_malloc'ed by libvips), NULL on failure
    size_t length;
    int width;        // output dimensions
    int height;
    ThumbdVipsFormat format;         // output format chosen
    ThumbdVipsFormat source_format;  // UNKNOWN when not recognised
    int source_width;                // header dimensions as stored (before orientation), 0 when unknown
    int source_height;
    int frames;                      // frames in the output (1 unless an animation was rendered)
    int quality;                     // the quality max_bytes settled on; 0 when max_bytes did not apply
    int source_frames;               // frames (pages) in the source
    const char *loader;  // (transfer none) static libvips loader class name, e.g. "VipsForeignLoadSvgBuffer",
                         // or NULL when no loader recognised the bytes
    char *error_detail;  // libvips error text for logs, or NULL
    int passed_through;  // non-zero: data is a copy of the source's own bytes (pass_through or skip_formats)
    int frame_skipped;   // non-zero: the frame was left out (frame_optional, and the nine-patch was unusable)
} ThumbdVipsThumbnailResult;

/// A source's header, read without decoding pixels.
typedef struct ThumbdVipsProbeResult {
    ThumbdVipsFormat format;
    int width;        // as stored, one page
    int height;
    int orientation;  // EXIF orientation 1...8 (1 when absent)
    int pages;        // frames / pages in the file
    int has_alpha;
    int has_icc_profile;
    int bands;           // channels, alpha included
    int bits;            // bits per channel as stored (8, 16, ...)
    const char *colour_space;  // (transfer none) static libvips interpretation nickname: "srgb", "b-w", "cmyk", ...
    char make[64];       // EXIF camera make, model and DateTimeOriginal (ASCII values, NUL-terminated; empty
    char model[64];      // when absent, cut at 63 bytes)
    char taken_at[32];
    const char *loader;  // (transfer none) static loader class name, or NULL
    char *error_detail;  // (transfer full) or NULL
} ThumbdVipsProbeResult;

/// A fully decoded image (first page), for tests and diagnostics: 8-bit pixels, interleaved bands.
typedef struct ThumbdVipsDecoded {
    ThumbdVipsFormat format;
    int width;
    int height;
    int bands;
    int pages;
    int has_exif;
    int has_xmp;
    int has_icc_profile;
    int has_orientation;  // an orientation tag other than 1 is present
    int interlaced;       // progressive JPEG / interlaced PNG
    int page_height;      // height of one frame (= height unless the file is an animation read whole)
    int loop;             // animation loop count (0 = forever), -1 when absent
    int delay_count;      // frames whose delay is in delays (at most 16)
    int delays[16];       // per-frame delays in milliseconds
    unsigned char *pixels;  // (transfer full) width * height * bands bytes, or NULL
    size_t length;
    char *error_detail;     // (transfer full) or NULL
} ThumbdVipsDecoded;

/// Starts libvips once for the process (VIPS_INIT is a macro Swift cannot import), then applies thumbd's
/// policy: operation cache off (every job is distinct and the cache would pin source buffers), vips
/// concurrency 1 (parallelism comes from thumbd's render threads), every loader blocked except JPEG, PNG,
/// WebP, GIF, HEIF/AVIF and TIFF, and every operation libvips marks untrusted blocked.
/// Call on the main thread before any other thumbd_vips_* function. Calling it again is harmless (libvips
/// ignores a second VIPS_INIT and the policy calls are the same). Returns 0 on success, -1 on failure with
/// *error_detail (transfer full, may be NULL) set.
/// - argv0: (transfer none) program name, used by libvips to find its data files.
int thumbd_vips_init(const char *argv0, char **error_detail);

/// Whether this libvips can write AVIF (heifsave with the AV1 encoder), checked by encoding a 16x16 image.
/// Returns 1 if it can, 0 if not. Costs a few milliseconds; call once after thumbd_vips_init.
int thumbd_vips_can_save_avif(void);
/// Whether this libvips can write JPEG XL (jxlsave, libjxl), checked by encoding a 16x16 image.
/// Returns 1 if it can, 0 if not. Call once after thumbd_vips_init (its block list applies).
int thumbd_vips_can_save_jxl(void);
/// Whether this libvips can write HEIC (heifsave with libheif's HEVC encoder, x265), checked by encoding a 16x16
/// image. Returns 1 if it can, 0 if not. Call once after thumbd_vips_init.
int thumbd_vips_can_save_heic(void);

/// libvips's version, e.g. "8.14.1". (transfer none): a static string.
const char *thumbd_vips_version(void);

/// Reads a source's header (format, dimensions, orientation, pages, alpha) without decoding pixels.
/// - buffer: (transfer none) borrowed for the duration of the call.
/// - allowed_sources: as in ThumbdVipsThumbnailParams.
/// - result: (out caller-allocates) zeroed, then filled; free error_detail with thumbd_vips_free.
ThumbdVipsStep thumbd_vips_probe(const void *buffer, size_t length, uint32_t allowed_sources,
                                 ThumbdVipsProbeResult *result);

/// Decodes the first page of an image completely, for tests that check pixels and metadata of outputs.
/// Any allowed loader; no pixel limit (use it on trusted, small images only).
/// - buffer: (transfer none) borrowed for the duration of the call.
/// - result: (out caller-allocates) zeroed, then filled; free pixels and error_detail with thumbd_vips_free.
ThumbdVipsStep thumbd_vips_decode(const void *buffer, size_t length, ThumbdVipsDecoded *result);

/// As thumbd_vips_decode, but every frame of an animation: the frames one above the other (height = frames x
/// page_height), with the delays and loop count.
ThumbdVipsStep thumbd_vips_decode_frames(const void *buffer, size_t length, ThumbdVipsDecoded *result);

/// Encodes a flat-colour picture of width x height (`bands`: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; alpha half
/// opaque) as `format` (JPEG, PNG, WebP or GIF), for tests that need shapes no fixture file has (1 x 10000, the
/// pixel limit's extreme); flat, so the file stays small. frames > 1 makes an animation of that many frames, each
/// of its own colour, 100 ms apart. Returns 0 with *data (transfer full: thumbd_vips_free) and *length set, or -1
/// with *error_detail (transfer full, may be NULL).
int thumbd_vips_make_flat(int width, int height, int bands, int frames, ThumbdVipsFormat format, void **data,
                          size_t *length, char **error_detail);

/// A raster the decoder sandbox's helper decoded (width x height pixels of `bands` interleaved bands, 1 to 4, of
/// VipsBandFormat `band_format`, `length` bytes) as an uncompressed PNG, the form in which the pipeline reads it
/// (8 or 16 bits; other formats are cast to 8 bits; 1-2 bands grey, 3-4 sRGB). `pixels` is only read during the
/// call. Returns 0 with *data (transfer full: thumbd_vips_free) and *data_length set, or -1 with *error_detail
/// (transfer full, may be NULL).
int thumbd_vips_raster_to_png(const void *pixels, size_t length, int width, int height, int bands, int band_format,
                              void **data, size_t *data_length, char **error_detail);

/// Releases memory handed out by these functions (g_free). NULL is allowed.
void thumbd_vips_free(void *pointer);

/// Frees libvips's per-thread state. Render worker threads call this once, just before they exit.
void thumbd_vips_thread_shutdown(void);

// MARK: - Rendering (entry/render.c)

/// A source decoded once at a reduced size ("band": it fits band x band, never enlarged), upright, 8-bit
/// sRGB or grey (alpha kept), metadata stripped, in memory. Opaque to Swift. Read-only once made, so one
/// intermediate may be used by several threads at once; released with thumbd_vips_intermediate_release.
typedef struct ThumbdVipsIntermediate ThumbdVipsIntermediate;

/// A render in progress (internal/job.h's ThumbdJob), opaque to Swift: handed to the intermediate callback so
/// that it can have the intermediate made from the header the render has already read.
typedef struct ThumbdJob ThumbdVipsJob;

/// How thumbd_vips_render gets the intermediate of `band` (`own`: 1 when it is for this render alone and must not
/// be shared, 0 when any render of the same source bytes may share it). Called at most once, on the rendering
/// thread, before thumbd_vips_render returns. Sets *intermediate to a kept one, or to one made with
/// thumbd_vips_job_make_intermediate(job, ...), and returns THUMBD_VIPS_STEP_OK; the caller keeps it alive
/// (transfer none) until thumbd_vips_render returns. Any other step fails the render with that step (the
/// callback keeps its own account of why).
/// - context: (transfer none) thumbd_vips_render's, passed through.
typedef ThumbdVipsStep (*ThumbdVipsIntermediateCallback)(void *context, ThumbdVipsJob *job, int band, int own,
                                                         const ThumbdVipsIntermediate **intermediate);

/// One render, one call, one header read: find the loader, read the header, refuse it above max_source_pixels,
/// then render one of three ways:
/// - an animation (several pages, format_animated set): every frame in one pass (jobs/animation.c);
/// - directly (jobs/direct.c): the shrink-on-load pipeline (vips_thumbnail_buffer, fail_on=error; a crop cut
///   from it before decoding), one decode, the plan's steps (pipeline.c), metadata, encode;
/// - through an intermediate (jobs/intermediate.c), asked of `intermediate` for its band: the smallest of
///   `bands` whose intermediate has at least `margin` (>= 1) times the box's size on each axis. A plan with a
///   trim always goes this way (a trim works on decoded pixels before the resize), through an intermediate of
///   its own when no listed band is large enough; so does a plan that enlarges and then cuts (cover, a crop)
///   or overflows the box (outside): from its own intermediate at the source's size, the cut comes before the
///   enlargement. A plan that keeps the source's ICC profile never uses a listed band (they hold sRGB pixels).
///   The choice depends only on params and the header, and an intermediate only on the source and its band,
///   so the output bytes are the same whether the callback returns a kept intermediate or a new one.
/// Returns when the output is complete.
/// - buffer: (transfer none) the encoded source, borrowed: libvips does not copy it, so it must stay valid
///   until this function returns (nothing made from it outlives the call). May be NULL when length is 0.
/// - bands: (transfer none) band_count values. intermediate: may be NULL (no intermediates: such renders fail).
/// - result: (out caller-allocates) zeroed by this function, then filled; free its pointers with
///   thumbd_vips_free. Also clears the libvips error buffer before returning successfully.
ThumbdVipsStep thumbd_vips_render(const void *buffer, size_t length, ThumbdVipsThumbnailParams params,
                                  const int *bands, int band_count, double margin,
                                  ThumbdVipsIntermediateCallback intermediate, void *context,
                                  ThumbdVipsThumbnailResult *result);

/// Makes the intermediate of `band` for the render `job` (only from inside its intermediate callback), from the
/// header that render has read: shrink-on-load and decode (fail_on=error; a damaged source fails here with
/// THUMBD_VIPS_STEP_DECODE), rotated upright by EXIF, 8-bit, metadata kept aside.
/// - out: (out, transfer full) the intermediate on success, else NULL; it does not reference the source buffer.
/// - result: (out caller-allocates) zeroed, then the source fields and, on failure, error_detail.
ThumbdVipsStep thumbd_vips_job_make_intermediate(ThumbdVipsJob *job, int band, ThumbdVipsIntermediate **out,
                                                 ThumbdVipsThumbnailResult *result);

/// Bytes of pixels an intermediate holds (width x height x bands), for cache budgets.
size_t thumbd_vips_intermediate_bytes(const ThumbdVipsIntermediate *intermediate);

/// The header of the source an intermediate was made from, as thumbd_vips_probe reads it (error_detail NULL): a
/// source's analysis shows it without opening the source again.
void thumbd_vips_intermediate_probe(const ThumbdVipsIntermediate *intermediate, ThumbdVipsProbeResult *result);

/// Releases an intermediate (transfer full). NULL is allowed. Other threads must be done with it.
void thumbd_vips_intermediate_release(ThumbdVipsIntermediate *intermediate);

// MARK: - Analysis (entry/analysis.c)

/// An intermediate's grey pixels, for the detectors (CFaceShims). Pointers are (transfer full): thumbd_vips_free.
typedef struct ThumbdVipsGrey {
    unsigned char *pixels;  // width * height bytes, rows packed (stride = width), or NULL on failure
    int width;              // the intermediate's size
    int height;
    int upright_width;      // the EXIF-upright source it was made from, in pixels
    int upright_height;
    char *error_detail;     // libvips error text, or NULL
} ThumbdVipsGrey;

/// Makes the intermediate of `band` for the source in `buffer` without a render: one header read with the checks a
/// render makes (allowed_sources as ThumbdVipsThumbnailParams's, max_source_pixels before anything is decoded,
/// fail_on=error), then the very intermediate a render of a plan that shares it (no kept ICC profile) makes for that
/// band (thumbd_vips_job_make_intermediate): the same pixels, so a cache may hand either to the other's users.
/// - buffer: (transfer none) borrowed for the call; the intermediate does not reference it.
/// - out: (out, transfer full) the intermediate on success, else NULL; release with thumbd_vips_intermediate_release.
/// - result: (out caller-allocates) zeroed, then the source fields and, on failure, error_detail (thumbd_vips_free).
ThumbdVipsStep thumbd_vips_make_intermediate(const void *buffer, size_t length, uint32_t allowed_sources,
                                             int64_t max_source_pixels, int band, ThumbdVipsIntermediate **out,
                                             ThumbdVipsThumbnailResult *result);

/// The grey pixels of an intermediate as Pillow's convert("L") makes them (Rec. 601 luma in integers:
/// (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16, thumbor's grey for its detectors), a grey one's own band,
/// alpha ignored; with the intermediate's size and the upright source's. The intermediate is only read (any thread).
/// - grey: (out caller-allocates) zeroed, then filled; free its pointers with thumbd_vips_free.
ThumbdVipsStep thumbd_vips_intermediate_grey(const ThumbdVipsIntermediate *intermediate, ThumbdVipsGrey *grey);

/// One colour of a palette (libimagequant's, quantize/palette.c) and the alpha-weighted count of the pixels remapped
/// to it (each pixel counts alpha / 255: an opaque one 1, a transparent one nothing).
typedef struct ThumbdVipsPaletteColour {
    unsigned char red, green, blue, alpha;
    double weight;
} ThumbdVipsPaletteColour;

/// What the per-source analysis (Thumbnailing's Thumbnailer.analyse) computes from, made from an intermediate in one
/// call. Pointers are (transfer full): thumbd_vips_free.
typedef struct ThumbdVipsAnalysisPixels {
    unsigned char *rgba;        // miniature_width * miniature_height * 4: sRGB and alpha (255 when none), rows packed
    int miniature_width;        // fits 32 x 32 (ThumbHash allows 100), the intermediate's aspect, never enlarged
    int miniature_height;
    unsigned char *phash_grey;  // 32 x 32 grey (convert("L"), then Lanczos-3 squashed to the square), rows packed
    unsigned char *dhash_grey;  // 9 across x 8 down, likewise
    int has_transparency;       // 1 when some pixel of the intermediate has alpha below 255
    ThumbdVipsPaletteColour *palette;  // palette_count colours of the miniature, libimagequant's order
    int palette_count;
    char *error_detail;         // libvips's or libimagequant's error text, or NULL
} ThumbdVipsAnalysisPixels;

/// Everything the analysis needs from an intermediate, in one call (the intermediate is only read: any thread):
/// - an RGBA miniature fitting 64 x 64 (Lanczos-3; alpha premultiplied while it is resized), grey made RGB, from the
///   intermediate box-averaged by a whole factor to at least 128 px when it is opaque and over 255 px;
/// - the grey copies imagehash's phash (32 x 32) and dhash (9 x 8) resize to: Pillow's convert("L") of the
///   intermediate (as thumbd_vips_intermediate_grey), then one Lanczos-3 over the whole ratio per axis, as Pillow's
///   resize(LANCZOS) does (thumbd's resample/lanczos3.c; libvips's resize when the intermediate is smaller);
/// - whether any pixel is not opaque (the smallest alpha of the intermediate);
/// - a palette of at most `palette_colours` (2...256) colours of the miniature by libimagequant, with the
///   alpha-weighted count of the pixels remapped (no dithering) to each.
/// - out: (out caller-allocates) zeroed, then filled; free its pointers with thumbd_vips_free.
ThumbdVipsStep thumbd_vips_intermediate_analysis(const ThumbdVipsIntermediate *intermediate, int palette_colours,
                                                 ThumbdVipsAnalysisPixels *out);

/// Every pixel of an intermediate (8-bit, interleaved bands), for tests: fills format (the source's), width,
/// height, bands, pixels and length of `pixels` (out caller-allocates, zeroed first; thumbd_vips_free its pointers).
ThumbdVipsStep thumbd_vips_intermediate_pixels(const ThumbdVipsIntermediate *intermediate, ThumbdVipsDecoded *pixels);
