// SPDX-License-Identifier: Apache-2.0
// thumbd_vips_thumbnail: the whole render job in one C call (see CVipsShims.h for the contract).
//
// Pipeline, and the step reported when each part fails:
//   1. find loader, check the allowed formats, read the header ............... UNRECOGNISED / REFUSED / HEADER
//   2. width x height against max_source_pixels, before any decoding ........ PIXEL_LIMIT
//   3. vips_thumbnail_buffer (shrink-on-load, fail_on=error, no_rotate) ...... THUMBNAIL (builds a lazy pipeline;
//      a crop's region is cut from it here, so only its pixels are computed)
//   4. vips_image_copy_memory: decode + shrink happen here ................... DECODE
//   5. orient, 8-bit, cover crop, effects, canvas, flatten (CVipsSteps.c) .... THUMBNAIL / CANVAS_LIMIT
//   6. metadata step and encode (CVipsEncode.c) ............................... SAVE
// Rotation and cropping are done here rather than by vips_thumbnail (no_rotate, no crop) so that every pixel
// decode happens in step 4: vips_thumbnail would otherwise decode inside its own build when it rotates or
// smart-crops, and a truncated file would then be reported as a pipeline failure instead of a decode failure.
// Step 5 works on a small in-memory image, so doing it ourselves costs nothing measurable.
// Steps 1-2 (thumbd_vips_check_source) and 5-6 (thumbd_vips_finish) are shared with CVipsIntermediate.c.
#include <string.h>

#include "CVipsShimsInternal.h"

void thumbd_adapted_box(ThumbdVipsThumbnailParams p, int width, int height, int *box_width, int *box_height) {
    *box_width = p.width;
    *box_height = p.height;
    // thumbor's rule: only a strictly landscape picture against a strictly portrait box, or the other way round.
    if (p.adaptive && ((width < height && p.width > p.height) || (width > height && p.width < p.height))) {
        *box_width = p.height;
        *box_height = p.width;
    }
}

ThumbdVipsFit thumbd_effective_fit(ThumbdVipsThumbnailParams p, int width, int height) {
    if (p.fit != THUMBD_VIPS_FIT_AUTO) return p.fit;
    int box_width, box_height;
    thumbd_adapted_box(p, width, height, &box_width, &box_height);
    return (width >= height) == (box_width >= box_height) ? THUMBD_VIPS_FIT_COVER : THUMBD_VIPS_FIT_CONTAIN;
}

ResizeTarget thumbd_vips_resize_target(ThumbdVipsThumbnailParams p, int upright_width, int upright_height) {
    // An auto fit becomes cover or contain and an adaptive box turns by the picture's orientation (the region's,
    // when called with it); thumbd_settle_region makes the same decisions once for the steps after the resize.
    p.fit = thumbd_effective_fit(p, upright_width, upright_height);
    thumbd_adapted_box(p, upright_width, upright_height, &p.width, &p.height);
    VipsSize size = p.enlarge ? VIPS_SIZE_BOTH : VIPS_SIZE_DOWN;
    ResizeTarget target = {p.width, p.height, size};
    switch (p.fit) {
    case THUMBD_VIPS_FIT_CONTAIN:
    case THUMBD_VIPS_FIT_PAD:  // resized as contain; the canvas is extended to the box afterwards
    case THUMBD_VIPS_FIT_AUTO:  // (made COVER or CONTAIN above)
        break;
    case THUMBD_VIPS_FIT_COVER:
    case THUMBD_VIPS_FIT_OUTSIDE:  // the same resize; only COVER crops the overflow afterwards
        // Fill the box: constrain the side that needs the smaller shrink and leave the other unbounded;
        // the overflow is cropped after rotation. Same geometry as vips_thumbnail's crop mode.
        if ((int64_t)p.width * upright_height >= (int64_t)p.height * upright_width) {
            target.height = THUMBD_UNBOUNDED;
        } else {
            target.width = THUMBD_UNBOUNDED;
        }
        break;
    case THUMBD_VIPS_FIT_FILL:
        target.size = VIPS_SIZE_FORCE;
        if (!p.enlarge) {
            // Never upscale an axis: shrink the box, keeping its aspect, until it fits inside the source.
            double k = 1.0;
            k = VIPS_MIN(k, (double)upright_width / p.width);
            k = VIPS_MIN(k, (double)upright_height / p.height);
            target.width = VIPS_MAX(1, (int)(p.width * k + 0.5));
            target.height = VIPS_MAX(1, (int)(p.height * k + 0.5));
        }
        break;
    }
    return target;
}

