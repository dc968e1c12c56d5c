//! Guides found automatically (`sketchlog guide-auto`): from a final sketch or an exact
//! goal alone, a sequence of steps that reaches it, written as an ordinary guide.
//!
//! Two choices make a guide: its checkpoints and each step's rules.
//!
//! - **Checkpoints** are derived from the target. A sketch is relaxed back towards the start
//!   program ([`relax`]: lowering undone, storage dropped, split loops put back in the start
//!   program's order); an exact goal has its innermost conjugating stages peeled off
//!   ([`peel`]). The target is the last checkpoint.
//! - **Rules** are chosen per step among candidates: each rule set given alone, then each
//!   pair, then all together. Candidates are tried at growing e-node caps (10,000, then
//!   tenfold up to the search's `--enodes`), so one that blows up costs no more than the
//!   cap at which another finds the checkpoint; once one finds it, the others are capped at
//!   its e-graph's size, and the smallest e-graph wins. A candidate that saturates or hits
//!   the iteration, time or memory limit without finding is dropped.
//!
//! A candidate is not tried where it cannot make a primitive the checkpoint needs and the
//! term lacks (`reachable`). A checkpoint that no candidate reaches is skipped: the next
//! step searches from the same term for the checkpoint after it. The search fails only when
//! the target itself is not reached.

pub mod peel;
mod reachable;
pub mod relax;
pub mod write;

use super::{search, Cost, Step, StepReport};
use crate::egraph::filter::Filter;
use crate::egraph::normal::NormalForm;
use crate::egraph::saturate::normalise;
use crate::egraph::saturate::{Limits, StopReason};
use crate::error::{Error, Result};
use crate::rise::infer::elaborate_def;
use crate::rise::syntax::{Def, RuleDecl};
use crate::rise::term::Term;
use crate::rise::LoadedDef;
use crate::sketch::{Sketch, SketchDecl};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// What a checkpoint asks for.
#[derive(Clone, Debug)]
pub enum Aim {
    /// A sketch, resolved against the program, with its text as written (sizes by name).
    Sketch { decl: SketchDecl, written: Sketch },
    /// An exact goal: its definition as written, and its term in beta-eta normal form.
    Goal { def: Def, term: Rc<Term> },
}

/// One step's target.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub name: String,
    pub aim: Aim,
    /// Derived from the target (not the target itself).
    pub derived: bool,
}

/// Where rules come from: a rule file and one of its sets (or rules), or the whole file.
#[derive(Clone, Debug, PartialEq)]
pub struct SetRef {
    pub file: PathBuf,
    pub set: Option<String>,
    /// The rules' names (a whole file without sets is written rule by rule).
    pub rules: Vec<String>,
}

impl SetRef {
    /// `FILE.rules:SET`, or `FILE.rules` for a whole file.
    pub fn label(&self) -> String {
        match &self.set {
            Some(set) => format!("{}:{set}", self.file.display()),
            None => self.file.display().to_string(),
        }
    }
}

/// Rules a step may search with: the rule sets they come from and the rules.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub sets: Vec<SetRef>,
    pub rules: Vec<RuleDecl>,
}

impl Candidate {
    /// The rules `chosen` from set `set` (`None`: the whole file) of rule file `file`.
    pub fn of(file: PathBuf, set: Option<&str>, chosen: Vec<RuleDecl>) -> Candidate {
        Candidate {
            sets: vec![SetRef {
                file,
                set: set.map(str::to_string),
                rules: chosen.iter().map(|r| r.name.clone()).collect(),
            }],
            rules: chosen,
        }
    }

    /// The union of several candidates (a rule in two of them is taken once).
    fn union(parts: &[&Candidate]) -> Candidate {
        let mut out = Candidate {
            sets: vec![],
            rules: vec![],
        };
        for part in parts {
            out.sets.extend(part.sets.iter().cloned());
            for r in &part.rules {
                if !out.rules.iter().any(|q| q.name == r.name) {
                    out.rules.push(r.clone());
                }
            }
        }
        out
    }
}

