// SPDX-License-Identifier: Apache-2.0
// Layer 1, geometry (see internal/geometry.h): pure arithmetic, no libvips.
#include <math.h>

#include "internal/geometry.h"

// MARK: - Orientation

ThumbdOrientation thumbd_orientation_from_exif(int exif) {
    // What turns a picture stored with this EXIF orientation upright: rotate clockwise, then mirror.
    switch (exif) {
    case 2: return (ThumbdOrientation){0, 1};
    case 3: return (ThumbdOrientation){180, 0};
    case 4: return (ThumbdOrientation){180, 1};
    case 5: return (ThumbdOrientation){90, 1};
    case 6: return (ThumbdOrientation){90, 0};
    case 7: return (ThumbdOrientation){270, 1};
    case 8: return (ThumbdOrientation){270, 0};
    default: return (ThumbdOrientation){0, 0};
    }
}

ThumbdOrientation thumbd_orientation_then(ThumbdOrientation first, ThumbdOrientation second) {
    // A mirror followed by a clockwise rotation is the opposite rotation followed by the mirror.
    int turn = first.mirror ? 360 - second.rotate : second.rotate;
    return (ThumbdOrientation){(first.rotate + turn) % 360, first.mirror ^ second.mirror};
}

ThumbdOrientation thumbd_orientation_inverse(ThumbdOrientation o) {
    // Rotate-then-mirror undoes itself; a plain rotation is undone by the opposite one.
    if (o.mirror) return o;
    return (ThumbdOrientation){(360 - o.rotate) % 360, 0};
}

ThumbdOrientation thumbd_orientation_of_plan(const ThumbdVipsThumbnailParams *p, int exif) {
    ThumbdOrientation stored = p->auto_orient ? thumbd_orientation_from_exif(exif) : (ThumbdOrientation){0, 0};
    return thumbd_orientation_then(stored, (ThumbdOrientation){p->rotate, p->mirror ? 1 : 0});
}

int thumbd_orientation_swaps(ThumbdOrientation o) { return o.rotate == 90 || o.rotate == 270; }

ThumbdRect thumbd_stored_rect(ThumbdRect r, ThumbdOrientation o, double width, double height) {
    // Undo `o`: its inverse is a rotation, then perhaps a mirror, applied to the rectangle and its picture.
    ThumbdOrientation back = thumbd_orientation_inverse(o);
    double w = width, h = height, swap;
    switch (back.rotate) {
    case 90:  // (x, y) -> (h - y, x) in an h x w picture
        r = (ThumbdRect){h - r.top - r.height, r.left, r.height, r.width};
        swap = w, w = h, h = swap;
        break;
    case 180:
        r = (ThumbdRect){w - r.left - r.width, h - r.top - r.height, r.width, r.height};
        break;
    case 270:  // (x, y) -> (y, w - x) in an h x w picture
        r = (ThumbdRect){r.top, w - r.left - r.width, r.height, r.width};
        swap = w, w = h, h = swap;
        break;
    default:
        break;
    }
    if (back.mirror) r.left = w - r.left - r.width;
    return r;
}

// MARK: - Box and fit

ThumbdBox thumbd_box_of_params(const ThumbdVipsThumbnailParams *p) {
    return (ThumbdBox){p->fit,          p->width,        p->height,     p->enlarge,   p->adaptive,
                       p->original_sides, p->output_scale, p->min_width, p->min_height, p->dpr_limit,
                       p->thumbor_rounding};
}

void thumbd_adapted_box(ThumbdBox box, int width, int height, int *box_width, int *box_height) {
    *box_width = box.width;
    *box_height = box.height;
    // thumbor's rule: only a strictly landscape picture against a strictly portrait box, or the other way round.
    if (box.adaptive && ((width < height && box.width > box.height) || (width > height && box.width < box.height))) {
        *box_width = box.height;
        *box_height = box.width;
    }
}

