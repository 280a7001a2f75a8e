// SPDX-License-Identifier: Apache-2.0
// thumbd-decoder: a helper process that can do nothing but decode (docs/threat-model.md).
//
// It starts libvips with the loaders thumbd never runs in its own address space (svgload, pdfload, jxlload,
// magickload) allowed, warms them up (fonts, modules), closes every descriptor but 0, 1 and 2, sets RLIMIT_CPU
// and RLIMIT_AS, installs a seccomp filter, then serves jobs read from standard input until it ends or its job
// count is reached. Usage: thumbd-decoder [--jobs N] [--cpu-seconds S] [--memory-mb M] [--test-loop-on-magic]
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vips/vips.h>
#include <vips/vector.h>

#include "decoder.h"

// Loaders this helper may run: the untrusted ones thumbd's own process blocks, and the trusted families (for
// image.sandbox: all).
static const char *const allowed_loaders[] = {
    "VipsForeignLoadSvg",  "VipsForeignLoadPdf",  "VipsForeignLoadJxl",  "VipsForeignLoadMagick",
    "VipsForeignLoadJpeg", "VipsForeignLoadPng",  "VipsForeignLoadWebp", "VipsForeignLoadGif",
    "VipsForeignLoadHeif", "VipsForeignLoadTiff",
};

// A tiny SVG with text, decoded once before the filter: librsvg, pango and fontconfig open their
// configuration and font files then, not after (when open is refused).
static const char warm_svg[] = "<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'>"
                               "<text x='0' y='7' font-size='7'>a</text></svg>";

// A tiny PDF, decoded once before the filter too: poppler's first page sets itself up then.
static const char warm_pdf[] = "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
                               "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
                               "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 8 8] >> endobj\n"
                               "trailer << /Root 1 0 R >>\n%%EOF\n";

static void put16(uint8_t *at, uint16_t value) { memcpy(at, &value, 2); }
static void put32(uint8_t *at, uint32_t value) { memcpy(at, &value, 4); }

// A 1 x 1 BMP (at 0, 58 bytes) and a 1 x 1 ICO (at 64, 70 bytes), built here: ImageMagick loads the coder module of
// a format (a file it opens) on its first use, so each format it reads for thumbd is decoded once before the filter.
static void make_magick_samples(uint8_t *bytes) {
    memset(bytes, 0, 134);
    uint8_t *bmp = bytes;
    memcpy(bmp, "BM", 2);
    put32(bmp + 2, 58);
    put32(bmp + 10, 54);
    put32(bmp + 14, 40);
    put32(bmp + 18, 1);
    put32(bmp + 22, 1);
    put16(bmp + 26, 1);
    put16(bmp + 28, 24);
    put32(bmp + 34, 4);
    bmp[56] = 0xff;  // one red pixel (B, G, R)
    uint8_t *ico = bytes + 64;
    put16(ico + 2, 1);
    put16(ico + 4, 1);
    ico[6] = 1;  // width
    ico[7] = 1;  // height
    put16(ico + 10, 1);
    put16(ico + 12, 32);
    put32(ico + 14, 48);
    put32(ico + 18, 22);
    put32(ico + 22, 40);
    put32(ico + 26, 1);
    put32(ico + 30, 2);  // the colour and the AND mask, one above the other
    put16(ico + 34, 1);
    put16(ico + 36, 32);
    put32(ico + 42, 8);
    ico[62 + 2] = 0xff;  // B, G, R, A: red, opaque
    ico[62 + 3] = 0xff;
}

static void warm(const void *bytes, size_t length) {
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", NULL);
    if (image != NULL) {
        double ignored;
        (void)vips_avg(image, &ignored, NULL);
        g_object_unref(image);
    }
    vips_error_clear();
}

static int read_all(int fd, void *buffer, size_t length) {
    uint8_t *bytes = buffer;
    while (length > 0) {
        ssize_t count = read(fd, bytes, length);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        bytes += count;
        length -= (size_t)count;
    }
    return 0;
}

static int write_all(int fd, const void *buffer, size_t length) {
    const uint8_t *bytes = buffer;
    while (length > 0) {
        ssize_t count = write(fd, bytes, length);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        bytes += count;
        length -= (size_t)count;
    }
    return 0;
}

static int refuse(const char *message) {
    uint32_t head[2] = {THUMBD_DECODER_ANSWER_MAGIC, THUMBD_DECODER_REFUSED};
    uint64_t length = strlen(message);
    if (write_all(1, head, sizeof head) || write_all(1, &length, sizeof length)) return -1;
    return write_all(1, message, length);
}

// Answers that the page asked for is past the last of `pages`.
static int no_page(uint64_t pages) {
    uint32_t head[2] = {THUMBD_DECODER_ANSWER_MAGIC, THUMBD_DECODER_NO_PAGE};
    uint64_t length = sizeof pages;
    if (write_all(1, head, sizeof head) || write_all(1, &length, sizeof length)) return -1;
    return write_all(1, &pages, sizeof pages);
}

