// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's convolution: the kernel (divided by its sum when asked and the sum is not 0) applied to every
// band as a correlation (libvips does not flip its mask), edges extended by copying as thumbor clamps its indices,
// in float, then truncated and clamped to 0...255 as thumbor's (int) and ADJUST_COLOR do.
#include "../internal/steps.h"

int thumbd_wants_convolution(const ThumbdJob *job) {
    return job->params->convolution_columns > 0 && job->params->convolution_rows > 0;
}

ThumbdVipsStep thumbd_step_convolution(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    int columns = p->convolution_columns, rows = p->convolution_rows, count = columns * rows;
    double kernel[121], sum = 0;
    if (count > 121) {
        vips_error("thumbd", "convolution: kernel too large");
        return THUMBD_VIPS_STEP_THUMBNAIL;
    }
    for (int i = 0; i < count; i++) sum += (kernel[i] = p->convolution_kernel[i]);
    if (p->convolution_normalize && sum != 0)
        for (int i = 0; i < count; i++) kernel[i] /= sum;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 5);
    t[0] = vips_image_new_matrix_from_array(columns, rows, kernel, count);
    if (!t[0] || vips_conv(*image, &t[1], t[0], "precision", VIPS_PRECISION_FLOAT, NULL) ||
        vips_round(t[1], &t[2], VIPS_OPERATION_ROUND_FLOOR, NULL) || vips_cast_uchar(t[2], &t[3], NULL) ||
        vips_copy(t[3], &t[4], "interpretation", (*image)->Type, NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[4]);
}
