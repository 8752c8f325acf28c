#!/usr/bin/env python3
"""Compares the output folder of a single run with the one a sharded run's merge wrote.

    compare_outputs.py SINGLE_DIR MERGED_DIR [--ignore GLOB ...] [--relative GLOB ...]
                       [--rtol 1e-12] [--no-default-ignores]

Both folders are walked recursively and must hold the same files (by relative path),
leaving out the files an --ignore glob or a default one matches (the run's own records:
*sidecar*.json, *settings*.json, shard*.json, merge*.json, *.log). A glob matches a file's
relative path or its name. Then, file by file:
  * .npy: the same dtype (byte order included) and shape, and byte-identical elements;
  * a file a --relative glob matches: a CSV with the same header and number of rows whose
    cells are identical text, or numbers within rtol of each other
    (|a - b| <= rtol * max(|a|, |b|); NaN equals NaN), or a JSON file of the same structure
    whose numbers are within rtol (null equals null). In a table (a CSV, or an attnlab
    table's JSON with "columns" and "rows"), a "<name>_std" cell is compared on the scale
    of its row's "<name>_mean" too, and a mean on the scale of its std: a std is accurate
    to a fraction of its mean (the std of a constant is rounding noise, 1e-22 beside a
    mean of 3e-6), a mean of terms that cancel to a fraction of their spread (a mean of
    0/1 drops that is 0 comes out as -3e-18 or 1.4e-17). With --csv-digits N (the digits a CSV prints), CSV cells pass
    within max(rtol, 10^(1-N)): two values within rtol can print one unit apart in the
    last digit when they straddle a rounding boundary;
  * a PDF: byte-identical once its /CreationDate is left out (cairo writes the time);
  * every other file: byte-identical.
Prints one line per difference and exits 1 if there is any, else prints "N files compared"
and exits 0 (2 for a usage error). Needs numpy (Debian: python3-numpy, /usr/bin/python3).
"""
import argparse
import csv
import fnmatch
import math
import os
import re
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the interpreter
    sys.exit(f"compare_outputs.py: numpy is not installed for {sys.executable} "
             "(apt-get install python3-numpy, and run it with /usr/bin/python3)")

DEFAULT_IGNORES = ["*sidecar*.json", "*settings*.json", "shard*.json", "merge*.json", "*.log"]

NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)",
                    re.IGNORECASE)


def matches(rel, globs):
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(name, g) for g in globs)


def list_files(root, ignores):
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if not matches(rel, ignores):
                found.add(rel)
    return found


def first_byte_difference(path_a, path_b):
    """None when the files are byte-identical, else a description of the first difference."""
    size_a, size_b = os.path.getsize(path_a), os.path.getsize(path_b)
    offset, line = 0, 1
    with open(path_a, "rb") as fa, open(path_b, "rb") as fb:
        while True:
            a, b = fa.read(1 << 20), fb.read(1 << 20)
            if a == b:
                if not a:
                    return None
                offset += len(a)
                line += a.count(b"\n")
                continue
            n = min(len(a), len(b))
            i = next((k for k in range(n) if a[k] != b[k]), n)
            line += a[:i].count(b"\n")
            return (f"bytes differ from offset {offset + i} (line {line}); "
                    f"sizes {size_a} and {size_b}")


CREATION_DATE = re.compile(rb"/CreationDate \([^)]*\)")


def compare_pdf(path_a, path_b):
    """None when the PDFs are byte-identical but for their creation dates."""
    with open(path_a, "rb") as fa, open(path_b, "rb") as fb:
        a, b = CREATION_DATE.sub(b"", fa.read()), CREATION_DATE.sub(b"", fb.read())
    if a == b:
        return None
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"differ beyond the creation date from byte {i} (without the dates)"


