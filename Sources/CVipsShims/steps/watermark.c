// SPDX-License-Identifier: Apache-2.0
// Step: the watermarks, laid over the output (every frame of an animation) after the canvas, in order. Each mark
// is decoded once per job and kept in it (job->marks, owned by the job); its resized, faded form is kept for the
// width it was made for, so the frames of an animation share one.
#include <math.h>

#include "../internal/steps.h"

// The mark `w` of the job for an output `width` x `height` (transfer none: the job's; every frame of a job has one
// size), decoded on first use, its width w->scale of the output's (and its height at most w->height_scale of it)
// and its alpha multiplied by the opacity.
static ThumbdVipsStep mark_for(ThumbdJob *job, int index, int width, int height, VipsImage **mark) {
    const ThumbdVipsWatermark *w = &job->params->watermarks[index];
    ThumbdJobMark *kept = &job->marks[index];
    if (!kept->decoded) {
        ThumbdVipsStep step = thumbd_decode_overlay(job, w->image, w->length, "watermark", 1, VIPS_MAX_COORD,
                                                    THUMBD_VIPS_STEP_WATERMARK, &kept->decoded);
        if (step != THUMBD_VIPS_STEP_OK) return step;
    }
    if (kept->sized && kept->width == width) {
        *mark = kept->sized;
        return THUMBD_VIPS_STEP_OK;
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 3);
    VipsImage *in = kept->decoded;
    if (w->fade > 0) {
        // thumbor's alpha: a level subtracted from every alpha value (clamped at 0), before the resize.
        double a[4] = {1, 1, 1, 1}, b[4] = {0, 0, 0, -((255 * w->fade) / 100)};
        if (vips_linear(in, &t[2], a, b, 4, "uchar", TRUE, NULL)) return thumbd_scope_failed(scope);
        in = t[2];
    }
    if (w->height_scale > 0) {
        // thumbor's calc_watermark_size: the mark fits inside the width and height ratios' box, each side rounded.
        double box_w = w->scale > 0 ? w->scale * width : 0;
        double box_h = w->height_scale * height;
        if (box_w <= 0) box_w = in->Xsize * box_h / in->Ysize;
        double mark_w, mark_h;
        if ((double)in->Xsize / box_w >= (double)in->Ysize / box_h) {
            mark_h = rint(in->Ysize * box_w / in->Xsize);
            mark_w = rint(box_w);
        } else {
            mark_h = rint(box_h);
            mark_w = rint(in->Xsize * box_h / in->Ysize);
        }
        if (vips_resize(in, &t[0], VIPS_MAX(1.0, mark_w) / in->Xsize, "vscale", VIPS_MAX(1.0, mark_h) / in->Ysize,
                        NULL))
            return thumbd_scope_failed(scope);
        in = t[0];
    } else if (w->scale > 0) {
        double factor = VIPS_MAX(1.0, rint(w->scale * width)) / in->Xsize;
        if (vips_resize(in, &t[0], factor, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    if (w->opacity < 1) {
        double a[4] = {1, 1, 1, w->opacity}, b[4] = {0, 0, 0, 0};
        if (vips_linear(in, &t[1], a, b, 4, "uchar", TRUE, NULL))
            return thumbd_scope_failed(scope);
        in = t[1];
    }
    if (kept->sized) g_object_unref(kept->sized);
    kept->sized = in;
    kept->width = width;
    g_object_ref(in);
    g_object_unref(scope);
    *mark = in;
    return THUMBD_VIPS_STEP_OK;
}

// thumbor's watermark placement on one axis of `side` pixels for a mark of `size`: where the first mark goes, how
// many (1 unless repeated) and the space between them.
static void place_axis(int kind, int value, int side, int size, int *at, int *count, int *space) {
    *count = 1;
    *space = 0;
    switch (kind) {
    case THUMBD_VIPS_WM_START: *at = value; break;
    case THUMBD_VIPS_WM_END: *at = side - size - value; break;
    // round(side * N / 100 + 1e-5), as thumbor turns a percentage into pixels
    case THUMBD_VIPS_WM_START_PERCENT: *at = (int)floor(side * (double)value / 100 + 1e-5 + 0.5); break;
    case THUMBD_VIPS_WM_END_PERCENT: *at = side - size - (int)floor(side * (double)value / 100 + 1e-5 + 0.5); break;
    case THUMBD_VIPS_WM_CENTRE: *at = (side - size) / 2; break;
    default:  // repeat: as many as fit, the rest spread between them; 10 px apart when fewer than two fit
        *at = 0;
        if (side < 2 * size) {
            *count = (side + size - 1) / size;
            *space = 10;
        } else {
            *count = side / size;
            *space = (side % size) / (VIPS_MAX(*count, 2) - 1);
        }
        break;
    }
}

int thumbd_wants_watermark(const ThumbdJob *job) {
    return job->params->watermark_count > 0;
}

// Lays mark `index` over *image.
static ThumbdVipsStep lay_mark(ThumbdJob *job, int index, VipsImage **image) {
    const ThumbdVipsWatermark *w = &job->params->watermarks[index];
    VipsImage *in = *image;
    int width = in->Xsize, height = in->Ysize;
    VipsImage *mark = NULL;
    ThumbdVipsStep step = mark_for(job, index, width, height, &mark);
    if (step != THUMBD_VIPS_STEP_OK) return step;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 7);
    int had_alpha = vips_image_hasalpha(in);
    // A fraction of the output's side, rounded half to even (rint in the default rounding mode), as imgproxy does.
    int offset_x = w->x_fraction > 0 ? (int)rint(width * w->x_fraction) : w->x;
    int offset_y = w->y_fraction > 0 ? (int)rint(height * w->y_fraction) : w->y;
    int x = 0, y = 0;
    if (w->place) {
        int count[2], space[2], at[2], side[2] = {width, height}, size[2] = {mark->Xsize, mark->Ysize};
        for (int a = 0; a < 2; a++)
            place_axis(w->place_kind[a], w->place_value[a], side[a], size[a], &at[a], &count[a], &space[a]);
        if (w->place_kind[0] == THUMBD_VIPS_WM_REPEAT && w->place_kind[1] == THUMBD_VIPS_WM_REPEAT &&
            (int64_t)count[0] * count[1] > 100) {
            // thumbor's cap: at most 6 along each axis, spread over what they leave.
            for (int a = 0; a < 2; a++) {
                count[a] = VIPS_MIN(6, count[a]);
                space[a] = (side[a] - count[a] * size[a]) / (VIPS_MAX(count[a], 2) - 1);
            }
        }
        if (count[0] > 1 || count[1] > 1) {
            // One tile with its spacing after it, repeated: tile i starts at i * (size + space), as thumbor pastes.
            if (vips_embed(mark, &t[0], 0, 0, size[0] + space[0], size[1] + space[1], "extend", VIPS_EXTEND_BLACK,
                           NULL) ||
                vips_replicate(t[0], &t[1], count[0], count[1], NULL))
                return thumbd_scope_failed(scope);
            mark = t[1];
        }
        x = at[0];
        y = at[1];
    } else if (w->tile) {
        if (offset_x > 0 || offset_y > 0) {
            // The space between the tiles, split around each one (the larger half after it), as imgproxy pads them.
            if (vips_embed(mark, &t[6], offset_x / 2, offset_y / 2, mark->Xsize + offset_x, mark->Ysize + offset_y,
                           "extend", VIPS_EXTEND_BLACK, NULL))
                return thumbd_scope_failed(scope);
            mark = t[6];
        }
        int across = (width + mark->Xsize - 1) / mark->Xsize, down = (height + mark->Ysize - 1) / mark->Ysize;
        if (vips_replicate(mark, &t[0], across, down, NULL) ||
            vips_extract_area(t[0], &t[1], 0, 0, width, height, NULL))
            return thumbd_scope_failed(scope);
        mark = t[1];
    } else {
        ThumbdCompass c = thumbd_compass(w->gravity);
        // Offsets move the mark inward from the edges it is placed against (a shift right/down at the centre).
        x = c.west ? offset_x : c.east ? width - mark->Xsize - offset_x : (width - mark->Xsize) / 2 + offset_x;
        y = c.north ? offset_y : c.south ? height - mark->Ysize - offset_y : (height - mark->Ysize) / 2 + offset_y;
    }
    if (in->Bands < 3) {
        if (vips_colourspace(in, &t[2], VIPS_INTERPRETATION_sRGB, NULL))
            return thumbd_scope_failed(scope);
        in = t[2];
    }
    if (vips_composite2(in, mark, &t[3], VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL))
        return thumbd_scope_failed(scope);
    in = t[3];
    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast_uchar(in, &t[4], NULL)) return thumbd_scope_failed(scope);
        in = t[4];
    }
    // An opaque picture stays opaque (and without an alpha band): the mark only adds colour.
    if (!had_alpha && vips_image_hasalpha(in)) {
        if (vips_extract_band(in, &t[5], 0, "n", in->Bands - 1, NULL))
            return thumbd_scope_failed(scope);
        in = t[5];
    }
    return thumbd_scope_keep(scope, image, in);
}

ThumbdVipsStep thumbd_step_watermark(ThumbdJob *job, VipsImage **image) {
    for (int i = 0; i < VIPS_MIN(job->params->watermark_count, THUMBD_VIPS_MAX_WATERMARKS); i++) {
        ThumbdVipsStep step = lay_mark(job, i, image);
        if (step != THUMBD_VIPS_STEP_OK) return step;
    }
    return THUMBD_VIPS_STEP_OK;
}
