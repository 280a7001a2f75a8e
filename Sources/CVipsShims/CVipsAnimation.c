// SPDX-License-Identifier: Apache-2.0
// Animated GIF and WebP in, animated GIF or WebP out (see CVipsShims.h, format_animated).
//
// Limits come first, from the header alone: frames above max_frames, or frames x width x height above
// max_source_pixels, are refused before any frame is decoded (a 5,000-frame GIF of 1x1 frames on a large
// screen is a few hundred kilobytes and would otherwise decode to billions of pixels). Then one pass:
// vips_thumbnail_buffer reads every frame (n=-1) and resizes each to the size the plan's box asks of the
// whole frame; the frames, decoded in memory as one tall strip, are cut apart, each goes through the plan's
// steps (orientation, crop, cover crop, effects, canvas) exactly as a still picture does, and they are joined
// again with their delays and loop count.
#include <math.h>
#include <string.h>

#include "CVipsShimsInternal.h"

int thumbd_renders_animation(ThumbdVipsThumbnailParams p, ThumbdVipsSourceInfo info) {
    return info.pages > 1 && p.format_animated != THUMBD_VIPS_FORMAT_UNKNOWN;
}

// One frame through the plan's steps. `cut` is the region in the oriented, resized frame's pixels.
static int frame_steps(VipsImage **frame, ThumbdOrientation orientation, ThumbdVipsThumbnailParams p, ThumbdRect cut,
                       ThumbdVipsFormat format) {
    if (thumbd_step_orient(frame, orientation)) return -1;
    int left, top, width, height;
    thumbd_pixel_rect(cut, (*frame)->Xsize, (*frame)->Ysize, &left, &top, &width, &height);
    if (width < (*frame)->Xsize || height < (*frame)->Ysize) {
        THUMBD_REPLACE(*frame, vips_extract_area(in, &thumbd_next, left, top, width, height, NULL));
    }
    if ((*frame)->BandFmt != VIPS_FORMAT_UCHAR) THUMBD_REPLACE(*frame, vips_cast_uchar(in, &thumbd_next, NULL));
    // Animations keep colour (GIF and WebP frames are RGB): grey frames are widened back to sRGB.
    if (thumbd_step_cover_crop(frame, p) || thumbd_step_tone(frame, p) || thumbd_step_greyscale(frame, p) ||
        thumbd_step_blur(frame, p) || thumbd_step_sharpen(frame, p) || thumbd_step_pixelate(frame, p) ||
        thumbd_step_pad(frame, p) || thumbd_step_padding(frame, p))
        return -1;
    int marked = thumbd_step_watermark(frame, p);
    if (marked) return marked;
    if (thumbd_step_flatten(frame, p, format)) return -1;
    if ((*frame)->Bands < 3) THUMBD_REPLACE(*frame, vips_colourspace(in, &thumbd_next, VIPS_INTERPRETATION_sRGB, NULL));
    return 0;
failed:
    return -1;
}

