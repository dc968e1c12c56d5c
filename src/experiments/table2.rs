//! The paper's Table 2 (section 5.1): can equality saturation prove a start term equal to a
//! goal term, per goal and lambda-calculus encoding?
//!
//! Goals: `programs/{reduction,fission,binomial}.rise` (`start`, `goal`), rules from
//! `rules/table2.rules`. "Found" means the goal's e-class is the start's (a query on the
//! e-graph, checked before every iteration; with names, a query for a term alpha-equivalent
//! to the goal). Encodings: {explicit, extraction-based} substitution x {names, De Bruijn
//! indices}.

use super::jobs::Work;
use super::Reason;
use crate::cluster::child::{self, End, ProcessLimits};
use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::egraph::lookup::same_class;
use crate::egraph::names;
use crate::egraph::saturate::{normalise, saturate, Limits, Outcome, StopReason};
use crate::egraph::subst::SharedSnapshot;
use crate::egraph::{encode, rise_egraph};
use crate::error::{Error, Result};
use crate::rise::infer::elaborate_def;
use crate::rules::install::install_for;
use crate::rules::{load_rule_file, select};
use std::time::Duration;

pub const GOALS: [&str; 3] = ["reduction", "fission", "binomial"];
pub const COLUMNS: [&str; 13] = [
    "goal",
    "substitution",
    "binding",
    "found",
    "iterations",
    "saturation_s",
    "wall_s",
    "peak_rss_mb",
    "rules_applied",
    "matches_fired",
    "enodes",
    "eclasses",
    "stop_reason",
];

/// Searches for one goal with one encoding, calling `on_iteration` with each iteration's
/// figures: start and goal from `programs/GOAL.rise`, rules from `rules/table2.rules`.
pub fn search_goal(
    goal: &str,
    encoding: Encoding,
    limits: &Limits,
    on_iteration: impl FnMut(&crate::egraph::saturate::IterationStats),
) -> Result<Outcome> {
    let program = crate::rise::load_program(&super::input(format!("programs/{goal}.rise")))?;
    // As in the reference, the reduction goal starts from the unnormalised term (the search
    // itself must beta-reduce it); the other starts are in beta-eta normal form.
    let start = elaborate_def(&program, "start")?;
    let start = if goal == "reduction" {
        start
    } else {
        normalise(&start, &Limits::default())?.0
    };
    let target = normalise(&*elaborate_def(&program, "goal")?, &Limits::default())?.0;
    let rules = select(
        &load_rule_file(&super::input("rules/table2.rules"))?,
        Some(goal),
        &crate::rules::Params::default(),
    )?;
    let mut eg = rise_egraph()?;
    let snap = SharedSnapshot::default();
    let rw = "rw";
    match encoding.binding {
        Binding::DeBruijn => encode::load_term(&mut eg, &start)?,
        Binding::Names => encode::load_named_term(&mut eg, &start)?,
    };
    encoding.install(&mut eg, rw, &snap)?;
    let benf = crate::egraph::normal::NormalForm::Benf;
    install_for(
        &mut eg,
        rw,
        &rules,
        &snap,
        (encoding, benf),
        &Default::default(),
    )?;
    let found = |eg: &mut egglog::EGraph| -> Result<bool> {
        match encoding.binding {
            Binding::DeBruijn => Ok(same_class(eg, &start, &target)),
            Binding::Names => names::alpha_found(eg, &start, &target),
        }
    };
    saturate(
        &mut eg,
        rw,
        &snap,
        limits,
        |eg| Ok(found(eg)?.into()),
        on_iteration,
    )
}

/// ProcessLimits of a row: 2 GB as in the paper, 240 s.
pub const CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 2000,
    time: Duration::from_secs(240),
};

/// What a row's child process reports, one JSON line each: every iteration as it finishes
/// (so that a row stopped by a cap says how far it got), then the row.
#[derive(serde::Serialize, serde::Deserialize)]
enum Report {
    Progress {
        iteration: usize,
        /// Rules applied so far (as egg counts them), and matches fired.
        rules_applied: usize,
        matches_fired: usize,
        /// This iteration's rules applied, by rule (egg's `Iteration::applied`).
        #[serde(default)]
        applied: std::collections::BTreeMap<String, usize>,
        enodes: usize,
        eclasses: usize,
    },
    Row(Row),
}

/// A row's figures after `goal`, `substitution` and `binding`, in [`COLUMNS`] order; empty
/// (`None`) where a row stopped by a cap has none.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub found: bool,
    pub iterations: Option<usize>,
    pub saturation_s: Option<f64>,
    /// Measured by the parent.
    pub wall_s: f64,
    /// The child's own figure; for a row stopped by a cap, as the parent last saw it.
    pub peak_rss_mb: Option<f64>,
    /// Fired matches that changed the e-graph, as egg counts rules applied.
    pub rules_applied: Option<usize>,
    /// Every match fired.
    pub matches_fired: Option<usize>,
    pub enodes: Option<usize>,
    pub eclasses: Option<usize>,
    pub stop_reason: StopReason,
}

impl Row {
    pub fn fields(&self) -> Vec<String> {
        vec![
            self.found.to_string(),
            super::cell(self.iterations, |n| n.to_string()),
            super::cell(self.saturation_s, |s| format!("{s:.6}")),
            format!("{:.6}", self.wall_s),
            super::cell(self.peak_rss_mb, |mb| format!("{mb:.1}")),
            super::cell(self.rules_applied, |n| n.to_string()),
            super::cell(self.matches_fired, |n| n.to_string()),
            super::cell(self.enodes, |n| n.to_string()),
            super::cell(self.eclasses, |n| n.to_string()),
            self.stop_reason.to_string(),
        ]
    }
}