ThumbdVipsFit thumbd_effective_fit(ThumbdBox box, int width, int height) {
    if (box.fit == THUMBD_VIPS_FIT_COVER_DOWN) return THUMBD_VIPS_FIT_COVER;
    if (box.fit != THUMBD_VIPS_FIT_AUTO) return box.fit;
    int box_width, box_height;
    thumbd_adapted_box(box, width, height, &box_width, &box_height);
    return (width >= height) == (box_width >= box_height) ? THUMBD_VIPS_FIT_COVER : THUMBD_VIPS_FIT_CONTAIN;
}

// thumbor 7.8's size for a picture of width x height (its transformer's target dimensions, fit_in_resize and the
// upscale filter), as an exact FILL box; the box unchanged where thumbor's answer is thumbd's own (a letterbox,
// no side given).
static ThumbdBox thumbor_sized(ThumbdBox box, int width, int height) {
    int mode = box.thumbor & 0xff, no_width = box.thumbor & THUMBD_VIPS_ROUNDING_NO_WIDTH;
    int no_height = box.thumbor & THUMBD_VIPS_ROUNDING_NO_HEIGHT, region = box.thumbor & THUMBD_ROUNDING_THUMBOR_REGION;
    box.thumbor = 0;
    if ((no_width && no_height) || box.fit == THUMBD_VIPS_FIT_PAD) return box;
    double w = width, h = height;
    // The missing side follows the picture's aspect, rounded half to even (Python's round).
    double tw = no_width ? rint(box.height * w / h) : box.width;
    double th = no_height ? rint(box.width * h / w) : box.height;
    tw = THUMBD_MAX(1, tw);
    th = THUMBD_MAX(1, th);
    int full = mode == THUMBD_VIPS_ROUNDING_THUMBOR_FULL_FIT_IN, upscale = box.enlarge;
    if ((mode == THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN || full) && box.adaptive &&
        ((w < h && tw > th) || (w > h && tw < th))) {
        double swap = tw;
        tw = th, th = swap;
    }
    double rw = tw, rh = th;
    // thumbor's answer is final: its crop mode resizes to the box whatever the picture's size (no_upscale() has
    // bounded the box already, thumbd_job_box), fit-in's is decided here.
    box.enlarge = 1;
    if (mode == THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN || full) {
        if (!full && tw >= w && th >= h) {
            // Inside the box already: the picture's size, unless upscale() enlarges a picture smaller on both
            // sides of a box with both sides given (truncated).
            rw = w, rh = h;
            if (upscale && !no_width && !no_height && w < tw && h < th) {
                if (w / tw >= h / th) {
                    rw = tw, rh = THUMBD_MAX(1, (int)(h * tw / w));
                } else {
                    rw = THUMBD_MAX(1, (int)(w * th / h)), rh = th;
                }
            }
        } else if (full ? w / tw <= h / th : w / tw >= h / th) {
            rh = floor(h * tw / w + 0.5 + 1e-5);  // Python 3's round(x + 1e-5): half up, as thumbor means it
        } else {
            rw = floor(w * th / h + 0.5 + 1e-5);
        }
    } else if (!no_width && !no_height && !region) {
        return box;  // the crop mode with both sides, placed by attention: the box, as thumbd's cover makes it
    }
    // (the crop mode with both sides and thumbor's region: the region stretched to the box, as thumbor resizes it)
    box.fit = THUMBD_VIPS_FIT_FILL;
    box.width = THUMBD_CLIP(1, (int)rw, THUMBD_UNBOUNDED);
    box.height = THUMBD_CLIP(1, (int)rh, THUMBD_UNBOUNDED);
    box.adaptive = 0;
    return box;
}

