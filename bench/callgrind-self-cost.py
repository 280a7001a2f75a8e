#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Self cost per function (instructions) from callgrind dumps, divided by a count of requests.

  callgrind-self-cost.py UNIT COUNT DUMP [DUMP ...]
      "instructions per UNIT: N", then the 25 most expensive functions (all the dumps' threads summed).
  callgrind-self-cost.py --compare DUMP_A COUNT_A DUMP_B COUNT_B
      the 30 functions whose cost per request differs most between A and B, with their calls per request: tells a
      change in the code (one function) from one in how wrk's requests fell on the loop's wake-ups (every
      per-wake-up function moving together).
Used by bench/hit-instructions.sh and bench/render-instructions.sh.
"""
import collections
import re
import sys


def load(paths):
    """(self cost, calls) per function name over `paths`."""
    cost, calls = collections.Counter(), collections.Counter()
    for path in paths:
        names, current, callee, skip = {}, None, None, False
        for line in open(path):
            line = line.rstrip("\n")
            m = re.match(r"^(c?)fn=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1):
                    callee = names.get(m.group(2))
                else:
                    current = names.get(m.group(2))
                continue
            if line.startswith("calls="):
                skip = True  # the next cost line is the call's inclusive cost, not self cost
                calls[callee] += int(line.split()[0][len("calls="):])
                continue
            if line and (line[0].isdigit() or line[0] in "+-*") and current:
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    cost[current] += int(parts[-1])
    return cost, calls


if len(sys.argv) == 6 and sys.argv[1] == "--compare":
    (a, a_calls), n_a = load([sys.argv[2]]), max(int(sys.argv[3]), 1)
    (b, b_calls), n_b = load([sys.argv[4]]), max(int(sys.argv[5]), 1)
    print(f"instructions per request: {sum(a.values()) / n_a:,.0f} -> {sum(b.values()) / n_b:,.0f}")
    for name in sorted(set(a) | set(b), key=lambda k: -abs(b[k] / n_b - a[k] / n_a))[:30]:
        print(f"{a[name] / n_a:9.1f} {b[name] / n_b:9.1f} {b[name] / n_b - a[name] / n_a:+9.1f}"
              f"   calls {a_calls[name] / n_a:6.2f} {b_calls[name] / n_b:6.2f}   {name[:100]}")
elif len(sys.argv) >= 4:
    unit, count = sys.argv[1], max(int(sys.argv[2]), 1)
    cost, _ = load(sys.argv[3:])
    print(f"instructions per {unit}: {sum(cost.values()) // count:,}")
    for name, c in cost.most_common(25):
        print(f"{c // count:12,d}  {name[:110]}")
else:
    sys.exit(__doc__)
