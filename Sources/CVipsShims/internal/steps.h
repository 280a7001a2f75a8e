// SPDX-License-Identifier: Apache-2.0
// Layer 4, the steps: one file per step in steps/, each a `wanted` predicate (does this plan ask for it? read
// from the job, so a step the plan does not ask for costs nothing) and a `run` over the current image. The
// order they run in is the pipeline's table (layer 5), not theirs. Includes only the job (layer 3), which
// brings geometry and libvips.
//
// run: *image (transfer full in and out) is the current image; on success the step may have replaced it, on
// failure *image is untouched and still the caller's. Returns THUMBD_VIPS_STEP_OK, or the step to report
// (THUMBD_VIPS_STEP_THUMBNAIL when libvips failed, reason in its error buffer; CANVAS_LIMIT; WATERMARK).
#pragma once

#include "job.h"

typedef int (*ThumbdStepWanted)(const ThumbdJob *job);
typedef ThumbdVipsStep (*ThumbdStepRun)(ThumbdJob *job, VipsImage **image);

// orient.c: job->orient (a rotation, then a mirror).
int thumbd_wants_orient(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_orient(ThumbdJob *job, VipsImage **image);
// Turns *image by `o` (also for intermediates, whose orientation is not the plan's).
ThumbdVipsStep thumbd_turn(VipsImage **image, ThumbdOrientation o);

// region.c: the region of the picture the box is made from. The cut step takes job->cut from each animation
// frame; a still cuts its region before the resize (jobs/), and trim finds its frame on decoded pixels.
int thumbd_wants_cut(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_cut(ThumbdJob *job, VipsImage **image);
// The trim frame of `image` (transfer none; the whole image when p->trim is off or everything is background).
ThumbdVipsStep thumbd_trim_frame(const ThumbdJob *job, VipsImage *image, ThumbdRect *frame);

// uchar.c: 8-bit sRGB or grey (vips_thumbnail already gives that; a guard for odd inputs).
int thumbd_wants_uchar(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_uchar(ThumbdJob *job, VipsImage **image);

// cover_crop.c: cover's overflow cut by gravity, focal point or smart crop.
int thumbd_wants_cover_crop(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_cover_crop(ThumbdJob *job, VipsImage **image);
// The same cut for a box of box_width x box_height (an enlarged cover, cut before its resize: jobs/). Narrows
// job->window to the part kept.
ThumbdVipsStep thumbd_cover_cut(ThumbdJob *job, VipsImage **image, int box_width, int box_height, double scale);

// tone.c: saturation (in LCh), then brightness and contrast.
int thumbd_wants_saturation(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_saturation(ThumbdJob *job, VipsImage **image);
int thumbd_wants_tone(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_tone(ThumbdJob *job, VipsImage **image);
// The tone row's two halves, each clamped, for a plan that orders its filters (params->filter_order).
int thumbd_wants_contrast(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_contrast(ThumbdJob *job, VipsImage **image);
int thumbd_wants_brightness(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_brightness(ThumbdJob *job, VipsImage **image);

// greyscale.c, blur.c, sharpen.c, pixelate.c.
int thumbd_wants_greyscale(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_greyscale(ThumbdJob *job, VipsImage **image);
int thumbd_wants_blur(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_blur(ThumbdJob *job, VipsImage **image);
int thumbd_wants_sharpen(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_sharpen(ThumbdJob *job, VipsImage **image);
int thumbd_wants_pixelate(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_pixelate(ThumbdJob *job, VipsImage **image);
// The blur and the pixelation of a whole image, for other steps (redact.c): *image (transfer full in and out) as
// the steps above leave it.
ThumbdVipsStep thumbd_blur_image(VipsImage **image, double sigma);
ThumbdVipsStep thumbd_pixelate_image(VipsImage **image, int block);

// rgb.c, colorize.c, curve.c, equalize.c: thumbor's tone filters.
int thumbd_wants_rgb(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_rgb(ThumbdJob *job, VipsImage **image);
int thumbd_wants_colorize(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_colorize(ThumbdJob *job, VipsImage **image);
int thumbd_wants_curve(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_curve(ThumbdJob *job, VipsImage **image);
int thumbd_wants_equalize(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_equalize(ThumbdJob *job, VipsImage **image);

// convolution.c, noise.c: thumbor's convolution and noise.
int thumbd_wants_convolution(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_convolution(ThumbdJob *job, VipsImage **image);
int thumbd_wants_noise(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_noise(ThumbdJob *job, VipsImage **image);

// redact.c: each of the plan's boxes (faces) blurred, pixelated or outlined where it shows in the image.
int thumbd_wants_redact(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_redact(ThumbdJob *job, VipsImage **image);

// round_corner.c: thumbor's round_corner (the corners outside an ellipse painted, or made transparent).
int thumbd_wants_round_corner(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_round_corner(ThumbdJob *job, VipsImage **image);

// canvas.c: the output canvas's pixel limit, pad to the box (THUMBD_VIPS_FIT_PAD), padding.
int thumbd_wants_canvas_limit(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_canvas_limit(ThumbdJob *job, VipsImage **image);
// background_fill.c: the background from the picture (its mean colour, or a blurred copy under the pad's canvas).
int thumbd_wants_background_fill(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_background_fill(ThumbdJob *job, VipsImage **image);
int thumbd_wants_pad(const ThumbdJob *job);
// The canvas the pad step extends an image_width x image_height picture to (THUMBD_VIPS_FIT_PAD's box, `extend`).
void thumbd_pad_canvas(const ThumbdJob *job, int image_width, int image_height, int *width, int *height);
ThumbdVipsStep thumbd_step_pad(ThumbdJob *job, VipsImage **image);
int thumbd_wants_padding(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_padding(ThumbdJob *job, VipsImage **image);

// overlay.c: an image laid over the output (a watermark, a frame's nine-patch) decoded whole from its encoded
// bytes into *out (transfer full): 8-bit sRGB with alpha (4 bands), in memory. `unusable`, the step to report, when
// it is not an allowed image, is above the pixel limit, has a side outside min_side...max_side or is damaged (the
// reason, naming `what`, in libvips's error buffer); THUMBD_VIPS_STEP_THUMBNAIL when libvips failed on a good one.
ThumbdVipsStep thumbd_decode_overlay(const ThumbdJob *job, const void *bytes, size_t length, const char *what,
                                     int min_side, int max_side, ThumbdVipsStep unusable, VipsImage **out);
// frame.c: the nine-patch (decoded once per job, kept in it) drawn around the image, which grows by its margins.
int thumbd_wants_frame(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_frame(ThumbdJob *job, VipsImage **image);

// watermark.c: the mark (decoded once per job, kept in it) laid over the image.
int thumbd_wants_watermark(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_watermark(ThumbdJob *job, VipsImage **image);

// memory.c: computes the lazy steps before them once, into memory, rather than again in every later reader.
int thumbd_wants_memory(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_memory(ThumbdJob *job, VipsImage **image);

// format.c: the output format for a still (opaque or transparent pixels); frames have theirs already.
int thumbd_wants_format(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_format(ThumbdJob *job, VipsImage **image);

// flatten.c: transparent pixels onto the background (or white, for JPEG).
int thumbd_wants_flatten(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_flatten(ThumbdJob *job, VipsImage **image);

// colour.c: animation frames stay in colour (GIF and WebP frames are RGB): grey frames widened to sRGB.
int thumbd_wants_colour(const ThumbdJob *job);
ThumbdVipsStep thumbd_step_colour(ThumbdJob *job, VipsImage **image);

// metadata.c: not a table step (it runs once on the output, after the frames are joined). Removes every field
// of the private `image` except what the plan keeps (EXIF copyright and artist, from job->kept when given, else
// from the image's own fields; the ICC profile). Returns 1 when the savers must strip (nothing kept), 0 when
// they must write what is left.
int thumbd_step_metadata(const ThumbdJob *job, VipsImage *image);
// Copies what a plan keeps of `image`'s metadata: EXIF copyright and artist values (transfer full, NULL when
// absent or not kept) and the ICC profile (transfer full, NULL likewise).
void thumbd_keep_metadata(VipsImage *image, int keep_copyright, int keep_icc, char **copyright, char **artist,
                          VipsBlob **icc);
