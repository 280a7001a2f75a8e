# SPDX-License-Identifier: Apache-2.0
"""The oracles of thumbd's per-source analysis (Tests/ThumbnailingTests/AnalysisOracleTests.swift).

Reads one JSON request from argv[1], prints one JSON answer. Each command uses other projects' code only:
- blurhash (Debian's python3-blurhash, Wolt's C encoder and decoder; run with /usr/bin/python3);
- thumbhash (thumbhash-python, a port of Evan Wallace's reference), imagehash (ImageHash 4.3.2) and kmeans (numpy,
  written here) in .venv-test/.
Distances are mean absolute differences in 8-bit levels over every channel; colour differences are CIE76 (Delta E
of CIE L*a*b*, D65).
"""
import json
import sys

import numpy
from PIL import Image


def mean_distance(a, b):
    return float(numpy.abs(numpy.asarray(a, dtype=numpy.float64) - numpy.asarray(b, dtype=numpy.float64)).mean())


def picture(path, size, mode="RGB"):
    """The source file, upright, as `mode`, resized to `size` (Pillow's LANCZOS, squashed if it must)."""
    from PIL import ImageOps

    image = ImageOps.exif_transpose(Image.open(path)).convert(mode)
    return image.resize(tuple(size), Image.LANCZOS)


def miniature(request):
    """thumbd's RGBA miniature as a Pillow image."""
    return Image.frombytes("RGBA", (request["width"], request["height"]), bytes.fromhex(request["rgba"]))


def blurhash_command(request):
    import tempfile

    import blurhash

    size = (request["width"], request["height"])
    cx, cy = request["components"]
    ours = blurhash.decode(request["hash"], size[0], size[1])
    answer = {}
    with tempfile.TemporaryDirectory() as directory:
        # The reference encoder on thumbd's own miniature (alpha dropped, as BlurHash does): the same input.
        same = directory + "/miniature.png"
        miniature(request).convert("RGB").save(same)
        answer["referenceOfMiniature"] = blurhash.encode(same, cx, cy)
        # The source scaled to the miniature's size by Pillow, and the reference's hash of it.
        scaled = picture(request["source"], size)
        path = directory + "/scaled.png"
        scaled.save(path)
        theirs_hash = blurhash.encode(path, cx, cy)
    theirs = blurhash.decode(theirs_hash, size[0], size[1])
    answer.update(
        {
            "referenceOfSource": theirs_hash,
            "oursToSource": mean_distance(ours, scaled),
            "theirsToSource": mean_distance(theirs, scaled),
            "oursToTheirs": mean_distance(ours, theirs),
        }
    )
    return answer


def thumbhash_command(request):
    from thumbhash import image_to_thumbhash, thumbhash_to_image
    from thumbhash.encode import rgba_to_thumbhash

    m = miniature(request)
    ours = thumbhash_to_image(request["hash"])
    theirs_hash = image_to_thumbhash(request["source"])
    theirs = thumbhash_to_image(theirs_hash)
    import base64

    return {
        "referenceOfMiniature": base64.b64encode(
            rgba_to_thumbhash(m.width, m.height, list(m.tobytes()))
        ).decode(),
        "referenceOfSource": theirs_hash,
        "decodedSize": [ours.width, ours.height],
        "theirsDecodedSize": [theirs.width, theirs.height],
        "oursToSource": mean_distance(ours, picture(request["source"], ours.size, "RGBA")),
        "theirsToSource": mean_distance(theirs, picture(request["source"], theirs.size, "RGBA")),
        "oursToTheirs": mean_distance(ours, theirs.resize(ours.size, Image.LANCZOS)),
    }


def imagehash_command(request):
    import imagehash

    def number(h):
        return int(str(h), 16)

    source = Image.open(request["source"])
    phash_grey = Image.frombytes("L", (32, 32), bytes.fromhex(request["phashGrey"]))
    dhash_grey = Image.frombytes("L", (9, 8), bytes.fromhex(request["dhashGrey"]))
    return {
        # imagehash on the source file itself, and on thumbd's grey copies (which imagehash resizes to themselves).
        "phash": number(imagehash.phash(source)),
        "dhash": number(imagehash.dhash(source)),
        "phashOfGrey": number(imagehash.phash(phash_grey)),
        "dhashOfGrey": number(imagehash.dhash(dhash_grey)),
    }


def lab(rgb):
    """CIE L*a*b* (D65) of sRGB colours (n x 3, 0...255)."""
    c = numpy.asarray(rgb, dtype=numpy.float64) / 255
    linear = numpy.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = numpy.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = linear @ m.T / numpy.array([0.95047, 1.0, 1.08883])
    f = numpy.where(xyz > 216 / 24389, numpy.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return numpy.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def delta_e(a, b):
    return float(numpy.linalg.norm(lab([a])[0] - lab([b])[0]))


def kmeans_command(request):
    """k-means (Lloyd's, k-means++ seeding with a fixed seed) of the source's opaque pixels, scaled to fit 100 px."""
    image = Image.open(request["source"])
    image = image.convert("RGBA")
    image.thumbnail((100, 100), Image.LANCZOS)
    pixels = numpy.asarray(image, dtype=numpy.float64).reshape(-1, 4)
    alpha = pixels[:, 3] / 255
    average = (pixels[:, :3] * alpha[:, None]).sum(axis=0) / alpha.sum()
    opaque = pixels[pixels[:, 3] >= 128][:, :3]
    k = request["k"]
    generator = numpy.random.default_rng(request.get("seed", 0))
    centres = [opaque[generator.integers(len(opaque))]]
    for _ in range(1, k):
        d = numpy.min([((opaque - c) ** 2).sum(axis=1) for c in centres], axis=0)
        centres.append(opaque[generator.choice(len(opaque), p=d / d.sum())] if d.sum() > 0 else centres[0])
    centres = numpy.array(centres)
    for _ in range(100):
        labels = numpy.argmin(((opaque[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2), axis=1)
        moved = numpy.array(
            [opaque[labels == i].mean(axis=0) if (labels == i).any() else centres[i] for i in range(k)]
        )
        if numpy.allclose(moved, centres):
            break
        centres = moved
    shares = numpy.bincount(labels, minlength=k) / len(opaque)
    order = numpy.argsort(-shares)
    clusters = [{"colour": centres[i].tolist(), "share": float(shares[i])} for i in order]
    palette = request["palette"]
    largest = clusters[0]["colour"]
    return {
        "clusters": clusters,
        "averageDeltaE": delta_e(average, request["average"]),
        "average": average.tolist(),
        # The largest cluster against the nearest of thumbd's palette colours, and thumbd's largest swatch against
        # the nearest cluster centre.
        "largestClusterToPalette": min(delta_e(largest, p) for p in palette),
        "largestSwatchToClusters": min(delta_e(palette[0], c["colour"]) for c in clusters),
    }


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        request = json.load(f)
    command = {
        "blurhash": blurhash_command,
        "thumbhash": thumbhash_command,
        "imagehash": imagehash_command,
        "kmeans": kmeans_command,
    }[request["command"]]
    print(json.dumps(command(request)))
