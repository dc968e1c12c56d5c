//! The automatic guides' table (`reproduce auto`, `results/auto.csv`): for each target, the
//! guide `guide-auto` finds from the target alone beside the guide written by hand (or,
//! where there is none, the unguided search), each run in its own child process.
//!
//! Targets: the seven matrix multiplication goals (their final sketches, all of
//! `rules/mm.rules`), and the Rise project's 4D reorder 4321 and 2D tiling tests (their goal
//! terms, their test's rule set).

use super::input;
use super::Reason;
use crate::cluster::child::{self, ProcessLimits};
use crate::egraph::filter::{Filter, SizeScope};
use crate::egraph::normal::NormalForm;
use crate::egraph::saturate::{resident_mb, Limits, StopReason};
use crate::error::{Error, Result};
use crate::guide::{self, auto, Cost, Step, Target as Aim};
use crate::rules::Params;
use crate::sketch::SketchDecl;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A target of the table.
pub struct Target {
    pub name: &'static str,
    /// `FILE.rise:NAME`, under the inputs directory.
    pub program: &'static str,
    /// `FILE.sketch:NAME` or, for a goal, `FILE.rise:NAME`.
    pub target: &'static str,
    pub goal: bool,
    /// The candidates: `FILE.rules[:SET]`.
    pub rules: &'static str,
    /// The written guide compared with, or `None`: the unguided search.
    pub written: Option<&'static str>,
    pub limits: Limits,
    pub filter: Filter,
    pub normal_form: NormalForm,
}

/// The matrix multiplication goals: their guides' final sketches and settings.
const MATMUL: [(&str, &str); 7] = [
    ("baseline", "baseline"),
    ("blocking", "reorder1"),
    ("vectorization", "lower1"),
    ("loop-perm", "lower2"),
    ("array-packing", "lower3"),
    ("cache-blocks", "lower4"),
    ("parallel", "lower5"),
];

/// Every target, in table order.
pub fn targets() -> Vec<Target> {
    let matmul = MATMUL.into_iter().map(|(goal, sketch)| Target {
        name: goal,
        program: "programs/matmul.rise:mm",
        target: sketch,
        goal: false,
        rules: "rules/mm.rules",
        written: Some(goal),
        limits: Limits {
            iterations: 60,
            enodes: 10_000_000,
            time: Duration::from_secs(300),
            memory_mb: Some(4000),
            ..Limits::default()
        },
        filter: Filter {
            array_depth: Some(6),
            ast_size: Some(300),
            sizes_positive: true,
            ast_size_scope: SizeScope::Enode,
        },
        normal_form: NormalForm::Benf,
    });
    let shine = |name, program, target, rules, written, filter| Target {
        name,
        program,
        target,
        goal: true,
        rules,
        written,
        limits: Limits {
            iterations: 30,
            enodes: 1_000_000,
            time: Duration::from_secs(60),
            memory_mb: Some(4000),
            ..Limits::default()
        },
        filter,
        normal_form: NormalForm::Cnf,
    };
    matmul
        .chain([
            shine(
                "reorder-4d-4321",
                "programs/shine/reorder.rise:reorder4d",
                "programs/shine/reorder.rise:reorder4d-4321",
                "rules/shine.rules:reorder-cnf",
                Some("shine/reorder4d-4321"),
                Filter::default(),
            ),
            // The Rise project's test's settings: its size filter (`ASTSizePredicate`, 42).
            shine(
                "tile-2d",
                "programs/shine/tiling.rise:tile2d",
                "programs/shine/tiling.rise:tile2d-both",
                "rules/shine.rules:tiling-cnf",
                None,
                Filter {
                    array_depth: Some(4),
                    ast_size: Some(42),
                    sizes_positive: false,
                    ast_size_scope: SizeScope::Class,
                },
            ),
        ])
        .collect()
}

/// The target named `name`.
pub fn target(name: &str) -> Result<Target> {
    let all = targets();
    let names: Vec<&str> = all.iter().map(|t| t.name).collect();
    let listing = names.join(", ");
    (all.into_iter().find(|t| t.name == name))
        .ok_or_else(|| Error::bad_input(format!("no target `{name}` (available: {listing})")))
}

