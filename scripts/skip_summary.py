#!/usr/bin/env python3
"""What the last ctest run skipped, and why: every skipped GoogleTest test (GTEST_SKIP with
its message) and every script test that exited 77 ("SKIP: ..."), grouped by reason.

A skip is never silent: a test that cannot run here (no GPU, no xvfb, a precision this
LibTorch cannot run on this CPU, the fused path missing from LibTorch 1.13) says why, and
this prints the count and the reasons after the run.

Usage: scripts/skip_summary.py BUILD_DIR   (reads BUILD_DIR/Testing/Temporary/LastTest.log)
"""
import collections
import os
import re
import sys


def summarise(log_text):
    """(skipped test names by reason) from ctest's LastTest.log."""
    by_reason = collections.OrderedDict()
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        # GoogleTest: "<file>:<line>: Skipped", the message, then "[  SKIPPED ] Name (N ms)".
        if re.search(r":\d+: Skipped$", line):
            reason, j = [], i + 1
            while j < len(lines) and not lines[j].startswith("["):  # the next gtest line
                reason.append(lines[j])
                j += 1
            # A test that failed before its skip ends "[  FAILED  ]": a failure, not a skip.
            m = re.match(r"\[  SKIPPED \] (\S+) \(", lines[j]) if j < len(lines) else None
            if m:
                key = " ".join(r.strip() for r in reason if r.strip()) or "(no reason given)"
                by_reason.setdefault(key, []).append(m.group(1))
    # Script tests: exit 77 with "<name>: SKIP: <reason>" on stderr.
    for m in re.finditer(r"^(\S+): SKIP: (.*)$", log_text, re.M):
        by_reason.setdefault(m.group(2).strip(), []).append(m.group(1))
    return by_reason


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = os.path.join(sys.argv[1], "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(path):
        sys.exit(f"skip_summary: no {path} (run ctest first)")
    with open(path, encoding="utf-8", errors="replace") as f:
        by_reason = summarise(f.read())
    total = sum(len(v) for v in by_reason.values())
    print(f"skipped: {total} test(s)" + (", by reason:" if total else ""))
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(names[:3]) + (f", ... ({len(names) - 3} more)" if len(names) > 3 else "")
        print(f"  {len(names):4d}  {reason}\n        {shown}")


if __name__ == "__main__":
    main()
