// SPDX-License-Identifier: Apache-2.0
// Steps: the region the box is made from. Trim finds a frame on decoded pixels (so a plan with a trim renders
// from an intermediate); the crop's rectangle is geometry (thumbd_crop_rect); each animation frame is cut here.
#include "../internal/steps.h"

int thumbd_wants_cut(const ThumbdJob *job) { return job->has_cut; }

ThumbdVipsStep thumbd_step_cut(ThumbdJob *job, VipsImage **image) {
    job->window = (ThumbdRect){0, 0, 1, 1};  // the image is the whole region again (each animation frame)
    VipsImage *in = *image;
    int left, top, width, height;
    thumbd_pixel_rect(job->cut, in->Xsize, in->Ysize, &left, &top, &width, &height);
    if (width == in->Xsize && height == in->Ysize) return THUMBD_VIPS_STEP_OK;
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 1);
    if (vips_extract_area(in, &t[0], left, top, width, height, NULL)) return thumbd_scope_failed(scope);
    return thumbd_scope_keep(scope, image, t[0]);
}

// The background a trim compares against: the given colour, else the pixel in the plan's corner. Alpha images are
// flattened first (onto that colour, or white), so transparent borders trim like a plain background. *flat is
// made in t[0] when flattened (owned by the caller's scope), else it is image.
static int trim_reference(const ThumbdVipsThumbnailParams *p, VipsImage *image, VipsImage **t, VipsImage **flat,
                          double colour[3]) {
    *flat = image;
    if (vips_image_hasalpha(image)) {
        double white[3] = {255, 255, 255};
        const double *under = p->trim_has_colour ? p->trim_colour : white;
        int bands = image->Bands - 1;
        VipsArrayDouble *background = vips_array_double_new(under, bands >= 3 ? 3 : 1);
        int failed = vips_flatten(image, &t[0], "background", background, NULL);
        vips_area_unref(VIPS_AREA(background));
        if (failed) return -1;
        *flat = t[0];
    }
    if (p->trim_has_colour) {
        for (int i = 0; i < 3; i++) colour[i] = p->trim_colour[i];
        return 0;
    }
    double *pixel = NULL;
    int n = 0;
    int x = (p->trim_corner == 1 || p->trim_corner == 3) ? (*flat)->Xsize - 1 : 0;
    int y = (p->trim_corner == 2 || p->trim_corner == 3) ? (*flat)->Ysize - 1 : 0;
    if (vips_getpoint(*flat, &pixel, &n, x, y, NULL)) return -1;
    for (int i = 0; i < 3; i++) colour[i] = pixel[VIPS_MIN(i, n - 1)];
    g_free(pixel);
    return 0;
}

// The first and last index of a non-zero value in a one-line image (a projection), -1 and -1 when none is.
static int nonzero_span(VipsImage *line, int *first, int *last) {
    VipsImage *values = NULL;
    if (vips_cast(line, &values, VIPS_FORMAT_DOUBLE, NULL)) return -1;
    VipsImage *memory = vips_image_copy_memory(values);
    g_object_unref(values);
    if (!memory) return -1;
    int count = memory->Xsize * memory->Ysize;
    const double *v = (const double *)VIPS_IMAGE_ADDR(memory, 0, 0);
    *first = *last = -1;
    for (int i = 0; i < count; i++) {
        if (v[i] == 0) continue;
        if (*first < 0) *first = i;
        *last = i;
    }
    g_object_unref(memory);
    return 0;
}

