// SPDX-License-Identifier: Apache-2.0
// thumbd-decoder: a helper process that can do nothing but decode (docs/threat-model.md).
//
// It starts libvips with the loaders thumbd never runs in its own address space (svgload, pdfload, jxlload,
// magickload) allowed, warms them up (fonts, modules), closes every descriptor but 0, 1 and 2, sets RLIMIT_CPU
// and RLIMIT_AS, installs a seccomp filter, then serves jobs read from standard input until it ends or its job
// count is reached. Usage: thumbd-decoder [--jobs N] [--cpu-seconds S] [--memory-mb M] [--test-loop-on-magic]
// [--test-call NAME]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
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
    "VipsForeignLoadJpeg", "VipsForeignLoadPng",  "VipsForeignLoadWebp", "VipsForeignLoadNsgif",
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

// Answers that the source, `width` x `height`, is over the job's pixel limit (the parent's 422 names pixels).
static int too_many_pixels(int width, int height) {
    uint32_t head[2] = {THUMBD_DECODER_ANSWER_MAGIC, THUMBD_DECODER_TOO_MANY_PIXELS};
    uint32_t size[2] = {(uint32_t)width, (uint32_t)height};
    uint64_t length = sizeof size;
    if (write_all(1, head, sizeof head) || write_all(1, &length, sizeof length)) return -1;
    return write_all(1, size, sizeof size);
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

// The seccomp filter: an allow list, default kill (docs/threat-model.md, "The allow list"). What is allowed is what
// scripts/decoder-syscalls.sh found the helper calling after the filter, for every loader and failure path: memory
// (never executable), threads (never processes), futexes, clocks, signal masks, reads and writes on the descriptors
// it has. Calls a library makes to probe and then go on without get an error instead of the kill, each said below.
// It covers every thread (SECCOMP_FILTER_FLAG_TSYNC): the warm-up leaves libvips's and glib's worker threads behind.
// x86_64 only: another architecture fails to compile here rather than run without a filter.
#if !defined(__x86_64__)
#error "thumbd-decoder's seccomp filter is written for x86_64 system call numbers"
#endif
static int install_filter(void) {
#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define FAIL(nr, e) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, ERR(e))
#define ERR(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define RELOAD_NR LOAD(nr)
    uint32_t self = (uint32_t)getpid();
    struct sock_filter filter[] = {
        LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        LOAD(nr),
        // The x32 ABI's numbers carry bit 30: refused as a whole.
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        RET(SECCOMP_RET_KILL_PROCESS),
        // clone: threads only (CLONE_THREAD; the kernel makes it imply CLONE_SIGHAND and CLONE_VM). A new process
        // kills.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        RET(SECCOMP_RET_ALLOW),
        RELOAD_NR,
        // mmap and mprotect: never PROT_EXEC (no library maps code after the warm-up: libvips's vector code, the
        // one JIT, is off; the trace of every loader shows none). An executable mapping kills.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4),
        LOAD(args[2]),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        RET(SECCOMP_RET_KILL_PROCESS),
        RET(SECCOMP_RET_ALLOW),
        RELOAD_NR,
        // prlimit64 only reads (getrlimit: new limit NULL, as ImageMagick's resource set-up does); setting kills.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 6),
        LOAD(args[2]),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        // newfstatat: fstat of a descriptor (AT_EMPTY_PATH, glibc's fstat) only; a path (glib's /etc/localtime,
        // ImageMagick's "BMP:" probes) gets EACCES and the library goes on.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_newfstatat, 0, 4),
        LOAD(args[3]),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(ERR(EACCES)),
        // prctl: thread names (glib, dav1d); anything else is EINVAL.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 5),
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_NAME, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(ERR(EINVAL)),
        // tgkill: to this process only (abort() raising SIGABRT on itself).
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 4),
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        RELOAD_NR,
        // Memory, threads, waiting, clocks, signals, and I/O on the descriptors the helper has (0, 1, 2).
        ALLOW(__NR_read),
        ALLOW(__NR_write),
        ALLOW(__NR_writev),
        ALLOW(__NR_close),
        ALLOW(__NR_lseek),
        ALLOW(__NR_fstat),
        ALLOW(__NR_fcntl),
        ALLOW(__NR_futex),
        ALLOW(__NR_brk),
        ALLOW(__NR_munmap),
        ALLOW(__NR_mremap),
        ALLOW(__NR_madvise),
        ALLOW(__NR_set_robust_list),
        ALLOW(__NR_rseq),
        ALLOW(__NR_exit),
        ALLOW(__NR_exit_group),
        ALLOW(__NR_rt_sigprocmask),
        ALLOW(__NR_rt_sigaction),
        ALLOW(__NR_rt_sigreturn),
        ALLOW(__NR_getpid),
        ALLOW(__NR_gettid),
        ALLOW(__NR_times),
        ALLOW(__NR_sysinfo),
        ALLOW(__NR_sched_getaffinity),
        ALLOW(__NR_sched_yield),
        ALLOW(__NR_clock_gettime),
        ALLOW(__NR_clock_getres),
        ALLOW(__NR_gettimeofday),
        ALLOW(__NR_nanosleep),
        ALLOW(__NR_clock_nanosleep),
        ALLOW(__NR_getrandom),
        // glibc creates threads with clone3 first and falls back to clone on ENOSYS: clone3's flags sit in memory
        // a filter cannot read.
        FAIL(__NR_clone3, ENOSYS),
        // Opening a path: EACCES, so that an SVG's file:// reference renders blank and a library's probe goes on.
        FAIL(__NR_open, EACCES),
        FAIL(__NR_openat, EACCES),
        FAIL(__NR_openat2, EACCES),
        FAIL(__NR_creat, EACCES),
        FAIL(__NR_memfd_create, EACCES),
        // Path probes (ImageMagick resolving its module path, librsvg/fontconfig checking a font): EACCES too.
        FAIL(__NR_access, EACCES),
        FAIL(__NR_faccessat, EACCES),
        FAIL(__NR_faccessat2, EACCES),
        FAIL(__NR_readlink, EACCES),
        FAIL(__NR_readlinkat, EACCES),
        FAIL(__NR_stat, EACCES),
        FAIL(__NR_lstat, EACCES),
        FAIL(__NR_statx, EACCES),
        // glib asks whether standard error is a terminal (TCGETS) or the journal's socket (getpeername).
        FAIL(__NR_ioctl, ENOTTY),
        FAIL(__NR_getpeername, ENOTSOCK),
        // A socket can never be created: EACCES (a loader that would fetch a URL fails that fetch); connect, bind,
        // sendto and the rest are not on the list, so they kill.
        FAIL(__NR_socket, EACCES),
        FAIL(__NR_socketpair, EACCES),
        RET(SECCOMP_RET_KILL_PROCESS),
    };
#undef ALLOW
#undef FAIL
#undef ERR
#undef LOAD
#undef RET
#undef RELOAD_NR
    struct sock_fprog program = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
}