def compare_npy(path_a, path_b):
    try:
        a = np.load(path_a, mmap_mode="r", allow_pickle=False)
        b = np.load(path_b, mmap_mode="r", allow_pickle=False)
    except ValueError:  # object arrays (pickled): the files themselves must be equal
        return first_byte_difference(path_a, path_b)
    if a.dtype != b.dtype:
        return f"dtype {a.dtype.str} vs {b.dtype.str}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.size == 0 or a.dtype.itemsize == 0:
        return None
    rows_a = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, -1)
    rows_b = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(b.size, -1)
    differ = np.flatnonzero((rows_a != rows_b).any(axis=1))
    if differ.size == 0:
        return None
    first = differ[0]
    index = np.unravel_index(first, a.shape) if a.ndim else ()
    flat_a, flat_b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    text = (f"{differ.size} of {a.size} elements differ; first at {tuple(int(i) for i in index)}: "
            f"{flat_a[first]!r} vs {flat_b[first]!r}")
    if a.dtype.kind in "fc":
        va = flat_a[differ].astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        vb = flat_b[differ].astype(va.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.abs(va - vb)
            rel = diff / np.maximum(np.abs(va), np.abs(vb))
        if np.isfinite(diff).any():
            text += (f"; max abs difference {np.nanmax(np.where(np.isfinite(diff), diff, np.nan)):.3g}"
                     f", max relative {np.nanmax(np.where(np.isfinite(rel), rel, np.nan)):.3g}")
    return text


def numbers_match(a, b, rtol, scale=0.0):
    """(equal, relative difference or None) for two numbers; `scale` widens the tolerance
    to rtol * scale (a std's mean)."""
    if math.isnan(a) and math.isnan(b):
        return True, None
    if a == b:
        return True, 0.0
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return False, math.inf
    size = max(abs(a), abs(b))
    rel = abs(a - b) / size
    return abs(a - b) <= rtol * max(size, scale), rel


def cell_matches(x, y, rtol, scale=0.0):
    """(equal, relative difference or None) for two CSV cells."""
    if x == y:
        return True, None
    if not (NUMBER.fullmatch(x.strip()) and NUMBER.fullmatch(y.strip())):
        return False, None
    return numbers_match(float(x), float(y), rtol, scale)


def std_scales(header):
    """For each column, the index of its partner whose size widens its tolerance: a "_std"'s
    "_mean" (a std is accurate to a fraction of its mean), a "_mean"'s "_std" (a mean of
    terms that cancel, 0 +- 1, is accurate to a fraction of their spread), or None."""
    def partner(c):
        for own, other in (("_std", "_mean"), ("_mean", "_std")):
            if c.endswith(own) and c[:-len(own)] + other in header:
                return header.index(c[:-len(own)] + other)
        return None
    return [partner(c) for c in header]


def as_number(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str) and NUMBER.fullmatch(v.strip()):
        return float(v)
    return None


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def compare_csv(path_a, path_b, rtol):
    try:
        rows_a, rows_b = read_csv(path_a), read_csv(path_b)
    except (UnicodeDecodeError, csv.Error) as e:
        return f"not a readable CSV ({e})"
    if not rows_a or not rows_b:
        return None if rows_a == rows_b else f"{len(rows_a)} vs {len(rows_b)} rows"
    header = rows_a[0]
    if header != rows_b[0]:
        return f"header {rows_a[0]} vs {rows_b[0]}"
    if len(rows_a) != len(rows_b):
        return f"{len(rows_a) - 1} vs {len(rows_b) - 1} rows"
    bad, worst = 0, None
    means = std_scales(header)
    for r, (row_a, row_b) in enumerate(zip(rows_a[1:], rows_b[1:]), start=1):
        if len(row_a) != len(row_b):
            return f"row {r}: {len(row_a)} vs {len(row_b)} cells"
        for c, (x, y) in enumerate(zip(row_a, row_b)):
            scale = 0.0
            if c < len(means) and means[c] is not None:
                ma, mb = as_number(row_a[means[c]]), as_number(row_b[means[c]])
                if ma is not None and mb is not None and math.isfinite(ma) and math.isfinite(mb):
                    scale = max(abs(ma), abs(mb))
            equal, rel = cell_matches(x, y, rtol, scale)
            if equal:
                continue
            bad += 1
            key = -1.0 if rel is None else rel
            if worst is None or key > worst[0]:
                column = header[c] if c < len(header) else f"#{c}"
                worst = (key, r, column, x, y, rel)
    if not bad:
        return None
    _, r, column, x, y, rel = worst
    how = "text differs" if rel is None else f"relative difference {rel:.3g}"
    return (f"{bad} cells differ beyond rtol {rtol:g}; worst row {r} column {column!r}: "
            f"{x!r} vs {y!r} ({how})")


def compare_json(path_a, path_b, rtol):
    import json
    try:
        with open(path_a, encoding="utf-8") as fa, open(path_b, encoding="utf-8") as fb:
            a, b = json.load(fa), json.load(fb)
    except (UnicodeDecodeError, ValueError) as e:
        return f"not readable JSON ({e})"
    problems = []

    def walk(x, y, where, scale=0.0):
        if len(problems) >= 1:
            return
        nx, ny = as_number(x) if not isinstance(x, str) else None, \
            as_number(y) if not isinstance(y, str) else None
        if nx is not None and ny is not None:
            equal, rel = numbers_match(nx, ny, rtol, scale)
            if not equal:
                problems.append(f"{where}: {x!r} vs {y!r} (relative difference {rel:.3g})")
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                problems.append(f"{where}: keys {sorted(x)} vs {sorted(y)}")
                return
            if isinstance(x.get("columns"), list) and isinstance(x.get("rows"), list):
                walk_table(x, y, where)
                return
            for k in x:
                walk(x[k], y[k], f"{where}/{k}")
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                problems.append(f"{where}: {len(x)} vs {len(y)} elements")
                return
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{where}[{i}]")
        elif x != y:
            problems.append(f"{where}: {x!r} vs {y!r}")

    def walk_table(x, y, where):
        for k in x:
            if k != "rows":
                walk(x[k], y[k], f"{where}/{k}")
        if len(x["rows"]) != len(y["rows"]):
            problems.append(f"{where}: {len(x['rows'])} vs {len(y['rows'])} rows")
            return
        means = std_scales(x["columns"])
        for r, (ra, rb) in enumerate(zip(x["rows"], y["rows"])):
            if not isinstance(ra, list) or not isinstance(rb, list) or len(ra) != len(rb):
                walk(ra, rb, f"{where}/rows[{r}]")
                continue
            for c, (u, v) in enumerate(zip(ra, rb)):
                scale = 0.0
                if c < len(means) and means[c] is not None:
                    ma, mb = as_number(ra[means[c]]), as_number(rb[means[c]])
                    if ma is not None and mb is not None and math.isfinite(ma) and \
                            math.isfinite(mb):
                        scale = max(abs(ma), abs(mb))
                walk(u, v, f"{where}/rows[{r}][{x['columns'][c] if c < len(x['columns']) else c}]",
                     scale)

    walk(a, b, "")
    return problems[0] if problems else None


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("single_dir")
    parser.add_argument("merged_dir")
    parser.add_argument("--ignore", action="append", default=[], metavar="GLOB",
                        help="leave out the files it matches (besides the default ones)")
    parser.add_argument("--relative", action="append", default=[], metavar="GLOB",
                        help="CSV and JSON files compared number by number within --rtol")
    parser.add_argument("--rtol", type=float, default=1e-12)
    parser.add_argument("--csv-digits", type=int, default=0,
                        help="the significant digits a CSV prints (attnlab: 9)")
    parser.add_argument("--no-default-ignores", action="store_true",
                        help="ignore only the --ignore globs, not " + " ".join(DEFAULT_IGNORES))
    args = parser.parse_args(argv)
    for d in (args.single_dir, args.merged_dir):
        if not os.path.isdir(d):
            parser.error(f"not a folder: {d}")
    ignores = args.ignore + ([] if args.no_default_ignores else DEFAULT_IGNORES)

    files_a = list_files(args.single_dir, ignores)
    files_b = list_files(args.merged_dir, ignores)
    differences = 0
    for rel in sorted(files_a - files_b):
        print(f"missing in {args.merged_dir}: {rel}")
        differences += 1
    for rel in sorted(files_b - files_a):
        print(f"extra in {args.merged_dir}: {rel}")
        differences += 1
    common = sorted(files_a & files_b)
    for rel in common:
        path_a = os.path.join(args.single_dir, rel)
        path_b = os.path.join(args.merged_dir, rel)
        if rel.endswith(".npy"):
            problem = compare_npy(path_a, path_b)
        elif matches(rel, args.relative) and rel.endswith(".json"):
            problem = compare_json(path_a, path_b, args.rtol)
        elif matches(rel, args.relative):
            csv_rtol = max(args.rtol, 10.0 ** (1 - args.csv_digits)) if args.csv_digits else args.rtol
            problem = compare_csv(path_a, path_b, csv_rtol)
        elif rel.endswith(".pdf"):
            problem = compare_pdf(path_a, path_b)
        else:
            problem = first_byte_difference(path_a, path_b)
        if problem:
            print(f"{rel}: {problem}")
            differences += 1
    if differences:
        print(f"{differences} differences ({len(common)} files compared)")
        return 1
    print(f"{len(common)} files compared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
