// SPDX-License-Identifier: Apache-2.0
// The plan's steps around the resize, one small function each, in the order a job runs them:
//
//   orientation (EXIF, rotate, mirror) -> trim -> crop -> [resize] -> cover crop (gravity, focal point)
//   -> tone (brightness, contrast, saturation) -> grey -> blur -> sharpen -> pixelate
//   -> pad to the box -> padding -> flatten onto the background
//
// Every step returns at once when the plan does not ask for it, so a plain resize runs none of them. Each
// takes the current image as `VipsImage **` (transfer full in and out): on success it may have replaced it,
// on failure (-1, reason in libvips's error buffer) the caller still owns *image and releases it.
#include <math.h>

#include "CVipsShimsInternal.h"

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

ThumbdOrientation thumbd_orientation_of_job(ThumbdVipsThumbnailParams p, int exif) {
    ThumbdOrientation stored = p.auto_orient ? thumbd_orientation_from_exif(exif) : (ThumbdOrientation){0, 0};
    return thumbd_orientation_then(stored, (ThumbdOrientation){p.rotate, p.mirror ? 1 : 0});
}

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

int thumbd_step_orient(VipsImage **image, ThumbdOrientation o) {
    if (o.rotate) {
        VipsAngle angle = o.rotate == 90 ? VIPS_ANGLE_D90 : o.rotate == 180 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270;
        THUMBD_REPLACE(*image, vips_rot(in, &thumbd_next, angle, NULL));
    }
    if (o.mirror) THUMBD_REPLACE(*image, vips_flip(in, &thumbd_next, VIPS_DIRECTION_HORIZONTAL, NULL));
    return 0;
failed:
    return -1;
}

// MARK: - Region (trim, crop)

int thumbd_crop_rect(ThumbdVipsThumbnailParams p, ThumbdRect frame, double kx, double ky, ThumbdRect *out) {
    ThumbdRect r = frame;
    if (p.crop_unit == THUMBD_VIPS_CROP_PIXELS) {
        r = (ThumbdRect){frame.left + p.crop_left * kx, frame.top + p.crop_top * ky, p.crop_width * kx,
                         p.crop_height * ky};
    } else if (p.crop_unit == THUMBD_VIPS_CROP_FRACTIONS) {
        r = (ThumbdRect){frame.left + p.crop_left * frame.width, frame.top + p.crop_top * frame.height,
                         p.crop_width * frame.width, p.crop_height * frame.height};
    }
    // What lies outside the frame is dropped (a region may overhang the picture, as in imgproxy).
    double right = VIPS_MIN(r.left + r.width, frame.left + frame.width);
    double bottom = VIPS_MIN(r.top + r.height, frame.top + frame.height);
    r.left = VIPS_MAX(r.left, frame.left);
    r.top = VIPS_MAX(r.top, frame.top);
    r.width = right - r.left;
    r.height = bottom - r.top;
    *out = r;
    // Less than half a pixel of the source left on an axis: nothing to render.
    return r.width * 2 >= kx && r.height * 2 >= ky;
}

void thumbd_pixel_rect(ThumbdRect r, int width, int height, int *left, int *top, int *cut_width, int *cut_height) {
    // The size is rounded once and the left edge placed after it: rounding both edges could add a pixel to the
    // size (a 5.0 px region from 0.5 is 0 to 6), and with it a pixel beyond the box.
    *cut_width = VIPS_CLIP(1, (int)rint(r.width), width);
    *cut_height = VIPS_CLIP(1, (int)rint(r.height), height);
    *left = VIPS_CLIP(0, (int)rint(r.left), width - *cut_width);
    *top = VIPS_CLIP(0, (int)rint(r.top), height - *cut_height);
}