int thumbd_vips_thumbnail_call(const void *buffer, size_t length, VipsImage **out, ResizeTarget t,
                          const char *export_profile) {
    // (void *): libvips's signature is not const, but it only reads the buffer (it wraps it, uncopied).
    // fail_on=error also goes in option_string: libvips 8.14.1's thumbnail_buffer does not pass its own
    // fail_on to the loader (only the file variant does), so a truncated JPEG would decode "successfully"
    // with grey or black rows.
    if (export_profile) {
        return vips_thumbnail_buffer((void *)buffer, length, out, t.width, "height", t.height, "size", t.size,
                                     "no_rotate", TRUE, "fail_on", VIPS_FAIL_ON_ERROR, "option_string",
                                     "fail_on=error", "export_profile", export_profile, NULL);
    }
    return vips_thumbnail_buffer((void *)buffer, length, out, t.width, "height", t.height, "size", t.size,
                                 "no_rotate", TRUE, "fail_on", VIPS_FAIL_ON_ERROR, "option_string",
                                 "fail_on=error", NULL);
}

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

void *thumbd_vips_remove_field(VipsImage *image, const char *name, GValue *value, void *unused) {
    (void)value;
    (void)unused;
    vips_image_remove(image, name);
    return NULL;
}

ThumbdVipsStep thumbd_vips_fail(VipsImage *image, ThumbdVipsStep step, ThumbdVipsThumbnailResult *result) {
    if (image) g_object_unref(image);
    g_free(result->data);
    result->data = NULL;
    result->length = 0;
    result->error_detail = vips_error_buffer_copy();
    return step;
}

