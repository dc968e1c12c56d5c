#!/usr/bin/env python3
"""The Harris corner detector's peers, timed on sketchlog's input.

Usage: scripts/harris-peer.py INPUT H W --threads T --runs N [--check OUTPUT]
       scripts/harris-peer.py INPUT H W --threads T --serve

INPUT holds an RGB image as three float32 planes (3 x H x W, little-endian, row-major), as
`sketchlog reproduce harris` writes it. Prints one line per peer, `NAME MS MS ...`: the
milliseconds of each of N timed runs after one warm-up run, on T threads. With --serve, the
peers are set up once (Halide's pipeline compiled once) and each line `run N` on standard
input is a round: the same lines for N runs, then `done`; `reproduce harris` keeps one such
process for all the rounds of an image size and thread count.

- halide: Halide's apps/harris algorithm (grayscale, Sobel Ix and Iy divided by 12, their
  products summed over 3 x 3, det - 0.04 trace^2) with BoundaryConditions::repeat_edge on the
  input (sketchlog's clamped borders), and the app's CPU schedule: rows in strips of 32 over
  threads, vectorised along rows at the target's natural width, Ix and Iy line-buffered per
  strip. JIT-compiled for this CPU (Halide's host target), or for the target that
  HL_JIT_TARGET names (`x86-64-linux-avx-avx2-f16c-fma-sse41`: AVX2 code on any x86-64).
- opencv: grayscale (two cv2.addWeighted passes over the planes), then cv2.cornerHarris
  (block 3, aperture 3, k 0.04). Its Sobel filter is scaled differently and its border
  reflects (BORDER_REFLECT_101), so its output is not compared. OPENCV_CPU_DISABLE
  (`AVX512_SKX`) keeps it from its AVX-512 kernels.

With --check OUTPUT (float32, H x W), Halide's output is compared with it and the largest
relative error printed as `halide-max-rel-error E`.

Needs the Python packages halide (21) and opencv-python-headless; `scripts/peers.sh`
installs them into target/peers/venv. A missing package is reported as `NAME unavailable:
WHY` and the others still run.
"""
import argparse
import os
import sys
import time

import numpy as np


def timed(run, runs):
    run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def halide_harris(planes, threads):
    import halide as hl
    h, w = planes.shape[1:]
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    inp = hl.Buffer(planes)  # inp(x, y, c) = planes[c, y, x]
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    gray = hl.Func("gray")
    c = hl.f32
    gray[x, y] = c(0.299) * clamped[x, y, 0] + c(0.587) * clamped[x, y, 1] + c(0.114) * clamped[x, y, 2]
    ix, iy = hl.Func("Ix"), hl.Func("Iy")
    iy[x, y] = (gray[x - 1, y - 1] * c(-1 / 12) + gray[x - 1, y + 1] * c(1 / 12)
                + gray[x, y - 1] * c(-2 / 12) + gray[x, y + 1] * c(2 / 12)
                + gray[x + 1, y - 1] * c(-1 / 12) + gray[x + 1, y + 1] * c(1 / 12))
    ix[x, y] = (gray[x - 1, y - 1] * c(-1 / 12) + gray[x + 1, y - 1] * c(1 / 12)
                + gray[x - 1, y] * c(-2 / 12) + gray[x + 1, y] * c(2 / 12)
                + gray[x - 1, y + 1] * c(-1 / 12) + gray[x + 1, y + 1] * c(1 / 12))

    def sum3x3(f):
        return sum(f[x + dx, y + dy] for dy in (-1, 0, 1) for dx in (-1, 0, 1))

    ixx, iyy, ixy = hl.Func("Ixx"), hl.Func("Iyy"), hl.Func("Ixy")
    ixx[x, y] = ix[x, y] * ix[x, y]
    iyy[x, y] = iy[x, y] * iy[x, y]
    ixy[x, y] = ix[x, y] * iy[x, y]
    sxx, syy, sxy = hl.Func("Sxx"), hl.Func("Syy"), hl.Func("Sxy")
    sxx[x, y] = sum3x3(ixx)
    syy[x, y] = sum3x3(iyy)
    sxy[x, y] = sum3x3(ixy)
    det, trace, out = hl.Func("det"), hl.Func("trace"), hl.Func("output")
    det[x, y] = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace[x, y] = sxx[x, y] + syy[x, y]
    out[x, y] = det[x, y] - c(0.04) * trace[x, y] * trace[x, y]
    # apps/harris's CPU schedule.
    target = hl.get_jit_target_from_environment()
    vec = target.natural_vector_size(hl.Float(32))
    out.split(y, y, yi, 32).parallel(y).vectorize(x, vec)
    ix.store_at(out, y).compute_at(out, yi).vectorize(x, vec)
    iy.store_at(out, y).compute_at(out, yi).vectorize(x, vec)
    ix.compute_with(iy, x)
    out.compile_jit(target)
    result = hl.Buffer(hl.Float(32), [w, h])
    return (lambda: out.realize(result)), (lambda: np.asarray(result))


def opencv_harris(planes, threads):
    import cv2
    cv2.setNumThreads(threads)
    r, g, b = planes

    def run():
        gray = cv2.addWeighted(r, 0.299, g, 0.587, 0.0)
        gray = cv2.addWeighted(gray, 1.0, b, 0.114, 0.0)
        return cv2.cornerHarris(gray, 3, 3, 0.04)

    return run, None  # its output is not compared (its Sobel is scaled differently)


def peers(planes, threads):
    """Each peer's timed run and output, or why it cannot run."""
    out = {}
    for name, setup in (("halide", halide_harris), ("opencv", opencv_harris)):
        try:
            out[name] = setup(planes, threads)
        except Exception as e:  # a missing or failing peer leaves its columns empty
            out[name] = e
    return out


def round_of(ready, runs):
    """One round: each peer's warm-up and timed runs, a line each."""
    for name, peer in ready.items():
        try:
            if isinstance(peer, Exception):
                raise peer
            print(name, *(f"{t:.4f}" for t in timed(peer[0], runs)), flush=True)
        except Exception as e:
            print(f"{name} unavailable: {type(e).__name__}: {e}".replace("\n", " "), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("h", type=int)
    p.add_argument("w", type=int)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--check")
    p.add_argument("--serve", action="store_true")
    a = p.parse_args()
    planes = np.fromfile(a.input, dtype="<f4").reshape(3, a.h, a.w)
    ready = peers(planes, a.threads)
    if a.serve:
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["run"] and len(words) == 2:
                round_of(ready, int(words[1]))
            print("done", flush=True)
        return
    round_of(ready, a.runs)
    halide = ready["halide"]
    if a.check and not isinstance(halide, Exception):
        ours = np.fromfile(a.check, dtype="<f4").reshape(a.h, a.w)
        theirs = halide[1]()
        err = np.max(np.abs(theirs - ours) / np.maximum(np.abs(ours), 1.0))
        print(f"halide-max-rel-error {err:.3e}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
