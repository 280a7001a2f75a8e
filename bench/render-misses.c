// SPDX-License-Identifier: Apache-2.0
// render-misses: the render work of a peers list in one thread, without HTTP or caches around it. Each
// distinct (file, box) of the list, in order, is rendered as thumbd renders it (fit-in, the source's own
// format, quality 80, one thumbd_vips_render per box): a box that fits the 512 px band goes through the
// source's intermediate, made the first time the source needs it and kept; DIRECT=1 offers no band, so every
// box renders from the source. Prints the CPU each stage took (the process's CPU clock, libvips's worker
// thread included; "boxes" is the renders less the intermediates made inside them). OUT=dir keeps every
// output; ONLY=substring picks files.
//
//   clang -O2 -o /tmp/render-misses bench/render-misses.c $(find Sources/CVipsShims -name '*.c') \
//       -ISources/CVipsShims/include $(pkg-config --cflags --libs vips) -ljpeg -lwebp -lm
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
    ThumbdVipsIntermediate *intermediate;  // (owned) the 512 px band's, kept
    ThumbdVipsIntermediate *own;           // (owned) the last box's own intermediate (a plan beyond the band)
} Source;

static Source sources[1024];
static int source_count;
static int made;
static double intermediate_cpu;

// thumbd_vips_render's intermediate callback: the source's kept intermediate, made on first use (the band is
// always 512, the only one offered).
static ThumbdVipsStep intermediate_of(void *context, ThumbdVipsJob *job, int band, int own,
                                      const ThumbdVipsIntermediate **intermediate) {
    Source *s = context;
    ThumbdVipsIntermediate **slot = own ? &s->own : &s->intermediate;
    if (own && *slot) {
        thumbd_vips_intermediate_release(*slot);
        *slot = NULL;
    }
    if (!*slot) {
        double t = cpu_seconds();
        ThumbdVipsThumbnailResult r;
        ThumbdVipsStep step = thumbd_vips_job_make_intermediate(job, band, slot, &r);
        if (step != THUMBD_VIPS_STEP_OK) {
            fprintf(stderr, "intermediate of %s: %s\n", s->name, r.error_detail ? r.error_detail : "?");
            thumbd_vips_free(r.error_detail);
            return step;
        }
        thumbd_vips_free(r.error_detail);
        made++;
        intermediate_cpu += cpu_seconds() - t;
    }
    *intermediate = *slot;
    return THUMBD_VIPS_STEP_OK;
}

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
    int seen_count = 0, boxes = 0;
    double box_cpu = 0, output_bytes = 0, start = cpu_seconds();
    const int bands[] = {512};
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
        double t = cpu_seconds(), made_before = intermediate_cpu;
        ThumbdVipsStep step =
            thumbd_vips_render(s->bytes, s->length, p, bands, direct ? 0 : 1, 1.0, intermediate_of, s, &r);
        if (step != THUMBD_VIPS_STEP_OK) {
            fprintf(stderr, "%s at %d: %s\n", name, width, r.error_detail ? r.error_detail : "?");
            return 1;
        }
        box_cpu += cpu_seconds() - t - (intermediate_cpu - made_before);
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
