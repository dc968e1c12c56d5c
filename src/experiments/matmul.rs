//! The matrix multiplication case study (paper section 5.2): Tables 3, 4 and 5 and Figure 16.
//!
//! Each goal is `programs/GOAL.guide`. Guided (Table 4), the guide's steps run in order;
//! unguided (Table 3), one search uses the rules of all its steps and stops at its last
//! sketch. Every goal runs in a child process (`sketchlog matmul-row`) that prints a line
//! per iteration and per step as it goes, so a run stopped by a cap still says how far it
//! got; the parent turns these lines into CSV files, written after every row.

use super::child::{self, Caps, End};
use crate::egraph::saturate::{resident_mb, IterationStats, Limits};
use crate::error::{write_atomically, Error, Result};
use crate::guide::{self, parse::load_guide, Guide, Step, StepReport};
use std::path::Path;
use std::time::Duration;

/// The goals, in the paper's order.
pub const GOALS: [&str; 7] = [
    "baseline",
    "blocking",
    "vectorization",
    "loop-perm",
    "array-packing",
    "cache-blocks",
    "parallel",
];

pub(crate) fn guide_of(goal: &str) -> Result<Guide> {
    if !GOALS.contains(&goal) {
        return Err(Error::bad_input(format!(
            "unknown goal `{goal}` ({})",
            GOALS.join(", ")
        )));
    }
    load_guide(&super::input(format!("programs/{goal}.guide")))
}

/// The single step of an unguided search: all the guide's rules (each once), its last
/// sketch, cost and filter; the caps as limits (memory checked a little below the cap, so
/// the search stops cleanly before an allocation fails).
pub fn unguided_step(g: &Guide, caps: Caps) -> Step {
    let last = g.steps.last().expect("a guide has steps");
    let mut rules: Vec<crate::rise::syntax::RuleDecl> = vec![];
    for r in g.steps.iter().flat_map(|s| &s.rules) {
        if !rules.iter().any(|x| x.name == r.name) {
            rules.push(r.clone());
        }
    }
    let limits = Limits {
        iterations: last.limits.iterations,
        enodes: usize::MAX,
        time: caps.time,
        memory_mb: Some(caps.memory_mb * 9 / 10),
    };
    Step {
        sketch_engine: last.sketch_engine,
        ..Step::new(
            last.sketch.clone(),
            rules,
            (last.cost.clone(), limits, last.filter.clone()),
        )
    }
}

/// What a goal's child process reports, one JSON line each: every iteration and every step
/// as it finishes, then its peak RSS.
#[derive(serde::Serialize, serde::Deserialize)]
enum Report {
    Iteration(Iteration),
    Step(StepRow),
    Done {
        peak_rss_mb: f64,
        /// The size of the program found (operators), when every step was found.
        program_size: Option<usize>,
    },
}

fn report_iteration(step: usize, s: &IterationStats) {
    child::report(&Report::Iteration(Iteration {
        step,
        iteration: s.iteration,
        enodes: s.enodes,
        eclasses: s.eclasses,
        rules_applied: s.rules_applied,
    }));
}

fn report_step(_: usize, r: &StepReport) {
    let (enodes, eclasses) = r.outcome.size();
    child::report(&Report::Step(StepRow {
        sketch: r.sketch.clone(),
        found: r.outcome.found(),
        iterations: r.outcome.iterations.len(),
        seconds: r.seconds,
        rules_applied: r.outcome.rules_applied(),
        enodes,
        eclasses,
        peak_rss_mb: r.peak_rss_mb,
        stop: r.outcome.stop.name().to_string(),
    }));
}

/// The child process: runs one goal, guided or not, reporting as it goes.
pub fn row_main(goal: &str, unguided: bool, caps: Caps) -> Result<()> {
    let g = guide_of(goal)?;
    let last = if unguided {
        let step = unguided_step(&g, caps);
        let r = guide::search(&g.start, &step, |s| report_iteration(0, s))?;
        report_step(0, &r);
        r
    } else {
        let mut reports = guide::run(&g, report_iteration, report_step)?;
        reports.pop().expect("a guide has steps")
    };
    let program_size = match last.outcome.found() {
        true => last.term.as_ref().map(|t| t.operator_count()),
        false => None,
    };
    child::report(&Report::Done {
        peak_rss_mb: resident_mb(true),
        program_size,
    });
    Ok(())
}

/// One iteration of a child's search.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Iteration {
    pub step: usize,
    pub iteration: usize,
    pub enodes: usize,
    pub eclasses: usize,
    pub rules_applied: usize,
}

/// One step of a child's search.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StepRow {
    pub sketch: String,
    pub found: bool,
    pub iterations: usize,
    pub seconds: f64,
    pub rules_applied: usize,
    pub enodes: usize,
    pub eclasses: usize,
    pub peak_rss_mb: f64,
    pub stop: String,
}

