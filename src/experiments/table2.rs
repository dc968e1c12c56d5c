//! The paper's Table 2 (section 5.1): can equality saturation prove a start term equal to a
//! goal term, per goal and lambda-calculus encoding?
//!
//! Goals: `programs/{reduction,fission,binomial}.rise` (`start`, `goal`), rules from
//! `rules/table2.rules`. "Found" means the goal's e-class is the start's (a query on the
//! e-graph, checked before every iteration; with names, a query for a term alpha-equivalent
//! to the goal). Encodings: {explicit, extraction-based} substitution x {names, De Bruijn
//! indices}.

use super::child::{self, Caps, End};
use crate::egraph::names::{self, Binding};
use crate::egraph::saturate::{normalise, same_class, saturate, Limits, Outcome};
use crate::egraph::subst::SharedSnapshot;
use crate::egraph::{encode, explicit, rise_egraph, subst};
use crate::error::{Error, Result};
use crate::rise::infer::elaborate_def;
use crate::rules::debruijn::{self, Encoding, Substitution};
use crate::rules::{load_rule_file, select};
use std::path::Path;
use std::time::Duration;

pub const GOALS: [&str; 3] = ["reduction", "fission", "binomial"];
/// (substitution, binding) encodings, in the paper's order.
pub const ENCODINGS: [(&str, &str); 4] = [
    ("explicit", "names"),
    ("explicit", "debruijn"),
    ("extraction", "names"),
    ("extraction", "debruijn"),
];

fn substitution(name: &str) -> Result<Substitution> {
    match name {
        "extraction" => Ok(Substitution::Extraction),
        "explicit" => Ok(Substitution::Explicit),
        other => Err(Error::bad_input(format!(
            "unknown substitution `{other}` (explicit, extraction)"
        ))),
    }
}

pub const COLUMNS: [&str; 12] = [
    "goal",
    "substitution",
    "binding",
    "found",
    "iterations",
    "saturation_s",
    "wall_s",
    "peak_rss_mb",
    "rules_applied",
    "enodes",
    "eclasses",
    "stop_reason",
];

/// The encoding named by a substitution (`explicit`, `extraction`) and a binding.
pub fn encoding(subst: &str, binding: &str) -> Result<Encoding> {
    Ok(Encoding {
        substitution: substitution(subst)?,
        binding: Binding::parse(binding)?,
    })
}

/// Searches for one goal with one encoding, calling `on_iteration` with each iteration's
/// figures: start and goal from `programs/GOAL.rise`, rules from `rules/table2.rules`.
pub fn search_goal(
    goal: &str,
    encoding: Encoding,
    limits: &Limits,
    on_iteration: impl FnMut(&crate::egraph::saturate::IterationStats),
) -> Result<Outcome> {
    let program = crate::rise::load_program(Path::new(&format!("programs/{goal}.rise")))?;
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
        &load_rule_file(Path::new("rules/table2.rules"))?,
        Some(goal),
    )?;
    let mut eg = rise_egraph()?;
    let snap = SharedSnapshot::default();
    let (rw, subst) = ("rw", encoding.substitution);
    match encoding.binding {
        Binding::DeBruijn => {
            encode::load_term(&mut eg, &start)?;
            match subst {
                Substitution::Extraction => subst::add_beta_eta(&mut eg, rw, &snap)?,
                Substitution::Explicit => explicit::add_explicit_substitution(&mut eg, rw, &snap)?,
            }
        }
        Binding::Names => {
            encode::load_named_term(&mut eg, &start)?;
            match subst {
                Substitution::Extraction => names::add_beta_eta(&mut eg, rw, &snap)?,
                Substitution::Explicit => names::add_explicit_substitution(&mut eg, rw, &snap)?,
            }
        }
    }
    debruijn::install_for(&mut eg, rw, &rules, &snap, encoding, &Default::default())?;
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

/// Settings of a table run.
pub struct Table2Config {
    /// Only rows with this substitution (all when `None`).
    pub substitution: Option<String>,
    /// Only rows with this binding (all when `None`).
    pub binding: Option<String>,
    pub memory_mb: u64,
    pub time: Duration,
    pub out: std::path::PathBuf,
}

