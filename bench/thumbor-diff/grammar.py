# SPDX-License-Identifier: Apache-2.0
"""Seeded thumbor URLs for the differential test (README.md in this directory).

Each case is the path thumbor signs (`[trim/][AxB:CxD/][fit/][WxH/][halign/][valign/][smart/][filters:…/]<image>`,
with `{origin}` standing for the loopback origin's `127.0.0.1:<port>`) and the list of features it uses, the
tokens the report's breakdown counts (`filter:blur`, `filter:blur:invalid`, `fit:fit-in`, `crop:outside`, …).
The same seed and count give the same cases, in the same order, on every machine.
"""
import random

# The pictures the origin serves: name → (width, height) upright (after the EXIF orientation), what it is.
# Fixtures from Sources/ThumbdTestSupport/Resources; wide.jpg and tall.png are cut from them by diff.py.
IMAGES = {
    "progressive.jpg": (320, 240, "progressive JPEG, 4:3"),
    "orientation-6.jpg": (48, 64, "JPEG with EXIF orientation 6 (stored 64x48)"),
    "orientation-3.jpg": (64, 48, "JPEG with EXIF orientation 3"),
    "orientation-8.jpg": (48, 64, "JPEG with EXIF orientation 8"),
    "grid.png": (300, 300, "PNG, nine colour cells, square"),
    "interest.png": (300, 300, "PNG, grey with a checkerboard patch off the centre"),
    "rgba.png": (64, 48, "PNG with alpha (bottom half transparent)"),
    "grey-alpha.png": (64, 48, "grey PNG with alpha"),
    "animated.gif": (48, 32, "animated GIF, three frames"),
    "wide.jpg": (480, 160, "JPEG, 3:1, cut from progressive.jpg scaled up"),
    "tall.png": (150, 400, "PNG, 3:8, cut from grid.png scaled up"),
}
IMAGE_WEIGHTS = [4, 2, 1, 1, 3, 2, 3, 1, 1, 2, 2]
WATERMARK = "{origin}/rgba.png"