ThumbdVipsStep thumbd_vips_check_source(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                        ThumbdVipsThumbnailResult *result, ThumbdVipsSourceInfo *info) {
    VipsImage *image = NULL;
    // 1. Header.
    ThumbdVipsStep step = thumbd_vips_open_header(buffer, length, p.allowed_sources, &image, &result->source_format,
                                                  &result->loader);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_vips_fail(image, step, result);
    result->source_width = image->Xsize;
    result->source_height = image->Ysize;  // one page: the loaders open page 0 only (n=1)

    // 2. Pixel limit, before anything is decoded. Only the first page is ever decoded, so the page count
    // does not multiply the cost.
    if ((int64_t)image->Xsize * image->Ysize > p.max_source_pixels) {
        vips_error("thumbd", "%dx%d exceeds the pixel limit", image->Xsize, image->Ysize);
        return thumbd_vips_fail(image, THUMBD_VIPS_STEP_PIXEL_LIMIT, result);
    }
    info->orientation = vips_image_get_orientation(image);
    info->job = thumbd_orientation_of_job(p, info->orientation);
    info->swap = info->job.rotate == 90 || info->job.rotate == 270;
    info->upright_width = info->swap ? image->Ysize : image->Xsize;
    info->upright_height = info->swap ? image->Xsize : image->Ysize;
    info->pages = VIPS_MAX(1, vips_image_get_n_pages(image));
    result->source_frames = info->pages;
    // Convert through ICC only when the source carries a profile. Untagged sources are taken as sRGB: an
    // export profile would cost an sRGB -> XYZ -> sRGB round trip for nothing. CMYK is left to libvips's
    // colourspace step, which uses the embedded (or its built-in) CMYK profile; an sRGB export on top would
    // apply the CMYK profile to RGB pixels.
    info->use_icc = vips_image_get_typeof(image, VIPS_META_ICC_NAME) && image->Type != VIPS_INTERPRETATION_CMYK;
    g_object_unref(image);
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_vips_thumbnail(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                     ThumbdVipsThumbnailResult *result) {
    memset(result, 0, sizeof(*result));
    VipsImage *image = NULL;
    ThumbdVipsSourceInfo info;

    // 1-2. Header and pixel limit.
    ThumbdVipsStep step = thumbd_vips_check_source(buffer, length, p, result, &info);
    if (step != THUMBD_VIPS_STEP_OK) return step;
    if (thumbd_renders_animation(p, info)) return thumbd_vips_animation(buffer, length, p, info, result);
    if (p.trim) {
        // A trim works on decoded pixels before the resize: thumbd_vips_plan sends those jobs through an
        // intermediate, never here.
        vips_error("thumbd", "a plan with a trim renders from an intermediate");
        return thumbd_vips_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result);
    }

    // 3. The lazy shrink-on-load pipeline, sized in stored orientation (we rotate afterwards).
    step = THUMBD_VIPS_STEP_THUMBNAIL;
    ResizeTarget target = thumbd_vips_resize_target(p, info.upright_width, info.upright_height);
    ThumbdRect region = {0, 0, 0, 0};
    if (p.crop_unit == THUMBD_VIPS_CROP_NONE) {
        thumbd_settle_region(&p, (ThumbdRect){0, 0, info.upright_width, info.upright_height}, 1, 1);
    } else {
        // A crop, resampled once: the whole picture is resized to the scale the region needs, and only the
        // region's pixels are computed (the lazy pipeline is cut before it is decoded).
        ThumbdRect whole = {0, 0, info.upright_width, info.upright_height};
        if (!thumbd_crop_rect(p, whole, 1, 1, &region)) {
            vips_error("thumbd", "the crop region lies outside the %dx%d picture", info.upright_width,
                       info.upright_height);
            return thumbd_vips_fail(NULL, THUMBD_VIPS_STEP_REGION, result);
        }
        thumbd_settle_region(&p, region, 1, 1);
        double hscale = 1, vscale = 1;
        int region_width = VIPS_MAX(1, (int)rint(region.width)), region_height = VIPS_MAX(1, (int)rint(region.height));
        thumbd_box_scale(p, region_width, region_height, &hscale, &vscale);
        target = (ResizeTarget){VIPS_MAX(1, (int)rint(info.upright_width * hscale)),
                                VIPS_MAX(1, (int)rint(info.upright_height * vscale)), VIPS_SIZE_FORCE};
        double kx = (double)target.width / info.upright_width, ky = (double)target.height / info.upright_height;
        // The cut is as large as the box asks of the region (the whole picture's rounding aside), never larger.
        region = thumbd_stored_rect((ThumbdRect){region.left * kx, region.top * ky, region_width * hscale,
                                                 region_height * vscale},
                                    info.job, target.width, target.height);
    }
    if (info.swap) {
        int w = target.width;
        target.width = target.height;
        target.height = w;
    }
    // Keeping the profile keeps the pixels in its colour space: no conversion to sRGB.
    if (thumbd_vips_thumbnail_call(buffer, length, &image, target, info.use_icc && !p.keep_icc ? "srgb" : NULL))
        goto failed;
    if (p.crop_unit != THUMBD_VIPS_CROP_NONE) {
        int left, top, width, height;
        thumbd_pixel_rect(region, image->Xsize, image->Ysize, &left, &top, &width, &height);
        THUMBD_REPLACE(image, vips_extract_area(in, &thumbd_next, left, top, width, height, NULL));
    }

    // 4. Decode and shrink: the only place source pixels are read.
    step = THUMBD_VIPS_STEP_DECODE;
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);

    // 5-6.
    return thumbd_vips_finish(image, info.job, p, NULL, result);

