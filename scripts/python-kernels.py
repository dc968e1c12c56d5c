#!/usr/bin/env python3
"""Times @sketchlog.kernel beside NumPy on element-wise expressions, in one run.

For each expression, at 1M and 16M float32 elements, on 1 and 2 OpenMP threads: the
kernel's median time and NumPy's (NumPy's ufuncs run on one thread), interleaved over
several rounds; the kernel's compile time (trace, simplify, C compile); and the largest
relative error of each against NumPy in float64. Writes CSV (default
results/python-kernels.csv) and its table into the book (docs/src/python.md). Run with the package installed (scripts/test installs it into
target/python-venv).
"""

import argparse
import csv
import os
import platform
import statistics
import tempfile
import time

import numpy as np

import sketchlog as sl

EXPRESSIONS = {
    "sinh-cosh": lambda x: np.sinh(x) * np.cosh(x) + np.cosh(x) * np.sinh(x),
    "pythagoras": lambda x: np.sin(x) ** 2 + np.cos(x) ** 2,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "tanh-gelu": lambda x: 0.5 * x * (1 + np.tanh(0.7978846 * (x + 0.044715 * x ** 3))),
    "polynomial": lambda x: 3 * x ** 3 - 2 * x * x + x - 7,
    "constant": lambda x: (x + 1) * (x + 1) - (x + 1) * (x + 1) + 2,
}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def median_ms(f, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def max_rel_error(got, exact):
    return float(np.max(np.abs(got.astype(np.float64) - exact) / np.maximum(1.0, np.abs(exact))))


def write_atomically(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as out:
        out.write(text)
    os.replace(tmp, path)


def book_table(rows):
    """The rows as the book's Markdown table, with their machine."""
    lines = [f"On {rows[0]['machine']}:", "",
             "| expression | elements | threads | kernel ms | NumPy ms | NumPy / kernel | compile s | kernel error | NumPy error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['expression']} | {r['elements']:,} | {r['threads']} | {r['kernel_ms']} | "
                     f"{r['numpy_ms']} | {r['speedup']}x | {r['compile_s']} | {r['kernel_error']} | "
                     f"{r['numpy_error']} |")
    return "\n".join(lines)


def fill_book(path, rows):
    text = open(path).read()
    begin, end = "<!-- python-kernels -->\n", "<!-- /python-kernels -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    write_atomically(path, head + begin + book_table(rows) + "\n" + end + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/python-kernels.csv")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="1000000,16000000")
    ap.add_argument("--book", default="docs/src/python.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    rng = np.random.default_rng(7)
    rows = []
    for name, f in EXPRESSIONS.items():
        t = time.perf_counter()
        k = sl.kernel("float32(float32)")(f)
        k.kernel_for(sizes[0])
        compile_s = time.perf_counter() - t
        for n in sizes:
            x = rng.uniform(-2, 2, n).astype(np.float32)
            exact = f(x.astype(np.float64))
            k.kernel_for(n)
            numpy_err = max_rel_error(f(x), exact)
            for threads in (1, 2):
                k.threads = threads
                ours, theirs = [], []
                for _ in range(args.rounds):
                    ours.append(median_ms(lambda: k(x), 3))
                    theirs.append(median_ms(lambda: f(x), 3))
                row = {
                    "expression": name,
                    "elements": n,
                    "threads": threads,
                    "kernel_ms": round(statistics.median(ours), 3),
                    "numpy_ms": round(statistics.median(theirs), 3),
                    "speedup": round(statistics.median(theirs) / statistics.median(ours), 2),
                    "compile_s": round(compile_s, 3),
                    "kernel_error": f"{max_rel_error(k(x), exact):.2e}",
                    "numpy_error": f"{numpy_err:.2e}",
                    "simplified": str(k.simplified).split("=> ", 1)[-1],
                    "machine": machine,
                }
                rows.append(row)
                print(row, flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(args.out) or ".", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, args.out)
    if args.book:
        fill_book(args.book, rows)


if __name__ == "__main__":
    main()