# Every filter of thumbor 7.8's BUILTIN_FILTERS (thumbor/filters/__init__.py), with argument forms: "valid" match
# the filter's pattern with ordinary values, "edge" match it with extreme ones, "invalid" do not match it (thumbor
# then skips the filter and renders the rest). `{wm}` is the watermark picture on the origin.
FILTERS = {
    "brightness": {"valid": ["40", "-40", "10"], "edge": ["0", "100", "-100", "250"], "invalid": ["1.5", "", "x"]},
    "colorize": {"valid": ["40,20,0,ff0000", "10,50,90,00ff00"], "edge": ["0,0,0,000000", "100,100,100,ffffff"],
                 "invalid": ["40,20,0", "40,20,0,red"]},
    "contrast": {"valid": ["30", "-30"], "edge": ["0", "100", "-100"], "invalid": ["0.5", "a"]},
    "rgb": {"valid": ["20,-10,0", "-30,30,10"], "edge": ["0,0,0", "100,100,100", "-100,-100,-100"],
            "invalid": ["10,10", "1.5,0,0"]},
    "round_corner": {"valid": ["20,255,255,255", "10|20,0,0,0", "15,255,0,0,1"], "edge": ["0,0,0,0", "500,10,10,10"],
                     "invalid": ["20,255,255", "20,255,255,255,maybe", "-5,0,0,0"]},
    "quality": {"valid": ["80", "40"], "edge": ["1", "100", "0", "150"], "invalid": ["-5", "high"]},
    "noise": {"valid": ["20", "40,7"], "edge": ["0", "100"], "invalid": ["-10", "a,b"]},
    "watermark": {"valid": ["{wm},10,10,50", "{wm},-10,-10,0", "{wm},center,center,30", "{wm},repeat,repeat,50",
                            "{wm},20p,30p,20", "{wm},0,0,0,50", "{wm},10,10,0,30,30", "{wm},repeat,10,0"],
                  "edge": ["{wm},-0,-0,100", "{wm},0,0,0,none,none", "{wm},500,500,0"],
                  "invalid": ["{wm},10,10", "{wm},left,top,50", "{wm},10,10,-5"]},
    "equalize": {"valid": [""], "edge": [], "invalid": ["1"]},
    "fill": {"valid": ["red", "00ff00", "transparent", "blue,1", "ffffff,true"], "edge": ["auto", "blur", "000"],
             "invalid": ["#ff0000", "rgb(1,2,3)"]},
    "sharpen": {"valid": ["2,1,true", "1.5,0.5,false"], "edge": ["0,0,true", "10,5,1"],
                "invalid": ["1,2", "2", "a,b,c"]},
    "strip_exif": {"valid": [""], "edge": [], "invalid": ["1"]},
    "strip_icc": {"valid": [""], "edge": [], "invalid": ["1"]},
    "frame": {"valid": ["{wm}"], "edge": [], "invalid": [""]},
    "grayscale": {"valid": [""], "edge": [], "invalid": ["1"]},
    "rotate": {"valid": ["90", "180", "270"], "edge": ["0", "360", "-90", "450", "45"], "invalid": ["1.5", "right"]},
    "format": {"valid": ["jpeg", "png", "webp", "gif"], "edge": ["jpg", "JPEG", "avif", "heic"],
               "invalid": ["bmp", ""]},
    "max_bytes": {"valid": ["20000", "5000"], "edge": ["1", "0", "100000000"], "invalid": ["-1", "1.5"]},
    "convolution": {"valid": ["1;2;1;2;4;2;1;2;1,3,true", "-1;-1;-1;-1;8;-1;-1;-1;-1,3,false"],
                    "edge": ["1,1,false", "0;0;0;0;1;0;0;0;0,3"], "invalid": ["1;2;1,0,true", "a,3,true"]},
    "blur": {"valid": ["2", "5,2", "3,1.5"], "edge": ["1", "150", "1,0"], "invalid": ["0", "-2", "1.5"]},
    "extract_focal": {"valid": [""], "edge": [], "invalid": ["1"]},
    "focal": {"valid": ["10x10:50x50", "100x50:200x150"], "edge": ["0x0:1x1", "0x0:5000x5000"],
              "invalid": ["0.89x0.72", "10x10", ""]},
    "no_upscale": {"valid": [""], "edge": [], "invalid": ["1"]},
    "saturation": {"valid": ["0.5", "1.5", "-0.5"], "edge": ["0", "2", "100"], "invalid": ["a", ""]},
    "max_age": {"valid": ["60", "3600"], "edge": ["0", "31536000"], "invalid": ["-1", "a"]},
    "curve": {"valid": ["[(0,0),(255,255)],[(0,50),(16,51),(32,69),(58,85),(92,103),(120,118),(144,136),(164,154),"
                        "(183,177),(205,199),(227,216),(243,229),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)]"],
              "edge": ["[],[],[],[]"], "invalid": ["[(0,0)],[(0,0)],[(0,0)]", "a,b,c,d"]},
    "background_color": {"valid": ["red", "ffffff", "00ff00"], "edge": ["000", "transparent"],
                         "invalid": ["#fff", ""]},
    "upscale": {"valid": [""], "edge": [], "invalid": ["1"]},
    "proportion": {"valid": ["0.5", "0.25"], "edge": ["1", "1.0", "0", "2"], "invalid": ["", "a"]},
    "stretch": {"valid": [""], "edge": [], "invalid": ["1"]},
}
# Names thumbor 7.8 does not load by default (red_eye's module exists but is not in BUILTIN_FILTERS; autojpg and
# cover() are read elsewhere): thumbor skips an unknown filter.
OTHER_FILTERS = ["autojpg()", "cover()", "red_eye()", "no_such_filter(1)"]

SIDES = [None, 0, 1, 10, 32, 48, 64, 100, 150, 200, 240, 300, 320, 400, 500, 800, "orig"]
SIDE_WEIGHTS = [3, 3, 1, 1, 2, 1, 2, 4, 3, 4, 2, 4, 2, 2, 2, 1, 2]


def _side(rng):
    return rng.choices(SIDES, SIDE_WEIGHTS)[0]


