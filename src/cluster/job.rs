//! A job: one experiment row (or, for the timed C, one table) that a worker runs in a child
//! process under caps, keyed by everything that determines its result.

use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::error::{Error, Result};
use crate::experiments::child::Caps;
use crate::experiments::{codegen, input, matmul, sweep, table2};
use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use std::path::PathBuf;
use std::time::Duration;

/// What a job computes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Task {
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
    /// A point of a sweep; timed when the sweep times the found programs.
    SweepPoint {
        sweep: PathBuf,
        point: sweep::Point,
        timed: bool,
    },
}

impl Task {
    /// How it reads in progress lines.
    pub fn label(&self) -> String {
        match self {
            Task::Table2 {
                goal,
                substitution,
                binding,
            } => format!("table2 {goal} {substitution} {binding}"),
            Task::Guided { goal } => format!("matmul {goal} guided"),
            Task::Unguided { goals } => format!("matmul {} unguided", goals.join(", ")),
            Task::Codegen { size } => format!("codegen at {size}"),
            Task::SweepPoint { sweep, point, .. } => {
                format!("{} {}", sweep.display(), sweep::point_arg(point))
            }
        }
    }

    /// Whether its figures are timings that another job beside it would disturb.
    pub fn timed(&self) -> bool {
        match self {
            Task::Codegen { .. } => true,
            Task::SweepPoint { timed, .. } => *timed,
            _ => false,
        }
    }

    /// The files its result depends on.
    pub fn inputs(&self) -> Result<Vec<PathBuf>> {
        Ok(match self {
            Task::Table2 { goal, .. } => vec![
                input(format!("programs/{goal}.rise")),
                input("rules/table2.rules"),
            ],
            Task::Guided { goal } => matmul::guide_of(goal)?.inputs,
            Task::Unguided { goals } => {
                let mut files = vec![];
                for goal in goals {
                    files.extend(matmul::guide_of(goal)?.inputs);
                }
                files.sort();
                files.dedup();
                files
            }
            Task::Codegen { .. } => codegen::inputs()?,
            Task::SweepPoint { sweep, point, .. } => sweep::load(sweep)?.inputs(point)?,
        })
    }
}

/// A task under caps, with its key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Job {
    pub task: Task,
    pub memory_mb: u64,
    pub time_s: u64,
    /// A hash of what determines the result: the task, the caps, the contents of its input
    /// files and sketchlog's version. A finished job with the same key need not run again.
    pub key: String,
}

/// What a job produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Outcome {
    Table2(table2::Row),
    Guided(matmul::GoalRun),
    /// Each goal's run, in the task's order.
    Unguided(Vec<matmul::GoalRun>),
    /// The codegen table's rows.
    Codegen(Vec<Vec<String>>),
    SweepPoint(sweep::PointRow),
}

impl Outcome {
    /// The result in a few words.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Table2(row) => match row.found {
                true => "found".into(),
                false => format!("not found ({})", row.stop_reason),
            },
            Outcome::Guided(run) => {
                let found = !run.steps.is_empty() && run.steps.iter().all(|s| s.found);
                match found && run.end == crate::experiments::child::End::Finished {
                    true => format!("found ({} steps)", run.steps.len()),
                    false => format!("not found ({})", run.stop()),
                }
            }
            Outcome::Unguided(runs) => runs
                .iter()
                .map(|r| match r.found(1) {
                    true => format!("{} found", r.goal),
                    false => format!("{} not found ({})", r.goal, r.stop()),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Outcome::Codegen(rows) => format!("{} rows", rows.len()),
            Outcome::SweepPoint(row) => match (row.found, row.gflops) {
                (true, Some(g)) => format!("found, {g:.1} GFLOP/s"),
                (true, None) => "found".into(),
                (false, _) => format!("not found ({})", row.stop),
            },
        }
    }
}

impl Job {
    /// `task` under `caps`, keyed by reading its input files now.
    pub fn new(task: Task, caps: Caps) -> Result<Job> {
        let mut hash = fnv::FnvHasher::default();
        let mut put = |bytes: &[u8]| {
            hash.write_usize(bytes.len());
            hash.write(bytes);
        };
        put(env!("CARGO_PKG_VERSION").as_bytes());
        let what = (&task, caps.memory_mb, caps.time.as_secs());
        put(&serde_json::to_vec(&what).expect("plain data"));
        for path in task.inputs()? {
            let bytes = std::fs::read(&path)
                .map_err(|e| Error::bad_input(format!("{}: cannot read: {e}", path.display())))?;
            put(path.to_string_lossy().as_bytes());
            put(&bytes);
        }
        Ok(Job {
            key: format!("{:016x}", hash.finish()),
            task,
            memory_mb: caps.memory_mb,
            time_s: caps.time.as_secs(),
        })
    }

    pub fn caps(&self) -> Caps {
        Caps {
            memory_mb: self.memory_mb,
            time: Duration::from_secs(self.time_s),
        }
    }

    /// Runs it in a child process of `sketchlog` under its caps. A row stopped by a cap or
    /// failing in the child is an outcome that says so; an error is the parent's own (a
    /// child that could not be started).
    pub fn run(&self) -> Result<Outcome> {
        let caps = self.caps();
        Ok(match &self.task {
            Task::Table2 {
                goal,
                substitution,
                binding,
            } => {
                let encoding = Encoding::new(*substitution, *binding);
                Outcome::Table2(table2::run_child(goal, encoding, caps)?)
            }
            Task::Guided { goal } => Outcome::Guided(matmul::run_guided(goal, caps)?),
            Task::Unguided { goals } => Outcome::Unguided(matmul::run_unguided(goals, caps)?),
            Task::Codegen { size } => Outcome::Codegen(codegen::run_child(*size, caps)?),
            Task::SweepPoint { sweep, point, .. } => {
                Outcome::SweepPoint(sweep::run_child(sweep, point, caps)?)
            }
        })
    }
}