/// What one child run of a goal reported.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct GoalRun {
    pub goal: String,
    pub iterations: Vec<Iteration>,
    pub steps: Vec<StepRow>,
    pub end: End,
    pub peak_rss_mb: Option<f64>,
    pub wall_s: f64,
    /// The found program's size (operators), when every step was found.
    pub program_size: Option<usize>,
}

impl GoalRun {
    /// Found when every step of the guide was found.
    pub fn found(&self, guide_steps: usize) -> bool {
        self.steps.len() == guide_steps && self.steps.iter().all(|s| s.found)
    }

    /// Why it stopped: the last step's reason, or the cap that ended the child.
    pub fn stop(&self) -> String {
        match (&self.end, self.steps.last()) {
            (End::Finished, Some(s)) => s.stop.clone(),
            (end, _) => end.reason().to_string(),
        }
    }

    fn max(&self, f: impl Fn(&Iteration) -> usize) -> usize {
        self.iterations.iter().map(f).max().unwrap_or(0)
    }
}

fn read_reports(goal: &str, run: child::ChildRun) -> GoalRun {
    let mut out = GoalRun {
        goal: goal.to_string(),
        iterations: vec![],
        steps: vec![],
        end: run.end,
        // What the child reports; for a child stopped by a cap, what the parent saw.
        peak_rss_mb: run.peak_rss_mb,
        wall_s: run.wall_s,
        program_size: None,
    };
    for r in child::reports(&run.stdout) {
        match r {
            Report::Iteration(i) => out.iterations.push(i),
            Report::Step(s) => out.steps.push(s),
            Report::Done {
                peak_rss_mb,
                program_size,
            } => {
                out.peak_rss_mb = Some(peak_rss_mb);
                out.program_size = program_size;
            }
        }
    }
    out
}

/// Runs one goal in a child process under `caps`.
pub fn run_goal(goal: &str, unguided: bool, caps: Caps) -> Result<GoalRun> {
    guide_of(goal)?;
    let mut args = vec!["matmul-row".to_string(), goal.to_string()];
    if unguided {
        args.push("--unguided".into());
    }
    args.extend([
        "--memory-mb".into(),
        caps.memory_mb.to_string(),
        "--time-s".into(),
        caps.time.as_secs().to_string(),
    ]);
    Ok(read_reports(goal, child::run(&args, caps)?))
}

/// Caps of an unguided row (Table 3, and Figure 16's unguided searches) by default: small
/// enough for the main job to fit an afternoon on a 2-core machine, large enough to show the
/// blow-up and the paper's pattern (baseline and blocking found, the copy-rule goals not).
pub const UNGUIDED_CAPS: Caps = Caps {
    memory_mb: 3000,
    time: Duration::from_secs(200),
};

/// The paper's caps of an unguided row: 60 GB, and time for its searches of over an hour.
pub const PAPER_UNGUIDED_CAPS: Caps = Caps {
    memory_mb: 60_000,
    time: Duration::from_secs(7200),
};

/// Caps of a guided row: the guides' own limits stop it; these only guard the machine.
pub const GUIDED_CAPS: Caps = Caps {
    memory_mb: 8000,
    time: Duration::from_secs(600),
};

/// The runs of goals found so far: `(goal, unguided)` to its run.
pub type Runs<'a> = dyn Fn(&str, bool) -> Option<&'a GoalRun> + 'a;

fn csv_bytes(header: &[&str], rows: &[Vec<String>]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(vec![]);
    let err = |e: csv::Error| Error::bad_input(format!("writing CSV: {e}"));
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| Error::bad_input(format!("writing CSV: {e}")))
}

pub(crate) fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<()> {
    write_atomically(path, &csv_bytes(header, rows)?)
}

pub const TABLE3_COLUMNS: [&str; 10] = [
    "goal",
    "found",
    "runtime_s",
    "peak_rss_mb",
    "rules_applied",
    "max_enodes",
    "max_eclasses",
    "iterations",
    "stop_reason",
    "caps",
];

fn mb(x: Option<f64>) -> String {
    x.map_or(String::new(), |x| format!("{x:.1}"))
}

/// Table 3: the unguided runs of `goals` found so far, under `caps`.
pub fn table3(dir: &Path, goals: &[String], caps: Caps, runs: &Runs) -> Result<()> {
    let mut rows = vec![];
    for goal in goals {
        let Some(r) = runs(goal, true) else { continue };
        let rules: usize = r.iterations.iter().map(|i| i.rules_applied).sum();
        rows.push(vec![
            goal.clone(),
            r.found(1).to_string(),
            format!("{:.3}", r.wall_s),
            mb(r.peak_rss_mb),
            rules.to_string(),
            r.max(|i| i.enodes).to_string(),
            r.max(|i| i.eclasses).to_string(),
            r.iterations.len().to_string(),
            r.stop(),
            format!("{} MB, {} s", caps.memory_mb, caps.time.as_secs()),
        ]);
    }
    write_csv(&dir.join("table3.csv"), &TABLE3_COLUMNS, &rows)
}

