// SPDX-License-Identifier: Apache-2.0
// filters_vips: the in-process libvips yardstick of bench/filters.sh (issue 16's FILTERS workload).
//
// Reads a list of (file, w, h) lines, loads every listed source and the watermark into memory, then T threads
// (one libvips job per thread, vips concurrency 1, operation cache off: thumbd's settings) take lines from a
// shared counter and make, for each, the thumbnail thumbd's
//
//     /thumb?url=...&w=W&h=H&crop=0.1,0.1,0.8,0.8&rotate=90&sharpen=1&wm_url=...&wm_pos=southeast
//            &wm_x=10&wm_y=10&wm_opacity=0.5&format=jpeg&q=80
//
// makes: EXIF orientation, rotate 90 clockwise, the central 80 % of the turned picture, fitted inside WxH (never
// enlarged), sharpen sigma 1, the watermark at 50 % opacity 10 px from the bottom-right corner, JPEG q80
// (optimize_coding, metadata stripped). No HTTP, no fetch, no cache: what libvips alone needs for the same
// pictures. Two ways to get there (-m):
//
//   thumbnail  (default) one vips_thumbnail_buffer of the whole picture at the scale the region needs (libvips's
//              own shrink-on-load choice, which keeps a 2x margin for JPEG), then rotate, extract the region,
//              sharpen, composite, encode.
//   thumbd     the steps thumbd's shim runs (Sources/CVipsShims/jobs/intermediate.c): decode into an
//              intermediate (512 px band when it holds the box's scale, else one just large enough; JPEG at the
//              largest shrink-on-load factor that still gives the band), upright, in memory; then rotate,
//              extract the region, block-shrink, resize to the exact size, sharpen, composite, encode.
//
// The watermark is decoded, and its opacity applied, once before the timed part (thumbd decodes its bytes in
// every job; the mark is 96x48, a few microseconds). Source bytes are borrowed by libvips (not copied).
//
// build: cc -O2 -Wall -o filters_vips filters_vips.c $(pkg-config --cflags --libs vips) -lpthread
// usage: filters_vips [-t threads] [-m thumbnail|thumbd] [-n jobs] [-o outdir] [-M] LIST CORPUS_DIR MARK
//        -n: jobs in all (lines are cycled; default: one per line); -o: write each line's JPEG as NNN.jpg after
//        the timed part; -M: mallopt(M_MMAP_THRESHOLD, 128 KiB) as thumbd does at start.
// Output: "RESULT_JSON {...}" on stdout (thumbnails, wall_s, thumbs_per_s, cpu_s, errors, bytes, ...);
//         per-line output sizes with -o in OUTDIR/sizes.tsv (line, width, height, bytes).
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <vips/vips.h>

enum { MODE_THUMBD, MODE_THUMBNAIL };

typedef struct {
    char *file;    // (owned)
    int width;     // the box
    int height;
    char *bytes;   // (owned, g_malloc) the source file
    size_t length;
    int is_jpeg;
} Line;

typedef struct {
    void *data;  // (owned, g_malloc) the JPEG, kept for -o
    size_t length;
    int width;
    int height;
} Output;

static Line *lines;
static int line_count;
static Output *outputs;
static long job_count;
static atomic_long next_job;
static atomic_long failures;
static int mode = MODE_THUMBNAIL;
static VipsImage *mark;  // 8-bit sRGBA in memory, opacity applied; read-only, shared by the threads

static const double inset = 0.1;  // crop=0.1,0.1,0.8,0.8
static const int band_size = 512;  // thumbd's image.intermediate_bands default
static const int mark_x = 10, mark_y = 10;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Replaces *image by the result of `call` (which writes `next`), or jumps to `failed`.
#define STEP(image, call)                      \
    do {                                       \
        VipsImage *next = NULL, *in = (image); \
        if (call) {                            \
            if (next) g_object_unref(next);    \
            goto failed;                       \
        }                                      \
        g_object_unref(in);                    \
        (image) = next;                        \
    } while (0)

// Geometry of one line, from the source's header: the upright size, and the region and output size after the
// 90 degree turn.
typedef struct {
    int orientation;
    int upright_width, upright_height;
    double region_width, region_height;  // source pixels, of the turned picture
    double scale;                        // output pixels per source pixel (contain, never above 1)
    int target_width, target_height;
    int use_icc;
} Geometry;

