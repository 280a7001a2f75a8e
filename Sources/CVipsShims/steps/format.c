// SPDX-License-Identifier: Apache-2.0
// Step: the output format of a still: the caller's choice for opaque or transparent thumbnails. Frames of an
// animation have theirs (format_animated) before they start.
#include "../internal/steps.h"

// True when the image has an alpha band with at least one pixel that is not fully opaque. Needs an 8-bit
// image in memory (cheap then: a thumbnail-sized scan).
static int has_transparency(VipsImage *image, int *transparent) {
    *transparent = 0;
    if (!vips_image_hasalpha(image)) return 0;
    VipsImage *alpha = NULL;
    double minimum = 255;
    if (vips_extract_band(image, &alpha, image->Bands - 1, NULL) || vips_min(alpha, &minimum, NULL)) {
        if (alpha) g_object_unref(alpha);
        return -1;
    }
    g_object_unref(alpha);
    *transparent = minimum < 255;
    return 0;
}

int thumbd_wants_format(const ThumbdJob *job) { return job->format == THUMBD_VIPS_FORMAT_UNKNOWN; }

ThumbdVipsStep thumbd_step_format(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    job->format = p->format_opaque;
    if (p->format_alpha != p->format_opaque) {
        int transparent = 0;
        if (has_transparency(*image, &transparent)) return THUMBD_VIPS_STEP_THUMBNAIL;
        if (transparent) job->format = p->format_alpha;
    }
    return THUMBD_VIPS_STEP_OK;
}