// Test only (--test-call NAME, never passed by the server): after the filter, makes one call the filter forbids and
// answers what it returned as a refusal "NAME returned R, errno E" (a call the filter kills never answers).
static sem_t early_thread_go, early_thread_done;
static int early_thread_result, early_thread_errno;

// A thread started before the filter (as libvips's workers are) that opens a file after it.
static void *early_thread(void *unused) {
    (void)unused;
    while (sem_wait(&early_thread_go) != 0) {
    }
    early_thread_result = (int)syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
    early_thread_errno = errno;
    sem_post(&early_thread_done);
    return NULL;
}

static void *thread_body(void *unused) {
    (void)unused;
    return NULL;
}

static int test_call(const char *name) {
    long result = -2;
    errno = 0;
    if (strcmp(name, "mkdir") == 0) result = syscall(SYS_mkdir, "/tmp/thumbd-decoder-test-mkdir", 0700);
    else if (strcmp(name, "socket") == 0) result = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    else if (strcmp(name, "openat") == 0) result = syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY);
    else if (strcmp(name, "ptrace") == 0) result = syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
    else if (strcmp(name, "execve") == 0) {
        char *const arguments[] = {"/bin/true", NULL};
        result = syscall(SYS_execve, "/bin/true", arguments, NULL);
    } else if (strcmp(name, "fork") == 0) result = syscall(SYS_fork);
    else if (strcmp(name, "clone-process") == 0) result = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    else if (strcmp(name, "clone3") == 0) result = syscall(SYS_clone3, NULL, 0);
    else if (strcmp(name, "mmap-exec") == 0) {
        result = syscall(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    } else if (strcmp(name, "getcwd") == 0) {
        char path[256];
        result = syscall(SYS_getcwd, path, sizeof path);  // harmless and unlisted: the default is the kill
    } else if (strcmp(name, "thread") == 0) {
        pthread_t thread;
        result = pthread_create(&thread, NULL, thread_body, NULL);
        if (result == 0) result = pthread_join(thread, NULL);
    } else if (strcmp(name, "early-thread-openat") == 0) {
        sem_post(&early_thread_go);
        while (sem_wait(&early_thread_done) != 0) {
        }
        result = early_thread_result;
        errno = early_thread_errno;
    }
    char message[160];
    snprintf(message, sizeof message, "%s returned %ld, errno %d", name, result, result < 0 ? errno : 0);
    return refuse(message);
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
                status = too_many_pixels(image->Xsize, image->Ysize);
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
    const char *test_call_name = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) jobs = atol(argv[++i]);
        else if (strcmp(argv[i], "--cpu-seconds") == 0 && i + 1 < argc) cpu_seconds = atol(argv[++i]);
        else if (strcmp(argv[i], "--memory-mb") == 0 && i + 1 < argc) memory_mb = atol(argv[++i]);
        else if (strcmp(argv[i], "--test-loop-on-magic") == 0) test_loop = 1;
        else if (strcmp(argv[i], "--test-call") == 0 && i + 1 < argc) test_call_name = argv[++i];
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
    if (test_call_name != NULL && strcmp(test_call_name, "early-thread-openat") == 0) {
        pthread_t thread;
        if (sem_init(&early_thread_go, 0, 0) || sem_init(&early_thread_done, 0, 0) ||
            pthread_create(&thread, NULL, early_thread, NULL)) {
            return 1;
        }
    }
    if (install_filter()) {
        fprintf(stderr, "thumbd-decoder: seccomp: %s\n", strerror(errno));
        return 1;
    }
    if (test_call_name != NULL) return test_call(test_call_name) ? 1 : 0;
    for (long done = 0; done < jobs; done++) {
        if (serve(test_loop)) break;
    }
    return 0;
}
