#!/usr/bin/env python3
"""What full debug info costs a compile unit: its compiler CPU time and object size with
the build's own flags (-g1 by default, cmake/BuildSpeed.cmake) and with plain -g.

    python3 scripts/debug_info_cost.py [BUILD_DIR] SOURCE...

SOURCE is a path as compile_commands.json names it, relative to the checkout (e.g.
tests/models/vit_test.cpp). Each unit is compiled twice into a temporary object, not
through ccache; CPU time (user + system) is reported, so a busy machine stretches the wall
time but not the comparison much.
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile


def compile_cpu(command, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main():
    args = sys.argv[1:]
    build = args.pop(0) if args and os.path.isdir(args[0]) else "build"
    if not args:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    units = {os.path.relpath(e["file"], root): e
             for e in json.load(open(os.path.join(build, "compile_commands.json")))}
    out = os.path.join(tempfile.mkdtemp(), "unit.o")
    for source in args:
        entry = units.get(source)
        if entry is None:
            sys.exit(f"debug_info_cost: {source} is not in {build}/compile_commands.json")
        command = re.sub(r" -o \S+", f" -o {out}", re.sub(r"^\S*ccache\s+", "", entry["command"]))
        for label, cmd in (("-g1", command), ("-g", command.replace(" -g1", ""))):
            seconds = compile_cpu(cmd, entry["directory"])
            print(f"{source}  {label:4} {seconds:6.1f} s CPU  {os.path.getsize(out) / 1e6:5.1f} MB")


if __name__ == "__main__":
    main()
