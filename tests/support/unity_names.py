#!/usr/bin/env python3
"""Fails when two test files of one folder define the same file-scope name.

    python3 tests/support/unity_names.py TESTS_DIR

The LibTorch test binaries compile in unity batches (cmake/BuildSpeed.cmake): several
test files share one translation unit, and so one anonymous namespace. Two helpers of
the same name and signature are a compile error there, but two of the same name and
different parameters are overloads, and a call could silently reach the other file's
helper. A folder's files are one binary (tests/core/ and tests/gui/ list theirs; a
folder is stricter, never looser), so every name defined at file scope (column 0: a
function, a constant, a type) must belong to one file of its folder. Namespace names,
`using` declarations and the test macros are not definitions of helpers.
"""
import collections
import os
import re
import sys

FOLDERS = ["attention", "models", "analysis", "training", "session", "cli", "cuda", "core",
           "gui"]
TYPE = re.compile(r"^(?:struct|class|enum(?:\s+class)?)\s+(\w+)\s*[:{]")
# [template<...>] [static|inline|constexpr|const ...] type-tokens name ( or = or { or [
DECL = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:(?:static|inline|constexpr|const|thread_local)\s+)*"
                  r"(?:[\w:]+(?:<[^;(){}]*>)?[\s*&]+)+(?:const\s+)?[*&]?\s*(\w+)\s*(?:\(|=|\{|\[)")
NOT_HELPERS = ("TEST", "INSTANTIATE", "namespace", "using", "return", "static_assert",
               "GTEST", "REGISTER", "TYPED_TEST")


def names_in(path):
    found = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line or line[0] in " \t#/}*\n" or line.startswith(NOT_HELPERS):
                continue
            m = TYPE.match(line) or DECL.match(line)
            if m:
                found.add(m.group(1))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    clashes = 0
    for folder in FOLDERS:
        d = os.path.join(root, folder)
        owners = collections.defaultdict(list)
        for name in sorted(os.listdir(d)):
            if name.endswith(".cpp"):
                for n in names_in(os.path.join(d, name)):
                    owners[n].append(name)
        for n, files in sorted(owners.items()):
            if len(files) > 1:
                clashes += 1
                print(f"tests/{folder}: '{n}' is defined in {', '.join(files)}: give each file's "
                      "helper a name of its own (unity batches share one anonymous namespace)")
    print(f"unity_names: {clashes} clash(es)")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
