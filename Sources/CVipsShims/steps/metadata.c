// SPDX-License-Identifier: Apache-2.0
// Metadata: stripped by default; a plan may keep the source's EXIF copyright and artist and its ICC profile. Runs
// once on the output (after an animation's frames are joined), so it is called by the pipeline's output, not a
// row of its table.
#include <string.h>

#include "../internal/steps.h"

// An EXIF ASCII field as libvips shows it, "<value> (<description>, ASCII, <n> components, <m> bytes)", back to
// its value: the first n - 1 bytes (n counts the terminating NUL). NULL when the text has another shape.
static char *exif_ascii_value(const char *text) {
    const char *marker = g_strrstr(text, ", ASCII, ");
    if (!marker) return NULL;
    int components = atoi(marker + strlen(", ASCII, "));
    if (components < 1 || (size_t)(components - 1) > strlen(text)) return NULL;
    return g_strndup(text, components - 1);
}

// Copies an EXIF ASCII field of `from` into `saved` (transfer full), or leaves it NULL.
static void save_exif_ascii(VipsImage *from, const char *name, char **saved) {
    const char *text = NULL;
    if (vips_image_get_typeof(from, name) && vips_image_get_string(from, name, &text) == 0 && text) {
        *saved = exif_ascii_value(text);
    }
}

// Sets an EXIF ASCII field from its value. libvips parses the value as the text before the last " (" (what it
// shows after a value is a description in parentheses), so a short description of our own is appended: a value
// that itself contains " (" then stays whole.
static void restore_exif_ascii(VipsImage *image, const char *name, const char *value) {
    if (!value) return;
    char *text = g_strdup_printf("%s (thumbd)", value);
    vips_image_set_string(image, name, text);
    g_free(text);
}

void thumbd_keep_metadata(VipsImage *image, int keep_copyright, int keep_icc, char **copyright, char **artist,
                          VipsBlob **icc) {
    *copyright = *artist = NULL;
    *icc = NULL;
    if (keep_copyright) {
        save_exif_ascii(image, "exif-ifd0-Copyright", copyright);
        save_exif_ascii(image, "exif-ifd0-Artist", artist);
    }
    if (keep_icc && vips_image_get_typeof(image, VIPS_META_ICC_NAME)) {
        const void *data;
        size_t length;
        if (vips_image_get_blob(image, VIPS_META_ICC_NAME, &data, &length) == 0) {
            *icc = vips_blob_copy(data, length);
        }
    }
}

int thumbd_step_metadata(const ThumbdJob *job, VipsImage *image) {
    const ThumbdVipsThumbnailParams *p = job->params;
    char *copyright = NULL, *artist = NULL;
    VipsBlob *icc = NULL;
    thumbd_keep_metadata(image, p->keep_copyright, p->keep_icc, &copyright, &artist, &icc);
    if (job->has_kept && p->keep_copyright) {
        g_free(copyright);
        g_free(artist);
        copyright = g_strdup(job->kept.copyright);
        artist = g_strdup(job->kept.artist);
    }
    // Every field (EXIF and its exif-* tags, XMP, IPTC, ICC, orientation, page and loader fields) goes; then
    // what the plan keeps comes back. Our image is private (refcount 1), so changing its metadata is safe.
    vips_image_map(image, thumbd_remove_field, NULL);
    restore_exif_ascii(image, "exif-ifd0-Copyright", copyright);
    restore_exif_ascii(image, "exif-ifd0-Artist", artist);
    if (icc) {
        vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, VIPS_AREA(icc)->data, VIPS_AREA(icc)->length);
        vips_area_unref(VIPS_AREA(icc));
    }
    int keeps = copyright || artist || icc;
    g_free(copyright);
    g_free(artist);
    // Whether the savers must strip (nothing kept) or write what is left.
    return keeps ? 0 : 1;
}