ThumbdVipsStep thumbd_vips_animation(const void *buffer, size_t length, ThumbdVipsThumbnailParams p,
                                     ThumbdVipsSourceInfo info, ThumbdVipsThumbnailResult *result) {
    VipsImage *image = NULL;
    VipsImage **frames = NULL;
    int *delays = NULL;
    int frame_count = 0;
    ThumbdVipsStep step = THUMBD_VIPS_STEP_NOT_ANIMATABLE;
    if (p.trim) {
        vips_error("thumbd", "trim cannot run on an animation");
        goto failed;
    }
    // Limits, before anything is decoded.
    step = THUMBD_VIPS_STEP_FRAME_LIMIT;
    if (info.pages > p.max_frames) {
        vips_error("thumbd", "%d frames exceed the limit of %d", info.pages, p.max_frames);
        goto failed;
    }
    step = THUMBD_VIPS_STEP_PIXEL_LIMIT;
    if ((int64_t)info.pages * info.upright_width * info.upright_height > p.max_source_pixels) {
        vips_error("thumbd", "%d frames of %dx%d exceed the pixel limit", info.pages, info.upright_width,
                   info.upright_height);
        goto failed;
    }
    step = THUMBD_VIPS_STEP_REGION;
    ThumbdRect whole = {0, 0, info.upright_width, info.upright_height}, region;
    if (!thumbd_crop_rect(p, whole, 1, 1, &region)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", info.upright_width,
                   info.upright_height);
        goto failed;
    }
    thumbd_settle_region(&p, region, 1, 1);
    int region_width = VIPS_MAX(1, (int)rint(region.width)), region_height = VIPS_MAX(1, (int)rint(region.height));
    double hscale = 1, vscale = 1;
    thumbd_box_scale(p, region_width, region_height, &hscale, &vscale);
    // Each whole frame is resized to the scale the region needs, then the region is cut from it.
    int frame_width = VIPS_MAX(1, (int)rint(info.upright_width * hscale));
    int frame_height = VIPS_MAX(1, (int)rint(info.upright_height * vscale));
    int64_t output = thumbd_canvas_pixels(p, VIPS_MAX(1, (int)rint(region_width * hscale)),
                                          VIPS_MAX(1, (int)rint(region_height * vscale)));
    step = THUMBD_VIPS_STEP_CANVAS_LIMIT;
    if ((int64_t)info.pages * VIPS_MAX(output, (int64_t)frame_width * frame_height) > p.max_source_pixels) {
        vips_error("thumbd", "%d output frames exceed the pixel limit", info.pages);
        goto failed;
    }

    // One pass over every frame, sized in stored orientation (the frames are turned one by one afterwards).
    step = THUMBD_VIPS_STEP_THUMBNAIL;
    ResizeTarget target = {info.swap ? frame_height : frame_width, info.swap ? frame_width : frame_height,
                           VIPS_SIZE_FORCE};
    const char *profile = info.use_icc && !p.keep_icc ? "srgb" : NULL;
    int failed_call = profile ? vips_thumbnail_buffer((void *)buffer, length, &image, target.width, "height",
                                                      target.height, "size", target.size, "no_rotate", TRUE,
                                                      "fail_on", VIPS_FAIL_ON_ERROR, "option_string",
                                                      "n=-1,fail_on=error", "export_profile", profile, NULL)
                              : vips_thumbnail_buffer((void *)buffer, length, &image, target.width, "height",
                                                      target.height, "size", target.size, "no_rotate", TRUE,
                                                      "fail_on", VIPS_FAIL_ON_ERROR, "option_string",
                                                      "n=-1,fail_on=error", NULL);
    if (failed_call) goto failed;
    step = THUMBD_VIPS_STEP_DECODE;
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);

    // The delays and loop count, read before the frames are cut apart.
    int page_height = vips_image_get_page_height(image);
    frame_count = VIPS_MAX(1, image->Ysize / page_height);
    int *source_delays = NULL, delay_count = 0, loop = 0;
    delays = g_new0(int, frame_count);
    if (vips_image_get_typeof(image, "delay") &&
        vips_image_get_array_int(image, "delay", &source_delays, &delay_count) == 0) {
        for (int i = 0; i < frame_count && i < delay_count; i++) delays[i] = source_delays[i];
    }
    if (vips_image_get_typeof(image, "loop")) vips_image_get_int(image, "loop", &loop);

    step = THUMBD_VIPS_STEP_THUMBNAIL;
    // The region in the resized frames, as large as the box asks of it (the frames' own rounding aside).
    ThumbdRect cut = {region.left * frame_width / info.upright_width, region.top * frame_height / info.upright_height,
                      region_width * hscale, region_height * vscale};
    frames = g_new0(VipsImage *, frame_count);
    for (int i = 0; i < frame_count; i++) {
        if (vips_extract_area(image, &frames[i], 0, i * page_height, image->Xsize, page_height, NULL)) goto failed;
        int stepped = frame_steps(&frames[i], info.job, p, cut, p.format_animated);
        if (stepped) {
            if (stepped == -2) step = THUMBD_VIPS_STEP_WATERMARK;
            goto failed;
        }
    }
    int output_width = frames[0]->Xsize, output_height = frames[0]->Ysize;
    if (!thumbd_format_holds(p.format_animated, output_width, output_height)) {
        vips_error("thumbd", "%dx%d frames are too large for their format", output_width, output_height);
        step = THUMBD_VIPS_STEP_CANVAS_LIMIT;
        goto failed;
    }
    VipsImage *joined = NULL;
    if (vips_arrayjoin(frames, &joined, frame_count, "across", 1, NULL)) goto failed;
    for (int i = 0; i < frame_count; i++) g_object_unref(frames[i]);
    g_free(frames);
    frames = NULL;
    g_object_unref(image);
    image = joined;
    step = THUMBD_VIPS_STEP_DECODE;
    THUMBD_REPLACE(image, (thumbd_next = vips_image_copy_memory(in)) == NULL);

    // No metadata but what the plan keeps and what makes it an animation.
    int strip = thumbd_step_metadata(image, p, NULL);
    vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, output_height);
    vips_image_set_array_int(image, "delay", delays, frame_count);
    vips_image_set_int(image, "loop", loop);
    g_free(delays);
    delays = NULL;

    step = THUMBD_VIPS_STEP_SAVE;
    if (thumbd_vips_encode(image, p.format_animated, p, strip, result)) goto failed;
    result->format = p.format_animated;
    result->width = output_width;
    result->height = output_height;
    result->frames = frame_count;
    g_object_unref(image);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;

failed:
    g_free(delays);
    if (frames) {
        for (int i = 0; i < frame_count; i++) {
            if (frames[i]) g_object_unref(frames[i]);
        }
        g_free(frames);
    }
    return thumbd_vips_fail(image, step, result);
}
