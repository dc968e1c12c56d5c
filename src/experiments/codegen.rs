//! `reproduce codegen`: the seven matrix multiplication versions found by guided search,
//! lowered (`codegen::sequential`), compiled to OpenMP C, validated and timed at one size
//! with each thread count (`results/codegen.csv`).

use super::matmul::GOALS;
use crate::codegen::run::{compile, validate, COptions};
use crate::error::Result;
use std::path::Path;

pub const COLUMNS: [&str; 7] = [
    "version",
    "threads",
    "size",
    "median_ms",
    "gflops",
    "max_rel_error",
    "speedup_vs_baseline",
];

/// Runs every version at `size`^3 with each of `threads`, `runs` timed runs each; the file
/// is rewritten after every version.
pub fn reproduce(out: &Path, size: i64, threads: &[usize], runs: usize) -> Result<()> {
    let mut rows: Vec<Vec<String>> = vec![];
    let mut baseline_ms: Vec<f64> = vec![];
    for goal in GOALS {
        eprintln!("{goal} ...");
        let program = crate::codegen::load_program(&format!("programs/{goal}.guide"))?;
        let sizes = [size; 3];
        let opts = COptions {
            runs,
            ..COptions::default()
        };
        let exe = compile(&program, &sizes, &opts)?;
        for (i, &t) in threads.iter().enumerate() {
            let r = validate(
                &exe,
                &program,
                &sizes,
                &COptions {
                    threads: t,
                    ..opts.clone()
                },
            )?;
            if goal == "baseline" {
                baseline_ms.push(r.median_ms);
            }
            let speedup = baseline_ms.get(i).map_or(f64::NAN, |b| b / r.median_ms);
            rows.push(vec![
                goal.to_string(),
                t.to_string(),
                size.to_string(),
                format!("{:.3}", r.median_ms),
                format!("{:.1}", r.gflops),
                format!("{:.2e}", r.max_rel_error),
                format!("{speedup:.1}"),
            ]);
            eprintln!("  {}", rows.last().unwrap().join(","));
        }
        super::matmul::write_csv(out, &COLUMNS, &rows)?;
    }
    Ok(())
}
