#!/usr/bin/python3
"""Generates the Unicode, HTML-entity and code-page tables of core/text/ (the CLIP tokenizer).

Everything comes from Python's standard library (unicodedata, str.lower, html, codecs) of
Python 3.11 with unicodedata 14.0.0: the Unicode version CLIP's reference ran with (str.lower,
NFC, ftfy's tables). The one exception is the pre-tokenizer's letter/number classes: the
reference's `regex` module (2022.10.31) carries Unicode 15.0 tables, so the code points that
Unicode 15.0 assigned as L*/N* (all unassigned in 14.0) are added from the fact list below.

Usage: scripts/make_unicode_tables.py           write the files under core/text/
       scripts/make_unicode_tables.py --check   regenerate into a temporary folder and diff
"""
import codecs
import difflib
import html
import html.entities
import os
import sys
import tempfile
import unicodedata

REQUIRED_UNICODE = "14.0.0"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "core", "text")
MAX_CP = 0x110000

# Unicode 15.0 code points of category L* or N* (every one unassigned in 14.0), as the
# regex module's Unicode 15 tables classify them: (first, last, 'L' or 'N'). Derived from
# UnicodeData.txt 15.0.0 (Python 3.12's unicodedata gives the same list).
UNICODE15_LN = [
    (0x1123F, 0x11240, "L"), (0x11F02, 0x11F02, "L"), (0x11F04, 0x11F10, "L"),
    (0x11F12, 0x11F33, "L"), (0x11F50, 0x11F59, "N"), (0x1342F, 0x1342F, "L"),
    (0x13441, 0x13446, "L"), (0x1B132, 0x1B132, "L"), (0x1B155, 0x1B155, "L"),
    (0x1D2C0, 0x1D2D3, "N"), (0x1DF25, 0x1DF2A, "L"), (0x1E030, 0x1E06D, "L"),
    (0x1E4D0, 0x1E4EB, "L"), (0x1E4F0, 0x1E4F9, "N"), (0x2B739, 0x2B739, "L"),
    (0x31350, 0x323AF, "L"),
]
# PropList.txt's White_Space (stable since Unicode 6.3), used to check str.isspace below.
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
               (0x3000, 0x3000)]
# ftfy's code pages, in the order it tries them (ftfy 6.3.1 chardata.CHARMAP_ENCODINGS), with
# the Python codec each is built from; "sloppy" ones map undefined bytes to the Latin-1 code
# point of the same number, and byte 0x1A to U+FFFD.
CODE_PAGES = [("latin-1", "latin-1", False), ("sloppy-windows-1252", "cp1252", True),
              ("sloppy-windows-1251", "cp1251", True), ("sloppy-windows-1250", "cp1250", True),
              ("sloppy-windows-1253", "cp1253", True), ("sloppy-windows-1254", "cp1254", True),
              ("sloppy-windows-1257", "cp1257", True), ("iso-8859-2", "iso8859_2", False),
              ("macroman", "mac_roman", False), ("cp437", "cp437", False)]
# The Latin ligatures and digraphs ftfy spells out (ftfy 6.3.1 chardata.LIGATURES): each maps
# to its one-level compatibility decomposition (so U+FB05 gives U+017F 't', not NFKC's "st").
LIGATURES = [0x132, 0x133, 0x149] + list(range(0x1C4, 0x1CD)) + list(range(0xFB00, 0xFB07))


def ranges(cps):
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def emit_rows(items, per_line):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append("    " + " ".join(items[i:i + per_line]))
    return "\n".join(lines)


def c_string(s):
    out = '"'
    for b in s.encode("utf-8"):
        if 0x20 <= b < 0x7F and chr(b) not in '"\\?':
            out += chr(b)
        else:
            out += "\\%03o" % b
    return out + '"'


def table(ctype, name, rows, per_line):
    return (f"extern const {ctype} {name}[] = {{\n{emit_rows(rows, per_line)}\n}};\n"
            f"extern const size_t {name}Count = sizeof({name}) / sizeof({name}[0]);\n")


def range_table(name, cps, per_line=6):
    rows = ["{0x%X, 0x%X}," % (lo, hi) for lo, hi in ranges(cps)]
    return table("Range", name, rows, per_line)


def mapping_runs(mapping):
    """Single-code-point mappings as runs (lo, hi, step, delta): A-Z is one run, the
    alternating upper/lower pairs of Latin Extended-A are runs of step 2."""
    runs = []
    for cp in sorted(mapping):
        delta = mapping[cp] - cp
        if runs:
            lo, hi, step, d = runs[-1]
            if d == delta and ((lo == hi and cp - hi in (1, 2)) or cp - hi == step):
                runs[-1] = [lo, cp, cp - lo if lo == hi else step, d]
                continue
        runs.append([cp, cp, 1, delta])
    return runs


def run_table(name, mapping):
    rows = ["{0x%X, 0x%X, %d, %d}," % tuple(r) for r in mapping_runs(mapping)]
    return table("CaseRun", name, rows, 4)


