// SPDX-License-Identifier: Apache-2.0
// Layer 3, the job (see internal/job.h): its context, the header check, the failure exit, temporaries.
#include <stdlib.h>
#include <string.h>

#include "internal/job.h"

_Static_assert((int)THUMBD_SIZE_BOTH == (int)VIPS_SIZE_BOTH && (int)THUMBD_SIZE_DOWN == (int)VIPS_SIZE_DOWN &&
                   (int)THUMBD_SIZE_FORCE == (int)VIPS_SIZE_FORCE,
               "ThumbdSizeMode spells VipsSize");

void thumbd_job_init(ThumbdJob *job, const ThumbdVipsThumbnailParams *p, ThumbdVipsThumbnailResult *result) {
    memset(job, 0, sizeof(*job));
    memset(result, 0, sizeof(*result));
    job->params = p;
    job->result = result;
    job->box = thumbd_box_of_params(p);
    job->focal_x = p->focal_x;
    job->focal_y = p->focal_y;
}

void thumbd_job_release(ThumbdJob *job) {
    for (int i = 0; i < THUMBD_VIPS_MAX_WATERMARKS; i++) {
        ThumbdJobMark *mark = &job->marks[i];
        if (mark->sized) g_object_unref(mark->sized);
        if (mark->decoded) g_object_unref(mark->decoded);
        mark->sized = mark->decoded = NULL;
    }
    if (job->frame_overlay) g_object_unref(job->frame_overlay);
    if (job->frame_patch) g_object_unref(job->frame_patch);
    job->frame_overlay = job->frame_patch = NULL;
}

// MARK: - The header

static ThumbdVipsFormat format_of_loader(const char *class_name) {
    if (vips_isprefix("VipsForeignLoadJpeg", class_name)) return THUMBD_VIPS_FORMAT_JPEG;
    if (vips_isprefix("VipsForeignLoadPng", class_name)) return THUMBD_VIPS_FORMAT_PNG;
    if (vips_isprefix("VipsForeignLoadWebp", class_name)) return THUMBD_VIPS_FORMAT_WEBP;
    if (vips_isprefix("VipsForeignLoadNsgif", class_name) || vips_isprefix("VipsForeignLoadGif", class_name))
        return THUMBD_VIPS_FORMAT_GIF;
    if (vips_isprefix("VipsForeignLoadTiff", class_name)) return THUMBD_VIPS_FORMAT_TIFF;
    if (vips_isprefix("VipsForeignLoadHeif", class_name)) return THUMBD_VIPS_FORMAT_HEIF;
    return THUMBD_VIPS_FORMAT_UNKNOWN;
}

// The heif loader reads both HEIC and AVIF; its "heif-compression" field tells them apart.
static ThumbdVipsFormat refine_heif(ThumbdVipsFormat format, VipsImage *image) {
    const char *compression = NULL;
    if (format == THUMBD_VIPS_FORMAT_HEIF && vips_image_get_typeof(image, "heif-compression") &&
        vips_image_get_string(image, "heif-compression", &compression) == 0 && compression &&
        strcmp(compression, "av1") == 0) {
        return THUMBD_VIPS_FORMAT_AVIF;
    }
    return format;
}

static int is_allowed(ThumbdVipsFormat format, uint32_t allowed_sources) {
    return format != THUMBD_VIPS_FORMAT_UNKNOWN && (allowed_sources & (1u << format)) != 0;
}

ThumbdVipsStep thumbd_vips_open_header(const void *buffer, size_t length, uint32_t allowed_sources,
                                       VipsImage **header, ThumbdVipsFormat *format, const char **loader_name) {
    *header = NULL;
    *loader_name = NULL;
    *format = THUMBD_VIPS_FORMAT_UNKNOWN;
    if (buffer == NULL || length == 0) {
        vips_error("thumbd", "empty buffer");
        return THUMBD_VIPS_STEP_UNRECOGNISED;
    }
    const char *loader = vips_foreign_find_load_buffer(buffer, length);
    if (loader == NULL) return THUMBD_VIPS_STEP_UNRECOGNISED;
    *loader_name = loader;
    // Checked here as well as by the operation block list: the block list is process-wide, this check
    // follows the caller's configuration, and a recognised-but-refused format is reported as such.
    *format = format_of_loader(loader);
    uint32_t heif_family = (1u << THUMBD_VIPS_FORMAT_HEIF) | (1u << THUMBD_VIPS_FORMAT_AVIF);
    int family_allowed = *format == THUMBD_VIPS_FORMAT_HEIF ? (allowed_sources & heif_family) != 0
                                                           : is_allowed(*format, allowed_sources);
    if (!family_allowed) {
        vips_error("thumbd", "source format not allowed (%s)", loader);
        return THUMBD_VIPS_STEP_REFUSED_FORMAT;
    }
    // (void *): libvips's signature is not const, but it only reads the buffer.
    *header = vips_image_new_from_buffer((void *)buffer, length, "", NULL);
    if (*header == NULL) return THUMBD_VIPS_STEP_HEADER;
    *format = refine_heif(*format, *header);
    if (!is_allowed(*format, allowed_sources)) {
        vips_error("thumbd", "source format not allowed (%s)", loader);
        g_object_unref(*header);
        *header = NULL;
        return THUMBD_VIPS_STEP_REFUSED_FORMAT;
    }
    return THUMBD_VIPS_STEP_OK;
}

