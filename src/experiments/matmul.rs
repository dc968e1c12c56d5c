//! The matrix multiplication case study (paper section 5.2): Tables 3, 4 and 5 and Figure 16.
//!
//! Each goal is `programs/GOAL.guide`. Guided (Table 4), the guide's steps run in order;
//! unguided (Table 3), one search uses the rules of all its steps and stops at its last
//! sketch. Goals whose unguided searches grow the same e-graph (the same rules from the same
//! program) share one search that checks each goal's sketch ([`unguided_groups`]): each
//! goal's row is where that search found it, or where it stopped. Every search runs in a
//! child process (`sketchlog job`) that prints a line per iteration, step and goal as
//! it goes, so a run stopped by a cap still says how far it got; the parent turns these
//! lines into CSV files, written after every row.

use super::Reason;
use crate::cluster::child::{self, End, ProcessLimits};
use crate::egraph::saturate::{resident_mb, IterationStats, Limits, StopReason};
use crate::error::{Error, Result};
use crate::files::write_atomically;
use crate::guide::{self, parse::load_guide, Guide, Step};
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
pub fn unguided_step(g: &Guide, caps: ProcessLimits) -> Step {
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
        ..Limits::default()
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
/// (guided) or goal (unguided) as it finishes, then its peak RSS.
#[derive(serde::Serialize, serde::Deserialize)]
enum Report {
    Iteration(Iteration),
    Step(StepRow),
    /// A goal of an unguided search, when found or when the search stopped.
    Goal {
        goal: String,
        step: StepRow,
        program_size: Option<usize>,
    },
    Done {
        peak_rss_mb: f64,
        /// The size of the program found (operators), when every step was found.
        program_size: Option<usize>,
    },
}

impl Iteration {
    fn of(step: usize, s: &IterationStats) -> Iteration {
        Iteration {
            step,
            iteration: s.iteration,
            enodes: s.enodes,
            eclasses: s.eclasses,
            rules_applied: s.rules_applied(),
        }
    }
}

impl StepRow {
    /// A search for `sketch` that ran `iterations` for `seconds` and stopped for `stop`.
    fn new(sketch: &str, iterations: &[Iteration], seconds: f64, stop: StopReason) -> StepRow {
        let last = iterations.last();
        StepRow {
            sketch: sketch.to_string(),
            found: stop == StopReason::Found,
            iterations: iterations.len(),
            seconds,
            rules_applied: iterations.iter().map(|i| i.rules_applied).sum(),
            enodes: last.map_or(0, |i| i.enodes),
            eclasses: last.map_or(0, |i| i.eclasses),
            peak_rss_mb: resident_mb(true),
            stop,
        }
    }
}

/// The child process of a guided goal: runs its steps, reporting each iteration and step.
pub fn guided_main(goal: &str) -> Result<()> {
    let g = guide_of(goal)?;
    let mut reports = guide::run(
        &g,
        |step, s| child::report(&Report::Iteration(Iteration::of(step, s))),
        |step, r| {
            let iterations: Vec<Iteration> = r
                .outcome
                .iterations
                .iter()
                .map(|s| Iteration::of(step, s))
                .collect();
            let row = StepRow::new(&r.sketch, &iterations, r.seconds, r.outcome.stop);
            child::report(&Report::Step(row));
        },
    )?;
    let last = reports.pop().expect("a guide has steps");
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

/// The child process of unguided goals that share one search ([`unguided_groups`]): grows
/// its e-graph once under `caps`, checking every goal's last sketch after each iteration, and
/// reports each iteration, each goal when found, and the goals never found when it stops.
pub fn unguided_main(goals: &[String], caps: ProcessLimits) -> Result<()> {
    let guides = goals
        .iter()
        .map(|g| guide_of(g))
        .collect::<Result<Vec<_>>>()?;
    if guides.iter().any(|g| search_of(g) != search_of(&guides[0])) {
        return Err(Error::bad_input(format!(
            "goals {} do not grow the same e-graph unguided: one search each",
            goals.join(", ")
        )));
    }
    let step = unguided_step(&guides[0], caps);
    let sketches: Vec<_> = guides
        .iter()
        .map(|g| {
            let last = g.steps.last().expect("a guide has steps");
            guide::shared::Target::Sketch(last.sketch.clone(), last.cost.clone())
        })
        .collect();
    let t0 = std::time::Instant::now();
    let iterations = std::cell::RefCell::new(vec![]);
    let mut found = vec![false; goals.len()];
    let outcome = guide::shared::search_each(
        &guides[0].start,
        &step,
        &sketches,
        |s| {
            let i = Iteration::of(0, s);
            child::report(&Report::Iteration(i.clone()));
            iterations.borrow_mut().push(i);
        },
        |i, f| {
            found[i] = true;
            let seen = &iterations.borrow()[..f.iterations];
            let step = StepRow {
                peak_rss_mb: f.peak_rss_mb,
                ..StepRow::new(sketches[i].name(), seen, f.seconds, StopReason::Found)
            };
            child::report(&Report::Goal {
                goal: goals[i].clone(),
                step,
                program_size: Some(f.term.operator_count()),
            });
        },
    )?;
    let seen = iterations.borrow();
    let seconds = t0.elapsed().as_secs_f64();
    for (i, goal) in goals.iter().enumerate().filter(|(i, _)| !found[*i]) {
        child::report(&Report::Goal {
            goal: goal.clone(),
            step: StepRow::new(sketches[i].name(), &seen, seconds, outcome.stop),
            program_size: None,
        });
    }
    child::report(&Report::Done {
        peak_rss_mb: resident_mb(true),
        program_size: None,
    });
    Ok(())
}

/// The unguided goals of `goals` that grow the same e-graph (start program, rules, filter
/// and iteration limit alike), grouped in the order first seen: each group is one search.
pub fn unguided_groups(goals: &[String]) -> Result<Vec<Vec<String>>> {
    let mut groups: Vec<(String, Vec<String>)> = vec![];
    for goal in goals {
        let search = search_of(&guide_of(goal)?);
        match groups.iter_mut().find(|(k, _)| *k == search) {
            Some((_, members)) => members.push(goal.clone()),
            None => groups.push((search, vec![goal.clone()])),
        }
    }
    Ok(groups.into_iter().map(|(_, members)| members).collect())
}

/// What determines the e-graph of a guide's unguided search (not the sketch that stops it):
/// its start program, rules, filter, iteration limit and sketch engine, written out.
fn search_of(g: &Guide) -> String {
    let s = unguided_step(g, UNGUIDED_CAPS);
    let what = (
        &g.start,
        &s.rules,
        &s.filter,
        s.limits.iterations,
        s.sketch_engine,
    );
    format!("{what:?}")
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
    pub stop: StopReason,
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

    /// Found when the child finished and every step it ran was found.
    pub fn found_all(&self) -> bool {
        !self.steps.is_empty() && self.steps.iter().all(|s| s.found) && self.end == End::Finished
    }

    /// Why it stopped: the last step's reason, or the cap that ended the child.
    pub fn stop(&self) -> StopReason {
        match (&self.end, self.steps.last()) {
            (End::Finished, Some(s)) => s.stop,
            (end, _) => end.reason(),
        }
    }

    fn max(&self, f: impl Fn(&Iteration) -> usize) -> usize {
        self.iterations.iter().map(f).max().unwrap_or(0)
    }
}

fn read_reports(goal: &str, run: &child::ChildRun) -> GoalRun {
    let mut out = GoalRun {
        goal: goal.to_string(),
        iterations: vec![],
        steps: vec![],
        end: run.end.clone(),
        // What the child reports; for a child stopped by a cap, what the parent saw.
        peak_rss_mb: run.peak_rss_mb,
        wall_s: run.wall_s,
        program_size: None,
    };
    for r in child::reports(&run.stdout) {
        match r {
            Report::Iteration(i) => out.iterations.push(i),
            Report::Step(s) => out.steps.push(s),
            Report::Goal { .. } => {}
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

/// Each goal's run in a shared unguided search: the iterations up to where it was found,
/// its time and memory then; a goal never found has the whole search's.
fn read_group_reports(goals: &[String], run: &child::ChildRun) -> Vec<GoalRun> {
    let whole = read_reports("", run);
    let mut runs: Vec<GoalRun> = goals
        .iter()
        .map(|goal| GoalRun {
            goal: goal.clone(),
            ..whole.clone()
        })
        .collect();
    for r in child::reports(&run.stdout) {
        let Report::Goal {
            goal,
            step,
            program_size,
        } = r
        else {
            continue;
        };
        let Some(out) = runs.iter_mut().find(|r| r.goal == goal) else {
            continue;
        };
        if step.found {
            out.iterations.truncate(step.iterations);
            out.end = End::Finished;
            out.peak_rss_mb = Some(step.peak_rss_mb);
            out.wall_s = step.seconds;
            out.program_size = program_size;
        }
        out.steps = vec![step];
    }
    runs
}

/// Runs one goal's guide in a child process under `caps`.
pub fn run_guided(goal: &str, caps: ProcessLimits) -> Result<GoalRun> {
    guide_of(goal)?;
    let work = super::jobs::Work::Guided {
        goal: goal.to_string(),
    };
    let args = super::jobs::child_args(work, caps);
    Ok(read_reports(goal, &child::run(&args, caps)?))
}

/// Runs the shared unguided search of `goals` (one of [`unguided_groups`]) in a child
/// process under `caps`: each goal's run.
pub fn run_unguided(goals: &[String], caps: ProcessLimits) -> Result<Vec<GoalRun>> {
    let work = super::jobs::Work::Unguided {
        goals: goals.to_vec(),
    };
    let args = super::jobs::child_args(work, caps);
    Ok(read_group_reports(goals, &child::run(&args, caps)?))
}

/// ProcessLimits of an unguided row (Table 3, and Figure 16's unguided searches) by default: small
/// enough for the main job to fit an afternoon on a 2-core machine, large enough to show the
/// blow-up and the paper's pattern (baseline and blocking found, the copy-rule goals not).
pub const UNGUIDED_CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 3000,
    time: Duration::from_secs(200),
};

/// The paper's caps of an unguided row: 60 GB, and time for its searches of over an hour.
pub const PAPER_UNGUIDED_CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 60_000,
    time: Duration::from_secs(7200),
};

/// ProcessLimits of a guided row: the guides' own limits stop it; these only guard the machine.
pub const GUIDED_CAPS: ProcessLimits = ProcessLimits {
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
pub fn table3(dir: &Path, goals: &[String], caps: ProcessLimits, runs: &Runs) -> Result<()> {
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
            r.stop().to_string(),
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
                s.stop.to_string(),
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