def unicode_data():
    letters, numbers, decimals, cased, ignorable = set(), set(), set(), set(), set()
    lower, multi_lower, decomp, ccc = {}, {}, [], {}
    for cp in range(MAX_CP):
        c = chr(cp)
        cat = unicodedata.category(c)
        if cat[0] == "L":
            letters.add(cp)
        elif cat[0] == "N":
            numbers.add(cp)
        if unicodedata.decimal(c, None) is not None:
            decimals.add(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        low = c.lower()
        if low != c:
            if len(low) == 1:
                lower[cp] = ord(low)
            else:
                multi_lower[cp] = low
        # Python's Final_Sigma rule reads Cased and Case_Ignorable, which the standard
        # library does not expose: ask lower() itself. X+Σ is final iff X is cased and not
        # case-ignorable; A+X+Σ is final iff X is case-ignorable or (cased, not ignorable).
        alone = (c + "\u03a3").lower()[-1] == "\u03c2"
        after_a = ("A" + c + "\u03a3").lower()[-1] == "\u03c2"
        if after_a and not alone:
            ignorable.add(cp)
        elif alone:
            cased.add(cp)
        k = unicodedata.combining(c)
        if k:
            ccc[cp] = k
        d = unicodedata.decomposition(c)
        if d and not d.startswith("<"):
            parts = [int(x, 16) for x in d.split()]
            # A primary composite is what NFC recomposes to: exclusions (singletons,
            # non-starters, the script and post-version exclusions) normalise away.
            composes = len(parts) == 2 and unicodedata.normalize("NFC", c) == c
            decomp.append((cp, parts[0], parts[1] if len(parts) == 2 else 0, composes))
    for lo, hi, kind in UNICODE15_LN:
        for cp in range(lo, hi + 1):
            assert unicodedata.category(chr(cp)) == "Cn"
            (letters if kind == "L" else numbers).add(cp)
    assert set(multi_lower) == {0x130} and multi_lower[0x130] == "i\u0307", multi_lower
    spaces = {cp for cp in range(MAX_CP) if chr(cp).isspace()}
    white = {cp for lo, hi in WHITE_SPACE for cp in range(lo, hi + 1)}
    assert spaces - white == set(range(0x1C, 0x20)) and white <= spaces
    width, wide_expansions = {0x3000: 0x20}, []
    for cp in range(0xFF01, 0xFFF0):
        alt = unicodedata.normalize("NFKC", chr(cp))
        if len(alt) == 1 and alt != chr(cp):
            width[cp] = ord(alt)
        elif alt != chr(cp):
            wide_expansions.append((cp, alt))  # U+FFE3 -> space + combining macron
    ligatures = []
    for cp in LIGATURES:
        parts = unicodedata.decomposition(chr(cp)).split()
        assert parts[0] == "<compat>"
        ligatures.append((cp, "".join(chr(int(x, 16)) for x in parts[1:])))
    assert dict(ligatures)[0xFB05] == "\u017ft"

    out = ["// Generated by scripts/make_unicode_tables.py from Python %s's unicodedata %s" %
           (sys.version.split()[0], unicodedata.unidata_version),
           "// (plus Unicode 15.0's new letters/numbers for the pre-tokenizer). Do not edit.",
           '#include "core/text/unicode_tables.h"', "",
           "namespace attnlab::text::tables {", ""]
    out.append("// General category L* (letters), for the pre-tokenizer's \\p{L}.")
    out.append(range_table("kLetters", letters))
    out.append("// General category N* (numbers), for \\p{N}.")
    out.append(range_table("kNumbers", numbers))
    out.append("// Nd (decimal digits): Python re's \\d, in ftfy's terminal-escape pattern.")
    out.append(range_table("kDecimals", decimals))
    out.append("// White_Space: the regex module's \\s (str.isspace adds U+001C-U+001F).")
    out.append(range_table("kWhiteSpace", white))
    out.append("// str.lower() of every code point that maps to one other code point.")
    out.append(run_table("kLowerRuns", lower))
    out.append("// Cased, not case-ignorable; and case-ignorable: Python's Final_Sigma context.")
    out.append(range_table("kCased", cased))
    out.append(range_table("kCaseIgnorable", ignorable))
    out.append("// Canonical combining classes (non-zero), as runs of equal class.")
    runs = []
    for cp in sorted(ccc):
        if runs and runs[-1][1] == cp - 1 and runs[-1][2] == ccc[cp]:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp, ccc[cp]])
    out.append(table("CombiningClass", "kCombiningClasses",
                     ["{0x%X, 0x%X, %d}," % tuple(r) for r in runs], 4))
    out.append("// Canonical decompositions (one level; second 0 for singletons), and whether the")
    out.append("// pair is a primary composite that NFC composes back.")
    out.append(table("Decomposition", "kDecompositions",
                     ["{0x%X, 0x%X, 0x%X, %d}," % (a, b, c, int(d)) for a, b, c, d in decomp],
                     3))
    out.append("// ftfy's width fix: NFKC of U+FF01-U+FFEF, and U+3000 -> space.")
    out.append(run_table("kWidthRuns", width))
    out.append(table("Expansion", "kWidthExpansions",
                     ["{0x%X, %s}," % (cp, c_string(s)) for cp, s in wide_expansions], 3))
    out.append("// ftfy's Latin ligatures, spelled out.")
    out.append(table("Expansion", "kLigatures",
                     ["{0x%X, %s}," % (cp, c_string(s)) for cp, s in ligatures], 3))
    out.append("}  // namespace attnlab::text::tables")
    return "\n".join(out) + "\n"