// The background a trim compares against: the given colour, else the pixel in the plan's corner. Alpha images are
// flattened first (onto that colour, or white), so transparent borders trim like a plain background.
static int trim_reference(VipsImage *image, ThumbdVipsThumbnailParams p, VipsImage **flat, double colour[3]) {
    *flat = image;
    g_object_ref(image);
    if (vips_image_hasalpha(image)) {
        double white[3] = {255, 255, 255};
        const double *under = p.trim_has_colour ? p.trim_colour : white;
        int bands = image->Bands - 1;
        VipsArrayDouble *background = vips_array_double_new(under, bands >= 3 ? 3 : 1);
        VipsImage *flattened = NULL;
        int failed = vips_flatten(image, &flattened, "background", background, NULL);
        vips_area_unref(VIPS_AREA(background));
        g_object_unref(image);
        *flat = flattened;
        if (failed) return -1;
    }
    if (p.trim_has_colour) {
        for (int i = 0; i < 3; i++) colour[i] = p.trim_colour[i];
        return 0;
    }
    double *pixel = NULL;
    int n = 0;
    int x = (p.trim_corner == 1 || p.trim_corner == 3) ? (*flat)->Xsize - 1 : 0;
    int y = (p.trim_corner == 2 || p.trim_corner == 3) ? (*flat)->Ysize - 1 : 0;
    if (vips_getpoint(*flat, &pixel, &n, x, y, NULL)) return -1;
    for (int i = 0; i < 3; i++) colour[i] = pixel[VIPS_MIN(i, n - 1)];
    g_free(pixel);
    return 0;
}

int thumbd_step_trim(VipsImage *image, ThumbdVipsThumbnailParams p, ThumbdRect *frame) {
    *frame = (ThumbdRect){0, 0, image->Xsize, image->Ysize};
    if (!p.trim) return 0;
    VipsImage *flat = NULL;
    double colour[3];
    if (trim_reference(image, p, &flat, colour)) {
        if (flat) g_object_unref(flat);
        return -1;
    }
    // vips_find_trim's 3 x 3 median refuses a picture narrower or shorter than that ("window too large"): such
    // a picture is extended by copies of its right and bottom edges, which keeps its coordinates and its borders.
    if (flat->Xsize < 3 || flat->Ysize < 3) {
        VipsImage *extended = NULL;
        int failed = vips_embed(flat, &extended, 0, 0, VIPS_MAX(3, flat->Xsize), VIPS_MAX(3, flat->Ysize), "extend",
                                VIPS_EXTEND_COPY, NULL);
        g_object_unref(flat);
        if (failed) return -1;
        flat = extended;
    }
    VipsArrayDouble *background = vips_array_double_new(colour, flat->Bands >= 3 ? 3 : 1);
    int left = 0, top = 0, width = 0, height = 0;
    int failed = vips_find_trim(flat, &left, &top, &width, &height, "threshold", p.trim_threshold, "background",
                                background, NULL);
    vips_area_unref(VIPS_AREA(background));
    g_object_unref(flat);
    if (failed) return -1;
    width = VIPS_MIN(width, image->Xsize - left);
    height = VIPS_MIN(height, image->Ysize - top);
    // A picture that is all background keeps its frame: trimming it to nothing would leave no picture.
    if (width > 0 && height > 0) *frame = (ThumbdRect){left, top, width, height};
    return 0;
}

// MARK: - Cover crop

// The edges a compass gravity places against (none on an axis: centred on it).
typedef struct ThumbdCompass {
    int west, east, north, south;
} ThumbdCompass;

