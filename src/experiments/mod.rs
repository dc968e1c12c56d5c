//! Experiments that reproduce the paper's tables and figures as CSV (and SVG) files in
//! `results/`: Table 2 (lambda-calculus encodings, [`table2`]) and the matrix
//! multiplication case study's Tables 3, 4, 5 and Figure 16 ([`matmul`], [`plot`]), and the
//! generated C's performance ([`codegen`]).
//!
//! Each row runs in its own child process of `sketchlog` ([`child`]) under a memory cap
//! (`RLIMIT_AS`, set by the child) and a time limit, so a row that runs out of memory is recorded as such and
//! the others still run. Files are written to a temporary name and renamed.

pub mod child;
pub mod codegen;
pub mod matmul;
pub mod plot;
pub mod reproduce;
pub mod scale;
pub mod sweep;
pub mod table2;

/// The median of some measurements (the upper one of an even count).
pub fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}