ThumbdBox thumbd_box_settled(ThumbdBox box, int width, int height) {
    // thumbor's `orig` side: the picture's own, bounded by the side given (thumbd's largest, from its forms).
    if (box.original_sides & 1) box.width = THUMBD_CLIP(1, width, box.width);
    if (box.original_sides & 2) box.height = THUMBD_CLIP(1, height, box.height);
    box.original_sides = 0;
    if (box.thumbor) box = thumbor_sized(box, width, height);
    ThumbdBox settled = box;
    settled.fit = thumbd_effective_fit(box, width, height);
    thumbd_adapted_box(box, width, height, &settled.width, &settled.height);
    settled.adaptive = 0;
    settled.dpr_limit = 0;
    if (box.dpr_limit > 1 && !box.enlarge) {
        // imgproxy's dpr: lowered, to 1 at least, until the box asks no more of the picture than it has.
        double across = (double)width / settled.width, down = (double)height / settled.height;
        double shrink = settled.fit == THUMBD_VIPS_FIT_COVER || settled.fit == THUMBD_VIPS_FIT_FILL
                            ? THUMBD_MIN(across, down)
                            : THUMBD_MAX(across, down);
        double k = THUMBD_MIN(1.0, THUMBD_MAX(shrink, 1.0 / box.dpr_limit));
        if (k < 1) {
            settled.width = THUMBD_MAX(1, (int)lround(settled.width * k));
            settled.height = THUMBD_MAX(1, (int)lround(settled.height * k));
        }
    }
    if (box.fit == THUMBD_VIPS_FIT_COVER_DOWN && !box.enlarge) {
        // fill-down: a box the picture cannot cover without enlarging keeps its aspect at the largest size inside.
        double k = THUMBD_MIN(1.0, THUMBD_MIN((double)width / settled.width, (double)height / settled.height));
        if (k < 1) {
            settled.width = THUMBD_CLIP(1, (int)lround(settled.width * k), width);
            settled.height = THUMBD_CLIP(1, (int)lround(settled.height * k), height);
        }
    }
    settled.scale = 0;
    if (box.scale > 0 && box.scale < 1) {
        // thumbor's proportion: the size this box gives, times the scale and truncated, becomes the box. Cover and
        // pad keep their fit (their output is the box, or inside it); the others are forced to exactly that size.
        double hscale, vscale;
        thumbd_box_scale(settled, width, height, &hscale, &vscale);
        double out_width = THUMBD_MAX(1, lround(width * hscale)), out_height = THUMBD_MAX(1, lround(height * vscale));
        if (settled.fit == THUMBD_VIPS_FIT_COVER) {
            out_width = THUMBD_MIN(out_width, settled.width);
            out_height = THUMBD_MIN(out_height, settled.height);
        } else if (settled.fit == THUMBD_VIPS_FIT_PAD) {
            out_width = settled.width;
            out_height = settled.height;
        }
        double scaled_width = out_width * box.scale, scaled_height = out_height * box.scale;
        if (scaled_width >= 1 && scaled_height >= 1) {
            settled.width = (int)scaled_width;
            settled.height = (int)scaled_height;
            if (settled.fit != THUMBD_VIPS_FIT_COVER && settled.fit != THUMBD_VIPS_FIT_PAD) {
                settled.fit = THUMBD_VIPS_FIT_FILL;
                settled.enlarge = 1;
            }
        }
    }
    return settled;
}

// The target raised, when the scale it gives leaves the picture narrower than min_width or lower than min_height,
// to the scale that makes that side exactly the minimum (the larger of the two raises; imgproxy's mw and mh, which
// enlarge whatever `enlarge` says). A bounded side of a fill target follows by the same factor.
static ThumbdResizeTarget raised_to_minimum_sides(ThumbdBox b, ThumbdResizeTarget t, int width, int height) {
    double hscale, vscale;
    if (t.size == THUMBD_SIZE_FORCE) {
        hscale = (double)t.width / width;
        vscale = (double)t.height / height;
    } else {
        double across = t.width == THUMBD_UNBOUNDED ? INFINITY : (double)t.width / width;
        double down = t.height == THUMBD_UNBOUNDED ? INFINITY : (double)t.height / height;
        hscale = vscale = THUMBD_MIN(across, down);
        if (t.size == THUMBD_SIZE_DOWN) hscale = vscale = THUMBD_MIN(hscale, 1.0);
    }
    double kw = b.min_width > 0 ? b.min_width / (width * hscale) : 0;
    double kh = b.min_height > 0 ? b.min_height / (height * vscale) : 0;
    double k = THUMBD_MAX(kw, kh);
    if (k <= 1) return t;
    if (t.size == THUMBD_SIZE_FORCE) {
        t.width = kh > kw ? THUMBD_MAX(1, (int)lround(width * hscale * k)) : b.min_width;
        t.height = kh > kw ? b.min_height : THUMBD_MAX(1, (int)lround(height * vscale * k));
        return t;
    }
    t.size = THUMBD_SIZE_BOTH;
    if (kh > kw) {
        t.width = THUMBD_UNBOUNDED;
        t.height = b.min_height;
    } else {
        t.width = b.min_width;
        t.height = THUMBD_UNBOUNDED;
    }
    return t;
}

