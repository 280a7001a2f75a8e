// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's curve: each colour band through its table (curve_table, made by Swift as thumbor makes its spline
// tables: the band's own then the all-channels one), with maplut; an alpha band unchanged. A grey picture
// becomes sRGB first, as the three tables may differ.
#include "../internal/steps.h"

int thumbd_wants_curve(const ThumbdJob *job) { return job->params->curve != 0; }

ThumbdVipsStep thumbd_step_curve(ThumbdJob *job, VipsImage **image) {
    VipsImage *in = *image;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 6);
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    int colour = vips_image_hasalpha(in) ? in->Bands - 1 : in->Bands;
    VipsImage *bands = in;
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[1], 0, "n", colour, NULL)) return thumbd_scope_failed(scope);
        bands = t[1];
    }
    t[2] = vips_image_new_from_memory_copy(job->params->curve_table, 256 * 3, 256, 1, 3, VIPS_FORMAT_UCHAR);
    if (!t[2] || vips_maplut(bands, &t[3], t[2], NULL)) return thumbd_scope_failed(scope);
    VipsImage *out = t[3];
    if (colour != in->Bands) {
        if (vips_extract_band(in, &t[4], colour, "n", in->Bands - colour, NULL) ||
            vips_bandjoin2(out, t[4], &t[5], NULL))
            return thumbd_scope_failed(scope);
        out = t[5];
    }
    return thumbd_scope_keep(scope, image, out);
}