impl Target {
    /// The target as `guide-auto` takes it, with its file under the inputs directory.
    fn spec(&self) -> (String, String, String) {
        let at = |p: &str| input(p).display().to_string();
        let target = match self.goal {
            true => at(self.target),
            false => format!("{}:{}", at("programs/mm.sketch"), self.target),
        };
        (at(self.program), target, at(self.rules))
    }

    /// The written guide's file.
    fn written_file(&self) -> Option<PathBuf> {
        (self.written).map(|g| input(format!("programs/{g}.guide")))
    }

    /// The files a row reads.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let (program, target, rules) = self.spec();
        let mut files: Vec<PathBuf> = [program, target, rules]
            .iter()
            .map(|s| PathBuf::from(guide::file_of(s)))
            .collect();
        files.extend(self.written_file());
        files.sort();
        files.dedup();
        files
    }
}

/// The columns of `results/auto.csv`.
pub const COLUMNS: [&str; 10] = [
    "target",
    "guide",
    "found",
    "steps",
    "rule_sets",
    "largest_enodes",
    "guide_time_s",
    "search_s",
    "trials",
    "peak_rss_mb",
];

/// One guide of a target: found automatically, written by hand, or none (unguided).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub target: String,
    /// `auto`, `written` or `unguided`.
    pub guide: String,
    pub found: bool,
    pub stop: StopReason,
    pub steps: Option<usize>,
    /// Each step's rule sets, `>` between steps.
    pub rule_sets: String,
    pub largest_enodes: Option<usize>,
    /// The steps' time: what running the guide takes.
    pub guide_time_s: Option<f64>,
    /// `auto`: the whole search for the guide, every trial included.
    pub search_s: Option<f64>,
    pub trials: Option<usize>,
    pub peak_rss_mb: Option<f64>,
}

impl Row {
    fn of(target: &str, guide: &str, stop: StopReason) -> Row {
        Row {
            target: target.into(),
            guide: guide.into(),
            found: stop == StopReason::Found,
            stop,
            steps: None,
            rule_sets: String::new(),
            largest_enodes: None,
            guide_time_s: None,
            search_s: None,
            trials: None,
            peak_rss_mb: None,
        }
    }

    /// Its cells, in the order of [`COLUMNS`].
    pub fn fields(&self) -> Vec<String> {
        use super::cell;
        vec![
            self.target.clone(),
            self.guide.clone(),
            match self.found {
                true => "true".into(),
                false => format!("false ({})", self.stop),
            },
            cell(self.steps, |n| n.to_string()),
            self.rule_sets.clone(),
            cell(self.largest_enodes, |n| n.to_string()),
            cell(self.guide_time_s, |s| format!("{s:.3}")),
            cell(self.search_s, |s| format!("{s:.3}")),
            cell(self.trials, |n| n.to_string()),
            cell(self.peak_rss_mb, |mb| format!("{mb:.1}")),
        ]
    }
}

/// ProcessLimits of a row's child: the searches' own limits stop it; these guard the machine.
pub const CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 8000,
    time: Duration::from_secs(900),
};

/// The child process of a row: the automatic guide's search, or the written guide (or the
/// unguided search); reports the row.
pub fn row_main(name: &str, written: bool) -> Result<()> {
    let t = target(name)?;
    let row = match (written, t.written_file()) {
        (false, _) => auto_row(&t)?,
        (true, Some(file)) => written_row(&t, &file)?,
        (true, None) => unguided_row(&t)?,
    };
    child::report(&row);
    Ok(())
}

fn settings(t: &Target) -> auto::Settings {
    auto::Settings {
        cost: Cost::AstSize,
        limits: t.limits.clone(),
        filter: t.filter.clone(),
        normal_form: t.normal_form,
        total: auto::TOTAL_TIME,
    }
}