/// The outcome of one row run in a child process: the row's fields after `goal`,
/// `substitution`, `binding` (in [`COLUMNS`] order).
fn run_child(goal: &str, (subst, bind): (&str, &str), cfg: &Table2Config) -> Result<Vec<String>> {
    let time = cfg.time.as_secs().to_string();
    let args = [
        "table2-row",
        goal,
        "--substitution",
        subst,
        "--binding",
        bind,
        "--time-s",
        &time,
    ]
    .map(String::from)
    .to_vec();
    let caps = Caps {
        memory_mb: cfg.memory_mb,
        time: cfg.time,
    };
    let run = child::run(&args, caps)?;
    let wall = format!("{:.6}", run.wall_s);
    let result = run
        .stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("row,"));
    // The child prints: row,found,saturation,rules,enodes,eclasses,stop,iterations,peak_rss
    Ok(match (&run.end, result) {
        (End::Finished, Some(l)) => {
            let f: Vec<&str> = l.split(',').collect();
            [f[0], f[6], f[1], &wall, f[7], f[2], f[3], f[4], f[5]]
                .map(String::from)
                .to_vec()
        }
        (end, _) => {
            // How far it got: the last `progress,iteration,rules,enodes,eclasses` line.
            let last = run
                .stdout
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("progress,"));
            let p: Vec<String> = match last {
                Some(l) => l.split(',').map(String::from).collect(),
                None => vec![String::new(); 4],
            };
            let reason = if *end == End::Finished {
                "error"
            } else {
                end.reason()
            };
            // Peak RSS as last seen in /proc (the child could not report it).
            let peak = run
                .peak_rss_mb
                .map_or_else(String::new, |mb| format!("{mb:.1}"));
            vec![
                "false".into(),
                p[0].clone(),
                String::new(),
                wall,
                peak,
                p[1].clone(),
                p[2].clone(),
                p[3].clone(),
                reason.into(),
            ]
        }
    })
}

/// Runs every row in a child process; the CSV is rewritten (atomically) as each row
/// finishes, so an interrupted run keeps every finished row.
pub fn reproduce(cfg: &Table2Config) -> Result<()> {
    if let Some(s) = &cfg.substitution {
        substitution(s)?;
    }
    if let Some(b) = &cfg.binding {
        Binding::parse(b)?;
    }
    crate::error::check_writable(&cfg.out)?;
    let mut rows = vec![];
    for goal in GOALS {
        for (subst, bind) in ENCODINGS {
            let skip = |filter: &Option<String>, x| filter.as_deref().is_some_and(|f| f != x);
            if skip(&cfg.substitution, subst) || skip(&cfg.binding, bind) {
                continue;
            }
            let fields = run_child(goal, (subst, bind), cfg)?;
            let row: Vec<String> = [goal, subst, bind]
                .map(String::from)
                .into_iter()
                .chain(fields)
                .collect();
            eprintln!("{}", row.join(","));
            rows.push(row);
            super::matmul::write_csv(&cfg.out, &COLUMNS, &rows)?;
        }
    }
    Ok(())
}

/// The targets of the efficient encoding (issue and `performance-anchors.md`): the reference
/// prototype's saturation time on our machines, and 10 MB.
const TARGETS: [(&str, f64, f64); 3] = [
    ("reduction", 1.0, 10.0),
    ("fission", 5.0, 10.0),
    ("binomial", 100.0, 10.0),
];

/// `sketchlog bench table2`: the efficient encoding's saturation time and peak RSS per goal,
/// medians of `runs` child-process runs, beside the targets.
pub fn bench(cfg: &Table2Config, runs: usize) -> Result<()> {
    println!("goal       runs  saturation ms (median)  target ms  peak RSS MB (median)  target MB");
    for (goal, target_ms, target_mb) in TARGETS {
        let mut times = vec![];
        let mut rss = vec![];
        for _ in 0..runs.max(1) {
            let f = run_child(goal, ("extraction", "debruijn"), cfg)?;
            if f[0] != "true" {
                return Err(Error::bad_input(format!("{goal} was not found ({})", f[8])));
            }
            times.push(f[2].parse::<f64>().unwrap_or(f64::NAN) * 1000.0);
            rss.push(f[4].parse::<f64>().unwrap_or(f64::NAN));
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

/// What a child process prints: each iteration's figures (so a row stopped by a limit
/// reports how far it got), then the row's figures and its peak RSS.
pub fn row_main(goal: &str, (subst, binding): (&str, &str), time: Duration) -> Result<()> {
    if !GOALS.contains(&goal) {
        return Err(Error::bad_input(format!(
            "unknown goal `{goal}` (reduction, fission, binomial)"
        )));
    }
    let limits = Limits {
        time,
        ..Limits::default()
    };
    let mut rules = 0;
    let out = search_goal(goal, encoding(subst, binding)?, &limits, |s| {
        rules += s.rules_applied;
        println!(
            "progress,{},{rules},{},{}",
            s.iteration, s.enodes, s.eclasses
        );
    })?;
    let (enodes, eclasses) = out.size();
    println!(
        "row,{},{:.6},{},{},{},{},{},{:.1}",
        out.found(),
        out.saturation.as_secs_f64(),
        out.rules_applied(),
        enodes,
        eclasses,
        out.stop.name(),
        out.iterations.len(),
        crate::egraph::saturate::resident_mb(true)
    );
    Ok(())
}
