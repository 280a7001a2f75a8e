// SPDX-License-Identifier: Apache-2.0
// The pass-through job (see internal/jobs.h): the source's own bytes, for imgproxy's `raw` and `skip_processing`
// (`/thumb`'s `raw=1` and `skip=`). Nothing is decoded: the header has been read and checked as any source's is
// (thumbd_job_open: an allowed format found by its loader, not by a name or a Content-Type, and the pixel limit of
// its first page); a source of several frames is also held to the limits an animation's render has, since every
// frame goes out. The answer is then a copy of the bytes as they came, in the format the loader found.
#include <string.h>

#include "../internal/jobs.h"

int thumbd_job_passes_through(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsFormat format = job->result->source_format;
    return p->pass_through || (format != THUMBD_VIPS_FORMAT_UNKNOWN && (p->skip_formats & (1u << format)) != 0);
}

ThumbdVipsStep thumbd_job_pass_through(ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsThumbnailResult *result = job->result;
    int pages = job->source.pages;
    if (pages > 1 && pages > p->max_frames) {
        vips_error("thumbd", "%d frames exceed the limit of %d", pages, p->max_frames);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_FRAME_LIMIT, result);
    }
    if (pages > 1 && (int64_t)pages * job->upright_width * job->upright_height > p->max_source_pixels) {
        vips_error("thumbd", "%d frames of %dx%d exceed the pixel limit", pages, job->upright_width,
                   job->upright_height);
        return thumbd_fail(NULL, THUMBD_VIPS_STEP_PIXEL_LIMIT, result);
    }
    // (transfer full) released by the caller with thumbd_vips_free (g_free), as an encoder's output is.
    void *copy = g_malloc(job->length);
    memcpy(copy, job->buffer, job->length);
    result->data = copy;
    result->length = job->length;
    result->width = job->upright_width;
    result->height = job->upright_height;
    result->format = result->source_format;
    result->frames = pages;
    result->passed_through = 1;
    return THUMBD_VIPS_STEP_OK;
}
