// SPDX-License-Identifier: Apache-2.0
// render-misses: the render work of a peers list in one thread, without HTTP or caches around it. Each
// distinct (file, box) of the list, in order, is rendered as thumbd renders it (fit-in, the source's own
// format, quality 80): the source's 512 px intermediate made the first time the source appears, then the box
// from it; DIRECT=1 renders every box from the source instead. Prints the CPU each stage took (the process's
// CPU clock, libvips's worker thread included). OUT=dir keeps every output; ONLY=substring picks files.
//
//   clang -O2 -o /tmp/render-misses bench/render-misses.c Sources/CVipsShims/*.c -ISources/CVipsShims/include \
//       -ISources/CVipsShims $(pkg-config --cflags --libs vips) -lm
//   /tmp/render-misses ~/peers/corpus ~/peers/lists/zipf.tsv
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CVipsShims.h"

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

typedef struct {
    char name[256];
    void *bytes;
    size_t length;
    ThumbdVipsFormat format;
    ThumbdVipsIntermediate *intermediate;
} Source;

static Source sources[1024];
static int source_count;

static Source *source_named(const char *directory, const char *name) {
    for (int i = 0; i < source_count; i++)
        if (!strcmp(sources[i].name, name)) return &sources[i];
    if (source_count == 1024) return NULL;
    Source *s = &sources[source_count++];
    snprintf(s->name, sizeof(s->name), "%s", name);
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", directory, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    s->length = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    s->bytes = malloc(s->length);
    if (fread(s->bytes, 1, s->length, f) != s->length) s->length = 0;
    fclose(f);
    s->format = strstr(name, ".webp") ? THUMBD_VIPS_FORMAT_WEBP
                : strstr(name, ".png") ? THUMBD_VIPS_FORMAT_PNG
                                       : THUMBD_VIPS_FORMAT_JPEG;
    return s;
}

static void keep(const char *name, int box, ThumbdVipsFormat format, ThumbdVipsThumbnailResult *r) {
    const char *directory = getenv("OUT");
    if (!directory) return;
    char path[1024];
    const char *extension = format == THUMBD_VIPS_FORMAT_PNG ? "png" : format == THUMBD_VIPS_FORMAT_WEBP ? "webp" : "jpg";
    snprintf(path, sizeof(path), "%s/%s_%d.%s", directory, name, box, extension);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(r->data, 1, r->length, f);
        fclose(f);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CORPUS_DIR LIST.tsv\n", argv[0]);
        return 2;
    }
    char *error = NULL;
    if (thumbd_vips_init(argv[0], &error)) {
        fprintf(stderr, "libvips: %s\n", error ? error : "?");
        return 1;
    }
    const char *only = getenv("ONLY");
    int direct = getenv("DIRECT") != NULL;
    FILE *list = fopen(argv[2], "r");
    if (!list) return 1;
    static char seen[20000][300];
    int seen_count = 0, made = 0, boxes = 0;
    double intermediate_cpu = 0, box_cpu = 0, output_bytes = 0, start = cpu_seconds();
    char line[512];
    while (fgets(line, sizeof(line), list)) {
        char name[256];
        int width, height;
        if (sscanf(line, "%255s %d %d", name, &width, &height) != 3) continue;
        if (only && !strstr(name, only)) continue;
        char key[300];
        snprintf(key, sizeof(key), "%s|%d|%d", name, width, height);
        int repeated = 0;
        for (int i = 0; i < seen_count && !repeated; i++) repeated = !strcmp(seen[i], key);
        if (repeated || seen_count == 20000) continue;
        strcpy(seen[seen_count++], key);
        Source *s = source_named(argv[1], name);
        if (!s || !s->length) {
            fprintf(stderr, "cannot read %s\n", name);
            return 1;
        }
        ThumbdVipsThumbnailParams p;
        memset(&p, 0, sizeof(p));
        p.width = width;
        p.height = height;
        p.fit = THUMBD_VIPS_FIT_CONTAIN;
        p.format_opaque = p.format_alpha = s->format;
        p.quality = 80;
        p.png_compression = 6;
        p.webp_effort = 2;
        p.avif_effort = 2;
        p.allowed_sources = 0xffffffff;
        p.max_source_pixels = 50000000;
        p.auto_orient = 1;
        p.contrast = 1;
        p.saturation = 1;
        p.max_frames = 100;
        p.watermark_opacity = 1;
        ThumbdVipsThumbnailResult r;
        double t = cpu_seconds();
        if (!direct && !s->intermediate) {
            if (thumbd_vips_intermediate_new(s->bytes, s->length, p, 512, &s->intermediate, &r)) {
                fprintf(stderr, "intermediate of %s: %s\n", name, r.error_detail ? r.error_detail : "?");
                return 1;
            }
            thumbd_vips_free(r.error_detail);
            made++;
            intermediate_cpu += cpu_seconds() - t;
            t = cpu_seconds();
        }
        ThumbdVipsStep step = direct ? thumbd_vips_thumbnail(s->bytes, s->length, p, &r)
                                     : thumbd_vips_thumbnail_from_intermediate(s->intermediate, p, &r);
        if (step != THUMBD_VIPS_STEP_OK) {
            fprintf(stderr, "%s at %d: %s\n", name, width, r.error_detail ? r.error_detail : "?");
            return 1;
        }
        box_cpu += cpu_seconds() - t;
        boxes++;
        output_bytes += r.length;
        keep(name, width, s->format, &r);
        thumbd_vips_free(r.data);
        thumbd_vips_free(r.error_detail);
    }
    printf("intermediates: %d, %.3f CPU-s (%.2f ms each)\n", made, intermediate_cpu,
           made ? 1000 * intermediate_cpu / made : 0);
    printf("boxes: %d, %.3f CPU-s (%.2f ms each), %.0f bytes on average\n", boxes, box_cpu,
           boxes ? 1000 * box_cpu / boxes : 0, boxes ? output_bytes / boxes : 0);
    printf("total: %.3f CPU-s\n", cpu_seconds() - start);
    return 0;
}