// An EXIF ASCII field's value (libvips shows "<value> (<description>, ASCII, <n> components, ...)": the value is
// the first n - 1 bytes) into `out`, cut to fit; empty when absent.
static void copy_exif_ascii(VipsImage *image, const char *name, char *out, size_t size) {
    out[0] = 0;
    const char *text = NULL;
    if (!vips_image_get_typeof(image, name) || vips_image_get_string(image, name, &text) || !text) return;
    const char *marker = g_strrstr(text, ", ASCII, ");
    if (!marker) return;
    int components = atoi(marker + strlen(", ASCII, "));
    size_t length = components > 0 ? (size_t)(components - 1) : 0;
    length = VIPS_MIN(VIPS_MIN(length, strlen(text)), size - 1);
    memcpy(out, text, length);
    out[length] = 0;
}

void thumbd_probe_read(VipsImage *header, ThumbdVipsProbeResult *result) {
    result->width = header->Xsize;
    result->height = header->Ysize;
    result->orientation = vips_image_get_orientation(header);
    result->pages = vips_image_get_n_pages(header);
    result->has_alpha = vips_image_hasalpha(header) ? 1 : 0;
    result->has_icc_profile = vips_image_get_typeof(header, VIPS_META_ICC_NAME) ? 1 : 0;
    result->bands = header->Bands;
    result->bits = (int)(vips_format_sizeof(header->BandFmt) * 8);
    result->colour_space = vips_enum_nick(VIPS_TYPE_INTERPRETATION, header->Type);
    copy_exif_ascii(header, "exif-ifd0-Make", result->make, sizeof(result->make));
    copy_exif_ascii(header, "exif-ifd0-Model", result->model, sizeof(result->model));
    copy_exif_ascii(header, "exif-ifd2-DateTimeOriginal", result->taken_at, sizeof(result->taken_at));
}

ThumbdVipsStep thumbd_job_open(ThumbdJob *job, const void *buffer, size_t length) {
    const ThumbdVipsThumbnailParams *p = job->params;
    ThumbdVipsThumbnailResult *result = job->result;
    job->buffer = buffer;
    job->length = length;
    VipsImage *image = NULL;
    ThumbdVipsStep step = thumbd_vips_open_header(buffer, length, p->allowed_sources, &image, &result->source_format,
                                                  &result->loader);
    if (step != THUMBD_VIPS_STEP_OK) return thumbd_fail(image, step, result);
    result->source_width = image->Xsize;
    result->source_height = image->Ysize;  // one page: the loaders open page 0 only (n=1)
    // The whole header as a probe reads it, for an intermediate to remember (a source's analysis record shows it
    // without opening the source again: the header costs about 1.8 M instructions).
    job->probe.format = result->source_format;
    job->probe.loader = result->loader;
    thumbd_probe_read(image, &job->probe);

    // Pixel limit, before anything is decoded. Only the first page is ever decoded, so the page count
    // does not multiply the cost (animations check their frames: jobs/animation.c).
    if ((int64_t)image->Xsize * image->Ysize > p->max_source_pixels) {
        vips_error("thumbd", "%dx%d exceeds the pixel limit", image->Xsize, image->Ysize);
        return thumbd_fail(image, THUMBD_VIPS_STEP_PIXEL_LIMIT, result);
    }
    ThumbdSource source = {
        .stored_width = image->Xsize,
        .stored_height = image->Ysize,
        .exif = vips_image_get_orientation(image),
        .pages = VIPS_MAX(1, vips_image_get_n_pages(image)),
        // Convert through ICC only when the source carries a profile. Untagged sources are taken as sRGB: an
        // export profile would cost an sRGB -> XYZ -> sRGB round trip for nothing. CMYK is left to libvips's
        // colourspace step, which uses the embedded (or its built-in) CMYK profile; an sRGB export on top
        // would apply the CMYK profile to RGB pixels.
        .use_icc = vips_image_get_typeof(image, VIPS_META_ICC_NAME) && image->Type != VIPS_INTERPRETATION_CMYK,
    };
    result->source_frames = source.pages;
    g_object_unref(image);
    thumbd_job_set_source(job, source);
    return THUMBD_VIPS_STEP_OK;
}