static ThumbdCompass compass(ThumbdVipsGravity g) {
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

static int crop_offset(int free_space, int gravity_low, int gravity_high) {
    if (gravity_low) return 0;
    if (gravity_high) return free_space;
    return free_space / 2;
}

void thumbd_settle_region(ThumbdVipsThumbnailParams *p, ThumbdRect region, double kx, double ky) {
    if (p->focal_in_pixels) {
        p->focal_x = VIPS_CLIP(0.0, (p->focal_x * kx - region.left) / VIPS_MAX(region.width, 1e-9), 1.0);
        p->focal_y = VIPS_CLIP(0.0, (p->focal_y * ky - region.top) / VIPS_MAX(region.height, 1e-9), 1.0);
        p->focal_in_pixels = 0;
    }
    // Decided once, from the region's size in source pixels (what the resize target decides from), so the steps
    // after the resize never decide again from a rounded size.
    int width = VIPS_MAX(1, (int)rint(region.width / kx)), height = VIPS_MAX(1, (int)rint(region.height / ky));
    p->fit = thumbd_effective_fit(*p, width, height);
    thumbd_adapted_box(*p, width, height, &p->width, &p->height);
    p->adaptive = 0;
}

// The offset that centres `length` on `centre` (a fraction of `total`) without leaving the picture.
static int focal_offset(int total, int length, double centre) {
    int offset = (int)lrint(centre * total - length / 2.0);
    return VIPS_MAX(0, VIPS_MIN(offset, total - length));
}

int thumbd_step_cover_crop(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.fit != THUMBD_VIPS_FIT_COVER) return 0;
    VipsImage *current = *image;
    int crop_width = VIPS_MIN(p.width, current->Xsize);
    int crop_height = VIPS_MIN(p.height, current->Ysize);
    if (crop_width == current->Xsize && crop_height == current->Ysize) return 0;
    ThumbdVipsGravity g = p.gravity;
    if (g == THUMBD_VIPS_GRAVITY_ATTENTION || g == THUMBD_VIPS_GRAVITY_ENTROPY) {
        VipsInteresting interesting =
            g == THUMBD_VIPS_GRAVITY_ATTENTION ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_ENTROPY;
        THUMBD_REPLACE(*image,
                       vips_smartcrop(in, &thumbd_next, crop_width, crop_height, "interesting", interesting, NULL));
        return 0;
    }
    int left, top;
    if (g == THUMBD_VIPS_GRAVITY_FOCAL) {
        left = focal_offset(current->Xsize, crop_width, p.focal_x);
        top = focal_offset(current->Ysize, crop_height, p.focal_y);
    } else {
        ThumbdCompass c = compass(g);
        left = crop_offset(current->Xsize - crop_width, c.west, c.east);
        top = crop_offset(current->Ysize - crop_height, c.north, c.south);
    }
    THUMBD_REPLACE(*image, vips_extract_area(in, &thumbd_next, left, top, crop_width, crop_height, NULL));
    return 0;
failed:
    return -1;
}

// MARK: - Effects

// One multiplier and one offset per colour band; an alpha band passes unchanged.
static int linear_on_colour(VipsImage **image, const double a[3], const double b[3]) {
    int bands = (*image)->Bands;
    int colour = vips_image_hasalpha(*image) ? bands - 1 : bands;
    double multipliers[4] = {1, 1, 1, 1}, offsets[4] = {0, 0, 0, 0};
    for (int i = 0; i < colour && i < 3; i++) {
        multipliers[i] = a[i];
        offsets[i] = b[i];
    }
    THUMBD_REPLACE(*image, vips_linear(in, &thumbd_next, multipliers, offsets, VIPS_MIN(bands, 4), "uchar", TRUE,
                                       NULL));
    return 0;
failed:
    return -1;
}

int thumbd_step_tone(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.saturation != 1 && (*image)->Bands >= 3) {
        // Chroma scaled in LCh: lightness and hue stay.
        const double a[3] = {1, p.saturation, 1}, b[3] = {0, 0, 0};
        THUMBD_REPLACE(*image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_LCH, NULL));
        int bands = (*image)->Bands;
        double multipliers[4] = {a[0], a[1], a[2], 1}, offsets[4] = {b[0], b[1], b[2], 0};
        THUMBD_REPLACE(*image, vips_linear(in, &thumbd_next, multipliers, offsets, VIPS_MIN(bands, 4), NULL));
        THUMBD_REPLACE(*image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_sRGB, NULL));
        if ((*image)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    }
    if (p.contrast != 1 || p.brightness != 0) {
        // Contrast pivots on mid-grey; brightness is then added (out = c * (in - 128) + 128 + b).
        double c = p.contrast, offset = 128 * (1 - c) + p.brightness;
        const double a[3] = {c, c, c}, b[3] = {offset, offset, offset};
        if (linear_on_colour(image, a, b)) return -1;
    }
    return 0;