def _crop(rng, width, height, features):
    kind = rng.choices(["inside", "outside", "decimal", "zero", "reversed", "edge"], [6, 2, 2, 1, 1, 1])[0]
    features.append("crop:" + kind)
    if kind == "inside":
        left, top = rng.randrange(0, width // 2), rng.randrange(0, height // 2)
        right, bottom = rng.randrange(left + 1, width + 1), rng.randrange(top + 1, height + 1)
    elif kind == "outside":
        left, top = rng.randrange(0, width), rng.randrange(0, height)
        right, bottom = width + rng.randrange(1, 200), height + rng.randrange(1, 200)
    elif kind == "decimal":
        a, b = rng.choice([(0.1, 0.9), (0.25, 0.75), (0.0, 0.5)])
        return f"{a}x{a}:{b}x{b}"
    elif kind == "zero":
        return "0x0:0x0"
    elif kind == "reversed":
        left, top = width // 2, height // 2
        right, bottom = rng.randrange(0, left), rng.randrange(0, top)
    else:  # the whole picture, or a one-pixel sliver
        left, top, right, bottom = rng.choice([(0, 0, width, height), (0, 0, 1, 1), (width - 1, 0, width, height)])
    return f"{left}x{top}:{right}x{bottom}"


def _filter(rng, name, features, form=None):
    forms = FILTERS[name]
    if form is None:
        form = rng.choices(["valid", "edge", "invalid"], [6 if forms["valid"] else 0, 2 if forms["edge"] else 0,
                                                         2 if forms["invalid"] else 0])[0]
    args = rng.choice(forms[form]).replace("{wm}", WATERMARK)
    features.append("filter:" + name)
    features.append(f"filter:{name}:{form}")
    return f"{name}({args})"


def case(rng, index, filters_order):
    """One case: (path without the signature, features, image)."""
    features = []
    image = rng.choices(list(IMAGES), IMAGE_WEIGHTS)[0]
    width, height, _ = IMAGES[image]
    features.append("image:" + image)
    parts = []
    if rng.random() < 0.08:
        trim = rng.choice(["trim", "trim:top-left", "trim:bottom-right", "trim:10", "trim:bottom-right:40"])
        parts.append(trim)
        features.append("trim")
    if rng.random() < 0.15:
        parts.append(_crop(rng, width, height, features))
    fit = rng.choices([None, "fit-in", "full-fit-in", "adaptive-fit-in", "adaptive-full-fit-in"], [10, 5, 2, 1, 1])[0]
    if fit:
        parts.append(fit)
        features.append("fit:" + fit)
    w, h = _side(rng), _side(rng)
    flip_w, flip_h = rng.random() < 0.12, rng.random() < 0.12
    if w is not None or h is not None or flip_w or flip_h:
        ws = "" if w is None else str(w)
        hs = "" if h is None else str(h)
        parts.append(("-" if flip_w else "") + ws + "x" + ("-" if flip_h else "") + hs)
        for side, value in (("w", w), ("h", h)):
            if value == 0:
                features.append(f"size:{side}=0")
            elif value is None:
                features.append(f"size:{side}=empty")
            elif value == "orig":
                features.append(f"size:{side}=orig")
            elif value > (width if side == "w" else height):
                features.append(f"size:{side}>source")
        if flip_w:
            features.append("flip:horizontal")
        if flip_h:
            features.append("flip:vertical")
    else:
        features.append("size:none")
    if rng.random() < 0.2:
        align = rng.choice(["left", "center", "right"])
        parts.append(align)
        features.append("halign:" + align)
    if rng.random() < 0.2:
        align = rng.choice(["top", "middle", "bottom"])
        parts.append(align)
        features.append("valign:" + align)
    if rng.random() < 0.08:
        parts.append("smart")
        features.append("smart")
    # Filters: about half the cases carry one (walking through every filter in turn so each gets its share),
    # a sixth a chain of two or three, a few two watermarks.
    roll = rng.random()
    chain = []
    if roll < 0.5:
        name = filters_order[index % len(filters_order)]
        chain.append(_filter(rng, name, features))
    elif roll < 0.68:
        for name in rng.sample(sorted(FILTERS), rng.choice([2, 3])):
            chain.append(_filter(rng, name, features, form="valid" if rng.random() < 0.8 else None))
        features.append("filters:chain")
    elif roll < 0.71:
        chain.append(rng.choice(OTHER_FILTERS))
        features.append("filter:not-builtin:" + chain[-1].split("(")[0])
    elif roll < 0.74:
        # Two watermarks, laid in order (picked by the index, not the generator, so the other cases stay as seeded).
        marks = FILTERS["watermark"]["valid"]
        for pick in (index % len(marks), (3 * index + 1) % len(marks)):
            chain.append("watermark(" + marks[pick].replace("{wm}", WATERMARK) + ")")
        features.append("filters:watermark-twice")
    if chain:
        parts.append("filters:" + ":".join(chain))
    parts.append("{origin}/" + image)
    return "/".join(parts), features, image


def cases(count, seed):
    rng = random.Random(seed)
    order = sorted(FILTERS)
    rng.shuffle(order)
    return [case(rng, index, order) for index in range(count)]


if __name__ == "__main__":
    import sys

    for path, features, _ in cases(int(sys.argv[1]) if len(sys.argv) > 1 else 20, 27):
        print(path, " ".join(features))
