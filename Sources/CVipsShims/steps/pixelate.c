// SPDX-License-Identifier: Apache-2.0
// Step: pixelate: average each block, blow the blocks back up, and cut or extend the edge to the original size.
#include "../internal/steps.h"

int thumbd_wants_pixelate(const ThumbdJob *job) { return job->params->pixelate > 1; }

ThumbdVipsStep thumbd_step_pixelate(ThumbdJob *job, VipsImage **image) {
    return thumbd_pixelate_image(image, job->params->pixelate);
}

ThumbdVipsStep thumbd_pixelate_image(VipsImage **image, int block) {
    int width = (*image)->Xsize, height = (*image)->Ysize;
    block = VIPS_MIN(block, VIPS_MIN(width, height));
    if (block <= 1) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    if (vips_shrink(*image, &t[0], (double)block, (double)block, NULL) || vips_zoom(t[0], &t[1], block, block, NULL) ||
        thumbd_fit_to(t[1], &t[2], width, height))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[2]);
}
