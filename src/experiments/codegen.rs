//! The generated C's performance: timing a program beside the reference GEMM in the same run
//! (rounds interleaved: program, reference, program, ...; medians), for `bench-c`, and
//! `reproduce codegen`: the seven matrix multiplication versions found by guided search, the
//! register-blocked `kernel`, `parallel-packed`, the matrix-vector versions, both binomial
//! filters and the separable convolution's lowered versions and guided version, each lowered
//! (`codegen::sequential`), compiled to OpenMP C, validated and timed
//! with each thread count (`results/codegen.csv`).

use super::matmul::GOALS;
use super::Reason;
use crate::codegen::measure::{measure, Rounds};
use crate::codegen::run::{compile_with_scalar, COptions, Expected};
use crate::codegen::target::{Isa, Target};
use crate::error::{Error, Result};
use std::path::Path;

pub const COLUMNS: [&str; 14] = [
    "version",
    "threads",
    "sizes",
    "median_ms",
    "min_ms",
    "scalar_ms",
    "gflops",
    "gbytes_s",
    "max_rel_error",
    "compared",
    "speedup_vs_baseline",
    "reference_gflops",
    "ratio_vs_reference",
    "flops",
];

/// What `reproduce codegen` runs: a label, the program (`FILE.guide` or `FILE.rise:NAME`)
/// and its sizes. Matrix products at `size`^3, the 2D programs at (4 size)^2.
fn versions(size: i64) -> Vec<(String, String, Vec<i64>)> {
    let input = |file: String| super::input(file).display().to_string();
    let mut v: Vec<(String, String, Vec<i64>)> = GOALS
        .iter()
        .map(|g| {
            (
                g.to_string(),
                input(format!("programs/{g}.guide")),
                vec![size; 3],
            )
        })
        .collect();
    // Beyond the paper: a register-blocked version (tiles of the target's size accumulated
    // over all of k), and `parallel` with A packed as well as B.
    for g in ["kernel", "parallel-packed"] {
        v.push((
            g.into(),
            input(format!("programs/{g}.guide")),
            vec![size; 3],
        ));
    }
    let big = 4 * size;
    for g in [
        "mv-blocking",
        "mv-blocking-columns",
        "mv-parallel",
        "mv-kernel",
    ] {
        v.push((g.into(), input(format!("programs/{g}.guide")), vec![big; 2]));
    }
    for g in ["start", "goal"] {
        let spec = input(format!("programs/binomial.rise:{g}"));
        v.push((format!("binomial-{g}"), spec, vec![big; 2]));
    }
    // The Rise project's separable convolution, lowered as its lowering tests find it: the
    // 2D stencil, the separated passes with the vertical one stored, and the scanline
    // version that separates them in one pass over rows.
    for (label, def) in [
        ("separable-2d", "base-seq"),
        ("separable-separated", "separated-seq"),
        ("separable-scanline", "scanline-seq"),
    ] {
        let spec = input(format!("programs/shine/separable.rise:{def}"));
        v.push((label.into(), spec, vec![big; 2]));
    }
    // Its scanline version found by sketch-guided search from the 2D stencil, the horizontal
    // pass in 16-lane vectors and the rows on threads.
    let lanes = input("programs/shine/separable-lanes.guide".into());
    v.push(("separable-lanes".into(), lanes, vec![big; 2]));
    v
}

/// The files the table depends on: every version's guide (with what it reads) or program.
pub fn inputs() -> Result<Vec<std::path::PathBuf>> {
    program_inputs(versions(1).into_iter().map(|(_, spec, _)| spec))
}

