// SPDX-License-Identifier: Apache-2.0
// Layer 2, codecs: the encoders (see internal/codecs.h), with max_bytes's quality search. JPEG and lossy WebP
// without metadata go straight to libjpeg / libwebp on the calling thread; everything else through libvips's savers.
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>
#include <webp/encode.h>

#include "../internal/codecs.h"

// MARK: - WebP chunks

static uint32_t read_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void write_le32(unsigned char *p, uint32_t v) {
    p[0] = v & 0xFF;
    p[1] = (v >> 8) & 0xFF;
    p[2] = (v >> 16) & 0xFF;
    p[3] = (v >> 24) & 0xFF;
}

// Removes the EXIF, XMP and ICC chunks the plan does not keep from an extended (VP8X) WebP, in place, and
// clears their VP8X flags. Needed because libvips 8.14.1's webpsave ignores "strip" and always writes a fresh
// EXIF block (resolution, dimensions, orientation); fixed in 8.14.2, where this finds nothing to remove.
// Returns the new length; a buffer that is not a well-formed WebP is returned unchanged.
static size_t webp_strip_metadata(unsigned char *data, size_t length, int keep_exif, int keep_icc) {
    if (length < 12 || memcmp(data, "RIFF", 4) || memcmp(data + 8, "WEBP", 4)) return length;
    if (read_le32(data + 4) + 8 != length) return length;
    size_t in = 12, out = 12;
    unsigned char *vp8x = NULL;
    while (in + 8 <= length) {
        size_t chunk = 8 + (size_t)read_le32(data + in + 4);
        chunk += chunk & 1;  // chunks are padded to an even size
        if (chunk > length - in) return length;
        int drop = (!keep_exif && !memcmp(data + in, "EXIF", 4)) || !memcmp(data + in, "XMP ", 4) ||
                   (!keep_icc && !memcmp(data + in, "ICCP", 4));
        if (!drop) {
            memmove(data + out, data + in, chunk);
            if (!memcmp(data + out, "VP8X", 4) && chunk >= 18) vp8x = data + out;
            out += chunk;
        }
        in += chunk;
    }
    if (in != length) return length;
    unsigned char cleared = 0x04;  // XMP
    if (!keep_exif) cleared |= 0x08;
    if (!keep_icc) cleared |= 0x20;
    if (vp8x) vp8x[8] &= (unsigned char)~cleared;
    write_le32(data + 4, (uint32_t)(out - 8));
    return out;
}

// MARK: - Encoding

static VipsForeignSubsample subsample(const ThumbdVipsThumbnailParams *p) {
    return p->chroma == 1 ? VIPS_FOREIGN_SUBSAMPLE_ON : p->chroma == 2 ? VIPS_FOREIGN_SUBSAMPLE_OFF
                                                                     : VIPS_FOREIGN_SUBSAMPLE_AUTO;
}

// libjpeg reports errors through error_exit, which must not return: back to jpeg_direct's setjmp.
typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} JpegError;

static void jpeg_failed(j_common_ptr cinfo) {
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    vips_error("thumbd", "jpeg: %s", text);
    longjmp(((JpegError *)cinfo->err)->jump, 1);
}

static void jpeg_warning(j_common_ptr cinfo, int level) {
    (void)cinfo;
    (void)level;
}

// Whether jpeg_direct can write `image`: 8-bit sRGB or grey, no metadata to keep.
static int jpeg_direct_fits(VipsImage *image, int strip) {
    return strip && image->BandFmt == VIPS_FORMAT_UCHAR &&
           ((image->Bands == 3 && image->Type == VIPS_INTERPRETATION_sRGB) ||
            (image->Bands == 1 && image->Type == VIPS_INTERPRETATION_B_W));
}