ThumbdResizeTarget thumbd_resize_target(ThumbdBox box, int upright_width, int upright_height) {
    // An auto fit becomes cover or contain and an adaptive box turns by the picture's orientation (the region's,
    // when called with it); a settled box is unchanged by settling again.
    ThumbdBox b = thumbd_box_settled(box, upright_width, upright_height);
    ThumbdResizeTarget target = {b.width, b.height, b.enlarge ? THUMBD_SIZE_BOTH : THUMBD_SIZE_DOWN};
    switch (b.fit) {
    case THUMBD_VIPS_FIT_CONTAIN:
    case THUMBD_VIPS_FIT_PAD:   // resized as contain; the canvas is extended to the box afterwards
    case THUMBD_VIPS_FIT_AUTO:  // (made COVER or CONTAIN above)
        break;
    case THUMBD_VIPS_FIT_COVER:
    case THUMBD_VIPS_FIT_COVER_DOWN:  // (made COVER above)
    case THUMBD_VIPS_FIT_OUTSIDE:     // the same resize; only COVER crops the overflow afterwards
        // Fill the box: constrain the side that needs the smaller shrink and leave the other unbounded;
        // the overflow is cropped after rotation. Same geometry as vips_thumbnail's crop mode.
        if ((int64_t)b.width * upright_height >= (int64_t)b.height * upright_width) {
            target.height = THUMBD_UNBOUNDED;
        } else {
            target.width = THUMBD_UNBOUNDED;
        }
        break;
    case THUMBD_VIPS_FIT_FILL:
        target.size = THUMBD_SIZE_FORCE;
        if (!b.enlarge) {
            // Never upscale an axis: shrink the box, keeping its aspect, until it fits inside the source.
            double k = 1.0;
            k = THUMBD_MIN(k, (double)upright_width / b.width);
            k = THUMBD_MIN(k, (double)upright_height / b.height);
            target.width = THUMBD_MAX(1, (int)(b.width * k + 0.5));
            target.height = THUMBD_MAX(1, (int)(b.height * k + 0.5));
        }
        break;
    }
    if (b.min_width > 0 || b.min_height > 0) target = raised_to_minimum_sides(b, target, upright_width, upright_height);
    return target;
}

void thumbd_box_scale(ThumbdBox box, int width, int height, double *hscale, double *vscale) {
    ThumbdResizeTarget t = thumbd_resize_target(box, width, height);
    if (t.size == THUMBD_SIZE_FORCE) {
        *hscale = (double)t.width / width;
        *vscale = (double)t.height / height;
        return;
    }
    // Cover's and outside's unbounded side bounds nothing: it stands for libvips's largest side only because
    // vips_thumbnail needs a number, and taken as a bound it would stop a 1 x 200000 source's cover scale at 50.
    double across = t.width == THUMBD_UNBOUNDED ? INFINITY : (double)t.width / width;
    double down = t.height == THUMBD_UNBOUNDED ? INFINITY : (double)t.height / height;
    double scale = THUMBD_MIN(across, down);
    if (t.size == THUMBD_SIZE_DOWN) scale = THUMBD_MIN(scale, 1.0);
    *hscale = scale;
    *vscale = scale;
}

