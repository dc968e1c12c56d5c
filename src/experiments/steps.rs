//! `reproduce steps`: every step of every guide in `programs/` and `programs/shine/`, as
//! code generation meets it. Each step's program is lowered (`codegen::sequential`),
//! compiled in both lowerings, checked against the interpreter's meaning of the program the
//! guide starts from and timed beside its scalar lowering (plain loops, no vector types),
//! the two in turn in one process, at two sizes (`results/steps.csv`).
//! A step whose C is slower than its own scalar lowering shows it in `ratio_vs_scalar`
//! (below 1).

use super::codegen::{join_sizes, report_rows, rows_child};
use crate::codegen::run::{compile_with_scalar, COptions, Expected};
use crate::codegen::target::Isa;
use crate::error::{Error, Result};
use crate::rise::term::Term;
use std::path::PathBuf;
use std::rc::Rc;

/// Every guide whose steps are programs over arrays, and the two sizes each of its
/// program's sizes takes (small, large). Matrix products at 128 and 512; matrix-vector
/// products, stencils and images at 256^2 and 2048^2 (Harris's width a multiple of 16).
pub const GUIDES: [(&str, [i64; 2]); 29] = [
    ("array-packing", [128, 512]),
    ("baseline", [128, 512]),
    ("blocking", [128, 512]),
    ("cache-blocks", [128, 512]),
    ("kernel", [128, 512]),
    ("loop-perm", [128, 512]),
    ("parallel", [128, 512]),
    ("parallel-packed", [128, 512]),
    ("vectorization", [128, 512]),
    ("mv-blocking", [256, 2048]),
    ("mv-blocking-columns", [256, 2048]),
    ("mv-kernel", [256, 2048]),
    ("mv-parallel", [256, 2048]),
    ("harris-parallel", [256, 2048]),
    ("harris-strips", [256, 2048]),
    ("harris-fused", [256, 2048]),
    ("harris-separated", [256, 2048]),
    ("harris-line-buffered", [256, 2048]),
    ("harris-rotated", [256, 2048]),
    ("harris-separated-rotated", [256, 2048]),
    ("harris-parallel-strategy", [256, 2048]),
    ("harris-strips-strategy", [256, 2048]),
    ("harris-fused-strategy", [256, 2048]),
    ("harris-separated-strategy", [256, 2048]),
    ("harris-line-buffered-strategy", [256, 2048]),
    ("harris-line-buffered-mixed", [256, 2048]),
    ("harris-rotated-strategy", [256, 2048]),
    ("harris-separated-rotated-strategy", [256, 2048]),
    ("shine/separable-lanes", [256, 2048]),
];

/// Guides whose programs have no C: they take functions as parameters (Table 2's `fission`,
/// the Rise project's reorderings, polymorphic in their element types too).
pub const NOT_COMPILED: [&str; 3] = ["fission", "shine/reorder3d-321", "shine/reorder4d-4321"];

pub const COLUMNS: [&str; 9] = [
    "guide",
    "step",
    "sizes",
    "threads",
    "median_ms",
    "scalar_ms",
    "ratio_vs_scalar",
    "max_rel_error",
    "error",
];

/// The threads every step runs on (its parallel loops as such).
const THREADS: usize = 2;

/// A row: one step at one size. `error` says why a step has no times (its C could not be
/// generated or compiled, or did not agree with the interpreter).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub guide: String,
    pub step: String,
    pub sizes: Vec<i64>,
    pub median_ms: Option<f64>,
    pub scalar_ms: Option<f64>,
    /// The scalar lowering's time over the step's, the median of the rounds' ratios (below
    /// 1: the step is slower).
    pub ratio_vs_scalar: Option<f64>,
    pub max_rel_error: Option<f64>,
    pub error: Option<String>,
}

