// SPDX-License-Identifier: Apache-2.0
// Step: redact. Each of the plan's boxes (the faces Swift found, grown by their margin), given in pixels of the
// turned, untrimmed picture, is mapped into the current image the way the job settled its geometry (the region the
// box is made from, then what the cover cuts kept: job->region, job->window), cut to the image, and blurred or
// pixelated inside (extract, blur or pixelate, insert back), or outlined. A box that does not show is skipped.
#include <math.h>

#include "../internal/steps.h"

int thumbd_wants_redact(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    return p->redact_mode != THUMBD_VIPS_REDACT_NONE && p->redact_count > 0;
}

// The box in the picture the job turned. Swift writes it in the source made upright by its EXIF orientation, then
// turned by the plan; a plan that does not apply EXIF (auto_orient off) turned the stored picture by the plan alone.
static ThumbdRect box_in_turned_picture(const ThumbdJob *job, ThumbdVipsRedactBox box) {
    ThumbdRect r = {box.x, box.y, box.width, box.height};
    const ThumbdVipsThumbnailParams *p = job->params;
    if (p->auto_orient) return r;
    ThumbdOrientation plan = {p->rotate, p->mirror ? 1 : 0};
    ThumbdOrientation assumed = thumbd_orientation_then(thumbd_orientation_from_exif(job->source.exif), plan);
    if (assumed.rotate == job->turn.rotate && assumed.mirror == job->turn.mirror) return r;
    double stored_width = job->source.stored_width, stored_height = job->source.stored_height;
    int swaps = thumbd_orientation_swaps(assumed);
    ThumbdRect stored =
        thumbd_stored_rect(r, assumed, swaps ? stored_height : stored_width, swaps ? stored_width : stored_height);
    // The stored picture is the turned one turned back: the inverse turn's "stored" rectangle is the turned one's.
    return thumbd_stored_rect(stored, thumbd_orientation_inverse(job->turn), stored_width, stored_height);
}

// The box in pixels of `image`: whole pixels that cover every pixel it touches (uncut: it may overhang the image),
// and the box's larger side in the image (what the strength is in proportion to). 0 when the geometry is empty.
static int box_in_image(const ThumbdJob *job, ThumbdVipsRedactBox box, const VipsImage *image, int *left, int *top,
                        int *right, int *bottom, double *size) {
    ThumbdRect r = box_in_turned_picture(job, box), region = job->region, window = job->window;
    if (region.width <= 0 || region.height <= 0 || window.width <= 0 || window.height <= 0) return 0;
    // Turned picture -> fractions of the region -> fractions of the window -> the image's pixels.
    double sx = image->Xsize / (region.width * window.width), sy = image->Ysize / (region.height * window.height);
    double x0 = (r.left - region.left - window.left * region.width) * sx;
    double y0 = (r.top - region.top - window.top * region.height) * sy;
    double x1 = x0 + r.width * sx, y1 = y0 + r.height * sy;
    *size = THUMBD_MAX(x1 - x0, y1 - y0);
    // Kept well inside int, wherever an odd box lies.
    double limit = 4.0 * THUMBD_UNBOUNDED;
    *left = (int)THUMBD_CLIP(-limit, floor(x0), limit);
    *top = (int)THUMBD_CLIP(-limit, floor(y0), limit);
    *right = (int)THUMBD_CLIP(-limit, ceil(x1), limit);
    *bottom = (int)THUMBD_CLIP(-limit, ceil(y1), limit);
    return *right > *left && *bottom > *top;
}

// The part of `left, top` to `right, bottom` inside the image, as a rectangle. 0 when nothing of it shows.
static int cut_to_image(const VipsImage *image, int left, int top, int right, int bottom, int *x, int *y, int *width,
                        int *height) {
    int l = THUMBD_CLIP(0, left, image->Xsize), t = THUMBD_CLIP(0, top, image->Ysize);
    int r = THUMBD_CLIP(0, right, image->Xsize), b = THUMBD_CLIP(0, bottom, image->Ysize);
    if (r <= l || b <= t) return 0;
    *x = l, *y = t, *width = r - l, *height = b - t;
    return 1;
}