/// How each step searches: as `check` does, with `limits.enodes` the largest cap; and how
/// long the whole search may take (`total`: every trial stops by then, and the search with
/// it).
#[derive(Clone, Debug)]
pub struct Settings {
    pub cost: Cost,
    pub limits: Limits,
    pub filter: Filter,
    pub normal_form: NormalForm,
    pub total: std::time::Duration,
}

/// The whole search's time when none is given (`guide-auto --total-time`, whose help says
/// it).
pub const TOTAL_TIME: std::time::Duration = std::time::Duration::from_secs(600);

impl Settings {
    /// The e-node caps candidates are tried at: 10,000, tenfold up to `limits.enodes`.
    fn caps(&self) -> Vec<usize> {
        let mut caps = vec![];
        let mut cap = 10_000;
        while cap < self.limits.enodes {
            caps.push(cap);
            cap *= 10;
        }
        caps.push(self.limits.enodes);
        caps
    }
}

/// A step found: which checkpoint, with which rules, the step's report, and what finding
/// it cost (every trial's time, the found one's too).
#[derive(Clone, Debug)]
pub struct Found {
    pub checkpoint: usize,
    pub candidate: Candidate,
    pub report: StepReport,
    pub trials: usize,
    pub seconds: f64,
}

/// What the search reports as it goes.
pub enum Event<'a> {
    /// A checkpoint reached.
    Found(&'a Found),
    /// A checkpoint the term already satisfies: no step needed.
    Satisfied(usize),
    /// A checkpoint no candidate reached, after this many trials and seconds.
    Skipped(usize, usize, f64),
    /// A checkpoint no candidate can reach, without a search: it needs these primitives,
    /// which the term lacks and no rule set makes.
    OutOfReach(usize, Vec<&'static str>),
}

/// The steps found from `start` through `checkpoints` (the last one the target), and, when
/// the target was not reached, why its last trial stopped (`time-limit` when the total time
/// ran out: the search stops there, skipping no further checkpoint).
pub fn find(
    start: &Rc<Term>,
    checkpoints: &[Checkpoint],
    candidates: &[Candidate],
    settings: &Settings,
    mut on: impl FnMut(Event),
) -> Result<(Vec<Found>, Option<StopReason>)> {
    let deadline = Instant::now() + settings.total;
    let mut term = start.clone();
    let mut steps = vec![];
    for (i, checkpoint) in checkpoints.iter().enumerate() {
        if let Aim::Sketch { decl, .. } = &checkpoint.aim {
            if decl.sketch.satisfied_by(&term) && i + 1 < checkpoints.len() {
                on(Event::Satisfied(i));
                continue;
            }
        }
        let missing = reachable::missing(&term, checkpoint);
        let all = Candidate::union(&candidates.iter().collect::<Vec<_>>());
        if !reachable::can_make(&all, &missing) {
            on(Event::OutOfReach(
                i,
                missing.iter().map(|p| p.name()).collect(),
            ));
            if i + 1 == checkpoints.len() {
                return Ok((steps, Some(StopReason::Saturated)));
            }
            continue;
        }
        let t0 = Instant::now();
        match reach(
            &term,
            (checkpoint, &missing),
            candidates,
            settings,
            deadline,
        )? {
            (Ok((candidate, report)), trials) => {
                let found = Found {
                    checkpoint: i,
                    candidate,
                    report,
                    trials,
                    seconds: t0.elapsed().as_secs_f64(),
                };
                on(Event::Found(&found));
                term = found.report.term.clone().expect("a found step has a term");
                steps.push(found);
            }
            (Err(stop), trials) => {
                on(Event::Skipped(i, trials, t0.elapsed().as_secs_f64()));
                if i + 1 == checkpoints.len() || Instant::now() >= deadline {
                    return Ok((steps, Some(stop)));
                }
            }
        }
    }
    Ok((steps, None))
}

/// The candidate combinations in the order they are tried: each alone, each pair, all.
fn combinations(candidates: &[Candidate]) -> Vec<Vec<Candidate>> {
    let n = candidates.len();
    let singles = candidates.iter().map(|c| Candidate::union(&[c])).collect();
    let pairs = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| Candidate::union(&[&candidates[i], &candidates[j]]))
        .collect();
    let all = Candidate::union(&candidates.iter().collect::<Vec<_>>());
    match n {
        0 => vec![],
        1 => vec![singles],
        2 => vec![singles, vec![all]],
        _ => vec![singles, pairs, vec![all]],
    }
}