int64_t thumbd_canvas_pixels(const ThumbdVipsThumbnailParams *p, ThumbdBox box, int width, int height) {
    if (box.fit == THUMBD_VIPS_FIT_PAD || p->extend) {  // (an extension never goes beyond the box's sides)
        width = THUMBD_MAX(width, box.width);
        height = THUMBD_MAX(height, box.height);
    }
    return (int64_t)(width + p->padding_left + p->padding_right) * (height + p->padding_top + p->padding_bottom);
}

// MARK: - Regions

// A placed crop's side in source pixels: pixels as given (truncated), or a fraction of the picture's side rounded
// half away from zero (imgproxy's CalcCropSize); at least 1, at most the side.
static int placed_side(double value, int is_fraction, int whole) {
    int side = is_fraction ? (int)lround(whole * value) : (int)value;
    return THUMBD_CLIP(1, side, whole);
}

// A placed crop's offset in source pixels: pixels, or a fraction of the picture's side, rounded half to even
// (imgproxy's calcPosition).
static int placed_offset(double value, int is_fraction, int whole) {
    return (int)rint(is_fraction ? whole * value : value);
}

// `r` when it overlaps `frame` by at least min_width x min_height, else the frame (a crop measured before the trim
// that misses the trimmed frame is no crop, as thumbor drops it); thumbd_crop_rect then cuts it to the frame.
static ThumbdRect overlapping_or_frame(ThumbdRect r, ThumbdRect frame, double min_width, double min_height) {
    double right = THUMBD_MIN(r.left + r.width, frame.left + frame.width);
    double bottom = THUMBD_MIN(r.top + r.height, frame.top + frame.height);
    if (right - THUMBD_MAX(r.left, frame.left) < min_width || bottom - THUMBD_MAX(r.top, frame.top) < min_height)
        return frame;
    return r;
}

ThumbdRect thumbd_placed_crop(const ThumbdVipsThumbnailParams *p, ThumbdRect picture, ThumbdRect frame, double kx,
                              double ky) {
    if (p->crop_before_trim) {
        // Placed in the untrimmed picture, then cut to the frame: nothing left keeps the whole frame.
        ThumbdVipsThumbnailParams q = *p;
        q.crop_before_trim = 0;
        return overlapping_or_frame(thumbd_placed_crop(&q, picture, picture, kx, ky), frame, kx, ky);
    }
    // Placed in whole source pixels of the frame, as imgproxy places its crop on the source, then taken into the
    // frame's coordinates.
    int whole_width = thumbd_whole(frame.width / kx), whole_height = thumbd_whole(frame.height / ky);
    int f = p->crop_fractions;
    int width = placed_side(p->crop_width, f & THUMBD_VIPS_CROP_FRACTION_WIDTH, whole_width);
    int height = placed_side(p->crop_height, f & THUMBD_VIPS_CROP_FRACTION_HEIGHT, whole_height);
    int left, top;
    if (p->thumbor_rounding && p->crop_gravity != THUMBD_VIPS_GRAVITY_FOCAL) {
        // thumbor clamps its pixel crop to the picture (before its turn): measured from the corner the turn takes
        // the top-left to, cut at the far edges, not moved inside; a crop the clamp empties is no crop.
        ThumbdCompass c = thumbd_compass(p->crop_gravity);
        int dx = placed_offset(p->crop_left, f & THUMBD_VIPS_CROP_FRACTION_LEFT, whole_width);
        int dy = placed_offset(p->crop_top, f & THUMBD_VIPS_CROP_FRACTION_TOP, whole_height);
        int asked_width = f & THUMBD_VIPS_CROP_FRACTION_WIDTH ? width : (int)p->crop_width;
        int asked_height = f & THUMBD_VIPS_CROP_FRACTION_HEIGHT ? height : (int)p->crop_height;
        int x0 = THUMBD_CLIP(0, dx, whole_width), x1 = THUMBD_CLIP(0, dx + asked_width, whole_width);
        int y0 = THUMBD_CLIP(0, dy, whole_height), y1 = THUMBD_CLIP(0, dy + asked_height, whole_height);
        if (x1 <= x0 || y1 <= y0) return frame;
        left = c.east ? whole_width - x1 : x0;
        top = c.south ? whole_height - y1 : y0;
        return (ThumbdRect){frame.left + left * kx, frame.top + top * ky, (x1 - x0) * kx, (y1 - y0) * ky};
    }
    if (p->crop_gravity == THUMBD_VIPS_GRAVITY_FOCAL) {
        left = (int)rint(whole_width * p->crop_left) - width / 2;
        top = (int)rint(whole_height * p->crop_top) - height / 2;
    } else {
        int dx = placed_offset(p->crop_left, f & THUMBD_VIPS_CROP_FRACTION_LEFT, whole_width);
        int dy = placed_offset(p->crop_top, f & THUMBD_VIPS_CROP_FRACTION_TOP, whole_height);
        ThumbdCompass c = thumbd_compass(p->crop_gravity);
        // Offsets point inward from the edge the gravity names; at the centre they shift right and down.
        left = c.west ? dx : c.east ? whole_width - width - dx : (int)rint((whole_width - width + 1) / 2.0) + dx;
        top = c.north ? dy : c.south ? whole_height - height - dy : (int)rint((whole_height - height + 1) / 2.0) + dy;
    }
    left = THUMBD_CLIP(0, left, whole_width - width);
    top = THUMBD_CLIP(0, top, whole_height - height);
    return (ThumbdRect){frame.left + left * kx, frame.top + top * ky, width * kx, height * ky};
}

