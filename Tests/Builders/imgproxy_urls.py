#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Signs imgproxy URLs with the `imgproxy` package from PyPI, for the integration tests.

usage: imgproxy_urls.py SPEC.json
SPEC: {"key": "<hex>", "salt": "<hex>", "cases": [case, ...]}, each case either
- the `imgproxy.ImgProxy` keyword arguments (`image_url`, `resizing_type`, `width`, `height`, `gravity`,
  `enlarge`, `extension`, `advanced`: a list of option strings); the package writes the source in URL-safe base64,
  after the advanced options, `g:<gravity>` and `rs:<type>:<width>:<height>:<enlarge>`; or
- {"plain": {"options": [...], "source": "<URL as it goes in the path>", "extension": "<ext or empty>"}}: a
  `/<options>/plain/<source>[@<ext>]` path, which the package does not make, signed here as imgproxy signs
  (HMAC-SHA256 keyed by the key over the salt and the path, URL-safe base64 without padding).
Prints a JSON list of the signed paths, one per case, in order.
"""
import base64
import hashlib
import hmac
import json
import sys

from imgproxy import ImgProxy


def plain(spec, case):
    path = "/" + "/".join([*case["options"], "plain", case["source"]])
    if case.get("extension"):
        path += "@" + case["extension"]
    digest = hmac.new(
        bytes.fromhex(spec["key"]), bytes.fromhex(spec["salt"]) + path.encode("utf-8"), hashlib.sha256
    ).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


def main():
    with open(sys.argv[1], encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    urls = []
    for case in spec["cases"]:
        if "plain" in case:
            urls.append(plain(spec, case["plain"]))
        else:
            urls.append(str(ImgProxy(key=spec["key"], salt=spec["salt"], **case)))
    json.dump(urls, sys.stdout)


if __name__ == "__main__":
    main()
