// SPDX-License-Identifier: Apache-2.0
// Step: thumbor's frame, an Android nine-patch drawn around the picture (every frame of an animation), after the
// padding and before the watermark. The nine-patch's 1-px border holds its markers: opaque black pixels in the
// top row and left column mark the columns and rows that stretch, opaque black in the bottom row and right column
// mark the content area. The picture is first extended by the distances from the content area to the edges
// (opaque white, as thumbor's code does), then the nine-patch's inside is drawn over the whole: fixed runs at
// their own size, stretching runs resized (bilinear, premultiplied) to share what is left, then laid over the
// picture. The nine-patch is decoded and read once per job and its drawing kept for the size it was made for,
// so the frames of an animation share one.
#include <string.h>

#include "../internal/steps.h"

// Largest nine-patch side: a frame is a small image.
#define THUMBD_FRAME_MAX_SIDE 2048

static int is_marker(VipsImage *image, int x, int y) {
    const VipsPel *p = VIPS_IMAGE_ADDR(image, x, y);
    return p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 255;
}

// The runs of equal stretch along the top row's (or left column's) inner pixels; 0 when none stretches or there
// are more runs than the job holds.
static int read_runs(VipsImage *image, int vertical, ThumbdFrameRuns *runs) {
    int length = (vertical ? image->Ysize : image->Xsize) - 2;
    memset(runs, 0, sizeof(*runs));
    for (int i = 0; i < length; i++) {
        int stretchy = vertical ? is_marker(image, 0, 1 + i) : is_marker(image, 1 + i, 0);
        if (runs->count == 0 || runs->stretchy[runs->count - 1] != stretchy) {
            if (runs->count == THUMBD_FRAME_MAX_RUNS) return 0;
            runs->stretchy[runs->count++] = stretchy;
        }
        runs->length[runs->count - 1]++;
        if (stretchy) runs->stretch_total++;
        else runs->fixed_total++;
    }
    return runs->stretch_total > 0;
}

// The content area's distance from the near and far edge along the bottom row (or right column); 0 and 0
// without content markers.
static void read_content(VipsImage *image, int vertical, int *near, int *far) {
    int length = (vertical ? image->Ysize : image->Xsize) - 2;
    int first = -1, last = -1;
    for (int i = 0; i < length; i++) {
        int marked = vertical ? is_marker(image, image->Xsize - 1, 1 + i) : is_marker(image, 1 + i, image->Ysize - 1);
        if (!marked) continue;
        if (first < 0) first = i;
        last = i;
    }
    *near = first < 0 ? 0 : first;
    *far = last < 0 ? 0 : length - 1 - last;
}

// Decodes the nine-patch into the job: its markers read, its inside kept premultiplied (float RGBA).
// THUMBD_VIPS_STEP_FRAME when the image is unusable (not an allowed image, damaged, too small or too large,
// no stretch markers), THUMBD_VIPS_STEP_THUMBNAIL when libvips failed on a good one.
static ThumbdVipsStep decode_patch(ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    ThumbdVipsStep step = thumbd_decode_overlay(job, p->frame, p->frame_length, "frame", 3, THUMBD_FRAME_MAX_SIDE,
                                                THUMBD_VIPS_STEP_FRAME, &t[0]);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_scope_fail(scope, step);
    VipsImage *in = t[0];
    int width = in->Xsize, height = in->Ysize;
    ThumbdFrameMarks *marks = &job->frame_marks;
    if (!read_runs(in, 0, &marks->columns) || !read_runs(in, 1, &marks->rows)) {
        vips_error("thumbd", "the frame has no nine-patch stretch markers (or more than %d runs of them)",
                   THUMBD_FRAME_MAX_RUNS);
        return thumbd_scope_fail(scope, THUMBD_VIPS_STEP_FRAME);
    }
    read_content(in, 0, &marks->left, &marks->right);
    read_content(in, 1, &marks->top, &marks->bottom);
    if (vips_extract_area(in, &t[1], 1, 1, width - 2, height - 2, NULL) || vips_premultiply(t[1], &t[2], NULL))
        return thumbd_scope_failed(scope);
    if (!(job->frame_patch = vips_image_copy_memory(t[2]))) return thumbd_scope_failed(scope);
    g_object_unref(scope);
    return THUMBD_VIPS_STEP_OK;
}

// Each run's size along an axis `size` long: fixed runs keep theirs, stretching runs share what is left in
// proportion to theirs (rounded so that they add up exactly).
static void place_runs(const ThumbdFrameRuns *runs, int size, int *sizes) {
    int share = VIPS_MAX(0, size - runs->fixed_total), seen = 0, given = 0;
    for (int i = 0; i < runs->count; i++) {
        if (!runs->stretchy[i]) {
            sizes[i] = runs->length[i];
            continue;
        }
        seen += runs->length[i];
        int end = (int)(((int64_t)seen * share + runs->stretch_total / 2) / runs->stretch_total);
        sizes[i] = end - given;
        given = end;
    }
}