static int geometry_of(const Line *line, Geometry *g) {
    VipsImage *header = vips_image_new_from_buffer(line->bytes, line->length, "", NULL);
    if (!header) return -1;
    g->orientation = vips_image_get_orientation(header);
    int swap = g->orientation >= 5 && g->orientation <= 8;
    g->upright_width = swap ? header->Ysize : header->Xsize;
    g->upright_height = swap ? header->Xsize : header->Ysize;
    g->use_icc = vips_image_get_typeof(header, VIPS_META_ICC_NAME) && header->Type != VIPS_INTERPRETATION_CMYK;
    g_object_unref(header);
    // rotate=90 swaps the axes; the crop takes the central 80 % of each.
    g->region_width = (1 - 2 * inset) * g->upright_height;
    g->region_height = (1 - 2 * inset) * g->upright_width;
    g->scale = VIPS_MIN(1.0, VIPS_MIN(line->width / g->region_width, line->height / g->region_height));
    g->target_width = VIPS_MAX(1, (int)rint(g->region_width * g->scale));
    g->target_height = VIPS_MAX(1, (int)rint(g->region_height * g->scale));
    return 0;
}

// thumbd's way: an upright intermediate in memory, then the region resized to the exact size.
static int intermediate_job(const Line *line, const Geometry *g, VipsImage **out) {
    VipsImage *image = NULL;
    int longest = VIPS_MAX(g->upright_width, g->upright_height);
    int band = band_size;
    if (g->scale > VIPS_MIN(1.0, (double)band_size / longest)) {
        band = (int)VIPS_MAX(1.0, VIPS_MIN((double)longest, ceil(longest * g->scale)));
    }
    const char *profile = g->use_icc ? "srgb" : NULL;
    if (line->is_jpeg) {
        int shrink = 8;
        while (shrink > 1 && (longest + shrink - 1) / shrink < band) shrink /= 2;
        image = vips_image_new_from_buffer(line->bytes, line->length, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                           "shrink", shrink, NULL);
        if (!image) goto failed;
        if (profile) {
            STEP(image, vips_thumbnail_image(in, &next, band, "height", band, "size", VIPS_SIZE_DOWN, "no_rotate",
                                             TRUE, "export_profile", profile, NULL));
        } else {
            STEP(image, vips_thumbnail_image(in, &next, band, "height", band, "size", VIPS_SIZE_DOWN, "no_rotate",
                                             TRUE, NULL));
        }
    } else if (profile ? vips_thumbnail_buffer(line->bytes, line->length, &image, band, "height", band, "size",
                                               VIPS_SIZE_DOWN, "no_rotate", TRUE, "export_profile", profile, NULL)
                       : vips_thumbnail_buffer(line->bytes, line->length, &image, band, "height", band, "size",
                                               VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL)) {
        goto failed;
    }
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    STEP(image, vips_autorot(in, &next, NULL));
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);

    // The plan's turn, then the region in the intermediate's pixels.
    STEP(image, vips_rot(in, &next, VIPS_ANGLE_D90, NULL));
    int left = (int)rint(inset * image->Xsize), top = (int)rint(inset * image->Ysize);
    int right = (int)rint((1 - inset) * image->Xsize), bottom = (int)rint((1 - inset) * image->Ysize);
    STEP(image, vips_extract_area(in, &next, left, top, right - left, bottom - top, NULL));
    int block = (int)VIPS_MIN(image->Xsize / (2.0 * g->target_width), image->Ysize / (2.0 * g->target_height));
    if (block >= 2 && !vips_image_hasalpha(image)) {
        STEP(image, vips_shrink(in, &next, (double)block, (double)block, NULL));
    }
    STEP(image, vips_thumbnail_image(in, &next, g->target_width, "height", g->target_height, "size",
                                     VIPS_SIZE_FORCE, "no_rotate", TRUE, NULL));
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    *out = image;
    return 0;
failed:
    if (image) g_object_unref(image);
    return -1;
}

// libvips's way: one thumbnail call at the region's scale, then the turn and the region.
static int thumbnail_job(const Line *line, const Geometry *g, VipsImage **out) {
    VipsImage *image = NULL;
    int width = VIPS_MAX(1, (int)rint(g->upright_width * g->scale));
    int height = VIPS_MAX(1, (int)rint(g->upright_height * g->scale));
    if (g->use_icc ? vips_thumbnail_buffer(line->bytes, line->length, &image, width, "height", height, "size",
                                           VIPS_SIZE_DOWN, "export_profile", "srgb", NULL)
                   : vips_thumbnail_buffer(line->bytes, line->length, &image, width, "height", height, "size",
                                           VIPS_SIZE_DOWN, NULL))
        goto failed;
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    STEP(image, vips_rot(in, &next, VIPS_ANGLE_D90, NULL));
    int left = (int)rint(inset * image->Xsize), top = (int)rint(inset * image->Ysize);
    int right = (int)rint((1 - inset) * image->Xsize), bottom = (int)rint((1 - inset) * image->Ysize);
    STEP(image, vips_extract_area(in, &next, left, top, right - left, bottom - top, NULL));
    *out = image;
    return 0;
failed:
    if (image) g_object_unref(image);
    return -1;
}

