// SPDX-License-Identifier: Apache-2.0
// Step: transparent pixels flattened onto an opaque background colour, or onto white for JPEG (which has no
// alpha), as browsers show transparent areas on a white page.
#include "../internal/steps.h"

int thumbd_wants_flatten(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    return (p->has_background && p->background[3] >= 255) || job->has_fill_colour ||
           job->format == THUMBD_VIPS_FORMAT_JPEG;
}

ThumbdVipsStep thumbd_step_flatten(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsImage *in = *image;
    if (!vips_image_hasalpha(in)) return THUMBD_VIPS_STEP_OK;
    double colour[3] = {255, 255, 255};
    if (p->has_background) {
        for (int i = 0; i < 3; i++) colour[i] = p->background[i];
    }
    if (job->has_fill_colour) {
        for (int i = 0; i < 3; i++) colour[i] = job->fill_colour[i];
    }
    int bands = in->Bands - 1;
    if (bands == 1) colour[0] = (colour[0] + colour[1] + colour[2]) / 3;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    VipsArrayDouble *background = vips_array_double_new(colour, bands >= 3 ? 3 : 1);
    int failed = vips_flatten(in, &t[0], "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (failed) return thumbd_scope_failed(scope);
    in = t[0];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[1], NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    return thumbd_scope_keep(scope, image, in);
}