// The DPI a PDF page of `width` x `height` points is rasterised at: the one that fits it to the box (72 for no
// box), never above `max_dpi`, lowered until the raster holds at most `pixel_limit` pixels.
static double pdf_dpi(double width, double height, uint32_t box_width, uint32_t box_height, uint32_t max_dpi,
                      uint64_t pixel_limit) {
    double dpi = 72.0;
    if (box_width > 0 && box_height > 0) dpi = 72.0 * MIN(box_width / width, box_height / height);
    dpi = MIN(dpi, (double)max_dpi);
    // Pixels at this DPI; libvips rounds each side, so aim a little under the limit.
    double pixels = (width * dpi / 72.0) * (height * dpi / 72.0);
    if (pixels > (double)pixel_limit) dpi *= sqrt((double)pixel_limit / pixels) * 0.999;
    return dpi;
}

// Refuses with libvips's error text (first line), then clears it.
static int refuse_vips(const char *what) {
    char message[512];
    const char *detail = vips_error_buffer();
    size_t line = strcspn(detail, "\n");
    snprintf(message, sizeof message, "%s: %.*s", what, (int)(line > 400 ? 400 : line), detail);
    vips_error_clear();
    return refuse(message);
}

// The seccomp filter: a list of system calls a decoder never needs and an attacker would want (opening paths,
// sockets, new programs, new processes, tracing, changing the file system). Everything else is allowed, so
// that glib/librsvg/poppler's allocations, threads and clocks keep working. Opening returns EACCES (libraries
// that probe a file go on without it); the rest kill the process.
static int install_filter(void) {
#define DENY(nr, action) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, (action))
#define ERR(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        // The x32 ABI's numbers carry bit 30: refused as a whole.
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        // prlimit64 only reads (getrlimit: new limit NULL, as ImageMagick's resource set-up does); setting kills.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 6),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_open, ERR(EACCES)),
        DENY(__NR_openat, ERR(EACCES)),
        DENY(__NR_openat2, ERR(EACCES)),
        DENY(__NR_creat, ERR(EACCES)),
        DENY(__NR_open_by_handle_at, ERR(EACCES)),
        DENY(__NR_socket, ERR(EACCES)),
        DENY(__NR_socketpair, ERR(EACCES)),
        DENY(__NR_connect, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_bind, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_listen, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_accept, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_accept4, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_sendto, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_sendmsg, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_execve, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_execveat, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_fork, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_vfork, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_ptrace, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_process_vm_readv, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_process_vm_writev, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_kill, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_mount, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_unlink, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_unlinkat, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_rename, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_renameat, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_renameat2, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_chmod, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_fchmodat, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_setrlimit, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_bpf, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_io_uring_setup, SECCOMP_RET_KILL_PROCESS),
        DENY(__NR_memfd_create, ERR(EACCES)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
#undef DENY
#undef ERR
    struct sock_fprog program = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
}

// One job: read, decode, answer. Returns -1 when the pipe is gone (the helper then ends).
static int serve(int test_loop) {
    uint32_t head[5];
    uint64_t limits[2];
    if (read_all(0, head, sizeof head) || read_all(0, limits, sizeof limits)) return -1;
    if (head[0] != THUMBD_DECODER_JOB_MAGIC) return -1;
    uint32_t box_width = head[1], box_height = head[2], page = head[3], max_dpi = head[4];
    uint64_t pixel_limit = limits[0], length = limits[1];
    if (length == 0 || length > ((uint64_t)1 << 31)) return refuse("source length out of range") ? -1 : 0;
    void *source = g_try_malloc(length);
    if (source == NULL) return refuse("source too large for the helper's memory") ? -1 : 0;
    if (read_all(0, source, length)) {
        g_free(source);
        return -1;
    }
    // The parent checks these too; a job out of range is refused, never decoded.
    if (page < 1 || page > THUMBD_DECODER_MAX_PAGE || max_dpi < 1 || max_dpi > THUMBD_DECODER_MAX_DPI) {
        g_free(source);
        return refuse("page or DPI cap out of range") ? -1 : 0;
    }
    // Test only: a job whose first 256 bytes hold "thumbd-test-loop" spins (the deadline tests; in an SVG's comment
    // it passes thumbd's sniffing).
    if (test_loop && memmem(source, MIN(length, 256), "thumbd-test-loop", 16) != NULL) {
        for (volatile uint64_t i = 0;; i++) {
        }
    }

    int status = 0;
    VipsImage *image = NULL;
    const char *loader = vips_foreign_find_load_buffer(source, length);
    if (loader == NULL) {
        status = refuse_vips("unrecognised source");
    } else if ((image = vips_image_new_from_buffer(source, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL)) ==
               NULL) {
        status = refuse_vips("unreadable source");
    } else {
        int svg = strstr(loader, "Svg") != NULL, pdf = strstr(loader, "Pdf") != NULL;
        // Only a PDF has pages here: any other source has one (an animation's frames are not pages).
        int pages = pdf ? vips_image_get_n_pages(image) : 1;
        if (page > (uint32_t)MAX(pages, 1)) {
            g_object_unref(image);
            image = NULL;
            status = no_page((uint64_t)MAX(pages, 1));
        } else if (pdf && image->Xsize > 0 && image->Ysize > 0) {
            // The first page's header at 72 DPI gave the page count; the page asked for has its own size.
            VipsImage *header = image;
            image = NULL;
            if (page > 1) {
                g_object_unref(header);
                header = vips_image_new_from_buffer(source, length, "", "page", (int)page - 1, NULL);
            }
            if (header == NULL) {
                status = refuse_vips("unreadable page");
            } else {
                double dpi = pdf_dpi(header->Xsize, header->Ysize, box_width, box_height, max_dpi, pixel_limit);
                g_object_unref(header);
                image = vips_image_new_from_buffer(source, length, "", "page", (int)page - 1, "dpi", dpi, NULL);
                if (image == NULL) status = refuse_vips("unreadable source");
            }
        } else if (svg && box_width > 0 && box_height > 0 && image->Xsize > 0 && image->Ysize > 0) {
            // An SVG renders at the box's size, never larger than needed.
            double scale = MIN((double)box_width / image->Xsize, (double)box_height / image->Ysize);
            scale = MIN(scale, 64.0);
            g_object_unref(image);
            image = vips_image_new_from_buffer(source, length, "", "scale", scale, NULL);
            if (image == NULL) status = refuse_vips("unreadable source");
        }
        if (image != NULL) {
            uint64_t pixels = (uint64_t)image->Xsize * (uint64_t)image->Ysize;
            if (pixels > pixel_limit) {
                char message[160];
                snprintf(message, sizeof message, "source of %dx%d pixels is over the limit of %llu pixels",
                         image->Xsize, image->Ysize, (unsigned long long)pixel_limit);
                status = refuse(message);
            } else {
                size_t size = 0;
                void *raster = vips_image_write_to_memory(image, &size);
                if (raster == NULL) {
                    status = refuse_vips("undecodable source");
                } else {
                    uint32_t answer[6] = {THUMBD_DECODER_ANSWER_MAGIC, THUMBD_DECODER_OK,
                                          (uint32_t)image->Xsize, (uint32_t)image->Ysize,
                                          (uint32_t)image->Bands, (uint32_t)image->BandFmt};
                    uint64_t bytes = size;
                    status = write_all(1, answer, sizeof answer) || write_all(1, &bytes, sizeof bytes) ||
                                     write_all(1, raster, size)
                                 ? -1
                                 : 0;
                    g_free(raster);
                }
            }
        }
    }
    if (image != NULL) g_object_unref(image);
    g_free(source);
    return status;
}

int main(int argc, char **argv) {
    long jobs = 100, cpu_seconds = 30, memory_mb = 1024;
    int test_loop = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) jobs = atol(argv[++i]);
        else if (strcmp(argv[i], "--cpu-seconds") == 0 && i + 1 < argc) cpu_seconds = atol(argv[++i]);
        else if (strcmp(argv[i], "--memory-mb") == 0 && i + 1 < argc) memory_mb = atol(argv[++i]);
        else if (strcmp(argv[i], "--test-loop-on-magic") == 0) test_loop = 1;
        else {
            fprintf(stderr, "thumbd-decoder: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (VIPS_INIT(argv[0])) {
        fprintf(stderr, "thumbd-decoder: libvips: %s\n", vips_error_buffer());
        return 1;
    }
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    vips_vector_set_enabled(FALSE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < sizeof allowed_loaders / sizeof allowed_loaders[0]; i++) {
        vips_operation_block_set(allowed_loaders[i], FALSE);
    }
    // Warm-up: fonts and their configuration, poppler, ImageMagick's BMP and ICO coders are read now, before open is
    // refused.
    warm(warm_svg, sizeof warm_svg - 1);
    warm(warm_pdf, sizeof warm_pdf - 1);
    uint8_t samples[134];
    make_magick_samples(samples);
    warm(samples, 58);
    warm(samples + 64, 70);

    // Nothing but the job's descriptors: 0 (jobs in), 1 (answers out), 2 (diagnostics).
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
        fprintf(stderr, "thumbd-decoder: close_range: %s\n", strerror(errno));
        return 1;
    }
    struct rlimit cpu = {(rlim_t)cpu_seconds, (rlim_t)cpu_seconds + 1};
    struct rlimit memory = {(rlim_t)memory_mb << 20, (rlim_t)memory_mb << 20};
    if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_AS, &memory) || setrlimit(RLIMIT_NOFILE, &(struct rlimit){8, 8})) {
        fprintf(stderr, "thumbd-decoder: setrlimit: %s\n", strerror(errno));
        return 1;
    }
    if (install_filter()) {
        fprintf(stderr, "thumbd-decoder: seccomp: %s\n", strerror(errno));
        return 1;
    }
    for (long done = 0; done < jobs; done++) {
        if (serve(test_loop)) break;
    }
    return 0;
}
