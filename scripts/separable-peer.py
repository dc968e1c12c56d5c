#!/usr/bin/env python3
"""Halide's schedule of the 3x3 binomial blur, a peer for `bench-c --peer`.

Usage: sketchlog bench-c programs/shine/separable-lanes.guide --sizes h=H,w=W \
         --peer 'target/peers/venv/bin/python scripts/separable-peer.py'

Reads the image's sizes from SKETCHLOG_SIZES (`H,W`, as bench-c passes them) and the thread
count from OMP_NUM_THREADS; prints the milliseconds of each of 5 timed runs after one warm-up
run, one number a line. The algorithm is `programs/shine/separable.rise`'s: weights 1/4,
1/2, 1/4 down the columns then along the rows, borders clamped. The schedule is Halide's
usual one for a separable blur: the output in strips of 32 rows over threads, vectorised
along rows at the CPU's natural width, the vertical pass computed per strip and stored as
it slides (`store_at`, `compute_at`). Needs the Python package halide (`scripts/peers.sh`
installs it into target/peers/venv).
"""
import os
import time

# Halide's runtime reads its thread count when it starts.
os.environ["HL_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "1")

import halide as hl  # noqa: E402
import numpy as np  # noqa: E402


def main():
    h, w = (int(s) for s in os.environ["SKETCHLOG_SIZES"].split(","))
    image = np.random.default_rng(1).random((h, w), dtype=np.float32)
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    clamped = hl.BoundaryConditions.repeat_edge(hl.Buffer(image))
    c = hl.f32
    vertical, out = hl.Func("vertical"), hl.Func("out")
    vertical[x, y] = c(0.25) * clamped[x, y - 1] + c(0.5) * clamped[x, y] + c(0.25) * clamped[x, y + 1]
    out[x, y] = c(0.25) * vertical[x - 1, y] + c(0.5) * vertical[x, y] + c(0.25) * vertical[x + 1, y]
    target = hl.get_host_target()
    vec = target.natural_vector_size(hl.Float(32))
    out.split(y, y, yi, 32).parallel(y).vectorize(x, vec)
    vertical.store_at(out, y).compute_at(out, yi).vectorize(x, vec)
    out.compile_jit(target)
    result = hl.Buffer(hl.Float(32), [w, h])
    out.realize(result)
    for _ in range(5):
        t0 = time.perf_counter()
        out.realize(result)
        print(f"{(time.perf_counter() - t0) * 1e3:.4f}", flush=True)


if __name__ == "__main__":
    main()