failed:
    return -1;
}

int thumbd_step_greyscale(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (!p.greyscale || (*image)->Bands < 3) return 0;
    THUMBD_REPLACE(*image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_B_W, NULL));
    return 0;
failed:
    return -1;
}

// Cuts or extends (repeating the edge) the image to exactly width x height from its top-left corner.
static int fit_to(VipsImage **image, int width, int height) {
    if ((*image)->Xsize > width || (*image)->Ysize > height) {
        THUMBD_REPLACE(*image, vips_extract_area(in, &thumbd_next, 0, 0, VIPS_MIN(width, in->Xsize),
                                                 VIPS_MIN(height, in->Ysize), NULL));
    }
    if ((*image)->Xsize < width || (*image)->Ysize < height) {
        THUMBD_REPLACE(*image, vips_embed(in, &thumbd_next, 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL));
    }
    return 0;
failed:
    return -1;
}

// A Gaussian blur whose cost does not grow with sigma beyond 10: a Gaussian's cost is the pixels times its
// mask (about 6 sigma), and sigma 100 over a 4096 x 4096 output took 47 s of one core. Above 10, the image is
// first averaged in blocks of ceil(sigma / 10), blurred there with the rest of sigma, and resized back: the
// block average is itself a blur, and what is left has no detail the smaller grid cannot hold.
static int gaussian(VipsImage **image, double sigma) {
    int width = (*image)->Xsize, height = (*image)->Ysize;
    int factor = (int)ceil(sigma / 10);
    factor = VIPS_MIN(factor, VIPS_MAX(1, VIPS_MIN(width, height) / 4));
    if (factor <= 1) {
        THUMBD_REPLACE(*image, vips_gaussblur(in, &thumbd_next, sigma, NULL));
        return 0;
    }
    THUMBD_REPLACE(*image, vips_shrink(in, &thumbd_next, (double)factor, (double)factor, NULL));
    THUMBD_REPLACE(*image, vips_gaussblur(in, &thumbd_next, sigma / factor, NULL));
    THUMBD_REPLACE(*image, vips_resize(in, &thumbd_next, (double)width / in->Xsize, "vscale",
                                       (double)height / in->Ysize, NULL));
    return fit_to(image, width, height);
failed:
    return -1;
}

int thumbd_step_blur(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.blur_sigma <= 0) return 0;
    if (vips_image_hasalpha(*image)) {
        // Premultiplied, so colour hidden under transparent pixels does not bleed into the visible ones.
        THUMBD_REPLACE(*image, vips_premultiply(in, &thumbd_next, NULL));
        if (gaussian(image, p.blur_sigma)) return -1;
        THUMBD_REPLACE(*image, vips_unpremultiply(in, &thumbd_next, NULL));
        THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    } else {
        if (gaussian(image, p.blur_sigma)) return -1;
        if ((*image)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    }
    return 0;
failed:
    return -1;
}

int thumbd_step_sharpen(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.sharpen_sigma <= 0) return 0;
    THUMBD_REPLACE(*image, vips_sharpen(in, &thumbd_next, "sigma", p.sharpen_sigma, NULL));
    if ((*image)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    return 0;
failed:
    return -1;
}

int thumbd_step_pixelate(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.pixelate <= 1) return 0;
    int width = (*image)->Xsize, height = (*image)->Ysize;
    int block = VIPS_MIN(p.pixelate, VIPS_MIN(width, height));
    if (block <= 1) return 0;
    // Average each block, blow the blocks back up, and cut or extend the edge to the original size.
    THUMBD_REPLACE(*image, vips_shrink(in, &thumbd_next, (double)block, (double)block, NULL));
    THUMBD_REPLACE(*image, vips_zoom(in, &thumbd_next, block, block, NULL));
    return fit_to(image, width, height);
failed:
    return -1;
}

// MARK: - Canvas