int thumbd_crop_rect(const ThumbdVipsThumbnailParams *p, ThumbdRect picture, ThumbdRect frame, double kx, double ky,
                     ThumbdRect *out) {
    ThumbdRect r = frame;
    if (p->crop_unit == THUMBD_VIPS_CROP_PLACED) {
        r = thumbd_placed_crop(p, picture, frame, kx, ky);
    } else if (p->crop_unit == THUMBD_VIPS_CROP_PIXELS) {
        r = (ThumbdRect){frame.left + p->crop_left * kx, frame.top + p->crop_top * ky, p->crop_width * kx,
                         p->crop_height * ky};
    } else if (p->crop_unit == THUMBD_VIPS_CROP_UNTRIMMED) {
        // thumbor 7.8 trims, then moves the crop by the trimmed frame's corner and clamps it to the frame: the
        // region in the untrimmed picture, inside the frame; a region outside it is dropped (the frame is kept).
        r = overlapping_or_frame(
            (ThumbdRect){p->crop_left * kx, p->crop_top * ky, p->crop_width * kx, p->crop_height * ky}, frame, 1, 1);
    } else if (p->crop_unit == THUMBD_VIPS_CROP_FRACTIONS) {
        r = (ThumbdRect){frame.left + p->crop_left * frame.width, frame.top + p->crop_top * frame.height,
                         p->crop_width * frame.width, p->crop_height * frame.height};
    }
    // What lies outside the frame is dropped (a region may overhang the picture, as in imgproxy).
    double right = THUMBD_MIN(r.left + r.width, frame.left + frame.width);
    double bottom = THUMBD_MIN(r.top + r.height, frame.top + frame.height);
    r.left = THUMBD_MAX(r.left, frame.left);
    r.top = THUMBD_MAX(r.top, frame.top);
    r.width = right - r.left;
    r.height = bottom - r.top;
    *out = r;
    // Less than half a pixel of the source left on an axis: nothing to render.
    return r.width * 2 >= kx && r.height * 2 >= ky;
}

void thumbd_pixel_rect(ThumbdRect r, int width, int height, int *left, int *top, int *cut_width, int *cut_height) {
    // The size is rounded once and the left edge placed after it: rounding both edges could add a pixel to the
    // size (a 5.0 px region from 0.5 is 0 to 6), and with it a pixel beyond the box.
    *cut_width = THUMBD_CLIP(1, (int)rint(r.width), width);
    *cut_height = THUMBD_CLIP(1, (int)rint(r.height), height);
    *left = THUMBD_CLIP(0, (int)rint(r.left), width - *cut_width);
    *top = THUMBD_CLIP(0, (int)rint(r.top), height - *cut_height);
}