impl Row {
    /// A row of `guide`'s `step` at `sizes`, with no figures yet.
    fn unmeasured(guide: &str, step: &str, sizes: Vec<i64>) -> Row {
        Row {
            guide: guide.to_string(),
            step: step.to_string(),
            sizes,
            median_ms: None,
            scalar_ms: None,
            ratio_vs_scalar: None,
            max_rel_error: None,
            error: None,
        }
    }

    /// This row, saying why it has no figures (on one line, without commas).
    fn failed(self, e: &Error) -> Row {
        Row {
            error: Some(e.message.replace(['\n', ','], " ")),
            ..self
        }
    }

    /// Its cells, in the order of [`COLUMNS`].
    pub fn fields(&self) -> Vec<String> {
        let ms = |x: Option<f64>| super::cell(x, |v| format!("{v:.3}"));
        vec![
            self.guide.clone(),
            self.step.clone(),
            join_sizes(&self.sizes),
            THREADS.to_string(),
            ms(self.median_ms),
            ms(self.scalar_ms),
            super::cell(self.ratio_vs_scalar, |r| format!("{r:.2}")),
            super::cell(self.max_rel_error, |e| format!("{e:.2e}")),
            self.error.clone().unwrap_or_default(),
        ]
    }
}

/// The guide file of a name in [`GUIDES`].
pub fn guide_file(name: &str) -> PathBuf {
    super::input(format!("programs/{name}.guide"))
}

/// The files a guide's rows depend on.
pub fn inputs(name: &str) -> Result<Vec<PathBuf>> {
    Ok(crate::guide::parse::load_guide(&guide_file(name))?.inputs)
}

/// The small and large sizes of a guide in [`GUIDES`].
fn sizes_of(name: &str) -> Result<[i64; 2]> {
    GUIDES
        .iter()
        .find(|(g, _)| *g == name)
        .map(|(_, s)| *s)
        .ok_or_else(|| Error::bad_input(format!("no guide `{name}` in the steps table")))
}

/// The guides of [`GUIDES`] in groups that start from the same program at the same sizes,
/// in the order of [`GUIDES`]: a job each, in which a step whose program an earlier guide of
/// the group has reached is measured once.
pub fn groups() -> Result<Vec<Vec<String>>> {
    let (mut starts, mut groups): (Vec<_>, Vec<Vec<String>>) = (vec![], vec![]);
    for (name, sizes) in GUIDES {
        let start = (
            crate::guide::parse::load_guide(&guide_file(name))?.start,
            sizes,
        );
        match starts.iter().position(|s| *s == start) {
            Some(k) => groups[k].push(name.to_string()),
            None => {
                starts.push(start);
                groups.push(vec![name.to_string()]);
            }
        }
    }
    Ok(groups)
}

/// The child process of a group of guides' rows ([`groups`]): each guide run once, every
/// step at both its sizes ([`GUIDES`]), 3 to 5 interleaved rounds of timed runs (a round about
/// a second: [`crate::codegen::measure::measure`]); reports the rows. A guide that fails is
/// a row that says why.
pub fn row_main(guides: &[String], isa: Isa) -> Result<()> {
    let mut measured = Measured::default();
    let mut rows = vec![];
    for name in guides {
        match guide_rows(name, sizes_of(name)?, (5, 5), isa, &mut measured) {
            Ok(found) => rows.extend(found),
            Err(e) => rows.push(Row::unmeasured(name, "", vec![]).failed(&e)),
        }
    }
    report_rows(rows);
    Ok(())
}

/// Runs [`row_main`] in a child process under `caps`; its rows.
pub fn run_child(
    guides: &[String],
    isa: Isa,
    caps: crate::cluster::child::ProcessLimits,
) -> Result<Vec<Row>> {
    let guides = guides.to_vec();
    rows_child(super::jobs::Work::Steps { guides, isa }, caps, "steps")
}

/// What the guides of a group ([`groups`]) have measured: each step's row by its program
/// and sizes, and the meaning of their start at each size.
#[derive(Default)]
struct Measured {
    rows: std::collections::HashMap<(Rc<Term>, Vec<i64>), Row>,
    meanings: Vec<(Vec<i64>, Expected)>,
}