// sRGB with alpha, ready to be extended with an RGBA background.
static int to_rgba(VipsImage **image) {
    if ((*image)->Bands < 3) {
        THUMBD_REPLACE(*image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_sRGB, NULL));
    }
    if (!vips_image_hasalpha(*image)) THUMBD_REPLACE(*image, vips_addalpha(in, &thumbd_next, NULL));
    return 0;
failed:
    return -1;
}

static int embed(VipsImage **image, ThumbdVipsThumbnailParams p, int left, int top, int width, int height) {
    if (left == 0 && top == 0 && width == (*image)->Xsize && height == (*image)->Ysize) return 0;
    if (to_rgba(image)) return -1;
    // Transparent unless a background colour is given.
    double colour[4] = {0, 0, 0, 0};
    if (p.has_background) {
        for (int i = 0; i < 4; i++) colour[i] = p.background[i];
    }
    VipsArrayDouble *background = vips_array_double_new(colour, 4);
    VipsImage *next = NULL;
    int failed = vips_embed(*image, &next, left, top, width, height, "extend", VIPS_EXTEND_BACKGROUND,
                            "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (failed) {
        if (next) g_object_unref(next);
        return -1;
    }
    g_object_unref(*image);
    *image = next;
    return 0;
}

int64_t thumbd_canvas_pixels(ThumbdVipsThumbnailParams p, int width, int height) {
    if (p.fit == THUMBD_VIPS_FIT_PAD) {
        width = VIPS_MAX(width, p.width);
        height = VIPS_MAX(height, p.height);
    }
    return (int64_t)(width + p.padding_left + p.padding_right) * (height + p.padding_top + p.padding_bottom);
}

int thumbd_step_pad(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (p.fit != THUMBD_VIPS_FIT_PAD) return 0;
    int width = VIPS_MAX(p.width, (*image)->Xsize), height = VIPS_MAX(p.height, (*image)->Ysize);
    ThumbdVipsGravity g = p.gravity;
    ThumbdCompass c = compass(g);
    int left = crop_offset(width - (*image)->Xsize, c.west, c.east);
    int top = crop_offset(height - (*image)->Ysize, c.north, c.south);
    return embed(image, p, left, top, width, height);
}

int thumbd_step_padding(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (!(p.padding_top | p.padding_right | p.padding_bottom | p.padding_left)) return 0;
    return embed(image, p, p.padding_left, p.padding_top, (*image)->Xsize + p.padding_left + p.padding_right,
                 (*image)->Ysize + p.padding_top + p.padding_bottom);
}