// thumbor's trim measure (_bounding_box.c): the box of the pixels farther than the threshold from the reference,
// by the Euclidean distance over every band (RGB, or RGBA when the picture has alpha: thumbor reads RGBA there),
// at full detail. The whole picture when every pixel is background, as thumbor then ignores the trim.
static ThumbdVipsStep euclidean_frame(const ThumbdVipsThumbnailParams *p, VipsImage *image, ThumbdRect *frame) {
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 12);
    VipsImage *in = image;
    if (in->Bands < 3 || in->Type != VIPS_INTERPRETATION_sRGB) {
        if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) return thumbd_scope_failed(scope);
        in = t[0];
    }
    int bands = VIPS_MIN(in->Bands, 4);
    double reference[4] = {0, 0, 0, 255};
    if (p->trim_has_colour) {
        for (int i = 0; i < 3; i++) reference[i] = p->trim_colour[i];
    } else {
        double *pixel = NULL;
        int n = 0;
        int x = (p->trim_corner == 1 || p->trim_corner == 3) ? in->Xsize - 1 : 0;
        int y = (p->trim_corner == 2 || p->trim_corner == 3) ? in->Ysize - 1 : 0;
        if (vips_getpoint(in, &pixel, &n, x, y, NULL)) return thumbd_scope_failed(scope);
        for (int i = 0; i < bands; i++) reference[i] = pixel[VIPS_MIN(i, n - 1)];
        g_free(pixel);
    }
    double ones[4] = {1, 1, 1, 1}, offset[4];
    for (int i = 0; i < 4; i++) offset[i] = -reference[i];
    // The squared distance, summed over the bands, against the threshold squared: whole numbers, exact in float.
    if (vips_extract_band(in, &t[1], 0, "n", bands, NULL) || vips_linear(t[1], &t[2], ones, offset, bands, NULL) ||
        vips_multiply(t[2], t[2], &t[3], NULL))
        return thumbd_scope_failed(scope);
    VipsImage *squares[4];
    for (int i = 0; i < bands; i++) {
        if (vips_extract_band(t[3], &t[4 + i], i, NULL)) return thumbd_scope_failed(scope);
        squares[i] = t[4 + i];
    }
    if (vips_sum(squares, &t[8], bands, NULL) ||
        vips_relational_const1(t[8], &t[9], VIPS_OPERATION_RELATIONAL_MORE,
                               p->trim_threshold * p->trim_threshold, NULL) ||
        vips_project(t[9], &t[10], &t[11], NULL))
        return thumbd_scope_failed(scope);
    int left, right, top, bottom;
    if (nonzero_span(t[10], &left, &right) || nonzero_span(t[11], &top, &bottom)) return thumbd_scope_failed(scope);
    g_object_unref(scope);
    if (left >= 0 && top >= 0) *frame = (ThumbdRect){left, top, right - left + 1, bottom - top + 1};
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_trim_frame(const ThumbdJob *job, VipsImage *image, ThumbdRect *frame) {
    const ThumbdVipsThumbnailParams *p = job->params;
    *frame = (ThumbdRect){0, 0, image->Xsize, image->Ysize};
    if (!p->trim) return THUMBD_VIPS_STEP_OK;
    if (p->trim_euclidean) return euclidean_frame(p, image, frame);
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    VipsImage *flat = NULL;
    double colour[3];
    if (trim_reference(p, image, t, &flat, colour)) return thumbd_scope_failed(scope);
    // vips_find_trim's 3 x 3 median refuses a picture narrower or shorter than that ("window too large"): such
    // a picture is extended by copies of its right and bottom edges, which keeps its coordinates and its borders.
    if (flat->Xsize < 3 || flat->Ysize < 3) {
        if (vips_embed(flat, &t[1], 0, 0, VIPS_MAX(3, flat->Xsize), VIPS_MAX(3, flat->Ysize), "extend",
                       VIPS_EXTEND_COPY, NULL))
            return thumbd_scope_failed(scope);
        flat = t[1];
    }
    VipsArrayDouble *background = vips_array_double_new(colour, flat->Bands >= 3 ? 3 : 1);
    int left = 0, top = 0, width = 0, height = 0;
    int failed = vips_find_trim(flat, &left, &top, &width, &height, "threshold", p->trim_threshold, "background",
                                background, NULL);
    vips_area_unref(VIPS_AREA(background));
    g_object_unref(scope);
    if (failed) return THUMBD_VIPS_STEP_THUMBNAIL;
    width = VIPS_MIN(width, image->Xsize - left);
    height = VIPS_MIN(height, image->Ysize - top);
    // A picture that is all background keeps its frame: trimming it to nothing would leave no picture.
    if (width > 0 && height > 0) *frame = (ThumbdRect){left, top, width, height};
    return THUMBD_VIPS_STEP_OK;
}