// JPEG through libjpeg on the calling thread, with the settings jpegsave would use (quality, optimised
// Huffman tables, progressive, chroma subsampling as subsample_mode says, the resolution in the JFIF header).
// vips_jpegsave_buffer costs a thread pool, a write-behind thread and its hand-offs for a thumbnail-sized
// image: 0.30 against 0.06 ms for 64 x 43 px, 0.83 against 0.50 ms for 256 x 170. *data is malloc'ed, which
// is g_malloc since GLib 2.46, so thumbd_vips_free releases it like libvips's buffers.
static int jpeg_direct(VipsImage *image, const ThumbdVipsThumbnailParams *p, int quality, void **data, size_t *length) {
    VipsImage *pixels = vips_image_copy_memory(image);  // a new reference when already in memory
    if (!pixels) return -1;
    struct jpeg_compress_struct cinfo;
    JpegError error;
    unsigned char *buffer = NULL;  // address taken: libjpeg's updates survive the longjmp
    unsigned long size = 0;
    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = jpeg_failed;
    error.base.emit_message = jpeg_warning;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        g_object_unref(pixels);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = (JDIMENSION)pixels->Xsize;
    cinfo.image_height = (JDIMENSION)pixels->Ysize;
    cinfo.input_components = pixels->Bands;
    cinfo.in_color_space = pixels->Bands == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.optimize_coding = TRUE;
    // libvips's subsample_mode: auto subsamples chroma below quality 90.
    int full_chroma = p->chroma == 2 || (p->chroma == 0 && quality >= 90);
    if (pixels->Bands == 3 && full_chroma) {
        cinfo.comp_info[0].h_samp_factor = 1;
        cinfo.comp_info[0].v_samp_factor = 1;
    }
    if (p->jpeg_progressive) jpeg_simple_progression(&cinfo);
    // Xres and Yres are pixels per millimetre; JFIF takes dots per inch.
    cinfo.density_unit = 1;
    cinfo.X_density = (UINT16)VIPS_CLIP(1, rint(pixels->Xres * 25.4), 65535);
    cinfo.Y_density = (UINT16)VIPS_CLIP(1, rint(pixels->Yres * 25.4), 65535);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = VIPS_IMAGE_ADDR(pixels, 0, cinfo.next_scanline);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    g_object_unref(pixels);
    *data = buffer;
    *length = size;
    return 0;
}

// Whether webp_direct can write `image`: one lossy frame, 8-bit sRGB without alpha, no metadata to keep.
static int webp_direct_fits(VipsImage *image, const ThumbdVipsThumbnailParams *p, int strip) {
    return strip && !p->lossless && image->BandFmt == VIPS_FORMAT_UCHAR && image->Bands == 3 &&
           image->Type == VIPS_INTERPRETATION_sRGB && vips_image_get_page_height(image) == image->Ysize;
}

// Lossy WebP through libwebp on the calling thread, configured as webpsave configures it (the default preset
// at the quality, the effort as libwebp's method), for the same reason as jpeg_direct. *data is libwebp's
// malloc'ed buffer (g_malloc since GLib 2.46).
static int webp_direct(VipsImage *image, const ThumbdVipsThumbnailParams *p, int quality, void **data, size_t *length) {
    VipsImage *pixels = vips_image_copy_memory(image);
    if (!pixels) return -1;
    WebPConfig config;
    WebPPicture picture;
    WebPMemoryWriter writer;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, (float)quality) || !WebPPictureInit(&picture)) {
        g_object_unref(pixels);
        vips_error("thumbd", "webp: libwebp version mismatch");
        return -1;
    }
    config.method = p->webp_effort;
    config.alpha_quality = 100;
    picture.width = pixels->Xsize;
    picture.height = pixels->Ysize;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPValidateConfig(&config) &&
             WebPPictureImportRGB(&picture, VIPS_IMAGE_ADDR(pixels, 0, 0), (int)VIPS_IMAGE_SIZEOF_LINE(pixels)) &&
             WebPEncode(&config, &picture);
    if (!ok) vips_error("thumbd", "webp: encoding failed (libwebp error %d)", (int)picture.error_code);
    WebPPictureFree(&picture);
    g_object_unref(pixels);
    if (!ok) {
        WebPMemoryWriterClear(&writer);
        return -1;
    }
    *data = writer.mem;
    *length = writer.size;
    return 0;
}