/// A checkpoint reached, with the rules and the search that reached it; or why the last
/// trial stopped.
type Reached = std::result::Result<(Candidate, StepReport), StopReason>;

/// The smallest search reaching `checkpoint` from `term`, with its rules (or why the last
/// trial stopped), and the number of trials made; no trial runs past `deadline`. Candidates
/// that cannot make the primitives `missing` from the term are not tried.
fn reach(
    term: &Rc<Term>,
    (checkpoint, missing): (
        &Checkpoint,
        &std::collections::BTreeSet<crate::rise::primitives::Prim>,
    ),
    candidates: &[Candidate],
    settings: &Settings,
    deadline: Instant,
) -> Result<(Reached, usize)> {
    let mut trials = 0;
    let mut last_stop = StopReason::Saturated;
    for phase in combinations(candidates) {
        let mut alive: Vec<&Candidate> = (phase.iter())
            .filter(|c| reachable::can_make(c, missing))
            .collect();
        for cap in settings.caps() {
            let mut best: Option<(Candidate, StepReport)> = None;
            let mut still = vec![];
            for c in alive {
                let bound = best
                    .as_ref()
                    .map_or(cap, |(_, r)| cap.min(r.outcome.size().0));
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok((best.ok_or(StopReason::TimeLimit), trials));
                }
                let mut step = step(checkpoint, c, settings, bound);
                step.limits.time = step.limits.time.min(left);
                let report = search(term, &step, |_| {})?;
                trials += 1;
                last_stop = report.outcome.stop;
                match report.outcome.stop {
                    StopReason::Found => {
                        let smaller = best
                            .as_ref()
                            .is_none_or(|(_, b)| report.outcome.size().0 < b.outcome.size().0);
                        if smaller {
                            best = Some((c.clone(), report));
                        }
                    }
                    StopReason::NodeLimit => still.push(c),
                    _ => {}
                }
            }
            if let Some(best) = best {
                return Ok((Ok(best), trials));
            }
            alive = still;
        }
    }
    Ok((Err(last_stop), trials))
}

/// The step searching for `checkpoint` with candidate `c`'s rules, capped at `enodes`.
fn step(checkpoint: &Checkpoint, c: &Candidate, settings: &Settings, enodes: usize) -> Step {
    let limits = Limits {
        enodes,
        ..settings.limits.clone()
    };
    let sketch = match &checkpoint.aim {
        Aim::Sketch { decl, .. } => decl.clone(),
        Aim::Goal { .. } => SketchDecl::any(&format!("goal {}", checkpoint.name)),
    };
    let mut step = Step::new(
        sketch,
        c.rules.clone(),
        (settings.cost.clone(), limits, settings.filter.clone()),
    );
    step.normal_form = settings.normal_form;
    if let Aim::Goal { term, .. } = &checkpoint.aim {
        step.goal = Some(term.clone());
    }
    step
}

