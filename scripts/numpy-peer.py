#!/usr/bin/env python3
"""numpy (OpenBLAS) as a peer for the generated C: a @ b at 1024^3 and a @ v at 4096^2 (float32).

Usage: OPENBLAS_NUM_THREADS=T python3 scripts/numpy-peer.py [RUNS]
Prints one line per product: median milliseconds, GFLOP/s and, for a @ v, GB/s of the
inputs and output. Needs numpy (pip install numpy); the project itself does not.
"""
import statistics
import sys
import time

import numpy as np

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
rng = np.random.default_rng(0)


def median_ms(f):
    f()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


a = rng.random((1024, 1024), dtype=np.float32)
b = rng.random((1024, 1024), dtype=np.float32)
ms = median_ms(lambda: a @ b)
print(f"numpy a @ b 1024^3: {ms:.3f} ms, {2 * 1024**3 / ms / 1e6:.1f} GFLOP/s")
m = rng.random((4096, 4096), dtype=np.float32)
v = rng.random(4096, dtype=np.float32)
ms = median_ms(lambda: m @ v)
gbytes = 4 * (4096 * 4096 + 2 * 4096) / ms / 1e6
print(f"numpy a @ v 4096^2: {ms:.3f} ms, {2 * 4096**2 / ms / 1e6:.1f} GFLOP/s, {gbytes:.1f} GB/s")