failed:
    return thumbd_vips_fail(image, step, result);
}

int thumbd_needs_region(ThumbdVipsThumbnailParams p) { return p.trim || p.crop_unit != THUMBD_VIPS_CROP_NONE; }

ThumbdVipsStep thumbd_vips_finish(VipsImage *image, ThumbdOrientation orientation, ThumbdVipsThumbnailParams p,
                                  const ThumbdKeptMetadata *kept, ThumbdVipsThumbnailResult *result) {
    ThumbdVipsStep step = THUMBD_VIPS_STEP_THUMBNAIL;
    // 5. Oriented, 8-bit, cropped, effects, canvas (CVipsSteps.c, in the plan's order).
    if (thumbd_step_orient(&image, orientation)) goto failed;
    if (image->BandFmt != VIPS_FORMAT_UCHAR) {
        // vips_thumbnail already converts to 8-bit sRGB or B_W; this is a guard for odd inputs.
        VipsInterpretation space = image->Bands < 3 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
        THUMBD_REPLACE(image, vips_colourspace(in, &thumbd_next, space, NULL));
        if (image->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(image, vips_cast_uchar(in, &thumbd_next, NULL));
    }
    if (thumbd_step_cover_crop(&image, p) || thumbd_step_tone(&image, p) || thumbd_step_greyscale(&image, p) ||
        thumbd_step_blur(&image, p) || thumbd_step_sharpen(&image, p) || thumbd_step_pixelate(&image, p))
        goto failed;
    if (thumbd_canvas_pixels(p, image->Xsize, image->Ysize) > p.max_source_pixels) {
        vips_error("thumbd", "the output canvas exceeds the pixel limit");
        step = THUMBD_VIPS_STEP_CANVAS_LIMIT;
        goto failed;
    }
    if (thumbd_step_pad(&image, p) || thumbd_step_padding(&image, p)) goto failed;
    int marked = thumbd_step_watermark(&image, p);
    if (marked) {
        if (marked == -2) step = THUMBD_VIPS_STEP_WATERMARK;
        goto failed;
    }
    // The effects and the canvas are lazy: compute them once, here, rather than again in the alpha scan and
    // the encoder.
    if ((p.fit == THUMBD_VIPS_FIT_PAD || p.watermark || p.blur_sigma > 0 || p.sharpen_sigma > 0 ||
         p.pixelate > 1 || p.saturation != 1)) {
        THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);
    }

    // Output format: the caller's choice for opaque or transparent thumbnails.
    ThumbdVipsFormat format = p.format_opaque;
    if (p.format_alpha != p.format_opaque) {
        int transparent = 0;
        if (has_transparency(image, &transparent)) goto failed;
        if (transparent) format = p.format_alpha;
    }
    if (thumbd_step_flatten(&image, p, format)) goto failed;
    if (!thumbd_format_holds(format, image->Xsize, image->Ysize)) {
        vips_error("thumbd", "a %dx%d output is too large for its format", image->Xsize, image->Ysize);
        step = THUMBD_VIPS_STEP_CANVAS_LIMIT;
        goto failed;
    }

    // 6. Metadata (what the plan keeps; nothing by default), then encode. The savers are asked to strip when
    // nothing is kept: libvips 8.14.1's webpsave ignores "strip" and would rebuild EXIF from the exif-* fields,
    // which the metadata step has removed.
    int strip = thumbd_step_metadata(image, p, kept);
    step = THUMBD_VIPS_STEP_SAVE;
    if (thumbd_vips_encode(image, format, p, strip, result)) goto failed;
    result->format = format;
    result->width = image->Xsize;
    result->height = image->Ysize;
    result->frames = 1;
    g_object_unref(image);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;

failed:
    return thumbd_vips_fail(image, step, result);
}