def entity_data():
    names = sorted(html.entities.html5)
    rows = ["{%s, %s}," % (c_string(n), c_string(html.entities.html5[n])) for n in names]
    # ftfy's extra entities: the ALL-CAPS form of a lower-case, semicolon-terminated name,
    # where Python's html.unescape leaves that form alone; its value is upper-cased.
    upper = []
    for name, value in html.entities.html5.items():
        if name.endswith(";") and name == name.lower():
            entity = "&" + name.upper()
            if html.unescape(entity) == entity:
                upper.append((name.upper(), value.upper()))
    upper.sort()
    out = ["// Generated by scripts/make_unicode_tables.py from Python %s's html.entities.html5."
           % sys.version.split()[0], "// Do not edit.",
           '#include "core/text/unicode_tables.h"', "", "namespace attnlab::text::tables {", "",
           "// html.entities.html5, sorted by name (names include their ';' where they have one).",
           table("Entity", "kHtml5Entities", rows, 2),
           "// ftfy's ALL-CAPS entities (&EACUTE; -> the upper-cased value), sorted by name.",
           table("Entity", "kUpperEntities",
                 ["{%s, %s}," % (c_string(n), c_string(v)) for n, v in upper], 2),
           "// html.unescape's replacements for invalid numeric references (html._invalid_charrefs)",
           "// and the code points it drops (html._invalid_codepoints).",
           table("CharRef", "kInvalidCharRefs",
                 ["{0x%X, %s}," % (n, c_string(v)) for n, v in sorted(html._invalid_charrefs.items())],
                 4),
           range_table("kInvalidCodepoints", html._invalid_codepoints),
           "}  // namespace attnlab::text::tables"]
    return "\n".join(out) + "\n"


def codepage_data():
    out = ["// Generated by scripts/make_unicode_tables.py from Python %s's codecs. Do not edit."
           % sys.version.split()[0], '#include "core/text/unicode_tables.h"', "",
           "namespace attnlab::text::tables {", "",
           "// ftfy's single-byte code pages in the order it tries them: the code points of bytes",
           "// 0x80-0xFF, then of byte 0x1A (U+FFFD in the sloppy ones). Bytes 0x00-0x7F other",
           "// than 0x1A are ASCII in all of them.",
           "extern const CodePage kCodePages[] = {"]
    for name, codec, sloppy in CODE_PAGES:
        chars = []
        for b in list(range(0x80, 0x100)) + [0x1A]:
            try:
                ch = bytes([b]).decode(codec)
            except UnicodeDecodeError:
                assert sloppy
                ch = chr(b)
            if sloppy and b == 0x1A:
                ch = "\ufffd"
            chars.append("0x%X," % ord(ch))
        for b in range(0x80):
            assert b == 0x1A or bytes([b]).decode(codec) == chr(b)
        out.append("    {%s,\n     {\n%s\n     },\n     %s}," % (
            c_string(name), emit_rows(chars[:128], 12), chars[128][:-1]))
    out.append("};")
    out.append("extern const size_t kCodePagesCount = sizeof(kCodePages) / sizeof(kCodePages[0]);")
    out.append("}  // namespace attnlab::text::tables")
    return "\n".join(out) + "\n"


FILES = {"unicode_data.cpp": unicode_data, "html_entity_data.cpp": entity_data,
         "codepage_data.cpp": codepage_data}


def main():
    if unicodedata.unidata_version != REQUIRED_UNICODE:
        sys.exit("make_unicode_tables.py needs unicodedata %s (the reference's; /usr/bin/python3 "
                 "3.11), this Python has %s" % (REQUIRED_UNICODE, unicodedata.unidata_version))
    check = "--check" in sys.argv[1:]
    target = tempfile.mkdtemp() if check else OUT_DIR
    differ = False
    for name, make in FILES.items():
        text = make()
        with open(os.path.join(target, name), "w", encoding="utf-8") as f:
            f.write(text)
        if check:
            with open(os.path.join(OUT_DIR, name), encoding="utf-8") as f:
                old = f.read()
            if old != text:
                differ = True
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), "core/text/" + name,
                    "regenerated/" + name, n=1))
    if check:
        print("tables differ" if differ else "tables up to date")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