/// Every step of the guide `name` (in `programs/`), its rules and C for `isa`, with each of
/// its program's sizes at each of `sizes`: `rounds` interleaved rounds (the step, then its
/// scalar lowering, and the reference GEMM for a matrix product) of at most `runs` runs,
/// fewer for a slow step (a round about a second).
pub fn rows(name: &str, sizes: [i64; 2], rounds: usize, runs: usize, isa: Isa) -> Result<Vec<Row>> {
    guide_rows(name, sizes, (rounds, runs), isa, &mut Measured::default())
}

/// [`rows`], taking the row of a program at a size from `measured` when an earlier guide
/// has measured it, and adding those it measures.
fn guide_rows(
    name: &str,
    sizes: [i64; 2],
    (rounds, runs): (usize, usize),
    isa: Isa,
    measured: &mut Measured,
) -> Result<Vec<Row>> {
    let (params, opts) = super::codegen::for_isa(isa)?;
    let guide = crate::guide::parse::load_guide_with(&guide_file(name), params)?;
    let reports = crate::guide::run(&guide, |_, _| {}, |_, _| {})?;
    crate::guide::check_found(&reports)?;
    let mut rows = vec![];
    for report in &reports {
        let program = crate::codegen::sequential(report.term.as_ref().expect("found"));
        for size in sizes {
            let sizes = crate::codegen::sizes_of(&program, size);
            let key = (program.clone(), sizes.clone());
            if let Some(row) = measured.rows.get(&key) {
                eprintln!(
                    "{name} {} at {sizes:?}: measured in {}",
                    report.sketch, row.guide
                );
                rows.push(Row {
                    guide: name.to_string(),
                    step: report.sketch.clone(),
                    ..row.clone()
                });
                continue;
            }
            eprintln!("{name} {} at {sizes:?} ...", report.sketch);
            let mut row = Row::unmeasured(name, &report.sketch, sizes);
            let step = Step {
                program: &program,
                meaning: &guide.start,
            };
            let meanings = &mut measured.meanings;
            if let Err(e) = time_step(step, meanings, &mut row, (rounds, runs), &opts) {
                row = row.failed(&e);
            }
            eprintln!("  {}", row.fields().join(","));
            measured.rows.insert(key, row.clone());
            rows.push(row);
        }
    }
    Ok(rows)
}

/// A step's program, lowered, and the program its guide starts from.
struct Step<'a> {
    program: &'a Rc<Term>,
    meaning: &'a Rc<Term>,
}

/// Compiles, checks and times one step in both lowerings ([`crate::codegen::measure::measure`]),
/// filling `row`'s figures; checked against the meaning at its sizes in `meanings` (which it
/// adds when missing).
fn time_step(
    step: Step,
    meanings: &mut Vec<(Vec<i64>, Expected)>,
    row: &mut Row,
    (rounds, runs): (usize, usize),
    base: &COptions,
) -> Result<()> {
    let opts = COptions {
        threads: THREADS,
        runs,
        ..base.clone()
    };
    let (exe, scalar) = compile_with_scalar(step.program, &row.sizes, &opts)?;
    let at = match meanings.iter().position(|(sizes, _)| *sizes == row.sizes) {
        Some(at) => at,
        None => {
            meanings.push((row.sizes.clone(), Expected::of(&exe, step.meaning)?));
            meanings.len() - 1
        }
    };
    let expected = &meanings[at].1;
    let rounds = crate::codegen::measure::Rounds::up_to(rounds);
    let measured = crate::codegen::measure::measure(&exe, Some(&scalar), expected, &opts, rounds)?;
    row.max_rel_error = Some(measured.check.max_rel_error);
    row.median_ms = Some(measured.median_ms());
    row.scalar_ms = measured.scalar_median_ms();
    row.ratio_vs_scalar = measured.scalar_ratio();
    Ok(())
}