static int save(VipsImage *image, ThumbdVipsFormat format, const ThumbdVipsThumbnailParams *p, int quality, int strip,
                void **data, size_t *length) {
    switch (format) {
    case THUMBD_VIPS_FORMAT_GIF:
        // cgif quantises to one palette per frame (libimagequant); an animation keeps its frames and delays.
        return vips_gifsave_buffer(image, data, length, "strip", TRUE, NULL);
    case THUMBD_VIPS_FORMAT_JPEG:
        if (jpeg_direct_fits(image, strip)) return jpeg_direct(image, p, quality, data, length);
        return vips_jpegsave_buffer(image, data, length, "Q", quality, "optimize_coding", TRUE, "interlace",
                                    p->jpeg_progressive ? TRUE : FALSE, "subsample_mode", subsample(p), "strip",
                                    strip, NULL);
    case THUMBD_VIPS_FORMAT_PNG:
        return vips_pngsave_buffer(image, data, length, "compression", p->png_compression, "interlace",
                                   p->jpeg_progressive ? TRUE : FALSE, "strip", strip, NULL);
    case THUMBD_VIPS_FORMAT_WEBP: {
        if (webp_direct_fits(image, p, strip)) return webp_direct(image, p, quality, data, length);
        if (vips_webpsave_buffer(image, data, length, "Q", quality, "effort", p->webp_effort, "lossless",
                                 p->lossless ? TRUE : FALSE, "strip", strip, NULL))
            return -1;
        int keep_exif = !strip && vips_image_get_typeof(image, "exif-ifd0-Copyright") |
                                      vips_image_get_typeof(image, "exif-ifd0-Artist");
        int keep_icc = !strip && vips_image_get_typeof(image, VIPS_META_ICC_NAME);
        *length = webp_strip_metadata(*data, *length, keep_exif, keep_icc);
        return 0;
    }
    case THUMBD_VIPS_FORMAT_AVIF:
        return vips_heifsave_buffer(image, data, length, "Q", quality, "compression",
                                    VIPS_FOREIGN_HEIF_COMPRESSION_AV1, "effort", p->avif_effort, "lossless",
                                    p->lossless ? TRUE : FALSE, "subsample_mode", subsample(p), "strip", strip, NULL);
    case THUMBD_VIPS_FORMAT_JXL:
        // libvips 8.14's jxlsave writes one frame; its effort is libjxl's 3...9 (default 7), see jxl_effort.
        return vips_jxlsave_buffer(image, data, length, "Q", quality, "effort", p->jxl_effort, "lossless",
                                   p->lossless ? TRUE : FALSE, "strip", strip, NULL);
    case THUMBD_VIPS_FORMAT_HEIF:
        // HEIC: HEVC through libheif's x265 plugin, which has no speed setting (effort changes nothing: measured
        // 112 ms of CPU per 256 px thumbnail at 0, 3, 6 and 9), so none is passed.
        return vips_heifsave_buffer(image, data, length, "Q", quality, "compression",
                                    VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, "subsample_mode", subsample(p), "strip",
                                    strip, NULL);
    default:
        vips_error("thumbd", "format %d cannot be written", (int)format);
        return -1;
    }
}

int thumbd_format_holds(ThumbdVipsFormat format, int width, int height) {
    // libjpeg's JPEG_MAX_DIMENSION, libwebp's WEBP_MAX_DIMENSION and GIF's 16-bit sides; PNG and AVIF (libheif)
    // took a 1 x 70000 picture.
    int largest = format == THUMBD_VIPS_FORMAT_JPEG   ? (int)JPEG_MAX_DIMENSION
                  : format == THUMBD_VIPS_FORMAT_WEBP ? WEBP_MAX_DIMENSION
                  : format == THUMBD_VIPS_FORMAT_GIF  ? 65535
                                                      : VIPS_MAX_COORD;
    return width <= largest && height <= largest;
}

int thumbd_vips_encode(VipsImage *image, ThumbdVipsFormat format, const ThumbdVipsThumbnailParams *p, int strip,
                       ThumbdVipsThumbnailResult *result) {
    int lossy = format == THUMBD_VIPS_FORMAT_JPEG ||
                ((format == THUMBD_VIPS_FORMAT_WEBP || format == THUMBD_VIPS_FORMAT_AVIF ||
                  format == THUMBD_VIPS_FORMAT_JXL) &&
                 !p->lossless);
    int searching = p->max_bytes > 0 && lossy;
    int quality = p->quality;
    for (int attempt = 0;; attempt++) {
        void *data = NULL;
        size_t length = 0;
        if (save(image, format, p, quality, strip, &data, &length)) return -1;
        if (!searching || (int64_t)length <= p->max_bytes || quality <= p->min_quality || attempt >= 8) {
            result->data = data;
            result->length = length;
            result->quality = searching ? quality : 0;
            return 0;
        }
        g_free(data);
        // Size falls roughly with the square of the quality's distance below 100 for JPEG and WebP; aim at
        // the ratio, and always go down by at least 5, so the search ends in a few encodes.
        int aimed = (int)(quality * sqrt((double)p->max_bytes / (double)length));
        quality = VIPS_MAX(p->min_quality, VIPS_MIN(quality - 5, aimed));
    }
}