void thumbd_job_set_source(ThumbdJob *job, ThumbdSource source) {
    job->source = source;
    job->turn = thumbd_orientation_of_plan(job->params, source.exif);
    int swap = thumbd_orientation_swaps(job->turn);
    job->upright_width = swap ? source.stored_height : source.stored_width;
    job->upright_height = swap ? source.stored_width : source.stored_height;
}

ThumbdBox thumbd_job_box(const ThumbdJob *job) {
    ThumbdBox box = thumbd_box_of_params(job->params);
    int mode = box.thumbor & 0xff;
    int letterbox = mode == THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN && box.fit == THUMBD_VIPS_FIT_PAD;
    if (!box.enlarge && (mode == THUMBD_VIPS_ROUNDING_THUMBOR_FULL_FIT_IN || mode == THUMBD_VIPS_ROUNDING_THUMBOR_CROP ||
                         letterbox)) {
        // thumbor's no_upscale runs right after the load: the request's sides at most the picture's.
        box.width = THUMBD_MIN(box.width, job->upright_width);
        box.height = THUMBD_MIN(box.height, job->upright_height);
    }
    if (thumbd_job_thumbor_crops(job)) box.thumbor |= THUMBD_ROUNDING_THUMBOR_REGION;
    if (job->thumbor_width > 0) {
        box.width = job->thumbor_width;
        box.height = job->thumbor_height;
        box.original_sides = 0;
    }
    return box;
}

int thumbd_job_thumbor_crops(const ThumbdJob *job) {
    const ThumbdVipsThumbnailParams *p = job->params;
    int rounding = p->thumbor_rounding;
    return (rounding & 0xff) == THUMBD_VIPS_ROUNDING_THUMBOR_CROP &&
           !(rounding & (THUMBD_VIPS_ROUNDING_NO_WIDTH | THUMBD_VIPS_ROUNDING_NO_HEIGHT)) &&
           p->fit == THUMBD_VIPS_FIT_COVER && p->gravity != THUMBD_VIPS_GRAVITY_ATTENTION &&
           p->gravity != THUMBD_VIPS_GRAVITY_ENTROPY;
}

// The focal point as fractions of `region`: p's fractions, or its point in pixels measured in the frame (source
// pixels times kx, ky; from a corner of the frame, inward).
static void focal_in_region(const ThumbdVipsThumbnailParams *p, ThumbdRect frame, ThumbdRect region, double kx,
                            double ky, double *fx, double *fy) {
    *fx = p->focal_x;
    *fy = p->focal_y;
    if (!p->focal_in_pixels) return;
    double x = p->focal_x * kx, y = p->focal_y * ky;
    if (p->focal_corner != THUMBD_VIPS_GRAVITY_CENTRE) {
        ThumbdCompass c = thumbd_compass(p->focal_corner);
        x = c.east ? frame.left + frame.width - x : frame.left + x;
        y = c.south ? frame.top + frame.height - y : frame.top + y;
    }
    *fx = THUMBD_CLIP(0.0, (x - region.left) / THUMBD_MAX(region.width, 1e-9), 1.0);
    *fy = THUMBD_CLIP(0.0, (y - region.top) / THUMBD_MAX(region.height, 1e-9), 1.0);
}

void thumbd_job_thumbor_region(ThumbdJob *job, ThumbdRect frame, ThumbdRect *region, double kx, double ky) {
    if (!thumbd_job_thumbor_crops(job)) return;
    const ThumbdVipsThumbnailParams *p = job->params;
    int width = thumbd_whole(region->width / kx), height = thumbd_whole(region->height / ky);
    job->thumbor_width = job->thumbor_height = 0;  // (a path may cut again, from a trimmed frame)
    ThumbdBox asked = thumbd_job_box(job);
    asked.scale = 0;  // thumbor's proportion() resizes its output afterwards
    ThumbdBox box = thumbd_box_settled(asked, width, height);
    // thumbor's point: the focal point's, or its alignment's (left 0, centre half, right the whole side).
    double x, y;
    if (p->gravity == THUMBD_VIPS_GRAVITY_FOCAL) {
        focal_in_region(p, frame, *region, kx, ky, &x, &y);
        x *= width;
        y *= height;
    } else {
        ThumbdCompass c = thumbd_compass(p->gravity);
        x = c.west ? 0 : c.east ? width : width / 2.0;
        y = c.north ? 0 : c.south ? height : height / 2.0;
    }
    ThumbdRect r = thumbd_thumbor_crop_region(width, height, box.width, box.height, x, y);
    job->thumbor_width = box.width;
    job->thumbor_height = box.height;
    *region = (ThumbdRect){region->left + r.left * kx, region->top + r.top * ky, r.width * kx, r.height * ky};
}