fn auto_row(t: &Target) -> Result<Row> {
    let (program, target, rules) = t.spec();
    let settings = settings(t);
    let def = crate::rise::load_def_ref(&program, Path::new(""))?;
    let aim = match t.goal {
        true => Aim::Goal(&target),
        false => Aim::Sketch(&target),
    };
    let checkpoints = auto::checkpoints(aim, &def, &settings.limits, &Params::default())?;
    let candidates = auto::candidates(&rules, &Params::default())?;
    let t0 = Instant::now();
    let (steps, missed) = auto::find(&def.term, &checkpoints, &candidates, &settings, |_| {})?;
    let sets: Vec<String> = (steps.iter())
        .map(|s| {
            let names = s
                .candidate
                .sets
                .iter()
                .map(|r| r.set.clone().unwrap_or("*".into()));
            names.collect::<Vec<_>>().join("+")
        })
        .collect();
    Ok(Row {
        steps: Some(steps.len()),
        rule_sets: sets.join(" > "),
        largest_enodes: steps.iter().map(|s| s.report.outcome.size().0).max(),
        guide_time_s: Some(steps.iter().map(|s| s.report.seconds).sum()),
        search_s: Some(t0.elapsed().as_secs_f64()),
        trials: Some(steps.iter().map(|s| s.trials).sum()),
        peak_rss_mb: Some(resident_mb(true)),
        ..Row::of(t.name, "auto", missed.unwrap_or(StopReason::Found))
    })
}

fn written_row(t: &Target, file: &Path) -> Result<Row> {
    let g = guide::parse::load_guide(file)?;
    let reports = guide::run(&g, |_, _| {}, |_, _| {})?;
    let last = reports.last().expect("a guide has steps");
    let found = reports.len() == g.steps.len() && last.outcome.found();
    // Each step's rules by the set of the rules file they are (`custom` when none).
    let (file, _) = crate::rules::split_spec(t.rules);
    let sets_of = crate::rules::load_rule_file(&input(file))?;
    let sets: Vec<String> = (g.steps.iter())
        .map(|s| {
            let mut names: Vec<&str> = s.rules.iter().map(|r| r.name.as_str()).collect();
            names.sort();
            let same = |set: &&crate::rise::syntax::RulesetDecl| {
                let rules = crate::rules::select(&sets_of, Some(&set.name), &g.params);
                rules.is_ok_and(|rules| {
                    let mut those: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
                    those.sort();
                    those == names
                })
            };
            let set = sets_of.rulesets.iter().find(same);
            set.map_or("custom".into(), |set| set.name.clone())
        })
        .collect();
    let stop = match found {
        true => StopReason::Found,
        false => last.outcome.stop,
    };
    Ok(Row {
        steps: Some(g.steps.len()),
        rule_sets: sets.join(" > "),
        largest_enodes: reports.iter().map(|r| r.outcome.size().0).max(),
        guide_time_s: Some(reports.iter().map(|r| r.seconds).sum()),
        peak_rss_mb: Some(resident_mb(true)),
        ..Row::of(t.name, "written", stop)
    })
}

fn unguided_row(t: &Target) -> Result<Row> {
    let (program, target, rules) = t.spec();
    let def = crate::rise::load_def_ref(&program, Path::new(""))?;
    let of = (def.name.as_str(), &def.term.ty);
    let goal = guide::load_goal(&target, Path::new(""), of, &t.limits)?;
    let rules = crate::rules::load_selection(&rules, &Params::default())?;
    let mut step = Step::new(
        SketchDecl::any("goal"),
        rules,
        (Cost::AstSize, t.limits.clone(), t.filter.clone()),
    );
    step.normal_form = t.normal_form;
    step.goal = Some(goal);
    let report = guide::search(&def.term, &step, |_| {})?;
    Ok(Row {
        steps: Some(1),
        rule_sets: t.rules.rsplit(':').next().unwrap_or_default().into(),
        largest_enodes: Some(report.outcome.size().0),
        guide_time_s: Some(report.seconds),
        peak_rss_mb: Some(resident_mb(true)),
        ..Row::of(t.name, "unguided", report.outcome.stop)
    })
}

/// Runs a row in a child process under `caps`; a child stopped by a cap (or failing) gives a
/// row that says so.
pub fn run_child(name: &str, written: bool, caps: ProcessLimits) -> Result<Row> {
    let work = super::jobs::Work::Auto {
        target: name.to_string(),
        written,
    };
    let run = child::run(&super::jobs::child_args(work, caps), caps)?;
    if let Some(row) = child::reports::<Row>(&run.stdout).last() {
        return Ok(row);
    }
    let t = target(name)?;
    let guide = match (written, t.written.is_some()) {
        (false, _) => "auto",
        (true, true) => "written",
        (true, false) => "unguided",
    };
    Ok(Row {
        peak_rss_mb: run.peak_rss_mb,
        guide_time_s: Some(run.wall_s),
        ..Row::of(name, guide, run.end.reason())
    })
}
