#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates the image fixtures in this directory (see README.md for what each one proves).

Needs only python3 (stdlib), the vips 8.14 CLI and exiftool. Pixels are written as PPM/PGM by this
script, so every colour is known exactly; vips converts them, exiftool sets EXIF tags. Run from anywhere:
    python3 Sources/ThumbdTestSupport/Resources/make_fixtures.py
The output is deterministic for a given vips/libjpeg/libwebp build; the tests check pixels with a
tolerance, never bytes, so a rebuild with other library versions is fine.
"""
import os
import struct
import subprocess
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="thumbd-fixtures-")

# The four quadrant colours of the asymmetric test picture, shared with Fixtures.swift.
RED = (230, 30, 30)      # top left
GREEN = (30, 200, 60)    # top right
BLUE = (40, 60, 220)     # bottom left
YELLOW = (240, 220, 40)  # bottom right

# The 3x3 grid for gravity tests, row by row, shared with Fixtures.swift.
GRID = [
    [(255, 0, 0), (0, 255, 0), (0, 0, 255)],
    [(255, 255, 0), (0, 255, 255), (255, 0, 255)],
    [(255, 255, 255), (0, 0, 0), (128, 128, 128)],
]


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def tmp(name):
    return os.path.join(TMP, name)


def out(name):
    return os.path.join(HERE, name)


def write_pnm(path, width, height, pixel, channels=3, maxval=255):
    """Writes a binary PPM (3 channels) or PGM (1 channel); pixel(x, y) returns a tuple of ints."""
    magic = b"P6" if channels == 3 else b"P5"
    fmt = ">H" if maxval > 255 else "B"
    with open(path, "wb") as f:
        f.write(b"%s %d %d %d\n" % (magic, width, height, maxval))
        for y in range(height):
            for x in range(width):
                for value in pixel(x, y):
                    f.write(struct.pack(fmt, value))


# In-gamut colours for the CMYK fixture, shared with Fixtures.swift.
MUTED = [(200, 80, 70), (90, 160, 90), (70, 100, 170), (220, 200, 90)]


def muted_quadrant(x, y, width, height):
    return MUTED[(0 if y < height // 2 else 2) + (0 if x < width // 2 else 1)]


def quadrant(x, y, width, height):
    if y < height // 2:
        return RED if x < width // 2 else GREEN
    return BLUE if x < width // 2 else YELLOW


def main():
    # The canonical upright picture: 64x48, landscape, four coloured quadrants.
    write_pnm(tmp("quadrants.ppm"), 64, 48, lambda x, y: quadrant(x, y, 64, 48))
    run("vips", "copy", tmp("quadrants.ppm"), tmp("quadrants.v"))

    # EXIF orientations 1..8. Each file stores the inverse transform of the upright picture and the tag,
    # so it displays upright only when the orientation is applied.
    stored = {
        1: [],
        2: [("flip", "horizontal")],
        3: [("rot", "d180")],
        4: [("flip", "vertical")],
        5: [("rot", "d90"), ("flip", "horizontal")],   # transpose
        6: [("rot", "d270")],
        7: [("rot", "d90"), ("flip", "vertical")],     # transverse
        8: [("rot", "d90")],
    }
    for orientation, steps in stored.items():
        current = tmp("quadrants.v")
        for index, (op, arg) in enumerate(steps):
            nxt = tmp(f"o{orientation}-{index}.v")
            run("vips", op, current, nxt, arg)
            current = nxt
        path = out(f"orientation-{orientation}.jpg")
        run("vips", "jpegsave", current, path, "--Q", "95", "--strip")
        run("exiftool", "-q", "-overwrite_original", "-n", f"-Orientation={orientation}", path)

    # Baseline JPEG with metadata (EXIF with GPS, XMP, an ICC profile) for the strip test.
    run("vips", "jpegsave", tmp("quadrants.v"), out("metadata.jpg"), "--Q", "90")
    run("exiftool", "-q", "-overwrite_original", "-n", "-Orientation=1", "-Make=thumbd", "-Model=fixture",
        "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-GPSLongitude=2.35", "-GPSLongitudeRef=E",
        "-XMP-dc:Creator=thumbd fixtures", out("metadata.jpg"))
    run("vips", "icc_transform", out("metadata.jpg"), tmp("metadata-icc.jpg"), "srgb", "--embedded",
        "--input-profile", "srgb")
    # Re-embed the sRGB profile without touching pixels: vips keeps EXIF/XMP on copy.
    run("exiftool", "-q", "-overwrite_original", "-tagsfromfile", tmp("metadata-icc.jpg"), "-icc_profile",
        out("metadata.jpg"))
    # The same with an EXIF copyright and artist, for keep_copyright.
    run("cp", out("metadata.jpg"), out("copyright.jpg"))
    run("exiftool", "-q", "-overwrite_original", "-Copyright=(c) Example Photos", "-Artist=Ada Example",
        out("copyright.jpg"))

    # Progressive JPEG, bigger so that shrink-on-load applies.
    run("vips", "resize", tmp("quadrants.v"), tmp("quadrants-320.v"), "5", "--kernel", "nearest")
    run("vips", "jpegsave", tmp("quadrants-320.v"), out("progressive.jpg"), "--Q", "85", "--interlace",
        "--strip")

    # CMYK JPEG without an embedded profile: libvips falls back to its built-in CMYK profile. Its quadrants
    # use muted colours that survive the sRGB -> CMYK -> sRGB round trip (the saturated green and blue of
    # the main picture are outside the CMYK gamut).
    write_pnm(tmp("muted.ppm"), 64, 48, lambda x, y: muted_quadrant(x, y, 64, 48))
    run("vips", "colourspace", tmp("muted.ppm"), tmp("cmyk.v"), "cmyk")
    run("vips", "jpegsave", tmp("cmyk.v"), out("cmyk.jpg"), "--Q", "95", "--strip")

    # Display P3 tagged PNG: the numbers are P3, so only an ICC transform gives the sRGB colours back.
    run("vips", "icc_transform", tmp("quadrants.v"), out("display-p3.png"), "p3", "--input-profile", "srgb")

    # 16-bit RGB PNG (values x 257, so 8-bit output should give back the quadrant colours).
    write_pnm(tmp("rgb16.ppm"), 64, 48, lambda x, y: tuple(v * 257 for v in quadrant(x, y, 64, 48)),
              maxval=65535)
    run("vips", "copy", tmp("rgb16.ppm"), out("rgb16.png"))

    # Grey PNG: left half 40, right half 200.
    write_pnm(tmp("grey.pgm"), 64, 48, lambda x, y: (40 if x < 32 else 200,), channels=1)
    run("vips", "copy", tmp("grey.pgm"), out("grey.png"))

    # Grey + alpha PNG: the grey picture, left half opaque, right half fully transparent.
    write_pnm(tmp("alpha.pgm"), 64, 48, lambda x, y: (255 if x < 32 else 0,), channels=1)
    run("vips", "bandjoin", f"{tmp('grey.pgm')} {tmp('alpha.pgm')}", out("grey-alpha.png"))

    # RGBA PNG: the quadrants, top half opaque, bottom half fully transparent.
    write_pnm(tmp("alpha-half.pgm"), 64, 48, lambda x, y: (255 if y < 24 else 0,), channels=1)
    run("vips", "bandjoin", f"{tmp('quadrants.ppm')} {tmp('alpha-half.pgm')}", out("rgba.png"))

    # Plain RGB PNG of the quadrants (a lossless reference without alpha).
    run("vips", "copy", tmp("quadrants.v"), out("quadrants.png"))

    # WebP, TIFF and AVIF sources of the quadrants.
    run("vips", "webpsave", tmp("quadrants.v"), out("quadrants.webp"), "--Q", "90", "--strip")
    run("vips", "tiffsave", tmp("quadrants.v"), out("quadrants.tiff"), "--compression", "deflate", "--strip")
    run("vips", "heifsave", tmp("quadrants.v"), out("quadrants.avif"), "--compression", "av1", "--Q", "90",
        "--strip")

    # Animated GIF and WebP: three 48x32 frames, red then green then blue.
    frames = [RED, GREEN, BLUE]
    write_pnm(tmp("frames.ppm"), 48, 96, lambda x, y: frames[y // 32])
    run("vips", "copy", tmp("frames.ppm"), tmp("frames.v"))
    run("vips", "gifsave", tmp("frames.v"), out("animated.gif"), "--page-height", "32")
    run("vips", "webpsave", tmp("frames.v"), out("animated.webp"), "--page-height", "32", "--Q", "90")
    # The same frames as an AVIF of three images (libheif's "image collection", which libvips reads as pages).
    run("vips", "heifsave", tmp("frames.v"), out("animated.avif"), "--page-height", "32", "--compression", "av1",
        "--Q", "90", "--strip")

    # 3x3 colour grid, 300x300, lossless: cover + gravity tests read which cells survived the crop.
    write_pnm(tmp("grid.ppm"), 300, 300, lambda x, y: GRID[y // 100][x // 100])
    run("vips", "copy", tmp("grid.ppm"), out("grid.png"))

    # "Interesting" picture for attention/entropy: flat grey with a saturated, busy patch in the left
    # third, vertically centred, so a smart crop to a 100 px wide column must move off the centre.
    def interest(x, y):
        if x < 100 and 100 <= y < 200:
            return (250, 40, 20) if ((x // 5) + (y // 5)) % 2 else (250, 220, 30)
        return (128, 128, 128)
    write_pnm(tmp("interest.ppm"), 300, 300, interest)
    run("vips", "copy", tmp("interest.ppm"), out("interest.png"))

    # A truncated JPEG: a 256x256 noisy picture cut at 40 % of its bytes (the EOI and half the scan gone).
    import random
    rng = random.Random(42)
    noise = [[tuple(rng.randrange(256) for _ in range(3)) for _ in range(256)] for _ in range(256)]
    write_pnm(tmp("noise.ppm"), 256, 256, lambda x, y: noise[y][x])
    run("vips", "jpegsave", tmp("noise.ppm"), tmp("noise.jpg"), "--Q", "75", "--strip")
    data = open(tmp("noise.jpg"), "rb").read()
    open(out("truncated.jpg"), "wb").write(data[: len(data) * 2 // 5])

    # A decompression bomb: a valid PNG header claiming 30000x30000 RGB, one tiny compressed row.
    def chunk(kind, payload):
        body = kind + payload
        return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + b"\x00" * 3 * 30000, 9)
    with open(out("bomb.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))

    # Things that are not allowed images.
    with open(out("page.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html><head><title>Not an image</title></head><body>hello</body></html>\n")
    with open(out("image.svg"), "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48">'
                '<rect width="64" height="48" fill="red"/></svg>\n')
    # A 2x2 24-bit BMP: only ImageMagick (an untrusted loader) could read it.
    rows = b"".join(b"\x00\x00\xff" * 2 + b"\x00\x00" for _ in range(2))
    header = struct.pack("<2sIHHI", b"BM", 14 + 40 + len(rows), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, 2, 2, 1, 24, 0, len(rows), 2835, 2835, 0, 0)
    open(out("image.bmp"), "wb").write(header + info + rows)
    # A minimal one-page PDF (poppler would render it if the PDF loader were not blocked).
    open(out("document.pdf"), "wb").write(minimal_pdf())

    animation_fixtures()
    nine_patch_fixture()
    print("fixtures written to", HERE)


def write_gif(path, width, height, palette, frames, loop=0):
    """An animated GIF written by hand: `palette` is four (r, g, b) colours, each frame is (left, top, width,
    height, index_of(x, y), delay in centiseconds). The LZW stream holds only literal codes, with a clear code
    before the dictionary would widen the codes, so no compressor is needed (and every pixel is known)."""
    def lzw(indices):
        bits, nbits, out = 0, 0, bytearray()
        def emit(code):
            nonlocal bits, nbits
            bits |= code << nbits
            nbits += 3
            while nbits >= 8:
                out.append(bits & 0xFF)
                bits >>= 8
                nbits -= 8
        for i, index in enumerate(indices):
            if i % 2 == 0:
                emit(4)  # clear: 3-bit codes again
            emit(index)
        emit(5)  # end of information
        if nbits:
            out.append(bits & 0xFF)
        return bytes(out)

    data = bytearray(b"GIF89a")
    data += struct.pack("<HHBBB", width, height, 0xF1, 0, 0)  # global colour table of 4 entries
    for colour in palette:
        data += bytes(colour)
    data += b"\x21\xFF\x0BNETSCAPE2.0\x03\x01" + struct.pack("<H", loop) + b"\x00"
    for left, top, w, h, index_of, delay in frames:
        data += b"\x21\xF9\x04\x00" + struct.pack("<H", delay) + b"\x00\x00"
        data += b"\x2C" + struct.pack("<HHHHB", left, top, w, h, 0)
        stream = lzw([index_of(x, y) for y in range(h) for x in range(w)])
        data += b"\x02"  # minimum code size
        for start in range(0, len(stream), 255):
            block = stream[start:start + 255]
            data += bytes([len(block)]) + block
        data += b"\x00"
    data += b"\x3B"
    with open(path, "wb") as f:
        f.write(data)


# The nine-patch frame's colours, shared with FrameTests.swift.
FRAME_CORNER = (200, 40, 200)
FRAME_EDGE = (40, 200, 200)


def nine_patch_fixture():
    """nine-patch.png: a 12x12 Android nine-patch (thumbor's frame). Its inside (10x10 within the 1-px marker border)
    is a 3-px ring, magenta corners and cyan edges, around a transparent centre. Stretch markers (opaque black) on
    inner columns and rows 3..6; content markers on inner columns 4..6 (bottom row: margins left 4, right 3) and inner
    rows 3..5 (right column: margins top 3, bottom 4)."""
    size = 12

    def pixel(x, y):
        if x in (0, size - 1) or y in (0, size - 1):
            inner_x, inner_y = x - 1, y - 1
            if y == 0 and 3 <= inner_x <= 6 or x == 0 and 3 <= inner_y <= 6:
                return (0, 0, 0, 255)
            if y == size - 1 and 4 <= inner_x <= 6 or x == size - 1 and 3 <= inner_y <= 5:
                return (0, 0, 0, 255)
            return (0, 0, 0, 0)
        inner_x, inner_y = x - 1, y - 1
        ring_x, ring_y = inner_x < 3 or inner_x > 6, inner_y < 3 or inner_y > 6
        if ring_x and ring_y:
            return FRAME_CORNER + (255,)
        if ring_x or ring_y:
            return FRAME_EDGE + (255,)
        return (0, 0, 0, 0)

    write_pnm(tmp("nine.ppm"), size, size, lambda x, y: pixel(x, y)[:3])
    write_pnm(tmp("nine-alpha.pgm"), size, size, lambda x, y: pixel(x, y)[3:], channels=1)
    run("vips", "bandjoin", f"{tmp('nine.ppm')} {tmp('nine-alpha.pgm')}", out("nine-patch.png"))


def animation_fixtures():
    # Three 48x32 frames, red, green, blue, shown 50, 120 and 200 ms (GIF counts centiseconds), looping 3 times.
    palette = [RED, GREEN, BLUE, YELLOW]
    write_gif(out("animated-delays.gif"), 48, 32, palette,
              [(0, 0, 48, 32, (lambda i: lambda x, y: i)(i), delay) for i, delay in enumerate([5, 12, 20])], loop=3)
    # Three 48x32 frames with an edge: the left half red, green or blue, the right half yellow, shown 100 ms each;
    # and each frame alone as a still GIF, the reference every operation's frames are compared with.
    halves = [(lambda i: lambda x, y: i if x < 24 else 3)(i) for i in range(3)]
    write_gif(out("animated-halves.gif"), 48, 32, palette, [(0, 0, 48, 32, index_of, 10) for index_of in halves])
    for i, index_of in enumerate(halves):
        write_gif(out(f"halves-frame{i}.gif"), 48, 32, palette, [(0, 0, 48, 32, index_of, 10)])
    # A frame bomb: 5,000 one-pixel frames on a 2000x2000 screen. 60 KB on disk; rendered whole it would be
    # 5,000 frames of 4 million pixels.
    write_gif(out("frame-bomb.gif"), 2000, 2000, palette, [(0, 0, 1, 1, lambda x, y: 0, 1)] * 5000)


def minimal_pdf():
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 64 48] /Contents 4 0 R >>",
    ]
    stream = b"1 0 0 rg 0 0 64 48 re f"
    objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    pdf = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        pdf += b"%010d 00000 n \n" % offset
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return pdf


if __name__ == "__main__":
    main()