static int flatten_white(VipsImage *in, VipsImage **out) {
    VipsArrayDouble *white = vips_array_double_newv(in->Bands >= 4 ? 3 : 1, 255.0, 255.0, 255.0);
    int failed = vips_flatten(in, out, "background", white, NULL);
    vips_area_unref(VIPS_AREA(white));
    return failed;
}

// Sharpen, watermark, flatten (JPEG has no alpha), encode.
static int finish(VipsImage *image, Output *output) {
    if (image->BandFmt != VIPS_FORMAT_UCHAR) STEP(image, vips_cast_uchar(in, &next, NULL));
    STEP(image, vips_sharpen(in, &next, "sigma", 1.0, NULL));
    if (image->BandFmt != VIPS_FORMAT_UCHAR) STEP(image, vips_cast_uchar(in, &next, NULL));
    int had_alpha = vips_image_hasalpha(image);
    if (image->Bands < 3) STEP(image, vips_colourspace(in, &next, VIPS_INTERPRETATION_sRGB, NULL));
    int x = image->Xsize - mark->Xsize - mark_x, y = image->Ysize - mark->Ysize - mark_y;
    STEP(image, vips_composite2(in, mark, &next, VIPS_BLEND_MODE_OVER, "x", x, "y", y, NULL));
    if (image->BandFmt != VIPS_FORMAT_UCHAR) STEP(image, vips_cast_uchar(in, &next, NULL));
    if (!had_alpha && vips_image_hasalpha(image)) {
        STEP(image, vips_extract_band(in, &next, 0, "n", image->Bands - 1, NULL));
    }
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    if (vips_image_hasalpha(image)) {  // onto white, as thumbd flattens a JPEG without bg
        STEP(image, flatten_white(in, &next));
        if (image->BandFmt != VIPS_FORMAT_UCHAR) STEP(image, vips_cast_uchar(in, &next, NULL));
    }
    if (vips_jpegsave_buffer(image, &output->data, &output->length, "Q", 80, "optimize_coding", TRUE, "strip", TRUE,
                             NULL))
        goto failed;
    output->width = image->Xsize;
    output->height = image->Ysize;
    g_object_unref(image);
    return 0;
failed:
    if (image) g_object_unref(image);
    return -1;
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        long job = atomic_fetch_add(&next_job, 1);
        if (job >= job_count) break;
        int index = (int)(job % line_count);
        const Line *line = &lines[index];
        Geometry g;
        VipsImage *image = NULL;
        Output output = {0};
        int failed = geometry_of(line, &g) ||
                     (mode == MODE_THUMBD ? intermediate_job(line, &g, &image) : thumbnail_job(line, &g, &image)) ||
                     finish(image, &output);
        if (failed) {
            fprintf(stderr, "line %d (%s): %s\n", index + 1, line->file, vips_error_buffer());
            atomic_fetch_add(&failures, 1);
            g_free(output.data);
        } else if (job < line_count) {
            outputs[index] = output;  // the first pass's output of each line, for -o and the byte count
        } else {
            g_free(output.data);
        }
        vips_error_clear();
    }
    vips_thread_shutdown();
    return NULL;
}

static int load_mark(const char *path) {
    VipsImage *image = vips_image_new_from_file(path, NULL);
    if (!image) return -1;
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    if (image->Type != VIPS_INTERPRETATION_sRGB || image->BandFmt != VIPS_FORMAT_UCHAR) {
        STEP(image, vips_colourspace(in, &next, VIPS_INTERPRETATION_sRGB, NULL));
        if (image->BandFmt != VIPS_FORMAT_UCHAR) STEP(image, vips_cast_uchar(in, &next, NULL));
    }
    if (!vips_image_hasalpha(image)) STEP(image, vips_addalpha(in, &next, NULL));
    double a[4] = {1, 1, 1, 0.5}, b[4] = {0, 0, 0, 0};  // wm_opacity=0.5
    STEP(image, vips_linear(in, &next, a, b, 4, "uchar", TRUE, NULL));
    STEP(image, (next = vips_image_copy_memory(in)) == NULL);
    mark = image;
    return 0;
failed:
    if (image) g_object_unref(image);
    return -1;
}

