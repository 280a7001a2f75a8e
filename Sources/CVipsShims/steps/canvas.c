// SPDX-License-Identifier: Apache-2.0
// Steps: the output canvas. Its pixel limit is checked before it is made; THUMBD_VIPS_FIT_PAD extends the picture
// to the box (placed by gravity); padding adds output pixels on each side. Padded areas take the background
// colour, transparent without one.
#include <math.h>

#include "../internal/steps.h"

int thumbd_wants_canvas_limit(const ThumbdJob *job) {
    (void)job;
    return 1;  // an outside fit or padding can make any plan's canvas too large
}

ThumbdVipsStep thumbd_step_canvas_limit(ThumbdJob *job, VipsImage **image) {
    if (thumbd_canvas_pixels(job->params, job->box, (*image)->Xsize, (*image)->Ysize) <=
        job->params->max_source_pixels)
        return THUMBD_VIPS_STEP_OK;
    vips_error("thumbd", "the output canvas exceeds the pixel limit");
    return THUMBD_VIPS_STEP_CANVAS_LIMIT;
}

// *image extended to width x height with it at (left, top), as sRGB with alpha, the rest the background.
static ThumbdVipsStep embed(const ThumbdJob *job, VipsImage **image, int left, int top, int width, int height) {
    VipsImage *in = *image;
    if (left == 0 && top == 0 && width == in->Xsize && height == in->Ysize) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    // sRGB with alpha, ready to be extended with an RGBA background.
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL))
            return thumbd_scope_failed(scope);
        in = t[0];
    }
    if (!vips_image_hasalpha(in)) {
        if (vips_addalpha(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    // Transparent unless a background colour is given.
    double colour[4] = {0, 0, 0, 0};
    if (job->params->has_background) {
        for (int i = 0; i < 4; i++) colour[i] = job->params->background[i];
    }
    if (job->has_fill_colour) {
        for (int i = 0; i < 4; i++) colour[i] = job->fill_colour[i];
    }
    VipsArrayDouble *background = vips_array_double_new(colour, 4);
    int failed = vips_embed(in, &t[2], left, top, width, height, "extend", VIPS_EXTEND_BACKGROUND, "background",
                            background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (failed) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[2]);
}

int thumbd_wants_pad(const ThumbdJob *job) { return job->box.fit == THUMBD_VIPS_FIT_PAD || job->params->extend; }

void thumbd_pad_canvas(const ThumbdJob *job, int image_width, int image_height, int *width, int *height) {
    int extend = job->params->extend;
    *width = image_width;
    *height = image_height;
    if (job->box.fit == THUMBD_VIPS_FIT_PAD || (extend & THUMBD_VIPS_EXTEND_WIDTH))
        *width = VIPS_MAX(job->box.width, image_width);
    if (job->box.fit == THUMBD_VIPS_FIT_PAD || (extend & THUMBD_VIPS_EXTEND_HEIGHT))
        *height = VIPS_MAX(job->box.height, image_height);
    if (extend & THUMBD_VIPS_EXTEND_ASPECT) {
        // The smallest canvas of the box's aspect ratio around the picture (imgproxy's extend_aspect_ratio).
        double box_aspect = (double)job->box.width / job->box.height, aspect = (double)*width / *height;
        if (box_aspect < aspect) *height = VIPS_MAX(*height, (int)lround(*width / box_aspect));
        else if (box_aspect > aspect) *width = VIPS_MAX(*width, (int)lround(*height * box_aspect));
    }
}

ThumbdVipsStep thumbd_step_pad(ThumbdJob *job, VipsImage **image) {
    int width, height;
    thumbd_pad_canvas(job, (*image)->Xsize, (*image)->Ysize, &width, &height);
    ThumbdCompass c = thumbd_compass(job->params->gravity);
    int left = thumbd_place(width - (*image)->Xsize, c.west, c.east);
    int top = thumbd_place(height - (*image)->Ysize, c.north, c.south);
    return embed(job, image, left, top, width, height);
}

int thumbd_wants_padding(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    return (p->padding_top | p->padding_right | p->padding_bottom | p->padding_left) != 0;
}

ThumbdVipsStep thumbd_step_padding(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    return embed(job, image, p->padding_left, p->padding_top, (*image)->Xsize + p->padding_left + p->padding_right,
                 (*image)->Ysize + p->padding_top + p->padding_bottom);
}