/// One row, run in a child process under `caps`.
pub fn run_child(goal: &str, encoding: Encoding, caps: ProcessLimits) -> Result<Row> {
    let work = super::jobs::Work::Table2 {
        goal: goal.to_string(),
        substitution: encoding.substitution,
        binding: encoding.binding,
    };
    let run = child::run(&super::jobs::child_args(work, caps), caps)?;
    let (mut row, mut progress) = (None, None);
    for r in child::reports(&run.stdout) {
        match r {
            Report::Row(r) => row = Some(r),
            p @ Report::Progress { .. } => progress = Some(p),
        }
    }
    Ok(match (&run.end, row) {
        (End::Finished, Some(row)) => Row {
            wall_s: run.wall_s,
            ..row
        },
        (end, _) => {
            // How far it got: its last progress report.
            let (iteration, rules_applied, matches_fired, enodes, eclasses) = match progress {
                Some(Report::Progress {
                    iteration,
                    rules_applied,
                    matches_fired,
                    enodes,
                    eclasses,
                    ..
                }) => (
                    Some(iteration),
                    Some(rules_applied),
                    Some(matches_fired),
                    Some(enodes),
                    Some(eclasses),
                ),
                _ => (None, None, None, None, None),
            };

            Row {
                found: false,
                iterations: iteration,
                saturation_s: None,
                wall_s: run.wall_s,
                peak_rss_mb: run.peak_rss_mb,
                rules_applied,
                matches_fired,
                enodes,
                eclasses,
                stop_reason: end.reason(),
            }
        }
    })
}

/// The rows `reproduce table2` runs: every goal with every encoding, or those of one
/// substitution or binding.
pub fn tasks(substitution: Option<Substitution>, binding: Option<Binding>) -> Vec<Work> {
    GOALS
        .iter()
        .flat_map(|goal| Encoding::ALL.map(move |e| (goal, e)))
        .filter(|(_, e)| substitution.is_none_or(|s| s == e.substitution))
        .filter(|(_, e)| binding.is_none_or(|b| b == e.binding))
        .map(|(goal, e)| Work::Table2 {
            goal: goal.to_string(),
            substitution: e.substitution,
            binding: e.binding,
        })
        .collect()
}

/// The table's lines: each task with its row.
pub fn lines<'a>(rows: impl Iterator<Item = (&'a Work, &'a Row)>) -> Vec<Vec<String>> {
    rows.filter_map(|(task, row)| match task {
        Work::Table2 {
            goal,
            substitution,
            binding,
        } => Some(
            [goal.clone(), substitution.to_string(), binding.to_string()]
                .into_iter()
                .chain(row.fields())
                .collect(),
        ),
        _ => None,
    })
    .collect()
}

/// The targets of the efficient encoding: the reference
/// prototype's saturation time on our machines, and 10 MB.
const TARGETS: [(&str, f64, f64); 3] = [
    ("reduction", 1.0, 10.0),
    ("fission", 5.0, 10.0),
    ("binomial", 100.0, 10.0),
];

/// `sketchlog bench table2`: the efficient encoding's saturation time and peak RSS per goal,
/// medians of `runs` child-process runs, beside the targets.
pub fn bench(caps: ProcessLimits, runs: usize) -> Result<()> {
    println!("goal       runs  saturation ms (median)  target ms  peak RSS MB (median)  target MB");
    for (goal, target_ms, target_mb) in TARGETS {
        let mut times = vec![];
        let mut rss = vec![];
        for _ in 0..runs.max(1) {
            let row = run_child(goal, Encoding::EFFICIENT, caps)?;
            if !row.found {
                let stop = row.stop_reason;
                return Err(Error::bad_input(format!("{goal} was not found ({stop})")));
            }
            times.push(row.saturation_s.unwrap_or(f64::NAN) * 1000.0);
            rss.push(row.peak_rss_mb.unwrap_or(f64::NAN));
        }
        println!(
            "{goal:<10} {:>4}  {:>22.2}  {:>9.1}  {:>20.1}  {:>9.1}",
            times.len(),
            super::median(&times),
            target_ms,
            super::median(&rss),
            target_mb
        );
    }
    Ok(())
}

/// The child process of a row: searches, reporting each iteration, then the row.
pub fn row_main(goal: &str, encoding: Encoding, time: Duration) -> Result<()> {
    if !GOALS.contains(&goal) {
        return Err(Error::bad_input(format!(
            "unknown goal `{goal}` (reduction, fission, binomial)"
        )));
    }
    let limits = Limits {
        time,
        ..Limits::default()
    };
    let (mut rules_applied, mut matches_fired) = (0, 0);
    let out = search_goal(goal, encoding, &limits, |s| {
        rules_applied += s.rules_applied();
        matches_fired += s.matches;
        child::report(&Report::Progress {
            iteration: s.iteration,
            rules_applied,
            matches_fired,
            applied: (s.applied_by_rule.iter())
                .map(|(rule, n)| (rule.to_string(), *n))
                .collect(),
            enodes: s.enodes,
            eclasses: s.eclasses,
        });
    })?;
    let (enodes, eclasses) = out.size();
    child::report(&Report::Row(Row {
        found: out.found(),
        iterations: Some(out.iterations.len()),
        saturation_s: Some(out.saturation.as_secs_f64()),
        wall_s: 0.0,
        peak_rss_mb: Some(crate::egraph::saturate::resident_mb(true)),
        rules_applied: Some(out.rules_applied()),
        matches_fired: Some(out.matches()),
        enodes: Some(enodes),
        eclasses: Some(eclasses),
        stop_reason: out.stop,
    }));
    Ok(())
}
