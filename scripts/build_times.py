#!/usr/bin/env python3
"""The heaviest compile units of a Ninja build, from its .ninja_log.

    python3 scripts/build_times.py [BUILD_DIR] [N]

Prints the N (default 10) longest steps of the last build of each output (wall seconds as
Ninja recorded them; on a machine doing nothing else that is the unit's compile time),
the sum over all steps and the span from the first start to the last end.
"""
import os
import sys


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    path = os.path.join(build, ".ninja_log")
    steps = {}  # output -> (start ms, end ms); a later line for the same output wins
    with open(path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            start, end, _mtime, output, _hash = line.rstrip("\n").split("\t")
            steps[output] = (int(start), int(end))
    if not steps:
        sys.exit(f"build_times: {path} lists no steps")
    longest = sorted(steps.items(), key=lambda kv: kv[1][0] - kv[1][1])[:n]
    for output, (start, end) in longest:
        print(f"{(end - start) / 1000:7.1f} s  {output}")
    total = sum(end - start for start, end in steps.values()) / 1000
    span = (max(e for _, e in steps.values()) - min(s for s, _ in steps.values())) / 1000
    print(f"{len(steps)} steps, {total:.0f} s summed, {span:.0f} s from first start to last end")


if __name__ == "__main__":
    main()
