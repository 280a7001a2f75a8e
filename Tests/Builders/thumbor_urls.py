#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Signs thumbor URLs with libthumbor, thumbor's own URL library, for the integration tests.

usage: thumbor_urls.py SPEC.json
SPEC: {"key": "<security key>", "cases": [{libthumbor's CryptoURL.generate keyword arguments}, ...]}
(a "crop" is [[left, top], [right, bottom]]). Prints a JSON list of the signed paths, one per case, in order.
"""
import json
import sys

from libthumbor import CryptoURL


def main():
    with open(sys.argv[1], encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    crypto = CryptoURL(key=spec["key"])
    urls = []
    for options in spec["cases"]:
        if "crop" in options:
            options["crop"] = tuple(tuple(corner) for corner in options["crop"])
        if "trim" in options and isinstance(options["trim"], list):
            options["trim"] = tuple(options["trim"])
        urls.append(crypto.generate(**options))
    json.dump(urls, sys.stdout)


if __name__ == "__main__":
    main()
