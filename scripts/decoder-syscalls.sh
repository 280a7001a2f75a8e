#!/bin/sh
# Lists the system calls thumbd-decoder makes after its seccomp filter is installed (docs/threat-model.md, "The
# allow list"), for sample sources of every format it decodes and their failure paths. Usage:
#   scripts/decoder-syscalls.sh [path/to/thumbd-decoder]
# Needs vips (the command), python3 and strace. Run it with the filter in place: a call the filter kills shows as
# the last line before "+++ killed by SIGSYS"; one it refuses shows "= -1 EACCES".
set -eu
decoder=$(realpath "${1:-.build/debug/thumbd-decoder}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
vips black b.v 64 48 --bands 3
vips linear b.v flat.v 1 120 --uchar
for format in jpg png webp gif avif heic tif jxl; do vips copy flat.v "flat.$format"; done
vips magicksave flat.v flat.bmp
vips magicksave flat.v flat.ico --format ico
python3 - "$work" <<'PY'
import struct, sys, zlib, glob, os
os.chdir(sys.argv[1])
svg = (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100">'
       b'<rect width="200" height="100" fill="blue"/><text x="10" y="50" font-size="20">Hello</text>'
       b'<image href="file:///etc/passwd" width="9" height="9"/><image xlink:href="http://127.0.0.1:9/x.png" '
       b'width="9" height="9"/><use href="file:///tmp/x.svg#a"/></svg>')
pixels = zlib.compress(bytes([0, 0, 255]) * 128)
content = b"q 200 0 0 100 0 0 cm /Im1 Do Q BT /F1 24 Tf 10 50 Td (Hi) Tj ET BT /F2 12 Tf 10 20 Td (Yo) Tj ET"
objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
           b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R "
           b"/F2 7 0 R >> /XObject << /Im1 6 0 R >> >> >>",
           b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
           b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
           b"<< /Type /XObject /Subtype /Image /Width 16 /Height 8 /ColorSpace /DeviceRGB /BitsPerComponent 8 "
           b"/Filter /FlateDecode /Length %d >>\nstream\n" % len(pixels) + pixels + b"\nendstream",
           b"<< /Type /Font /Subtype /TrueType /BaseFont /DejaVuSans >>"]
pdf = b"%PDF-1.4\n" + b"".join(b"%d 0 obj " % (i + 1) + o + b" endobj\n" for i, o in enumerate(objects))
pdf += b"trailer << /Root 1 0 R >>\n%%EOF\n"
sources = [("svg", svg), ("pdf", pdf)] + [(p, open(p, "rb").read()) for p in sorted(glob.glob("flat.*"))
                                           if not p.endswith(".v")]
def job(source, box=(100, 50), limit=100_000_000):
    return struct.pack("<IIIQQ", 0x626F6A74, box[0], box[1], limit, len(source)) + source
with open("jobs", "wb") as out:
    for name, source in sources:
        out.write(job(source))
        out.write(job(source[: len(source) // 2]))     # truncated
        out.write(job(source, limit=10))                # over the pixel limit
    out.write(job(svg, box=(12800, 6400)))  # 82 Mpixels, 330 MB of RGBA: over a 300 MB RLIMIT_AS
PY
# A job over RLIMIT_AS (an SVG rendered far larger than 64 MB allows), then the CPU limit (the test loop hook).
strace -f -o trace.all "$decoder" --jobs 1000 < jobs > /dev/null || true
strace -f -o trace.as "$decoder" --memory-mb 300 < jobs > /dev/null || true
printf '%s' thumbd-test-loop | python3 -c 'import struct,sys; s=sys.stdin.buffer.read(); sys.stdout.buffer.write(struct.pack("<IIIQQ",0x626F6A74,0,0,100,len(s))+s)' > loop
strace -f -o trace.cpu "$decoder" --test-loop-on-magic --cpu-seconds 1 < loop > /dev/null || true
# Only what follows the filter's installation (in time: strace -f writes in order), per call name.
for trace in trace.all trace.as trace.cpu; do
    awk 'seen { print } /PR_SET_SECCOMP|SECCOMP_SET_MODE_FILTER/ { seen = 1 }' "$trace"
done | sed -E 's/^[0-9]+ +//; s/^(<\.\.\. )?([a-z0-9_]+)[ (].*/\2/' | grep -E '^[a-z0-9_]+$' | sort | uniq -c | sort -rn
# A call the filter killed: the call before "killed by SIGSYS" in the same thread.
if grep -q 'killed by SIGSYS' trace.all trace.as trace.cpu; then
    echo "killed by the filter:" >&2
    grep -h -B2 'SIGSYS' trace.all trace.as trace.cpu >&2
    exit 1
fi
