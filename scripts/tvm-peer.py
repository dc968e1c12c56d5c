#!/usr/bin/env python3
"""TVM 0.27 as a peer for the generated C: the TVM GEMM tutorial's schedules that the paper's
`cache-blocks` and `parallel` versions follow, at 1024^3 float32, compiled for this CPU.

Usage: TVM_NUM_THREADS=T python3 scripts/tvm-peer.py [RUNS]
Prints one line per schedule: median milliseconds and GFLOP/s (each run checked against
numpy first). Needs apache-tvm 0.27 and numpy (pip install apache-tvm==0.27.0.post1 numpy);
the project itself does not.

The schedules (TVM's "How to optimize GEMM on CPU", written with `s_tir.Schedule` since
`te.create_schedule` is gone in 0.27):
- cache-blocks: 32 x 32 tiles of C accumulated in a write cache, k split by 4 with the
  4 steps unrolled, the tile's 32 columns vectorised;
- parallel: the same over B packed into 32-column blocks, the row blocks in parallel.
"""
import statistics
import sys
import time

import numpy as np
import tvm
from tvm import te

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
N, BN, KFACTOR = 1024, 32, 4
CPU = tvm.target.codegen.llvm_get_system_cpu()
TARGET = tvm.target.Target({"kind": "llvm", "mcpu": CPU})


def gemm(packed):
    a = te.placeholder((N, N), name="A")
    b = te.placeholder((N, N), name="B")
    k = te.reduce_axis((0, N), name="k")
    if packed:
        pb = te.compute((N // BN, N, BN), lambda x, y, z: b[y, x * BN + z], name="packedB")
        c = te.compute(
            (N, N),
            lambda x, y: te.sum(a[x, k] * pb[y // BN, k, y % BN], axis=k),
            name="C",
        )
    else:
        c = te.compute((N, N), lambda x, y: te.sum(a[x, k] * b[k, y], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def schedule(packed):
    sch = tvm.s_tir.Schedule(gemm(packed))
    compute = sch.get_sblock("C")
    write_back = sch.cache_write(compute, 0, "global")
    x, y = sch.get_loops(write_back)
    xo, xi = sch.split(x, [None, BN])
    yo, yi = sch.split(y, [None, BN])
    sch.reorder(xo, yo, xi, yi)
    sch.compute_at(compute, yo)
    xc, yc, k = sch.get_loops(compute)[-3:]
    ko, ki = sch.split(k, [None, KFACTOR])
    sch.reorder(ko, xc, ki, yc)
    sch.unroll(ki)
    sch.vectorize(yc)
    if packed:
        sch.parallel(xo)
        x, _, z = sch.get_loops(sch.get_sblock("packedB"))
        sch.vectorize(z)
        sch.parallel(x)
    # The accumulator's zeroing as its own loop nest before the k loop (TVM's `init`); last,
    # as the loop annotations above need the block whole.
    sch.decompose_reduction(compute, ko)
    return tvm.compile(sch.mod, target=TARGET)


def main():
    dev = tvm.cpu()
    rng = np.random.default_rng(0)
    a_np = rng.random((N, N), dtype=np.float32)
    b_np = rng.random((N, N), dtype=np.float32)
    expected = a_np @ b_np
    for name, packed in [("cache-blocks", False), ("parallel", True)]:
        f = schedule(packed)
        a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
        c = tvm.runtime.tensor(np.zeros((N, N), dtype=np.float32), dev)
        f(a, b, c)
        np.testing.assert_allclose(c.numpy(), expected, rtol=1e-4)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            f(a, b, c)
            times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        print(f"TVM {name} 1024^3 ({CPU}): {ms:.3f} ms, {2 * N**3 / ms / 1e6:.1f} GFLOP/s")


main()
