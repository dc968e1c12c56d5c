//! The experiments' jobs: what each row of `reproduce` and `sweep` computes ([`Work`]), how it
//! runs in a child process, and what it produces ([`Outcome`]), for the
//! [`cluster`](crate::cluster) to schedule, key and keep.

use super::{auto, codegen, elevate, harris, input, matmul, shine, steps, sweep, table2};
use crate::cluster::child::ProcessLimits;
use crate::cluster::job::Task;
use crate::codegen::target::Isa;
use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A job of the experiments.
pub type Job = crate::cluster::job::Job<Work>;
/// The experiments' store of finished jobs.
pub type Store = crate::cluster::store::Store<Work>;

/// What an experiment's job computes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Work {
    /// A row of Table 2: one goal with one encoding.
    Table2 {
        goal: String,
        substitution: Substitution,
        binding: Binding,
    },
    /// A matrix multiplication goal, guided (Tables 4 and 5, Figure 16).
    Guided { goal: String },
    /// Unguided matrix multiplication goals that grow the same e-graph, in one search
    /// ([`matmul::unguided_groups`]): a row each (Table 3, Figure 16).
    Unguided { goals: Vec<String> },
    /// The generated C's table: every version compiled, validated and timed. Timed, so it
    /// runs alone.
    Codegen { size: i64 },
    /// The Harris table: every version compiled, validated and timed beside the peers, its
    /// C and Halide's for `isa`. Timed, so it runs alone.
    Harris { isa: Isa },
    /// Every step of some guides (`programs/NAME.guide`) that start from the same program
    /// ([`steps::groups`]) compiled, validated and timed beside its scalar lowering. Timed,
    /// so it runs alone.
    Steps {
        guides: Vec<String>,
        #[serde(default)]
        isa: Isa,
    },
    /// A test of the Rise project's suite: one search for all its goals.
    Shine { test: String },
    /// A target of the automatic guides' table: the guide found for it, or (`written`) the
    /// guide written by hand or the unguided search.
    Auto { target: String, written: bool },
    /// A matrix multiplication version found by one approach (strategy, guide, mixed).
    Elevate { version: String, approach: String },
    /// A point of a sweep; timed when the sweep times the found programs.
    SweepPoint {
        sweep: PathBuf,
        point: sweep::Point,
        timed: bool,
    },
}

/// What a job's child process is given: the work and its caps, as the one argument of the
/// hidden `sketchlog job` command (JSON).
#[derive(Serialize, Deserialize)]
struct Child {
    work: Work,
    caps: ProcessLimits,
}

/// The command line of the child process that runs `work` under `caps`.
pub fn child_args(work: Work, caps: ProcessLimits) -> Vec<String> {
    let child = Child { work, caps };
    let json = serde_json::to_string(&child).expect("jobs are plain data");
    vec!["job".into(), json]
}

/// Runs a job in this process, as its child (`sketchlog job JSON`): reports what it finds as
/// JSON lines, and its failure as one.
pub fn child_main(json: &str) -> Result<()> {
    let Child { work, caps } = serde_json::from_str(json)
        .map_err(|e| crate::error::Error::bad_input(format!("a job: {e}")))?;
    crate::cluster::child::report_failure(match &work {
        Work::Table2 {
            goal,
            substitution,
            binding,
        } => table2::row_main(goal, Encoding::new(*substitution, *binding), caps.time),
        Work::Guided { goal } => matmul::guided_main(goal),
        Work::Unguided { goals } => matmul::unguided_main(goals, caps),
        Work::Codegen { size } => codegen::row_main(*size),
        Work::Harris { isa } => harris::row_main(*isa),
        Work::Steps { guides, isa } => steps::row_main(guides, *isa),
        Work::Shine { test } => shine::row_main(test, caps.time),
        Work::Auto { target, written } => auto::row_main(target, *written),
        Work::Elevate { version, approach } => elevate::row_main(version, approach),
        Work::SweepPoint { sweep, point, .. } => sweep::point_main(sweep, point),
    })
}

/// What a job produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Outcome {
    Table2(table2::Row),
    Guided(matmul::GoalRun),
    /// Each goal's run, in the task's order.
    Unguided(Vec<matmul::GoalRun>),
    /// The codegen table's rows.
    Codegen(Vec<codegen::Row>),
    /// The Harris table's rows.
    Harris(Vec<harris::Row>),
    /// A row per step and size.
    Steps(Vec<steps::Row>),
    /// A row per goal of the test.
    Shine(Vec<shine::Row>),
    Auto(auto::Row),
    Elevate(elevate::Row),
    SweepPoint(sweep::PointRow),
}

impl Task for Work {
    type Outcome = Outcome;

    fn label(&self) -> String {
        match self {
            Work::Table2 {
                goal,
                substitution,
                binding,
            } => format!("table2 {goal} {substitution} {binding}"),
            Work::Guided { goal } => format!("matmul {goal} guided"),
            Work::Unguided { goals } => format!("matmul {} unguided", goals.join(", ")),
            Work::Codegen { size } => format!("codegen at {size}"),
            Work::Harris { isa: Isa::Native } => "harris".into(),
            Work::Harris { isa } => format!("harris, {} code", isa.name()),
            Work::Steps {
                guides,
                isa: Isa::Native,
            } => format!("steps of {}", guides.join(", ")),
            Work::Steps { guides, isa } => {
                format!("steps of {}, {} code", guides.join(", "), isa.name())
            }
            Work::Shine { test } => format!("shine {test}"),
            Work::Auto { target, written } => match written {
                true => format!("auto {target} written"),
                false => format!("auto {target}"),
            },
            Work::Elevate { version, approach } => format!("elevate {version} by {approach}"),
            Work::SweepPoint { sweep, point, .. } => {
                format!("{} {}", sweep.display(), sweep::point_arg(point))
            }
        }
    }

