// SPDX-License-Identifier: Apache-2.0
// libvips calls for thumbd, one C call per job. See CVipsShims.h for the contract of each function.
#include "CVipsShimsInternal.h"

#include <malloc.h>
#include <string.h>
#include <vips/vector.h>

// The loaders thumbd accepts, as libvips class-name prefixes (the base class of the file, buffer and source
// variants). Both nsgif (libvips >= 8.11) and the older giflib loader are listed; a name this libvips does
// not have is ignored by vips_operation_block_set.
static const char *const allowed_loader_bases[] = {
    "VipsForeignLoadJpeg", "VipsForeignLoadPng",  "VipsForeignLoadWebp", "VipsForeignLoadNsgif",
    "VipsForeignLoadGif",  "VipsForeignLoadTiff", "VipsForeignLoadHeif",
};

int thumbd_vips_init(const char *argv0, char **error_detail) {
    *error_detail = NULL;
    if (VIPS_INIT(argv0)) {
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    // Every job is distinct and runs once: caching operations would only pin source buffers in memory.
    vips_cache_set_max(0);
    // thumbd parallelises across images on its own render threads; one libvips worker per job.
    vips_concurrency_set(1);
    // No run-time compiled SIMD (liborc): orc 0.4.33 (Debian 12) is not thread-safe when several threads
    // compile or run programs at once (sharp #3677; fixed in orc 0.4.34), and we saw one render thread die
    // with a general protection fault inside liborc. Measured with the peers' vips_bench on its corpus,
    // 2 threads: 97.9 / 109.9 thumbnails/s with orc, 96.2 / 103.1 without (within noise).
    vips_vector_set_enabled(FALSE);
    // Pixel buffers above 4 MiB (decodes of large sources) get their own mapping and go back to the kernel
    // when freed; smaller ones (intermediates, resample lines, thumbnails) come from the heaps. glibc would
    // otherwise raise this threshold after every such free (up to 32 MiB), and the heaps would keep freed
    // decodes: RSS after the peers' ZIPF run was 419 MiB with the dynamic threshold, 194 MiB with 128 KiB.
    // 128 KiB made every buffer a fresh mapping, faulted in and zeroed page by page: 4 MiB served ZIPF 10 %
    // faster (3,002-3,099 against 2,691-2,822 req/s) for 281 instead of 259 MiB (BENCHMARKS.md, "thumbd's own
    // resample"). Setting it also turns the dynamic adjustment off.
    mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
    // Block every loader, re-allow the six families thumbd serves, then block whatever libvips itself
    // marks untrusted (last, so that re-allowing a family can never re-enable an untrusted loader in it).
    // SVG, PDF, MVG, ImageMagick, matrix, CSV, raw, FITS, JPEG 2000, JPEG XL, ... stay blocked.
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < sizeof(allowed_loader_bases) / sizeof(allowed_loader_bases[0]); i++) {
        vips_operation_block_set(allowed_loader_bases[i], FALSE);
    }
    vips_block_untrusted_set(TRUE);
    return 0;
}

int thumbd_vips_can_save_avif(void) {
    VipsImage *black = NULL;
    void *data = NULL;
    size_t length = 0;
    int ok = vips_black(&black, 16, 16, "bands", 3, NULL) == 0 &&
             vips_heifsave_buffer(black, &data, &length, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                  "effort", 0, "Q", 50, NULL) == 0 &&
             length > 0;
    g_free(data);
    if (black) g_object_unref(black);
    vips_error_clear();
    return ok ? 1 : 0;
}

const char *thumbd_vips_version(void) { return vips_version_string(); }

void thumbd_vips_free(void *pointer) { g_free(pointer); }

void thumbd_vips_thread_shutdown(void) { vips_thread_shutdown(); }

void thumbd_vips_error_clear(void) { vips_error_clear(); }

// MARK: - Identification

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

ThumbdVipsStep thumbd_vips_probe(const void *buffer, size_t length, uint32_t allowed_sources,
                                 ThumbdVipsProbeResult *result) {
    memset(result, 0, sizeof(*result));
    VipsImage *header = NULL;
    ThumbdVipsStep step =
        thumbd_vips_open_header(buffer, length, allowed_sources, &header, &result->format, &result->loader);
    if (step != THUMBD_VIPS_STEP_OK) {
        result->error_detail = vips_error_buffer_copy();
        return step;
    }
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
    g_object_unref(header);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;
}

// MARK: - Decoding (tests and diagnostics)

static ThumbdVipsStep decode(const void *buffer, size_t length, int all_frames, ThumbdVipsDecoded *result);

ThumbdVipsStep thumbd_vips_decode(const void *buffer, size_t length, ThumbdVipsDecoded *result) {
    return decode(buffer, length, 0, result);
}

ThumbdVipsStep thumbd_vips_decode_frames(const void *buffer, size_t length, ThumbdVipsDecoded *result) {
    return decode(buffer, length, 1, result);
}