int thumbd_whole(double size) { return THUMBD_MAX(1, (int)rint(size)); }

ThumbdRect thumbd_thumbor_crop_region(int width, int height, int box_width, int box_height, double focal_x,
                                      double focal_y) {
    double w = width, h = height, tw = box_width, th = box_height;
    // round(w / h, 2) == round(tw / th, 2): no crop (Python's round is half to even, as rint).
    if (rint(100 * (w / h)) == rint(100 * (tw / th))) return (ThumbdRect){0, 0, w, h};
    // The same expressions, in the same order, as thumbor's: a whole side, the other rounded (or its ceiling).
    double crop_width = w, crop_height = h;
    if (tw / w > th / h) {
        crop_height = THUMBD_CLIP(1, rint(w * th / tw), h);
    } else {
        crop_width = THUMBD_CLIP(1, ceil(tw * h / th), w);
    }
    double left = rint(THUMBD_MIN(THUMBD_MAX(focal_x - crop_width / 2, 0.0), w - crop_width));
    double top = rint(THUMBD_MIN(THUMBD_MAX(focal_y - crop_height / 2, 0.0), h - crop_height));
    return (ThumbdRect){left, top, THUMBD_MIN(left + crop_width, w) - left, THUMBD_MIN(top + crop_height, h) - top};
}

// MARK: - Placement

ThumbdCompass thumbd_compass(ThumbdVipsGravity g) {
    return (ThumbdCompass){
        .west = g == THUMBD_VIPS_GRAVITY_WEST || g == THUMBD_VIPS_GRAVITY_NORTH_WEST ||
                g == THUMBD_VIPS_GRAVITY_SOUTH_WEST,
        .east = g == THUMBD_VIPS_GRAVITY_EAST || g == THUMBD_VIPS_GRAVITY_NORTH_EAST ||
                g == THUMBD_VIPS_GRAVITY_SOUTH_EAST,
        .north = g == THUMBD_VIPS_GRAVITY_NORTH || g == THUMBD_VIPS_GRAVITY_NORTH_EAST ||
                 g == THUMBD_VIPS_GRAVITY_NORTH_WEST,
        .south = g == THUMBD_VIPS_GRAVITY_SOUTH || g == THUMBD_VIPS_GRAVITY_SOUTH_EAST ||
                 g == THUMBD_VIPS_GRAVITY_SOUTH_WEST,
    };
}

int thumbd_place(int free_space, int gravity_low, int gravity_high) {
    if (gravity_low) return 0;
    if (gravity_high) return free_space;
    return free_space / 2;
}

int thumbd_focal_offset(int total, int length, double centre) {
    int offset = (int)lrint(centre * total - length / 2.0);
    return THUMBD_MAX(0, THUMBD_MIN(offset, total - length));
}

// MARK: - Intermediates

double thumbd_band_scale(int band, int width, int height) {
    return THUMBD_MIN(1.0, (double)band / THUMBD_MAX(width, height));
}

int thumbd_load_shrink(int width, int height, int band) {
    // vips_thumbnail keeps a 2x margin above its target when it picks one (its own final resize antialiases from
    // it); every box made from an intermediate is resized again with a full Lanczos-3, so the intermediate needs
    // none: for a 1600 px JPEG and band 512 that is 1/2 instead of a full decode. Never above the shortest side:
    // libvips 8.14's JPEG loader divides the sides rounding down, and a side of 0 aborts the process (its "bad
    // dimensions" assertion), as a 1 x 10000 JPEG did (compat/README.md).
    int longest = THUMBD_MAX(width, height);
    int shortest = THUMBD_MIN(width, height);
    int shrink = 8;
    while (shrink > 1 && ((longest + shrink - 1) / shrink < band || shrink > shortest)) shrink /= 2;
    return shrink;
}