// The outline's colour: red, opaque; white on a grey image.
static void outline_ink(const VipsImage *image, double *ink) {
    for (int i = 0; i < image->Bands; i++) ink[i] = 255;
    if (image->Bands >= 3) ink[1] = ink[2] = 0;
}

// Every box's outline, `line` pixels wide inside its edges: a mask drawn in memory, then the ink where it is set.
static ThumbdVipsStep outline(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsImage *in = *image;
    int line = p->redact_strength > 0 ? (int)lround(p->redact_strength) : 2;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    if (vips_black(&t[0], in->Xsize, in->Ysize, NULL) || !(t[1] = vips_image_copy_memory(t[0])))
        return thumbd_scope_failed(scope);
    VipsImage *mask = t[1];  // a new image of this step's own: drawn on in place
    int drawn = 0;
    for (int i = 0; i < p->redact_count && i < THUMBD_VIPS_MAX_REDACT; i++) {
        int left, top, right, bottom, x, y, cut_width, cut_height;
        double size;
        if (!box_in_image(job, p->redact_boxes[i], in, &left, &top, &right, &bottom, &size) ||
            !cut_to_image(in, left, top, right, bottom, &x, &y, &cut_width, &cut_height))
            continue;
        // The box's own edges, uncut: an edge outside the image is not drawn (vips_draw_rect clips), so a face cut
        // by the crop shows no line where the crop cut it.
        int width = right - left, height = bottom - top;
        int w = THUMBD_MIN(line, width), h = THUMBD_MIN(line, height);
        if (vips_draw_rect1(mask, 255, left, top, width, h, "fill", TRUE, NULL) ||
            vips_draw_rect1(mask, 255, left, top + height - h, width, h, "fill", TRUE, NULL) ||
            vips_draw_rect1(mask, 255, left, top, w, height, "fill", TRUE, NULL) ||
            vips_draw_rect1(mask, 255, left + width - w, top, w, height, "fill", TRUE, NULL))
            return thumbd_scope_failed(scope);
        drawn = 1;
    }
    if (!drawn) return thumbd_scope_keep(scope, image, in);
    double ink[16];
    outline_ink(in, ink);
    if (!(t[2] = vips_image_new_from_image(in, ink, THUMBD_MIN(in->Bands, 16))) ||
        vips_ifthenelse(mask, t[2], in, &t[3], NULL))
        return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[3]);
}

ThumbdVipsStep thumbd_step_redact(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    if (p->redact_mode == THUMBD_VIPS_REDACT_BOX) return outline(job, image);
    VipsObject *scope = thumbd_scope_new();
    int count = THUMBD_MIN(p->redact_count, THUMBD_VIPS_MAX_REDACT);
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2 * count + 1);
    VipsImage *in = *image;
    for (int i = 0; i < count; i++) {
        int x0, y0, x1, y1, left, top, width, height;
        double size;
        if (!box_in_image(job, p->redact_boxes[i], in, &x0, &y0, &x1, &y1, &size) ||
            !cut_to_image(in, x0, y0, x1, y1, &left, &top, &width, &height))
            continue;
        // Cut from the picture as redacted so far: overlapping boxes are redacted together.
        if (vips_extract_area(in, &t[2 * i], left, top, width, height, NULL)) return thumbd_scope_failed(scope);
        VipsImage *piece = t[2 * i];
        g_object_ref(piece);  // thumbd_*_image take one reference and give one back
        ThumbdVipsStep step;
        if (p->redact_mode == THUMBD_VIPS_REDACT_PIXELATE) {
            int block = p->redact_strength > 0 ? (int)lround(p->redact_strength) : (int)lround(size / 8);
            step = thumbd_pixelate_image(&piece, THUMBD_MAX(2, block));
        } else {
            double sigma = p->redact_strength > 0 ? p->redact_strength : THUMBD_MAX(1.0, size / 6);
            step = thumbd_blur_image(&piece, sigma);
        }
        if (step != THUMBD_VIPS_STEP_OK) {
            g_object_unref(piece);
            return thumbd_scope_fail(scope, step);
        }
        int failed = vips_insert(in, piece, &t[2 * i + 1], left, top, NULL);
        g_object_unref(piece);
        if (failed) return thumbd_scope_failed(scope);
        in = t[2 * i + 1];
    }
    return thumbd_scope_keep(scope, image, in);
}
