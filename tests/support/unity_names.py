#!/usr/bin/env python3
"""Fails when two source files of one unity target define the same file-scope name.

    python3 tests/support/unity_names.py [SOURCE_DIR]

The LibTorch libraries and test binaries compile in unity batches (cmake/BuildSpeed.cmake):
several files share one translation unit, and so one anonymous namespace. Two helpers of
the same name and signature are a compile error there, but two of the same name and
different parameters are overloads, and a call could silently reach the other file's
helper. So every name defined at file scope (column 0: a function, a constant, a type)
must belong to one file of its group; a group is a target's folder (a folder may hold
more than one target: stricter, never looser). Namespace names, `using` declarations,
declarations of functions defined elsewhere (no body on the line: `f(...);`) and the
test macros are not definitions of helpers.
"""
import collections
import os
import re
import sys

# group -> folders whose .cpp files form it, or single .cpp files (relative to the source
# tree). core/io/ is mostly attnlab_io (not batched); two of its files are attnlab_core's.
GROUPS = {
    "core": ["core/attention", "core/analysis", "core/image", "core/data", "core/nn",
             "core/runtime", "core/io/torch_bridge.cpp", "core/io/image_io.cpp"],
    "models": ["models"],
    "app/cli": ["app/cli", "app"],
    "app/gui": ["app/gui"],
    "app/session": ["app/session", "app/session/analyses"],
}
GROUPS.update({f"tests/{d}": [f"tests/{d}"] for d in
               ["attention", "models", "analysis", "training", "session", "cli", "cuda", "core",
                "gui"]})
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
            if re.search(r"\)\s*(const\s*)?;\s*$", line):
                continue  # a declaration of a function defined elsewhere
            m = TYPE.match(line) or DECL.match(line)
            if m:
                found.add(m.group(1))
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..")
    clashes = 0
    for group, folders in GROUPS.items():
        owners = collections.defaultdict(list)
        for entry in folders:
            if entry.endswith(".cpp"):
                files = [entry]
            else:
                files = [f"{entry}/{n}" for n in sorted(os.listdir(os.path.join(root, entry)))
                         if n.endswith(".cpp")]
            for f in files:
                for n in names_in(os.path.join(root, f)):
                    owners[n].append(f)
        for n, files in sorted(owners.items()):
            if len(files) > 1:
                clashes += 1
                print(f"{group}: '{n}' is defined in {', '.join(files)}: give each file's helper "
                      "a name of its own (unity batches share one anonymous namespace)")
    print(f"unity_names: {clashes} clash(es)")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