// The frame drawn for a picture of width x height (transfer none: the job's), 8-bit RGBA.
static ThumbdVipsStep overlay_for(ThumbdJob *job, int width, int height, VipsImage **overlay) {
    if (job->frame_overlay && job->frame_overlay_width == width && job->frame_overlay_height == height) {
        *overlay = job->frame_overlay;
        return THUMBD_VIPS_STEP_OK;
    }
    const ThumbdFrameMarks *marks = &job->frame_marks;
    int widths[THUMBD_FRAME_MAX_RUNS], heights[THUMBD_FRAME_MAX_RUNS];
    place_runs(&marks->columns, width, widths);
    place_runs(&marks->rows, height, heights);
    int cells = marks->columns.count * marks->rows.count;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3 * cells + 6);
    if (vips_black(&t[0], width, height, "bands", 4, NULL) || vips_cast_float(t[0], &t[1], NULL))
        return thumbd_scope_failed(scope);
    VipsImage *canvas = t[1];
    int n = 2;
    VipsInterpolate *bilinear = vips_interpolate_new("bilinear");
    vips_object_local(scope, bilinear);
    int source_y = 0, target_y = 0;
    for (int r = 0; r < marks->rows.count; r++) {
        int source_h = marks->rows.length[r], target_h = heights[r];
        int source_x = 0, target_x = 0;
        for (int c = 0; c < marks->columns.count && target_h > 0; c++) {
            int source_w = marks->columns.length[c], target_w = widths[c];
            if (target_w > 0 && target_x < width && target_y < height) {
                VipsImage *cell;
                if (vips_extract_area(job->frame_patch, &t[n], source_x, source_y, source_w, source_h, NULL))
                    return thumbd_scope_failed(scope);
                cell = t[n++];
                if (target_w != source_w || target_h != source_h) {
                    // Pixel centres on pixel centres; the cell's edges repeated outward.
                    double sx = (double)target_w / source_w, sy = (double)target_h / source_h;
                    VipsArrayInt *area = vips_array_int_newv(4, 0, 0, target_w, target_h);
                    int failed = vips_affine(cell, &t[n], sx, 0, 0, sy, "interpolate", bilinear, "oarea", area,
                                             "idx", 0.5, "idy", 0.5, "odx", -0.5, "ody", -0.5, "extend",
                                             VIPS_EXTEND_COPY, NULL);
                    vips_area_unref(VIPS_AREA(area));
                    if (failed) return thumbd_scope_failed(scope);
                    cell = t[n++];
                }
                // Cells past the picture's edge (a picture smaller than the fixed runs) are clipped.
                if (vips_insert(canvas, cell, &t[n], target_x, target_y, NULL)) return thumbd_scope_failed(scope);
                canvas = t[n++];
            }
            source_x += source_w;
            target_x += target_w;
        }
        source_y += source_h;
        target_y += target_h;
    }
    if (vips_unpremultiply(canvas, &t[n], NULL) || vips_cast_uchar(t[n], &t[n + 1], NULL) ||
        vips_copy(t[n + 1], &t[n + 2], "interpretation", VIPS_INTERPRETATION_sRGB, NULL))
        return thumbd_scope_failed(scope);
    VipsImage *drawn = vips_image_copy_memory(t[n + 2]);
    g_object_unref(scope);
    if (!drawn) return THUMBD_VIPS_STEP_THUMBNAIL;
    if (job->frame_overlay) g_object_unref(job->frame_overlay);
    job->frame_overlay = drawn;
    job->frame_overlay_width = width;
    job->frame_overlay_height = height;
    *overlay = drawn;
    return THUMBD_VIPS_STEP_OK;
}

int thumbd_wants_frame(const ThumbdJob *job) { return job->params->frame != NULL; }

ThumbdVipsStep thumbd_step_frame(ThumbdJob *job, VipsImage **image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    // An optional frame that proved unusable (on this job's first image) is left out of every image.
    if (job->result->frame_skipped) return THUMBD_VIPS_STEP_OK;
    if (!job->frame_patch) {
        ThumbdVipsStep step = decode_patch(job);
        if (step == THUMBD_VIPS_STEP_FRAME && p->frame_optional) {
            // The one place that decides: the picture goes on unframed, and the result says so.
            vips_error_clear();
            job->result->frame_skipped = 1;
            return THUMBD_VIPS_STEP_OK;
        }
        if (step != THUMBD_VIPS_STEP_OK) return step;
    }
    const ThumbdFrameMarks *marks = &job->frame_marks;
    VipsImage *in = *image;
    int width = in->Xsize + marks->left + marks->right, height = in->Ysize + marks->top + marks->bottom;
    if ((int64_t)width * height > p->max_source_pixels) {
        vips_error("thumbd", "the framed %dx%d output exceeds the pixel limit", width, height);
        return THUMBD_VIPS_STEP_CANVAS_LIMIT;
    }
    VipsImage *overlay = NULL;
    ThumbdVipsStep step = overlay_for(job, width, height, &overlay);
    if (step != THUMBD_VIPS_STEP_OK) return step;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 5);
    int had_alpha = vips_image_hasalpha(in);
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    // The content area's margins are opaque white (alpha too, when the picture has it).
    double white[4] = {255, 255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, in->Bands);
    int failed = vips_embed(in, &t[1], marks->left, marks->top, width, height, "extend", VIPS_EXTEND_BACKGROUND,
                            "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    if (failed || vips_composite2(t[1], overlay, &t[2], VIPS_BLEND_MODE_OVER, NULL)) return thumbd_scope_failed(scope);
    in = t[2];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[3], NULL)) return thumbd_scope_failed(scope);
        in = t[3];
    }
    // An opaque picture stays opaque (and without an alpha band): the frame only adds colour.
    if (!had_alpha && vips_image_hasalpha(in)) {
        if (vips_extract_band(in, &t[4], 0, "n", in->Bands - 1, NULL)) return thumbd_scope_failed(scope);
        in = t[4];
    }
    return thumbd_scope_keep(scope, image, in);
}
