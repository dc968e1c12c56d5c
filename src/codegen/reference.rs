//! The reference GEMM that generated C is measured against, in the same run: the `gemm`
//! crate's single-precision product (tuned micro-kernels for each x86/ARM vector width,
//! packing and cache blocking as in BLIS, threads through rayon).
//!
//! Why this one: it builds from crates.io alone on a fresh machine (an OpenBLAS binding
//! needs a system library or a long C build), and it is in the same class as OpenBLAS on
//! x86 (the README gives the ratio measured here). A program is compared with it only when
//! the reference's product of the program's two inputs is the program's output (checked on
//! the run's own inputs), never because of the program's shape.

use std::time::Instant;

/// A row-major product `c = a b` (`a`: m x k, `b`: k x n) on `threads` threads.
pub fn product(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), threads: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    gemm_into(&mut c, a, b, (m, n, k), threads);
    c
}

fn gemm_into(
    c: &mut [f32],
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
    threads: usize,
) {
    assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n);
    let parallelism = match threads {
        1 => gemm_common::Parallelism::None,
        t => gemm_common::Parallelism::Rayon(t),
    };
    // The kernels prefer column-major operands: the row-major `c = a b` is computed as the
    // column-major `c' = b' a'` (n x m, `c'` = `c` transposed, in the same memory), as the
    // `gemm` front crate does for a row-major destination.
    // SAFETY: the three buffers have the lengths the sizes and strides address.
    unsafe {
        gemm_f32::gemm::f32::get_gemm_fn()(
            n,
            m,
            k,
            c.as_mut_ptr(),
            n as isize,
            1,
            false,
            b.as_ptr(),
            n as isize,
            1,
            a.as_ptr(),
            k as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// Times `runs` products (after one warm-up) on a pool of `threads` threads: milliseconds.
pub fn time(
    a: &[f32],
    b: &[f32],
    sizes: (usize, usize, usize),
    threads: usize,
    runs: usize,
) -> Vec<f64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let mut c = vec![0.0f32; sizes.0 * sizes.1];
    pool.install(|| {
        gemm_into(&mut c, a, b, sizes, threads);
        (0..runs)
            .map(|_| {
                let t0 = Instant::now();
                gemm_into(&mut c, a, b, sizes, threads);
                t0.elapsed().as_secs_f64() * 1e3
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_product_is_row_major_a_times_b() {
        let (m, n, k) = (3, 5, 2);
        let a: Vec<f32> = (0..m * k).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i * i) as f32 - 7.0).collect();
        for threads in [1, 2] {
            let c = super::product(&a, &b, (m, n, k), threads);
            for i in 0..m {
                for j in 0..n {
                    let dot: f32 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                    assert_eq!(c[i * n + j], dot, "({i}, {j}) on {threads} thread(s)");
                }
            }
        }
    }
}
