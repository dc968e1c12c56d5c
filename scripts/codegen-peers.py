#!/usr/bin/env python3
"""The generated C beside its peers in one run: TVM 0.27's code for the same schedules,
numpy (OpenBLAS) and the gemm crate reference, interleaved rounds, medians.

Usage: scripts/codegen-peers.py [SKETCHLOG_BINARY] [--rounds N] [--runs N]
(SKETCHLOG_BINARY defaults to the release build's, target/release/sketchlog)
Needs numpy and apache-tvm 0.27 (pip install apache-tvm==0.27.0.post1 numpy); the project
itself does not.

Each round runs, on 1 and then 2 threads: scripts/tvm-peer.py (TVM's cache-blocks and
parallel schedules at 1024^3), scripts/numpy-peer.py (a @ b at 1024^3, a @ v at 4096^2),
and `sketchlog bench-c` on the `cache-blocks`, `parallel` and `mv-kernel` guides (one round
of RUNS runs each, beside the gemm crate). Prints GFLOP/s medians over the rounds and each
system's ratio to OpenBLAS as a Markdown table: the issue's TVM target compares ratios to
OpenBLAS measured in the same run.
"""
import os
import re
import statistics
import subprocess
import sys

SYSTEMS = [
    "numpy a @ b",
    "TVM cache-blocks",
    "TVM parallel",
    "gemm crate",
    "sketchlog cache-blocks",
    "sketchlog parallel",
    "numpy a @ v",
    "sketchlog mv-kernel",
]


def run(cmd, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), TVM_NUM_THREADS=str(threads))
    return subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout


def gflops(line):
    return float(re.search(r"([0-9.]+) GFLOP/s", line).group(1))


def peers(threads, runs):
    """GFLOP/s of TVM's and numpy's products."""
    got = {}
    for script in ["tvm-peer.py", "numpy-peer.py"]:
        for line in run([sys.executable, f"scripts/{script}", str(runs)], threads).splitlines():
            name = re.match(r"(TVM \S+|numpy a @ [bv])", line)
            if name:
                got[name.group(1)] = gflops(line)
    return got


def sketchlog(binary, threads, runs):
    """GFLOP/s of the generated C and of the gemm crate beside it."""
    got = {}
    for guide, sizes in [("cache-blocks", "1024,1024,1024"), ("parallel", "1024,1024,1024"),
                         ("mv-kernel", "4096,4096")]:
        out = run([binary, "bench-c", f"programs/{guide}.guide", "--sizes", sizes, "--threads",
                   str(threads), "--rounds", "1", "--runs", str(runs)], threads)
        lines = out.splitlines()
        timed = next(l for l in lines if "thread(s): median" in l)
        got[f"sketchlog {guide}"] = gflops(timed)
        if guide == "parallel":
            got["gemm crate"] = gflops(next(l for l in lines if "reference GEMM" in l))
    return got


def release_binary():
    """The release build's binary (`cargo build --release`)."""
    return "target/release/sketchlog"


def option(args, name, default):
    if name in args:
        i = args.index(name)
        value = int(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def main():
    args = sys.argv[1:]
    rounds, runs = option(args, "--rounds", 3), option(args, "--runs", 15)
    binary = args[0] if args else release_binary()
    figures = {(s, t): [] for s in SYSTEMS for t in (1, 2)}
    for _ in range(rounds):
        for threads in (1, 2):
            for name, value in {**peers(threads, runs), **sketchlog(binary, threads, runs)}.items():
                figures[(name, threads)].append(value)
    median = {k: statistics.median(v) for k, v in figures.items()}
    print(f"{rounds} rounds of {runs} runs, medians of the rounds (GFLOP/s)")
    print("| system | 1 thread | 2 threads | / OpenBLAS, 1 thread | / OpenBLAS, 2 threads |")
    print("|---|---|---|---|---|")
    for s in SYSTEMS:
        blas = "numpy a @ v" if "mv" in s or "@ v" in s else "numpy a @ b"
        ratios = [median[(s, t)] / median[(blas, t)] for t in (1, 2)]
        print(f"| {s} | {median[(s, 1)]:.1f} | {median[(s, 2)]:.1f} "
              f"| {ratios[0]:.2f}x | {ratios[1]:.2f}x |")


if __name__ == "__main__":
    main()