static ThumbdVipsStep decode(const void *buffer, size_t length, int all_frames, ThumbdVipsDecoded *result) {
    memset(result, 0, sizeof(*result));
    uint32_t every_format = ~0u;
    const char *loader = NULL;
    VipsImage *image = NULL;
    VipsImage *uchar = NULL;
    ThumbdVipsStep step =
        thumbd_vips_open_header(buffer, length, every_format, &image, &result->format, &loader);
    if (step != THUMBD_VIPS_STEP_OK) goto failed;
    if (all_frames && vips_image_get_n_pages(image) > 1) {
        g_object_unref(image);
        image = vips_image_new_from_buffer((void *)buffer, length, "n=-1", NULL);
        if (image == NULL) {
            step = THUMBD_VIPS_STEP_HEADER;
            goto failed;
        }
    }

    result->width = image->Xsize;
    result->height = image->Ysize;
    result->bands = image->Bands;
    result->pages = vips_image_get_n_pages(image);
    result->has_exif = vips_image_get_typeof(image, VIPS_META_EXIF_NAME) ? 1 : 0;
    result->has_xmp = vips_image_get_typeof(image, VIPS_META_XMP_NAME) ? 1 : 0;
    result->has_icc_profile = vips_image_get_typeof(image, VIPS_META_ICC_NAME) ? 1 : 0;
    result->has_orientation = vips_image_get_typeof(image, VIPS_META_ORIENTATION) ? 1 : 0;
    int interlaced = 0;
    if (vips_image_get_typeof(image, "interlaced") && vips_image_get_int(image, "interlaced", &interlaced) == 0) {
        result->interlaced = interlaced ? 1 : 0;
    }
    result->page_height = vips_image_get_page_height(image);
    result->loop = -1;
    if (vips_image_get_typeof(image, "loop")) vips_image_get_int(image, "loop", &result->loop);
    int *delays = NULL, count = 0;
    if (vips_image_get_typeof(image, "delay") && vips_image_get_array_int(image, "delay", &delays, &count) == 0) {
        result->delay_count = VIPS_MIN(count, 16);
        for (int i = 0; i < result->delay_count; i++) result->delays[i] = delays[i];
    }

    // Tests compare 8-bit values; a 16-bit output would already be a failure they can see in `bands`/colours.
    if (image->BandFmt == VIPS_FORMAT_UCHAR) {
        uchar = image;
        g_object_ref(uchar);
    } else if (vips_cast_uchar(image, &uchar, NULL)) {
        step = THUMBD_VIPS_STEP_DECODE;
        goto failed;
    }
    size_t size = 0;
    result->pixels = vips_image_write_to_memory(uchar, &size);
    if (result->pixels == NULL) {
        step = THUMBD_VIPS_STEP_DECODE;
        goto failed;
    }
    result->length = size;
    g_object_unref(uchar);
    g_object_unref(image);
    vips_error_clear();
    return THUMBD_VIPS_STEP_OK;

failed:
    if (uchar) g_object_unref(uchar);
    if (image) g_object_unref(image);
    result->error_detail = vips_error_buffer_copy();
    return step;
}

int thumbd_vips_make_flat(int width, int height, int bands, int frames, ThumbdVipsFormat format, void **data,
                          size_t *length, char **error_detail) {
    *data = NULL;
    *length = 0;
    *error_detail = NULL;
    const char *suffix = format == THUMBD_VIPS_FORMAT_JPEG   ? ".jpg"
                         : format == THUMBD_VIPS_FORMAT_PNG  ? ".png"
                         : format == THUMBD_VIPS_FORMAT_WEBP ? ".webp"
                         : format == THUMBD_VIPS_FORMAT_GIF  ? ".gif"
                                                             : NULL;
    if (!suffix || width < 1 || height < 1 || bands < 1 || bands > 4 || frames < 1) {
        vips_error("thumbd", "make_flat: no %dx%d, %d bands, %d frames as format %d", width, height, bands, frames,
                   format);
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    VipsImage **pages = g_new0(VipsImage *, frames);
    VipsImage *image = NULL;
    int failed = 0;
    for (int i = 0; i < frames && !failed; i++) {
        // A colour per frame, so that an animation's frames differ (an encoder may merge equal ones).
        double ones[4] = {1, 1, 1, 1}, colour[4] = {200 - 40 * (i % 4), 120, 40 + 50 * (i % 4), 128};
        if (bands <= 2) colour[1] = 128;  // grey + alpha: the alpha is the second band
        VipsImage *black = NULL;
        failed = vips_black(&black, width, height, "bands", bands, NULL) ||
                 vips_linear(black, &pages[i], ones, colour, bands, "uchar", TRUE, NULL);
        if (black) g_object_unref(black);
    }
    VipsImage *joined = NULL;
    failed = failed || vips_arrayjoin(pages, &joined, frames, "across", 1, NULL) ||
             vips_copy(joined, &image, "interpretation",
                       bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, NULL);
    if (joined) g_object_unref(joined);
    for (int i = 0; i < frames; i++) {
        if (pages[i]) g_object_unref(pages[i]);
    }
    g_free(pages);
    if (!failed && frames > 1) {
        int *delays = g_new(int, frames);
        for (int i = 0; i < frames; i++) delays[i] = 100;
        vips_image_set_int(image, VIPS_META_PAGE_HEIGHT, height);
        vips_image_set_array_int(image, "delay", delays, frames);
        vips_image_set_int(image, "loop", 0);
        g_free(delays);
    }
    failed = failed || vips_image_write_to_buffer(image, suffix, data, length, NULL);
    if (image) g_object_unref(image);
    if (failed) {
        g_free(*data);
        *data = NULL;
        *length = 0;
        *error_detail = vips_error_buffer_copy();
        return -1;
    }
    vips_error_clear();
    return 0;
}
