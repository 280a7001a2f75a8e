// SPDX-License-Identifier: Apache-2.0
// encode_formats: the encode cost of each output format on one 256 px thumbnail (issue 29), in process, with
// thumbd's libvips settings (one libvips worker, operation cache off) and thumbd's encoder options (q80; WebP effort
// 2, AVIF effort 2; JPEG XL at efforts 3 to 7 and lossless; HEIC at efforts 0 to 9, which x265 ignores).
//
//     cc -O2 -Wall -o /tmp/encode_formats bench/encode_formats.c $(pkg-config --cflags --libs vips)
//     /tmp/encode_formats photo.jpg 30
//
// The source is shrunk once to 256 px wide and kept in memory; each line is the mean over N encodes of the
// process's CPU time (the encoders' own threads included) and of the wall time, and the size of the last encode.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vips/vips.h>

static double milliseconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define MEASURE(name, call)                                                                                           \
    do {                                                                                                              \
        double cpu = milliseconds(CLOCK_PROCESS_CPUTIME_ID), wall = milliseconds(CLOCK_MONOTONIC);                    \
        void *data = NULL;                                                                                            \
        size_t length = 0;                                                                                            \
        for (int i = 0; i < runs; i++) {                                                                              \
            g_free(data);                                                                                             \
            data = NULL;                                                                                              \
            if (call) {                                                                                               \
                printf("%s failed: %s\n", name, vips_error_buffer());                                                 \
                break;                                                                                                \
            }                                                                                                         \
        }                                                                                                             \
        printf("%-18s %6.1f ms CPU %6.1f ms wall %7zu bytes\n", name,                                                 \
               (milliseconds(CLOCK_PROCESS_CPUTIME_ID) - cpu) / runs, (milliseconds(CLOCK_MONOTONIC) - wall) / runs,  \
               length);                                                                                               \
        g_free(data);                                                                                                 \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s image runs\n", argv[0]);
        return 2;
    }
    if (VIPS_INIT(argv[0])) return 1;
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    int runs = atoi(argv[2]);
    VipsImage *thumbnail = NULL;
    if (vips_thumbnail(argv[1], &thumbnail, 256, NULL)) return 1;
    VipsImage *image = vips_image_copy_memory(thumbnail);
    g_object_unref(thumbnail);
    if (!image) return 1;
    printf("%s: %dx%d, %d runs\n", argv[1], image->Xsize, image->Ysize, runs);
    MEASURE("jpeg", vips_jpegsave_buffer(image, &data, &length, "Q", 80, NULL));
    MEASURE("webp e2", vips_webpsave_buffer(image, &data, &length, "Q", 80, "effort", 2, NULL));
    MEASURE("avif e2", vips_heifsave_buffer(image, &data, &length, "Q", 80, "compression",
                                            VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "effort", 2, NULL));
    for (int effort = 3; effort <= 7; effort++) {
        char name[32];
        snprintf(name, sizeof name, "jxl e%d", effort);
        MEASURE(name, vips_jxlsave_buffer(image, &data, &length, "Q", 80, "effort", effort, NULL));
    }
    MEASURE("jxl lossless e4", vips_jxlsave_buffer(image, &data, &length, "lossless", TRUE, "effort", 4, NULL));
    for (int effort = 0; effort <= 9; effort += 3) {
        char name[32];
        snprintf(name, sizeof name, "heic e%d", effort);
        MEASURE(name, vips_heifsave_buffer(image, &data, &length, "Q", 80, "compression",
                                           VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, "effort", effort, NULL));
    }
    g_object_unref(image);
    return 0;
}
