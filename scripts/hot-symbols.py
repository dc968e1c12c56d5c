#!/usr/bin/env python3
"""Writes scripts/hot-symbols.txt: the functions sketchlog runs, in the order the linker places them.

Usage: scripts/hot-symbols.py [SKETCHLOG_BINARY]   (default the release build's)

Runs a few representative commands under `valgrind --tool=callgrind --demangle=no` and lists
the (mangled) functions of the binary each executes, those of the first command first. build.rs
hands the list to the linker (lld's `--symbol-ordering-file`), which places these functions
together at the start of the code: a short run then touches a few contiguous megabytes of code
instead of pages scattered over the whole binary (the kernel maps a file's cached pages around
each one touched, so scattered code costs resident memory far beyond what runs).

Names that no longer exist (a function renamed, inlined, or a crate updated) are skipped by
the linker, so a stale list costs only some of the gain; rerun this after large changes and
after any change of a dependency's version or features (symbol names carry a hash of the
crate's dependencies: one feature changed renamed every symbol, and the list matched none).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "scripts", "hot-symbols.txt")

# The Table 2 rows first (the small searches whose memory is mostly code), then a guided
# search with its sketches and the C code generator.
COMMANDS = [
    ["table2-row", "reduction"],
    ["table2-row", "fission"],
    ["table2-row", "binomial"],
    ["guide", "programs/mv-kernel.guide"],
    ["codegen", "programs/mv.rise:mv"],
]


def text_symbols(binary):
    """The binary's function symbols."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    return {p[2] for p in (l.split() for l in out.splitlines()) if len(p) == 3 and p[1] in "tTwW"}


def executed(binary, args):
    """The functions a command executes, as callgrind names them (mangled)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary]
            + args,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(out) as f:
            names = re.findall(r"^c?fn=\(\d+\) (\S+)", f.read(), re.M)
    seen = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def release_binary():
    """The release build's binary: under the host triple (.cargo/config.toml names it)."""
    host = subprocess.run(
        ["rustc", "--print", "host-tuple"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return os.path.join(ROOT, "target", host, "release", "sketchlog")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else release_binary()
    symbols = text_symbols(binary)
    order, listed = [], set()
    for args in COMMANDS:
        new = [n for n in executed(binary, args) if n in symbols and n not in listed]
        print(f"{' '.join(args)}: {len(new)} more functions", file=sys.stderr)
        order += new
        listed.update(new)
    with open(OUT + ".tmp", "w") as f:
        f.write("".join(n + "\n" for n in order))
    os.replace(OUT + ".tmp", OUT)
    print(f"{len(order)} functions -> {os.path.relpath(OUT, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
