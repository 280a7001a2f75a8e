// SPDX-License-Identifier: Apache-2.0
// Step: cover's overflow, cut by a compass gravity, the focal point or libvips's smart crop, from the settled box.
#include "../internal/steps.h"

int thumbd_wants_cover_crop(const ThumbdJob *job) { return job->box.fit == THUMBD_VIPS_FIT_COVER; }

ThumbdVipsStep thumbd_step_cover_crop(ThumbdJob *job, VipsImage **image) {
    return thumbd_cover_cut(job, image, job->box.width, job->box.height, 1.0);
}

// A gravity offset in pixels of `side` (scale: this image's pixels per output pixel), rounded half to even.
static int gravity_offset(double value, int is_fraction, int side, double scale) {
    return (int)rint(is_fraction ? side * value : value * scale);
}

// The window of the region the image shows once `left, top, width x height` of `in` is kept.
static void narrow_window(ThumbdJob *job, const VipsImage *in, int left, int top, int width, int height) {
    ThumbdRect w = job->window;
    job->window = (ThumbdRect){w.left + w.width * left / in->Xsize, w.top + w.height * top / in->Ysize,
                               w.width * width / in->Xsize, w.height * height / in->Ysize};
}

ThumbdVipsStep thumbd_cover_cut(ThumbdJob *job, VipsImage **image, int box_width, int box_height, double scale) {
    VipsImage *in = *image;
    int crop_width = VIPS_MIN(box_width, in->Xsize);
    int crop_height = VIPS_MIN(box_height, in->Ysize);
    if (crop_width == in->Xsize && crop_height == in->Ysize) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    ThumbdVipsGravity g = job->params->gravity;
    if (g == THUMBD_VIPS_GRAVITY_ATTENTION || g == THUMBD_VIPS_GRAVITY_ENTROPY) {
        VipsInteresting interesting =
            g == THUMBD_VIPS_GRAVITY_ATTENTION ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_ENTROPY;
        if (vips_smartcrop(in, &t[0], crop_width, crop_height, "interesting", interesting, NULL))
            return thumbd_scope_failed(scope);
        // vips_smartcrop cuts with vips_extract_area, which leaves the offset it cut at, negated, in Xoffset/Yoffset.
        narrow_window(job, in, VIPS_CLIP(0, -t[0]->Xoffset, in->Xsize - crop_width),
                      VIPS_CLIP(0, -t[0]->Yoffset, in->Ysize - crop_height), crop_width, crop_height);
        return thumbd_scope_keep(scope, image, t[0]);
    }
    int left, top;
    if (g == THUMBD_VIPS_GRAVITY_FOCAL) {
        left = thumbd_focal_offset(in->Xsize, crop_width, job->focal_x);
        top = thumbd_focal_offset(in->Ysize, crop_height, job->focal_y);
    } else {
        ThumbdCompass c = thumbd_compass(g);
        left = thumbd_place(in->Xsize - crop_width, c.west, c.east);
        top = thumbd_place(in->Ysize - crop_height, c.north, c.south);
        const ThumbdVipsThumbnailParams *p = job->params;
        if (p->gravity_offset_x != 0 || p->gravity_offset_y != 0) {
            // Offsets point inward from the edges the gravity names; at the centre they shift right and down.
            int f = p->gravity_offset_fractions;
            int dx = gravity_offset(p->gravity_offset_x, f & THUMBD_VIPS_CROP_FRACTION_LEFT, in->Xsize, scale);
            int dy = gravity_offset(p->gravity_offset_y, f & THUMBD_VIPS_CROP_FRACTION_TOP, in->Ysize, scale);
            left = VIPS_CLIP(0, c.east ? left - dx : left + dx, in->Xsize - crop_width);
            top = VIPS_CLIP(0, c.south ? top - dy : top + dy, in->Ysize - crop_height);
        }
    }
    if (vips_extract_area(in, &t[0], left, top, crop_width, crop_height, NULL)) return thumbd_scope_failed(scope);
    narrow_window(job, in, left, top, crop_width, crop_height);
    return thumbd_scope_keep(scope, image, t[0]);
}
