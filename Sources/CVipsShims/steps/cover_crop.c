// SPDX-License-Identifier: Apache-2.0
// Step: cover's overflow, cut by a compass gravity, the focal point or libvips's smart crop, from the settled box.
#include "../internal/steps.h"

int thumbd_wants_cover_crop(const ThumbdJob *job) { return job->box.fit == THUMBD_VIPS_FIT_COVER; }

ThumbdVipsStep thumbd_step_cover_crop(ThumbdJob *job, VipsImage **image) {
    return thumbd_cover_cut(job, image, job->box.width, job->box.height);
}

ThumbdVipsStep thumbd_cover_cut(const ThumbdJob *job, VipsImage **image, int box_width, int box_height) {
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
    }
    if (vips_extract_area(in, &t[0], left, top, crop_width, crop_height, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}