/// The files programs depend on, each `FILE.guide` (with what the guide reads) or
/// `FILE.rise:NAME`.
pub fn program_inputs(specs: impl Iterator<Item = String>) -> Result<Vec<std::path::PathBuf>> {
    let mut files = vec![];
    for spec in specs {
        match spec.strip_suffix(".guide") {
            Some(_) => files.extend(crate::guide::parse::load_guide(Path::new(&spec))?.inputs),
            None => files.push(crate::guide::file_of(&spec).into()),
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// The caps of a timed table's child (codegen, Harris): its searches are guided; compiling
/// and timing take the time.
pub const CAPS: crate::cluster::child::ProcessLimits = crate::cluster::child::ProcessLimits {
    memory_mb: 8000,
    time: std::time::Duration::from_secs(3600),
};

/// The named sizes (`lanes`, `registers`) and the C's options for `isa`; an error when this
/// machine does not run its code.
pub fn for_isa(isa: Isa) -> Result<(crate::rules::Params, COptions)> {
    isa.check_runs_here().map_err(Error::bad_input)?;
    let params = crate::rules::Params::given(&isa.params()).map_err(Error::bad_input)?;
    let opts = COptions {
        flags: vec![isa.cflags().into()],
        target: Target::of(&params).map_err(Error::bad_input)?,
        ..COptions::default()
    };
    Ok((params, opts))
}

/// What a timed table's child reports: the table's rows.
#[derive(serde::Serialize, serde::Deserialize)]
struct Rows<R>(Vec<R>);

/// Reports a child's rows (a JSON line).
pub fn report_rows<R: serde::Serialize>(rows: Vec<R>) {
    crate::cluster::child::report(&Rows(rows));
}

/// Runs `work` in a child process under `caps`; the rows it reports. `table` names the
/// table in an error.
pub fn rows_child<R: serde::de::DeserializeOwned>(
    work: super::jobs::Work,
    caps: crate::cluster::child::ProcessLimits,
    table: &str,
) -> Result<Vec<R>> {
    let run = crate::cluster::child::run(&super::jobs::child_args(work, caps), caps)?;
    let rows = crate::cluster::child::reports::<Rows<R>>(&run.stdout).last();
    rows.map(|r| r.0).ok_or_else(|| {
        let why = match run.end {
            crate::cluster::child::End::Failed(e) => e,
            end => end.reason().to_string(),
        };
        Error::bad_input(format!("reproduce {table}: {why}"))
    })
}

/// The child process of `reproduce codegen`: every version at `size` on 1 and 2 threads,
/// 3 to 5 interleaved rounds ([`Rounds::up_to`]) of 5 timed runs (fewer for a slow version,
/// more for a fast one: [`measure`]); reports the rows.
pub fn row_main(size: i64) -> Result<()> {
    report_rows(rows(size, &[1, 2], 5, 5)?);
    Ok(())
}

/// Runs [`row_main`] in a child process under `caps`; its rows.
pub fn run_child(size: i64, caps: crate::cluster::child::ProcessLimits) -> Result<Vec<Row>> {
    rows_child(super::jobs::Work::Codegen { size }, caps, "codegen")
}

/// A row of the codegen table ([`COLUMNS`]): one version on one thread count. Figures that
/// do not apply (a reference's validation, the speed-up of a program that is not a matrix
/// product) are empty cells.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub version: String,
    pub threads: usize,
    pub sizes: Vec<i64>,
    pub median_ms: f64,
    pub min_ms: f64,
    /// The scalar lowering's median, timed interleaved with the program.
    pub scalar_ms: Option<f64>,
    pub gflops: f64,
    pub gbytes_s: f64,
    pub max_rel_error: Option<f64>,
    /// How many output elements were compared with the interpreter's.
    pub compared: Option<usize>,
    pub speedup_vs_baseline: Option<f64>,
    pub reference_gflops: Option<f64>,
    pub ratio_vs_reference: Option<f64>,
    pub flops: f64,
}

impl Row {
    /// Its cells, in the order of [`COLUMNS`].
    pub fn fields(&self) -> Vec<String> {
        vec![
            self.version.clone(),
            self.threads.to_string(),
            join_sizes(&self.sizes),
            format!("{:.3}", self.median_ms),
            format!("{:.3}", self.min_ms),
            super::cell(self.scalar_ms, |ms| format!("{ms:.3}")),
            format!("{:.1}", self.gflops),
            format!("{:.1}", self.gbytes_s),
            super::cell(self.max_rel_error, |e| format!("{e:.2e}")),
            super::cell(self.compared, |n| n.to_string()),
            super::cell(self.speedup_vs_baseline, |x| format!("{x:.1}")),
            super::cell(self.reference_gflops, |g| format!("{g:.1}")),
            super::cell(self.ratio_vs_reference, |r| format!("{r:.2}")),
            format!("{:.0}", self.flops),
        ]
    }
}

/// Runs every version with each of `threads`, `rounds` interleaved rounds of `runs` timed
/// runs; the table's rows, the reference's last.
pub fn rows(size: i64, threads: &[usize], runs: usize, rounds: usize) -> Result<Vec<Row>> {
    let mut rows: Vec<Row> = vec![];
    let mut baseline_ms: Vec<f64> = vec![];
    let mut reference_ms: Vec<Vec<f64>> = vec![vec![]; threads.len()];
    let opts = COptions {
        runs,
        ..COptions::default()
    };
    for (label, spec, sizes) in versions(size) {
        eprintln!("{label} at {sizes:?} ...");
        let program = crate::codegen::sequential(&crate::guide::program::load_program(&spec)?);
        let (exe, scalar) = compile_with_scalar(&program, &sizes, &opts)?;
        let expected = Expected::of(&exe, &program)?;
        for (i, &t) in threads.iter().enumerate() {
            let opts = COptions {
                threads: t,
                ..opts.clone()
            };
            let m = measure(&exe, Some(&scalar), &expected, &opts, Rounds::up_to(rounds))?;
            if label == "baseline" {
                baseline_ms.push(m.median_ms());
            }
            let speedup = match sizes.len() == 3 {
                true => baseline_ms.get(i).map(|b| b / m.median_ms()),
                false => None,
            };
            if let (Some(r), 3) = (&m.reference_ms, sizes.len()) {
                reference_ms[i].extend(r);
            }
            let reference = m.reference(&exe);
            rows.push(Row {
                version: label.clone(),
                threads: t,
                sizes: sizes.clone(),
                median_ms: m.median_ms(),
                min_ms: m.min_ms(),
                scalar_ms: m.scalar_median_ms(),
                gflops: m.gflops,
                gbytes_s: m.gbytes,
                max_rel_error: Some(m.check.max_rel_error),
                compared: Some(m.check.compared),
                speedup_vs_baseline: speedup,
                reference_gflops: reference.map(|r| r.0),
                ratio_vs_reference: reference.map(|r| r.1),
                flops: exe.flops,
            });
            eprintln!("  {}", rows.last().expect("pushed").fields().join(","));
        }
    }
    rows.extend(reference_rows(&reference_ms, threads, size));
    Ok(rows)
}

/// One row per thread count for the reference GEMM itself (the median of all its runs
/// beside the matrix products).
fn reference_rows(reference_ms: &[Vec<f64>], threads: &[usize], size: i64) -> Vec<Row> {
    let flops = 2.0 * (size as f64).powi(3);
    let bytes = 4.0 * 3.0 * (size as f64).powi(2);
    reference_ms
        .iter()
        .zip(threads)
        .filter(|(times, _)| !times.is_empty())
        .map(|(times, &t)| {
            let ms = super::median(times);
            let gflops = flops / (ms * 1e6);
            Row {
                version: "reference-gemm-crate".into(),
                threads: t,
                sizes: vec![size; 3],
                median_ms: ms,
                min_ms: times.iter().copied().fold(f64::INFINITY, f64::min),
                scalar_ms: None,
                gflops,
                gbytes_s: bytes / (ms * 1e6),
                max_rel_error: None,
                compared: None,
                speedup_vs_baseline: None,
                reference_gflops: Some(gflops),
                ratio_vs_reference: Some(1.0),
                flops,
            }
        })
        .collect()
}

pub fn join_sizes(sizes: &[i64]) -> String {
    sizes
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}