/// The checkpoints for `target`, the target last: a sketch's relaxations ([`relax`]) or a
/// goal's peeled forms ([`peel`]). A sketch's sizes that are not the program's are those of
/// `params` (`containsMap(lanes, ..)`), written as their values.
pub fn checkpoints(
    target: super::Target,
    program: &LoadedDef,
    limits: &Limits,
    params: &crate::rules::Params,
) -> Result<Vec<Checkpoint>> {
    let here = Path::new("");
    let mut out = vec![];
    match target {
        super::Target::Sketch(spec) => {
            let decl = crate::sketch::read(spec)?.with_params(&program.sizes, params);
            let resolve = |d: SketchDecl| d.resolve(&program.sizes);
            out = relaxed(&decl, resolve)?;
            let aim = Aim::Sketch {
                decl: resolve(decl.clone())?,
                written: decl.sketch,
            };
            out.push(Checkpoint {
                name: decl.name.clone(),
                aim,
                derived: false,
            });
        }
        super::Target::Goal(spec) => {
            let of = (program.name.as_str(), &program.term.ty);
            let term = super::load_goal(spec, here, of, limits)?;
            let (file, name) = spec.rsplit_once(':').unwrap_or((spec, &program.name));
            let source = crate::rise::load_program(Path::new(file))?;
            for def in peel::checkpoints(&source, name, &program.term.ty)? {
                let mut with = source.clone();
                with.defs.push(def.clone());
                let term = elaborate_def(&with, &def.name)?;
                let term = normalise(&term, limits)?.0;
                let name = def.name.clone();
                out.push(Checkpoint {
                    name,
                    aim: Aim::Goal { def, term },
                    derived: true,
                });
            }
            let def = source
                .get(name)
                .cloned()
                .ok_or_else(|| Error::bad_input(format!("no definition named `{name}`")))?;
            out.push(Checkpoint {
                name: name.to_string(),
                aim: Aim::Goal { def, term },
                derived: false,
            });
        }
    }
    Ok(out)
}

/// The checkpoints before a resolved sketch (`step auto` in a guide): its relaxations.
pub fn checkpoints_before(target: &SketchDecl) -> Vec<Checkpoint> {
    relaxed(target, Ok).expect("a resolved sketch's relaxations need no resolving")
}

/// The relaxations of `target` ([`relax`]) as checkpoints, each resolved by `resolve`; each
/// keeps its sketch as `target` writes it, for printing.
fn relaxed(
    target: &SketchDecl,
    resolve: impl Fn(SketchDecl) -> Result<SketchDecl>,
) -> Result<Vec<Checkpoint>> {
    (relax::checkpoints(&target.name, &target.sketch).into_iter())
        .map(|(name, sketch)| {
            let decl = resolve(SketchDecl {
                name: name.clone(),
                sketch: sketch.clone(),
                ..target.clone()
            })?;
            let aim = Aim::Sketch {
                decl,
                written: sketch,
            };
            Ok(Checkpoint {
                name,
                aim,
                derived: true,
            })
        })
        .collect()
}

/// Rule specs (`FILE.rules[:SET]`) with each folder given as the `.rules` files in it, in name
/// order.
pub fn rule_specs(given: &[String]) -> Result<Vec<String>> {
    let mut out = vec![];
    for spec in given {
        let path = Path::new(spec);
        if !path.is_dir() {
            out.push(spec.clone());
            continue;
        }
        let entries =
            std::fs::read_dir(path).map_err(|e| Error::bad_input(format!("`{spec}`: {e}")))?;
        let mut files: Vec<String> = (entries.filter_map(|e| e.ok()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rules"))
            .map(|p| p.display().to_string())
            .collect();
        if files.is_empty() {
            return Err(Error::bad_input(format!(
                "`{spec}` is a folder with no `.rules` file"
            )));
        }
        files.sort();
        out.extend(files);
    }
    Ok(out)
}

/// The candidates of a `FILE.rules[:SET]` spec, instantiated with `params`: the set it
/// names; or each set of the file; or, for a file without sets, all of it.
pub fn candidates(spec: &str, params: &crate::rules::Params) -> Result<Vec<Candidate>> {
    let (file, set) = crate::rules::split_spec(spec);
    let rules = crate::rules::load_rule_file(Path::new(file))?;
    let sets: Vec<Option<&str>> = match set {
        None if !rules.rulesets.is_empty() => rules
            .rulesets
            .iter()
            .map(|r| Some(r.name.as_str()))
            .collect(),
        set => vec![set],
    };
    (sets.into_iter())
        .map(|set| {
            Ok(Candidate::of(
                file.into(),
                set,
                crate::rules::select(&rules, set, params)?,
            ))
        })
        .collect()
}