void thumbd_job_settle(ThumbdJob *job, ThumbdRect frame, ThumbdRect region, double kx, double ky) {
    const ThumbdVipsThumbnailParams *p = job->params;
    focal_in_region(p, frame, region, kx, ky, &job->focal_x, &job->focal_y);
    // Decided once, from the region's size in source pixels (what the resize target decides from), so the steps
    // after the resize never decide again from a rounded size.
    job->box = thumbd_box_settled(thumbd_job_box(job), thumbd_whole(region.width / kx),
                                  thumbd_whole(region.height / ky));
    job->region = (ThumbdRect){region.left / kx, region.top / ky, region.width / kx, region.height / ky};
    job->window = (ThumbdRect){0, 0, 1, 1};
}

int thumbd_job_renders_animation(const ThumbdJob *job) {
    return job->source.pages > 1 && job->params->format_animated != THUMBD_VIPS_FORMAT_UNKNOWN;
}

// MARK: - The resize from the source

const char *thumbd_job_export_profile(const ThumbdJob *job) {
    // Keeping the profile keeps the pixels in its colour space: no conversion to sRGB.
    return job->source.use_icc && !job->params->keep_icc ? "srgb" : NULL;
}

int thumbd_job_thumbnail_buffer(const ThumbdJob *job, ThumbdResizeTarget t, int all_pages, VipsImage **out) {
    // (void *): libvips's signature is not const, but it only reads the buffer (it wraps it, uncopied).
    // fail_on=error also goes in option_string: libvips's thumbnail_buffer (8.14.1, and still 8.18.4: libvips
    // #5195) does not pass its own fail_on to the loader (only the file variant does), so a truncated JPEG would
    // decode "successfully" with grey or black rows (compat/README.md).
    const char *options = all_pages ? "n=-1,fail_on=error" : "fail_on=error";
    const char *profile = thumbd_job_export_profile(job);
    void *buffer = (void *)job->buffer;
    if (profile) {
        return vips_thumbnail_buffer(buffer, job->length, out, t.width, "height", t.height, "size", (VipsSize)t.size,
                                     "no_rotate", TRUE, "fail_on", VIPS_FAIL_ON_ERROR, "option_string", options,
                                     "export_profile", profile, NULL);
    }
    return vips_thumbnail_buffer(buffer, job->length, out, t.width, "height", t.height, "size", (VipsSize)t.size,
                                 "no_rotate", TRUE, "fail_on", VIPS_FAIL_ON_ERROR, "option_string", options, NULL);
}

// MARK: - Failure, temporaries, metadata

ThumbdVipsStep thumbd_fail(VipsImage *image, ThumbdVipsStep step, ThumbdVipsThumbnailResult *result) {
    if (image) g_object_unref(image);
    g_free(result->data);
    result->data = NULL;
    result->length = 0;
    g_free(result->error_detail);
    result->error_detail = vips_error_buffer_copy();
    return step;
}

VipsObject *thumbd_scope_new(void) { return VIPS_OBJECT(vips_image_new()); }

ThumbdVipsStep thumbd_scope_keep(VipsObject *scope, VipsImage **image, VipsImage *out) {
    g_object_ref(out);  // before the scope (which may hold the only reference) goes
    g_object_unref(*image);
    *image = out;
    g_object_unref(scope);
    return THUMBD_VIPS_STEP_OK;
}

ThumbdVipsStep thumbd_scope_fail(VipsObject *scope, ThumbdVipsStep step) {
    g_object_unref(scope);
    return step;
}

ThumbdVipsStep thumbd_scope_failed(VipsObject *scope) { return thumbd_scope_fail(scope, THUMBD_VIPS_STEP_THUMBNAIL); }

void *thumbd_remove_field(VipsImage *image, const char *name, GValue *value, void *unused) {
    (void)value;
    (void)unused;
    vips_image_remove(image, name);
    return NULL;
}

int thumbd_fit_to(VipsImage *in, VipsImage **out, int width, int height) {
    if (in->Xsize == width && in->Ysize == height) {
        *out = in;
        g_object_ref(in);
        return 0;
    }
    VipsObject *scope = thumbd_scope_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 2);
    int failed = 0;
    if (in->Xsize > width || in->Ysize > height) {
        failed = vips_extract_area(in, &t[0], 0, 0, VIPS_MIN(width, in->Xsize), VIPS_MIN(height, in->Ysize), NULL);
        if (!failed) in = t[0];
    }
    if (!failed && (in->Xsize < width || in->Ysize < height)) {
        failed = vips_embed(in, &t[1], 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL);
        if (!failed) in = t[1];
    }
    if (!failed) {
        *out = in;
        g_object_ref(in);
    }
    g_object_unref(scope);
    return failed ? -1 : 0;
}
