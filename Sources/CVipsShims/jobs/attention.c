// SPDX-License-Identifier: Apache-2.0
// A placed crop placed by libvips's attention (imgproxy's `c:W:H:sm`): the region of the crop's size, centred on
// the point vips_smartcrop's attention finds in the frame it is cut from, then kept inside the frame, as
// vips_smartcrop centres its own crop. The point is found on pixels the job already has (an intermediate's), or on
// a small preview of the source (the lazy paths, which cut the region before anything is decoded).
#include "../internal/jobs.h"

// The attention point of `image` (transfer none), as fractions of its sides. 0, or -1 with libvips's error.
static int attention_point(VipsImage *image, double *fx, double *fy) {
    VipsImage *crop = NULL;
    int x = 0, y = 0;
    if (vips_smartcrop(image, &crop, 1, 1, "interesting", VIPS_INTERESTING_ATTENTION, "attention_x", &x,
                       "attention_y", &y, NULL))
        return -1;
    g_object_unref(crop);
    *fx = THUMBD_CLIP(0.0, (x + 0.5) / image->Xsize, 1.0);
    *fy = THUMBD_CLIP(0.0, (y + 0.5) / image->Ysize, 1.0);
    return 0;
}

// The region centred on (fx, fy), fractions of `frame`.
static int centred_region(const ThumbdJob *job, double fx, double fy, ThumbdRect frame, double kx, double ky,
                          ThumbdRect *out) {
    ThumbdVipsThumbnailParams q = *job->params;
    q.crop_gravity = THUMBD_VIPS_GRAVITY_FOCAL;
    q.crop_left = fx;
    q.crop_top = fy;
    q.crop_fractions &= ~(THUMBD_VIPS_CROP_FRACTION_LEFT | THUMBD_VIPS_CROP_FRACTION_TOP);
    return thumbd_crop_rect(&q, frame, frame, kx, ky, out);
}

int thumbd_job_wants_attention_crop(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    return p->crop_unit == THUMBD_VIPS_CROP_PLACED && p->crop_gravity == THUMBD_VIPS_GRAVITY_ATTENTION;
}

ThumbdVipsStep thumbd_job_attention_region(const ThumbdJob *job, VipsImage *image, ThumbdRect frame, double kx,
                                           double ky, ThumbdRect *region) {
    VipsImage *owned = NULL;  // the preview, when the job has no pixels yet
    VipsImage *in = image;
    if (!in) {
        // A preview of the source, upright: attention works on a small copy anyway (libvips shrinks it first).
        ThumbdResizeTarget target = {256, 256, THUMBD_SIZE_DOWN};
        if (thumbd_job_thumbnail_buffer(job, target, 0, &owned)) return THUMBD_VIPS_STEP_DECODE;
        ThumbdVipsStep step = thumbd_turn(&owned, job->turn);
        if (step != THUMBD_VIPS_STEP_OK) {
            g_object_unref(owned);
            return step;
        }
        in = owned;
        frame = (ThumbdRect){0, 0, in->Xsize, in->Ysize};
    }
    int left, top, width, height;
    thumbd_pixel_rect(frame, in->Xsize, in->Ysize, &left, &top, &width, &height);
    VipsImage *area = NULL;
    double fx = 0.5, fy = 0.5;
    int failed = vips_extract_area(in, &area, left, top, width, height, NULL) || attention_point(area, &fx, &fy);
    if (area) g_object_unref(area);
    if (owned) g_object_unref(owned);
    if (failed) return THUMBD_VIPS_STEP_THUMBNAIL;
    ThumbdRect whole = {0, 0, job->upright_width, job->upright_height};
    int inside = image ? centred_region(job, fx, fy, frame, kx, ky, region)
                       : centred_region(job, fx, fy, whole, 1, 1, region);
    if (!inside) vips_error("thumbd", "the crop region lies outside the picture");
    return inside ? THUMBD_VIPS_STEP_OK : THUMBD_VIPS_STEP_REGION;
}
