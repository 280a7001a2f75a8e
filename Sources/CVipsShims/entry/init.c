// SPDX-License-Identifier: Apache-2.0
// Layer 7, entry points: starting libvips with thumbd's policy, and the small process-wide calls. See
// CVipsShims.h for the contract of each function.
#include <malloc.h>
#include <string.h>

#include <vips/vips.h>
#include <vips/vector.h>

#include "CVipsShims.h"

// The loaders thumbd accepts, as libvips class-name prefixes (the base class of the file, buffer and source
// variants). Both nsgif (libvips >= 8.11) and the older giflib loader are listed; a name this libvips does
// not have is ignored by vips_operation_block_set.
static const char *const allowed_loader_bases[] = {
    "VipsForeignLoadJpeg", "VipsForeignLoadPng",  "VipsForeignLoadWebp", "VipsForeignLoadNsgif",
    "VipsForeignLoadGif",  "VipsForeignLoadTiff", "VipsForeignLoadHeif",
};

// Serialises thumbd_vips_init: VIPS_INIT returns at once to a second caller while the first is still starting
// libvips, so a caller on another thread (the tests start libvips from two places) could go on to a libvips whose
// savers are not yet registered: thumbd_vips_can_save_avif then answered 0 now and then. (Static storage: a
// zeroed GMutex needs no init.)
static GMutex init_lock;

static int init_locked(const char *argv0, char **error_detail);

int thumbd_vips_init(const char *argv0, char **error_detail) {
    g_mutex_lock(&init_lock);
    int status = init_locked(argv0, error_detail);
    g_mutex_unlock(&init_lock);
    return status;
}

static int init_locked(const char *argv0, char **error_detail) {
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
    // libvips 8.14 marks jxlsave untrusted with the rest of the libjxl module; the saver only writes pixels
    // thumbd rendered itself, so it is re-allowed (the JPEG XL loader stays blocked).
    vips_operation_block_set("VipsForeignSaveJxl", FALSE);
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

int thumbd_vips_can_save_jxl(void) {
    VipsImage *black = NULL;
    void *data = NULL;
    size_t length = 0;
    int ok = vips_black(&black, 16, 16, "bands", 3, NULL) == 0 &&
             vips_jxlsave_buffer(black, &data, &length, "effort", 3, "Q", 50, NULL) == 0 && length > 0;
    g_free(data);
    if (black) g_object_unref(black);
    vips_error_clear();
    return ok ? 1 : 0;
}

int thumbd_vips_can_save_heic(void) {
    VipsImage *black = NULL;
    void *data = NULL;
    size_t length = 0;
    int ok = vips_black(&black, 16, 16, "bands", 3, NULL) == 0 &&
             vips_heifsave_buffer(black, &data, &length, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, "Q", 50,
                                  NULL) == 0 &&
             length > 0;
    g_free(data);
    if (black) g_object_unref(black);
    vips_error_clear();
    return ok ? 1 : 0;
}