static int read_list(const char *path, const char *corpus) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char text[4096];
    int capacity = 0;
    while (fgets(text, sizeof text, f)) {
        char name[2048];
        int w = 0, h = 0;
        if (sscanf(text, "%2047[^\t]\t%d\t%d", name, &w, &h) != 3 || w <= 0 || h <= 0) continue;
        if (line_count == capacity) {
            capacity = capacity ? capacity * 2 : 256;
            lines = realloc(lines, capacity * sizeof(Line));
        }
        Line *line = &lines[line_count++];
        memset(line, 0, sizeof *line);
        line->file = g_build_filename(corpus, name, NULL);
        line->width = w;
        line->height = h;
        gchar *bytes = NULL;
        gsize length = 0;
        if (!g_file_get_contents(line->file, &bytes, &length, NULL)) {
            fprintf(stderr, "cannot read %s\n", line->file);
            fclose(f);
            return -1;
        }
        line->bytes = bytes;
        line->length = length;
        const char *loader = vips_foreign_find_load_buffer(bytes, length);
        line->is_jpeg = loader && strstr(loader, "Jpeg") != NULL;
    }
    fclose(f);
    return line_count > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    int threads = 2, option, mmap_threshold = 0;
    const char *outdir = NULL;
    job_count = -1;
    while ((option = getopt(argc, argv, "t:m:n:o:M")) != -1) {
        switch (option) {
        case 't': threads = atoi(optarg); break;
        case 'm':
            if (!strcmp(optarg, "thumbd")) mode = MODE_THUMBD;
            else if (!strcmp(optarg, "thumbnail")) mode = MODE_THUMBNAIL;
            else goto usage;
            break;
        case 'n': job_count = atol(optarg); break;
        case 'o': outdir = optarg; break;
        case 'M': mmap_threshold = 1; break;
        default: goto usage;
        }
    }
    if (argc - optind != 3 || threads < 1) goto usage;
    if (mmap_threshold) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    if (VIPS_INIT(argv[0])) vips_error_exit(NULL);
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    if (read_list(argv[optind], argv[optind + 1])) {
        fprintf(stderr, "no usable lines in %s\n", argv[optind]);
        return 1;
    }
    if (load_mark(argv[optind + 2])) {
        fprintf(stderr, "watermark %s: %s\n", argv[optind + 2], vips_error_buffer());
        return 1;
    }
    if (job_count < 0) job_count = line_count;
    outputs = calloc(line_count, sizeof(Output));

    pthread_t *ids = calloc(threads, sizeof(pthread_t));
    double cpu0 = cpu_seconds(), t0 = now();
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    double wall = now() - t0, cpu = cpu_seconds() - cpu0;

    size_t bytes = 0;
    FILE *sizes = NULL;
    if (outdir) {
        char *path = g_build_filename(outdir, "sizes.tsv", NULL);
        sizes = fopen(path, "w");
        g_free(path);
    }
    for (int i = 0; i < line_count; i++) {
        bytes += outputs[i].length;
        if (!outdir || !outputs[i].data) continue;
        char name[32];
        snprintf(name, sizeof name, "%03d.jpg", i + 1);
        char *path = g_build_filename(outdir, name, NULL);
        if (!g_file_set_contents(path, outputs[i].data, outputs[i].length, NULL)) fprintf(stderr, "cannot write %s\n", path);
        g_free(path);
        if (sizes) fprintf(sizes, "%d\t%d\t%d\t%zu\n", i + 1, outputs[i].width, outputs[i].height, outputs[i].length);
    }
    if (sizes) fclose(sizes);
    long failed = atomic_load(&failures);
    printf("RESULT_JSON {\"mode\":\"%s\",\"threads\":%d,\"lines\":%d,\"thumbnails\":%ld,\"errors\":%ld,\"wall_s\":%.3f,"
           "\"thumbs_per_s\":%.2f,\"cpu_s\":%.3f,\"cpu_ms_per_thumb\":%.2f,\"bytes_first_pass\":%zu,\"vips\":\"%s\"}\n",
           mode == MODE_THUMBD ? "thumbd" : "thumbnail", threads, line_count, job_count - failed, failed, wall,
           (job_count - failed) / wall, cpu, cpu * 1000 / VIPS_MAX(1, job_count), bytes, vips_version_string());
    return failed ? 1 : 0;

usage:
    fprintf(stderr, "usage: %s [-t threads] [-m thumbnail|thumbd] [-n jobs] [-o outdir] [-M] LIST CORPUS_DIR MARK\n",
            argv[0]);
    return 2;
}