    fn timed(&self) -> bool {
        match self {
            Work::Codegen { .. } | Work::Harris { .. } | Work::Steps { .. } => true,
            Work::SweepPoint { timed, .. } => *timed,
            _ => false,
        }
    }

    fn inputs(&self) -> Result<Vec<PathBuf>> {
        Ok(match self {
            Work::Table2 { goal, .. } => vec![
                input(format!("programs/{goal}.rise")),
                input("rules/table2.rules"),
            ],
            Work::Guided { goal } => matmul::guide_of(goal)?.inputs,
            Work::Unguided { goals } => union(goals, |g| Ok(matmul::guide_of(g)?.inputs))?,
            Work::Codegen { .. } => codegen::inputs()?,
            Work::Harris { .. } => harris::inputs()?,
            Work::Steps { guides, .. } => union(guides, steps::inputs)?,
            Work::Shine { test } => shine::inputs(shine::test(test)?),
            Work::Auto { target, .. } => auto::target(target)?.inputs(),
            Work::Elevate { version, approach } => elevate::inputs(version, approach)?,
            Work::SweepPoint { sweep, point, .. } => sweep::load(sweep)?.inputs(point)?,
        })
    }

    fn run(&self, caps: ProcessLimits) -> Result<Outcome> {
        Ok(match self {
            Work::Table2 {
                goal,
                substitution,
                binding,
            } => {
                let encoding = Encoding::new(*substitution, *binding);
                Outcome::Table2(table2::run_child(goal, encoding, caps)?)
            }
            Work::Guided { goal } => Outcome::Guided(matmul::run_guided(goal, caps)?),
            Work::Unguided { goals } => Outcome::Unguided(matmul::run_unguided(goals, caps)?),
            Work::Codegen { size } => Outcome::Codegen(codegen::run_child(*size, caps)?),
            Work::Harris { isa } => Outcome::Harris(harris::run_child(*isa, caps)?),
            Work::Steps { guides, isa } => Outcome::Steps(steps::run_child(guides, *isa, caps)?),
            Work::Shine { test } => Outcome::Shine(shine::run_child(test, caps)?),
            Work::Auto { target, written } => {
                Outcome::Auto(auto::run_child(target, *written, caps)?)
            }
            Work::Elevate { version, approach } => {
                Outcome::Elevate(elevate::run_child(version, approach, caps)?)
            }
            Work::SweepPoint { sweep, point, .. } => {
                Outcome::SweepPoint(sweep::run_child(sweep, point, caps)?)
            }
        })
    }

    fn summary(outcome: &Outcome) -> String {
        match outcome {
            Outcome::Table2(row) => match row.found {
                true => "found".into(),
                false => format!("not found ({})", row.stop_reason),
            },
            Outcome::Guided(run) => match run.found_all() {
                true => format!("found ({} steps)", run.steps.len()),
                false => format!("not found ({})", run.stop()),
            },
            Outcome::Unguided(runs) => runs
                .iter()
                .map(|r| match r.found(1) {
                    true => format!("{} found", r.goal),
                    false => format!("{} not found ({})", r.goal, r.stop()),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Outcome::Codegen(rows) => format!("{} rows", rows.len()),
            Outcome::Harris(rows) => format!("{} rows", rows.len()),
            Outcome::Steps(rows) => {
                let slow = rows
                    .iter()
                    .filter(|r| r.ratio_vs_scalar.is_some_and(|x| x < 1.0 / 1.2));
                let failed = rows.iter().filter(|r| r.error.is_some()).count();
                format!(
                    "{} rows, {} more than 1.2x slower than their scalar lowering, {failed} failed",
                    rows.len(),
                    slow.count()
                )
            }
            Outcome::Shine(rows) => {
                let found = rows.iter().filter(|r| r.found).count();
                format!("{found} of {} goals found", rows.len())
            }
            Outcome::Auto(row) => match row.found {
                true => format!("found ({} steps)", row.steps.unwrap_or(0)),
                false => format!("not found ({})", row.stop),
            },
            Outcome::Elevate(row) => match (&row.error, row.time_s) {
                (Some(e), _) => e.clone(),
                (None, t) => format!("{:.3} s", t.unwrap_or(f64::NAN)),
            },
            Outcome::SweepPoint(row) => match (row.found, row.gflops) {
                (true, Some(g)) => format!("found, {g:.1} GFLOP/s"),
                (true, None) => "found".into(),
                (false, _) => format!("not found ({})", row.stop),
            },
        }
    }
}

/// The files that any of `names` depends on (`inputs` of each), each once.
fn union(names: &[String], inputs: impl Fn(&str) -> Result<Vec<PathBuf>>) -> Result<Vec<PathBuf>> {
    let mut files = vec![];
    for name in names {
        files.extend(inputs(name)?);
    }
    files.sort();
    files.dedup();
    Ok(files)
}