pub const TABLE4_COLUMNS: [&str; 8] = [
    "goal",
    "sketch_guides",
    "found",
    "runtime_s",
    "peak_rss_mb",
    "rules_applied",
    "max_enodes",
    "max_eclasses",
];

pub const TABLE4_STEP_COLUMNS: [&str; 10] = [
    "goal",
    "step",
    "sketch",
    "found",
    "iterations",
    "runtime_s",
    "rules_applied",
    "enodes",
    "eclasses",
    "stop_reason",
];

/// Table 4 (guided) and its per-step figures, from the guided runs of `goals` so far.
pub fn table4(dir: &Path, goals: &[String], runs: &Runs) -> Result<()> {
    let (mut rows, mut step_rows) = (vec![], vec![]);
    for goal in goals {
        let Some(r) = runs(goal, false) else { continue };
        let steps = guide_of(goal)?.steps.len();
        let seconds: f64 = r.steps.iter().map(|s| s.seconds).sum();
        let rules: usize = r.steps.iter().map(|s| s.rules_applied).sum();
        let most = |f: fn(&StepRow) -> usize| r.steps.iter().map(f).max().unwrap_or(0);
        rows.push(vec![
            goal.clone(),
            (steps - 1).to_string(),
            r.found(steps).to_string(),
            format!("{seconds:.3}"),
            mb(r.peak_rss_mb),
            rules.to_string(),
            most(|s| s.enodes).to_string(),
            most(|s| s.eclasses).to_string(),
        ]);
        for (i, s) in r.steps.iter().enumerate() {
            step_rows.push(vec![
                goal.clone(),
                (i + 1).to_string(),
                s.sketch.clone(),
                s.found.to_string(),
                s.iterations.to_string(),
                format!("{:.3}", s.seconds),
                s.rules_applied.to_string(),
                s.enodes.to_string(),
                s.eclasses.to_string(),
                s.stop.clone(),
            ]);
        }
    }
    write_csv(&dir.join("table4.csv"), &TABLE4_COLUMNS, &rows)?;
    write_csv(
        &dir.join("table4-steps.csv"),
        &TABLE4_STEP_COLUMNS,
        &step_rows,
    )
}

pub const TABLE5_COLUMNS: [&str; 6] = [
    "goal",
    "sketch_guides",
    "sketch_goal",
    "sketch_sizes",
    "total_sketch_size",
    "program_size",
];

/// Table 5: each goal's sketches and their sizes, and the size of the program its guided
/// run found.
pub fn table5(dir: &Path, goals: &[String], runs: &Runs) -> Result<()> {
    let mut rows = vec![];
    for goal in goals {
        let Some(size) = runs(goal, false).and_then(|r| r.program_size) else {
            continue;
        };
        let g = guide_of(goal)?;
        let names: Vec<&str> = g.steps.iter().map(|s| s.sketch.name.as_str()).collect();
        let sizes: Vec<usize> = g.steps.iter().map(|s| s.sketch.size).collect();
        let (guides, last) = names.split_at(names.len() - 1);
        rows.push(vec![
            goal.clone(),
            guides.join(" + "),
            last[0].to_string(),
            sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" + "),
            sizes.iter().sum::<usize>().to_string(),
            size.to_string(),
        ]);
    }
    write_csv(&dir.join("table5.csv"), &TABLE5_COLUMNS, &rows)
}

pub const FIG16_COLUMNS: [&str; 8] = [
    "goal",
    "search",
    "step",
    "iteration",
    "enodes",
    "eclasses",
    "rules_applied",
    "rules_applied_total",
];

/// The goals Figure 16 plots.
pub const FIG16_GOALS: [&str; 2] = ["blocking", "parallel"];

/// Figure 16: per-iteration growth of guided and unguided searches, as CSV and SVG.
pub fn fig16(dir: &Path, runs: &Runs) -> Result<()> {
    let mut rows = vec![];
    let mut series = vec![];
    for unguided in [true, false] {
        for goal in FIG16_GOALS {
            let Some(r) = runs(goal, unguided) else {
                continue;
            };
            let search = if unguided { "unguided" } else { "guided" };
            let mut total = 0;
            let mut points = vec![];
            for (x, it) in r.iterations.iter().enumerate() {
                total += it.rules_applied;
                rows.push(vec![
                    goal.to_string(),
                    search.to_string(),
                    (it.step + 1).to_string(),
                    (x + 1).to_string(),
                    it.enodes.to_string(),
                    it.eclasses.to_string(),
                    it.rules_applied.to_string(),
                    total.to_string(),
                ]);
                points.push(super::plot::Point {
                    iteration: x + 1,
                    step: it.step,
                    enodes: it.enodes,
                    eclasses: it.eclasses,
                    rules_total: total,
                });
            }
            series.push(super::plot::Panel {
                title: format!("{goal}, {search}"),
                points,
            });
        }
    }
    write_csv(&dir.join("fig16.csv"), &FIG16_COLUMNS, &rows)?;
    super::plot::fig16(&dir.join("fig16.svg"), &series)
}
