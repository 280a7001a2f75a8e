// SPDX-License-Identifier: Apache-2.0
// The animation job: animated GIF and WebP in, animated GIF or WebP out (see CVipsShims.h, format_animated).
//
// Limits come first, from the header alone: frames above max_frames, or frames x width x height above
// max_source_pixels, are refused before any frame is decoded (a 5,000-frame GIF of 1x1 frames on a large
// screen is a few hundred kilobytes and would otherwise decode to billions of pixels). Then one pass:
// vips_thumbnail_buffer reads every frame (n=-1) and resizes each to the size the plan's box asks of the
// whole frame; the frames, decoded in memory as one tall strip, are cut apart, each goes through the pipeline
// (the same table as a still: orientation, region, cover crop, effects, canvas, watermark), and they are joined
// again with their delays and loop count.
#include "../internal/jobs.h"

ThumbdVipsStep thumbd_job_animation(ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsThumbnailResult *result = job->result;
    int pages = job->source.pages, upright_width = job->upright_width, upright_height = job->upright_height;
    // Limits, before anything is decoded.
    if (pages > p->max_frames) {
        vips_error("thumbd", "%d frames exceed the limit of %d", pages, p->max_frames);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_FRAME_LIMIT, result);
    }
    if ((int64_t)pages * upright_width * upright_height > p->max_source_pixels) {
        vips_error("thumbd", "%d frames of %dx%d exceed the pixel limit", pages, upright_width, upright_height);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_PIXEL_LIMIT, result);
    }
    ThumbdRect whole = {0, 0, upright_width, upright_height}, region;
    if (p->trim) {
        // A trim is found on the first frame, decoded whole and turned, and cuts every frame (as thumbor trims an
        // animation: its first frame's box, applied to all).
        ThumbdResizeTarget page = {job->source.stored_width, job->source.stored_height, THUMBD_SIZE_FORCE};
        VipsImage *first = NULL;
        if (thumbd_job_thumbnail_buffer(job, page, 0, &first))
            return thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result);
        ThumbdVipsStep step = thumbd_turn(&first, job->turn);
        if (step == THUMBD_VIPS_STEP_OK) step = thumbd_trim_frame(job, first, &whole);
        g_object_unref(first);
        if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(NULL, step, result);
    }
    if (!thumbd_crop_rect(p, (ThumbdRect){0, 0, upright_width, upright_height}, whole, 1, 1, &region)) {
        vips_error("thumbd", "the crop region lies outside the %dx%d picture", upright_width, upright_height);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_REGION, result);
    }
    if (thumbd_job_wants_attention_crop(job)) {
        ThumbdVipsStep placed = thumbd_job_attention_region(job, NULL, whole, 1, 1, &region);
        if (placed != THUMBD_VIPS_STEP_OK) return thumbd_fail(NULL, placed, result);
    }
    thumbd_job_thumbor_region(job, whole, &region, 1, 1);
    thumbd_job_settle(job, whole, region, 1, 1);
    int region_width = thumbd_whole(region.width), region_height = thumbd_whole(region.height);
    double hscale = 1, vscale = 1;
    thumbd_box_scale(job->box, region_width, region_height, &hscale, &vscale);
    // Each whole frame is resized to the scale the region needs, then the region is cut from it.
    int frame_width = thumbd_whole(upright_width * hscale);
    int frame_height = thumbd_whole(upright_height * vscale);
    int64_t output = thumbd_canvas_pixels(p, job->box, thumbd_whole(region_width * hscale),
                                          thumbd_whole(region_height * vscale));
    if ((int64_t)pages * VIPS_MAX(output, (int64_t)frame_width * frame_height) > p->max_source_pixels) {
        vips_error("thumbd", "%d output frames exceed the pixel limit", pages);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_CANVAS_LIMIT, result);
    }

    // One pass over every frame, sized in stored orientation (the frames are turned one by one afterwards).
    int swap = thumbd_orientation_swaps(job->turn);
    ThumbdResizeTarget target = {swap ? frame_height : frame_width, swap ? frame_width : frame_height,
                                 THUMBD_SIZE_FORCE};
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    if (thumbd_job_thumbnail_buffer(job, target, 1, &t[0]))
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result));
    if (!(t[1] = vips_image_copy_memory(t[0])))
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_DECODE, result));
    VipsImage *strip = t[1];

    // The delays and loop count, read before the frames are cut apart.
    int page_height = vips_image_get_page_height(strip);
    int frame_count = VIPS_MAX(1, strip->Ysize / page_height);
    int *source_delays = NULL, delay_count = 0, loop = 0;
    g_autofree int *delays = g_new0(int, frame_count);
    if (vips_image_get_typeof(strip, "delay") &&
        vips_image_get_array_int(strip, "delay", &source_delays, &delay_count) == 0) {
        for (int i = 0; i < frame_count && i < delay_count; i++) delays[i] = source_delays[i];
    }
    if (vips_image_get_typeof(strip, "loop")) vips_image_get_int(strip, "loop", &loop);

    // Every frame through the pipeline: turned, the region (as large as the box asks of it, the frames' own
    // rounding aside) cut from it, kept in colour, in the animated format.
    job->orient = job->turn;
    job->has_cut = 1;
    job->cut = (ThumbdRect){region.left * frame_width / upright_width, region.top * frame_height / upright_height,
                            region_width * hscale, region_height * vscale};
    job->animated = 1;
    job->format = p->format_animated;
    VipsImage **frames = (VipsImage **)vips_object_local_array(scope, frame_count);
    for (int i = 0; i < frame_count; i++) {
        if (vips_extract_area(strip, &frames[i], 0, i * page_height, strip->Xsize, page_height, NULL))
            return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result));
        ThumbdVipsStep step = thumbd_pipeline_run(job, &frames[i]);
        if (step != THUMBD_VIPS_STEP_OK) return thumbd_scope_fail(scope, thumbd_fail(NULL, step, result));
    }
    int output_width = frames[0]->Xsize, output_height = frames[0]->Ysize;
    if (!thumbd_format_holds(p->format_animated, output_width, output_height)) {
        vips_error("thumbd", "%dx%d frames are too large for their format", output_width, output_height);
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_CANVAS_LIMIT, result));
    }
    if (vips_arrayjoin(frames, &t[2], frame_count, "across", 1, NULL))
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_THUMBNAIL, result));
    if (!(t[3] = vips_image_copy_memory(t[2])))
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_DECODE, result));
    VipsImage *image = t[3];

    // No metadata but what the plan keeps and what makes it an animation.
    int no_metadata = thumbd_step_metadata(job, image);
    vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, output_height);
    vips_image_set_array_int(image, "delay", delays, frame_count);
    vips_image_set_int(image, "loop", loop);

    if (thumbd_vips_encode(image, p->format_animated, p, no_metadata, result))
        return thumbd_scope_fail(scope, thumbd_fail(NULL, THUMBD_VIPS_STEP_SAVE, result));
    result->format = p->format_animated;
    result->width = output_width;
    result->height = output_height;
    result->frames = frame_count;
    g_object_unref(scope);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}
