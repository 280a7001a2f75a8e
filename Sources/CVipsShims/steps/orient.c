// SPDX-License-Identifier: Apache-2.0
// Step: orientation (EXIF, rotate, mirror), applied to the resized picture so that every decode happens in one
// place (vips_thumbnail's own rotation would decode inside its build).
#include "../internal/steps.h"

int thumbd_wants_orient(const ThumbdJob *job) { return job->orient.rotate || job->orient.mirror; }

ThumbdVipsStep thumbd_step_orient(ThumbdJob *job, VipsImage **image) { return thumbd_turn(image, job->orient); }

ThumbdVipsStep thumbd_turn(VipsImage **image, ThumbdOrientation o) {
    if (!o.rotate && !o.mirror) return THUMBD_VIPS_STEP_OK;  // no scope either: it costs microseconds
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    VipsImage *in = *image;
    if (o.rotate) {
        VipsAngle angle = o.rotate == 90 ? VIPS_ANGLE_D90 : o.rotate == 180 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270;
        if (vips_rot(in, &t[0], angle, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    if (o.mirror) {
        if (vips_flip(in, &t[1], VIPS_DIRECTION_HORIZONTAL, NULL)) return thumbd_scope_failed(scope);
        in = t[1];
    }
    return thumbd_scope_keep(scope, image, in);
}
