//! The current term as C, and that C compiled, checked and timed (`codegen`, `bench-c`).

use crate::codegen::{self, measure, run::COptions};
use crate::error::{Error, Result};
use crate::limits;
use crate::rise::term::Term;
use serde::Serialize;
use std::rc::Rc;

/// The sizes a request names (`64`, `64,32,16` or `m=64,n=32,k=16`; empty: `default` each)
/// for a program whose sizes are named `names`.
pub fn sizes(text: &str, names: &[String], default: i64) -> Result<Vec<i64>> {
    if text.trim().is_empty() {
        return Ok(vec![default; names.len()]);
    }
    let given = text
        .split(',')
        .map(|s| limits::size_arg(s.trim()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::bad_input(format!("sizes: {e}")))?;
    let sizes = limits::resolve_sizes(&given, names)
        .map_err(|e| Error::bad_input(format!("sizes: {e}")))?;
    match sizes.as_slice() {
        [one] if names.len() > 1 => Ok(vec![*one; names.len()]),
        _ if sizes.len() != names.len() => Err(Error::bad_input(format!(
            "sizes: the program takes {} sizes ({}), not {}",
            names.len(),
            names.join(", "),
            sizes.len()
        ))),
        _ => Ok(sizes),
    }
}

/// The C of `term` at `sizes`, lowered as `codegen` lowers it, after the generator's remarks
/// on it as comments.
pub fn c_text(term: &Rc<Term>, sizes: &[i64]) -> Result<String> {
    let p = codegen::sequential(term);
    let generated = codegen::emit::program_c("rise_program", &p, sizes)?;
    let notes: String = (generated.remarks.iter())
        .map(|r| format!("// note: {r}\n"))
        .collect();
    Ok(notes + &generated.c)
}

/// A timing at one thread count, as `bench-c` prints it.
#[derive(Serialize)]
pub struct Timing {
    pub threads: usize,
    pub median_ms: f64,
    pub gflops: f64,
    pub scalar_median_ms: Option<f64>,
    /// The reference GEMM (the gemm crate), for a matrix product.
    pub reference_gflops: Option<f64>,
    pub reference_ratio: Option<f64>,
    pub max_rel_error: f64,
}

/// `term` compiled at `sizes`, checked (with its scalar lowering) against `meaning`, the
/// program it was optimised from, and timed at each thread count in three interleaved rounds.
pub fn bench(
    term: &Rc<Term>,
    meaning: &Rc<Term>,
    sizes: &[i64],
    threads: &[usize],
) -> Result<Vec<Timing>> {
    let p = codegen::sequential(term);
    let opts = COptions {
        runs: 3,
        ..COptions::default()
    };
    let (exe, scalar, expected) = measure::compile_both(&p, meaning, sizes, &opts)?;
    let mut timings = vec![];
    for &threads in threads {
        let opts = COptions {
            threads,
            ..opts.clone()
        };
        let m = measure::measure(
            &exe,
            Some(&scalar),
            &expected,
            &opts,
            measure::Rounds::exactly(3),
        )?;
        let reference = m.reference(&exe);
        timings.push(Timing {
            threads,
            median_ms: m.median_ms(),
            gflops: m.gflops,
            scalar_median_ms: m.scalar_median_ms(),
            reference_gflops: reference.map(|r| r.0),
            reference_ratio: reference.map(|r| r.1),
            max_rel_error: m.check.max_rel_error,
        });
    }
    Ok(timings)
}