int thumbd_step_flatten(VipsImage **image, ThumbdVipsThumbnailParams p, ThumbdVipsFormat format) {
    if (!vips_image_hasalpha(*image)) return 0;
    int opaque_background = p.has_background && p.background[3] >= 255;
    if (!opaque_background && format != THUMBD_VIPS_FORMAT_JPEG) return 0;
    // JPEG has no alpha: without a background colour, composite over white, as browsers show transparent
    // areas on a white page.
    double colour[3] = {255, 255, 255};
    if (p.has_background) {
        for (int i = 0; i < 3; i++) colour[i] = p.background[i];
    }
    int bands = (*image)->Bands - 1;
    if (bands == 1) colour[0] = (colour[0] + colour[1] + colour[2]) / 3;
    VipsArrayDouble *background = vips_array_double_new(colour, bands >= 3 ? 3 : 1);
    VipsImage *flat = NULL;
    int failed = vips_flatten(*image, &flat, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (failed) {
        if (flat) g_object_unref(flat);
        return -1;
    }
    g_object_unref(*image);
    *image = flat;
    if ((*image)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    return 0;
failed:
    return -1;
}

// MARK: - Watermark

// The watermark as 8-bit sRGB with alpha, its alpha scaled by the opacity and its width by p.watermark_scale
// of `width`. Returns 0, -1 (libvips failed on good input) or -2 (the watermark itself is unusable).
static int watermark_image(ThumbdVipsThumbnailParams p, int width, VipsImage **out) {
    *out = NULL;
    ThumbdVipsFormat format;
    const char *loader;
    VipsImage *image = NULL;
    if (thumbd_vips_open_header(p.watermark, p.watermark_length, p.allowed_sources, &image, &format, &loader) !=
        THUMBD_VIPS_STEP_OK)
        return -2;
    if ((int64_t)image->Xsize * image->Ysize > p.max_source_pixels) {
        vips_error("thumbd", "watermark of %dx%d exceeds the pixel limit", image->Xsize, image->Ysize);
        g_object_unref(image);
        return -2;
    }
    g_object_unref(image);
    // Decoded whole, here, so that a damaged watermark fails as such (not later, inside the output's encode).
    image = vips_image_new_from_buffer((void *)p.watermark, p.watermark_length, "", "fail_on", VIPS_FAIL_ON_ERROR,
                                       NULL);
    if (!image) return -2;
    VipsImage *decoded = vips_image_copy_memory(image);
    g_object_unref(image);
    if (!decoded) return -2;
    image = decoded;
    if (image->Type != VIPS_INTERPRETATION_sRGB || image->BandFmt != VIPS_FORMAT_UCHAR) {
        THUMBD_REPLACE(image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_sRGB, NULL));
        if (image->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(image, vips_cast_uchar(in, &thumbd_next, NULL));
    }
    if (!vips_image_hasalpha(image)) THUMBD_REPLACE(image, vips_addalpha(in, &thumbd_next, NULL));
    if (p.watermark_scale > 0) {
        double factor = VIPS_MAX(1.0, rint(p.watermark_scale * width)) / image->Xsize;
        THUMBD_REPLACE(image, vips_resize(in, &thumbd_next, factor, NULL));
    }
    if (p.watermark_opacity < 1) {
        double a[4] = {1, 1, 1, p.watermark_opacity}, b[4] = {0, 0, 0, 0};
        THUMBD_REPLACE(image, vips_linear(in, &thumbd_next, a, b, 4, "uchar", TRUE, NULL));
    }
    *out = image;
    return 0;
failed:
    if (image) g_object_unref(image);
    return -1;
}

int thumbd_step_watermark(VipsImage **image, ThumbdVipsThumbnailParams p) {
    if (!p.watermark || p.watermark_opacity <= 0) return 0;
    VipsImage *mark = NULL;
    int made = watermark_image(p, (*image)->Xsize, &mark);
    if (made) return made;
    int width = (*image)->Xsize, height = (*image)->Ysize;
    int had_alpha = vips_image_hasalpha(*image);
    int x = 0, y = 0;
    if (p.watermark_tile) {
        int across = (width + mark->Xsize - 1) / mark->Xsize, down = (height + mark->Ysize - 1) / mark->Ysize;
        THUMBD_REPLACE(mark, vips_replicate(in, &thumbd_next, across, down, NULL));
        THUMBD_REPLACE(mark, vips_extract_area(in, &thumbd_next, 0, 0, width, height, NULL));
    } else {
        ThumbdVipsGravity g = p.watermark_gravity;
        ThumbdCompass c = compass(g);
        // Offsets move the mark inward from the edges it is placed against (a shift right/down at the centre).
        x = c.west ? p.watermark_x
                   : c.east ? width - mark->Xsize - p.watermark_x : (width - mark->Xsize) / 2 + p.watermark_x;
        y = c.north ? p.watermark_y
                    : c.south ? height - mark->Ysize - p.watermark_y : (height - mark->Ysize) / 2 + p.watermark_y;
    }
    if ((*image)->Bands < 3) THUMBD_REPLACE(*image, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_sRGB, NULL));
    THUMBD_REPLACE(*image, vips_composite2(in, mark, &thumbd_next, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL));
    if ((*image)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*image, vips_cast_uchar(in, &thumbd_next, NULL));
    // An opaque picture stays opaque (and without an alpha band): the mark only adds colour.
    if (!had_alpha && vips_image_hasalpha(*image)) {
        THUMBD_REPLACE(*image, vips_extract_band(in, &thumbd_next, 0, "n", (*image)->Bands - 1, NULL));
    }
    g_object_unref(mark);
    return 0;
failed:
    if (mark) g_object_unref(mark);
    return -1;
}
