#!/usr/bin/env python3
"""Writes scripts/hot-code.order: the functions the searches of Tables 2 and 4 run, hottest
first, for the linker to lay out together (build.rs passes the file to LLD as
`--symbol-ordering-file`).

Usage: scripts/hot-code.py [SKETCHLOG_BINARY]   (default target/release/sketchlog)

Runs each of Table 4's goals and Table 2's efficient-encoding rows as `reproduce` runs them
(`sketchlog job`, one process each) under `valgrind --tool=callgrind`, adds up the
instructions each function of the binary ran, and lists the functions by that count, by their
symbol names (mangled, as the linker knows them). Symbol names carry a hash of the crate's
build settings (its dependencies' versions and features, the compiler's version), and a change
to the code the searches run adds, renames or inlines some of them (a closure's name is its
number in its function): rerun this after changing either, and rebuild. Names the build no
longer has are skipped by the linker, so a stale file costs only the layout, never the build.

Why: the kernel maps a program's code 64 KB at a time around each page it touches, and the
code a search runs is scattered over the binary's 13 MB; laid out together, the pages mapped
for it are fewer (docs/src/matmul.md, "Where a goal's time and memory go").
"""
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "scripts" / "hot-code.order"
TABLE4 = ["baseline", "blocking", "vectorization", "loop-perm", "array-packing",
          "cache-blocks", "parallel"]
TABLE2 = ["reduction", "fission", "binomial"]
CAPS = {"memory_mb": 4000, "time": {"secs": 600, "nanos": 0}}


def jobs():
    for goal in TABLE4:
        yield {"work": {"Guided": {"goal": goal}}, "caps": CAPS}
    for goal in TABLE2:
        yield {"work": {"Table2": {"goal": goal, "substitution": "extraction",
                                   "binding": "debruijn"}}, "caps": CAPS}


def profile(binary, job, out):
    """The job's callgrind profile, in `out`."""
    subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                    f"--callgrind-out-file={out}", binary, "job", json.dumps(job)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def self_costs(path, binary_name, costs):
    """Adds each function's own instructions in `path` (a callgrind profile) to `costs`,
    for the functions of the object named `binary_name`."""
    objects, functions = {}, {}
    obj = fun = None
    after_call = False
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            table = objects if m.group(2) == "ob" else functions
            if m.group(4):
                table[m.group(3)] = m.group(4)
            if not m.group(1):
                if m.group(2) == "ob":
                    obj = m.group(3)
                else:
                    fun = m.group(3)
            continue
        if line.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost
            continue
        if line[:1] in "0123456789+-*":
            fields = line.split()
            if after_call:
                after_call = False
            elif len(fields) >= 2 and os.path.basename(objects.get(obj, "")) == binary_name:
                # Callgrind tells apart functions of the same name with a suffix `'N`.
                costs[re.sub(r"'\d+$", "", functions[fun])] += int(fields[1])


def main():
    binary = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target/release/sketchlog")
    binary = binary.resolve()
    symbols = set(subprocess.run(["nm", "--defined-only", "--format=just-symbols", binary],
                                 check=True, capture_output=True, text=True).stdout.split())
    costs = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(profile, binary, job, f"{tmp}/{i}.out")
                for i, job in enumerate(jobs())]
        for run in runs:
            self_costs(run.result(), binary.name, costs)
    hot = sorted((name for name in costs if name in symbols), key=lambda n: (-costs[n], n))
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text("".join(name + "\n" for name in hot))
    tmp.replace(OUT)
    print(f"{OUT.relative_to(ROOT)}: {len(hot)} functions", file=sys.stderr)


if __name__ == "__main__":
    main()
