//! Sketch-guided equality saturation (paper section 3.3, listing 6).
//!
//! A guide is a sequence of steps, each (sketch, rules, cost model, limits, filter). A step
//! normalises its input (beta-eta normal form), grows a fresh e-graph with its rules plus
//! extraction-based beta and eta until the sketch is satisfied by the root e-class or a limit
//! is hit, and extracts the cheapest term satisfying the sketch, which the next step starts
//! from. Guide files (`programs/*.guide`) are read by [`parse`].

pub mod auto;
pub mod explain;
pub mod parse;
pub mod program;
pub mod report;
mod searches;
pub mod shared;

pub use searches::Searches;

use crate::egraph::encoding::Encoding;
use crate::egraph::extract::{AstSize, CostModel, ENode, ExprGraph, Weighted};
use crate::egraph::filter::Filter;
use crate::egraph::lookup::find_term;
use crate::egraph::normal::NormalForm;
use crate::egraph::saturate::{
    normalise, resident_mb, saturate, Check, IterationStats, Limits, Outcome, StopReason,
};
use crate::egraph::serialize::Dump;
use crate::egraph::subst::{add_beta_eta, SharedSnapshot};
use crate::egraph::{encode, rise_egraph};
use crate::error::{Error, ErrorKind, Result};
use crate::rise::syntax::RuleDecl;
use crate::rise::term::Term;
use crate::rules::install::install_for;
use crate::sketch::extract::SketchExtractor;
use crate::sketch::query::{Engine, SketchQuery};
use crate::sketch::why::Explanation;
use crate::sketch::SketchDecl;
use egglog::{EGraph, Value};
use std::rc::Rc;
use std::time::Instant;

/// The cost model a step extracts with.
#[derive(Clone, Debug)]
pub enum Cost {
    AstSize,
    Weighted(Weighted),
}

impl CostModel for Cost {
    fn node_cost(&self, node: &ENode) -> u64 {
        match self {
            Cost::AstSize => AstSize.node_cost(node),
            Cost::Weighted(w) => w.node_cost(node),
        }
    }
}

/// One sketch-satisfying search.
#[derive(Clone, Debug)]
pub struct Step {
    pub sketch: SketchDecl,
    pub rules: Vec<RuleDecl>,
    pub cost: Cost,
    pub limits: Limits,
    pub filter: Filter,
    /// How the sketch's relations are computed after each iteration.
    pub sketch_engine: Engine,
    /// The normal form the search keeps its terms in (its start, goal and result too).
    pub normal_form: NormalForm,
    /// Where to write the final e-graph, if anywhere.
    pub dump: Option<Dump>,
    /// An exact goal (in beta-eta normal form): found when it is in the start's e-class,
    /// instead of when the sketch is satisfied (the sketch is then `?`).
    pub goal: Option<Rc<Term>>,
    /// When the sketch is not found, explain why (`check --why`); not after a stop request.
    pub why: bool,
    /// When it is found, find the rewrite path to the extracted term within this budget
    /// (`--explain`).
    pub explain: Option<explain::PathLimits>,
    /// `step auto`: steps towards `sketch` found automatically, each with one of these
    /// candidates, a pair or all ([`auto`]), instead of one search.
    pub auto: Option<Vec<auto::Candidate>>,
    /// `step strategy FILE.elevate:S`: the term rewritten by a strategy instead of searched.
    pub rewrite: Option<Rewrite>,
}

/// A step that rewrites with a strategy ([`crate::strategy`]) instead of searching.
#[derive(Clone, Debug)]
pub struct Rewrite {
    pub file: Rc<crate::strategy::StrategyFile>,
    pub strategy: Rc<crate::strategy::Expr>,
}

/// What a step did.
#[derive(Clone, Debug)]
pub struct StepReport {
    pub sketch: String,
    pub outcome: Outcome,
    /// The cheapest term satisfying the sketch, when found: in beta-eta normal form unless
    /// normalising it would break the sketch (then `normalised` is false).
    pub term: Option<Rc<Term>>,
    pub normalised: bool,
    /// Wall time of the whole step (normalising, searching, extracting).
    pub seconds: f64,
    /// E-nodes subsumed by the term-size filter.
    pub pruned: usize,
    pub peak_rss_mb: f64,
    /// Why the sketch was not found, when asked ([`crate::sketch::why`]).
    pub why: Option<Explanation>,
    /// The rewrites from the input to the extracted term, when asked ([`explain`]).
    pub explanation: Option<explain::Explanation>,
    /// A strategy step's counts (its outcome is `found` when the strategy succeeded).
    pub strategy: Option<crate::strategy::Counts>,
}

impl StepReport {
    /// The report of a search that took since `t0`, without analysis or rewrite path.
    fn of_search(
        sketch: String,
        outcome: Outcome,
        term: Option<Rc<Term>>,
        normalised: bool,
        t0: Instant,
        pruned: usize,
    ) -> StepReport {
        StepReport {
            sketch,
            outcome,
            term,
            normalised,
            seconds: t0.elapsed().as_secs_f64(),
            pruned,
            peak_rss_mb: resident_mb(true),
            why: None,
            explanation: None,
            strategy: None,
        }
    }
}

/// A guide: a program and the steps that optimise it.
#[derive(Clone, Debug)]
pub struct Guide {
    pub program: String,
    pub start: Rc<Term>,
    /// The program's own names for its leading binders, used when printing.
    pub names: crate::rise::debruijn::Names,
    pub steps: Vec<Step>,
    /// The files it was read from: its guide file (if any), program, sketches, rules and
    /// cost weights. What a result of the guide depends on.
    pub inputs: Vec<std::path::PathBuf>,
    /// The sizes its rules were instantiated with.
    pub params: crate::rules::Params,
}

/// The file of a `FILE:NAME` reference (the whole text when it names none).
pub fn file_of(spec: &str) -> &str {
    spec.split_once(':').map_or(spec, |(file, _)| file)
}

impl Step {
    /// A goal (read in beta-eta normal form) as the search keeps its terms.
    pub fn in_form(&self, goal: &Rc<Term>) -> Result<Rc<Term>> {
        Ok(match self.normal_form {
            NormalForm::Benf => goal.clone(),
            nf => nf.normalise(goal, &self.limits)?.0,
        })
    }

    /// Settings of a step not given otherwise: AST size, default limits, no filter.
    pub fn defaults() -> (Cost, Limits, Filter) {
        (Cost::AstSize, Limits::default(), Filter::default())
    }

    /// A step searching for `sketch` with `rules`: the default sketch engine, no dump, no
    /// exact goal.
    pub fn new(
        sketch: SketchDecl,
        rules: Vec<RuleDecl>,
        (cost, limits, filter): (Cost, Limits, Filter),
    ) -> Step {
        Step {
            sketch,
            rules,
            cost,
            limits,
            filter,
            sketch_engine: Engine::default(),
            normal_form: NormalForm::default(),
            dump: None,
            goal: None,
            why: false,
            explain: None,
            auto: None,
            rewrite: None,
        }
    }
}

/// When a one-step search stops: a sketch (`FILE.sketch:NAME`) or an exact goal term
/// (`FILE.rise:NAME`).
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    Sketch(&'a str),
    Goal(&'a str),
}

impl Guide {
    /// A one-step guide: `FILE.rise:NAME` searched for `target` with the rules of each
    /// `FILE.rules[:SET]`, instantiated with `params`. An error without a position (an
    /// unknown name) is located where `at` says the spec was written.
    pub fn check(
        program: &str,
        target: Target,
        (rules, params): (&[String], &crate::rules::Params),
        settings: (Cost, Limits, Filter),
        at: &dyn Fn(&str) -> Option<crate::source::Span>,
    ) -> Result<Guide> {
        let locate = |spec: &str, e: Error| match at(spec) {
            Some(span) => e.or_at(&span),
            None => e,
        };
        let def = crate::rise::load_def_ref(program, std::path::Path::new(""))
            .map_err(|e| locate(program, e))?;
        let (sketch, goal) = match target {
            Target::Sketch(spec) => (
                crate::sketch::load_with(spec, &def.sizes, params).map_err(|e| locate(spec, e))?,
                None,
            ),
            Target::Goal(spec) => {
                let here = std::path::Path::new("");
                let program = (def.name.as_str(), &def.term.ty);
                let normal =
                    load_goal(spec, here, program, &settings.1).map_err(|e| locate(spec, e))?;
                (SketchDecl::any(&format!("goal {spec}")), Some(normal))
            }
        };
        let mut all = vec![];
        for spec in rules {
            all.extend(crate::rules::load_selection(spec, params).map_err(|e| locate(spec, e))?);
        }
        let mut step = Step::new(sketch, all, settings);
        step.goal = goal;
        let inputs = std::iter::once(program)
            .chain(rules.iter().map(String::as_str))
            .chain(match target {
                Target::Sketch(spec) | Target::Goal(spec) => Some(spec),
            })
            .map(|spec| file_of(spec).into())
            .collect();
        Ok(Guide {
            program: program.to_string(),
            start: def.term,
            names: def.names,
            steps: vec![step],
            inputs,
            params: params.clone(),
        })
    }
}

/// The goal `FILE.rise:NAME` (`FILE` relative to `dir`) of a search from `program` (its
/// name and type), in beta-eta normal form, as the search compares it: an error when its type
/// is not the program's.
pub fn load_goal(
    spec: &str,
    dir: &std::path::Path,
    program: (&str, &crate::rise::types::Type),
    limits: &Limits,
) -> Result<Rc<Term>> {
    let goal = crate::rise::load_def_ref(spec, dir)?;
    goal_in_normal_form(&goal, program, limits)
}

/// Goal `goal` of a search from `program` (its name and type) in beta-eta normal form: an
/// error when its type is not the program's.
pub fn goal_in_normal_form(
    goal: &crate::rise::LoadedDef,
    program: (&str, &crate::rise::types::Type),
    limits: &Limits,
) -> Result<Rc<Term>> {
    if goal.term.ty != *program.1 {
        return Err(Error::bad_input(format!(
            "goal `{}` has type {}, but `{}` has type {}",
            goal.name, goal.term.ty, program.0, program.1
        )));
    }
    Ok(normalise(&goal.term, limits)?.0)
}

/// A failed check (exit code 1) when the last step run did not find its sketch: of kind
/// [`ErrorKind::Limit`] when a limit stopped it.
pub fn check_found(reports: &[StepReport]) -> Result<()> {
    match reports.last() {
        Some(r) if !r.outcome.found() => {
            let stop = r.outcome.stop;
            // A step that searches for an exact program is named `goal FILE:NAME`.
            let what = match r.sketch.strip_prefix("goal ") {
                Some(goal) => format!("goal `{goal}`"),
                None => format!("sketch `{}`", r.sketch),
            };
            let e = Error::check_failed(format!("{what} not found ({})", stop.name()));
            Err(match stop {
                StopReason::Saturated | StopReason::Found => e,
                limit => Error {
                    kind: ErrorKind::Limit(limit.name()),
                    ..e
                },
            })
        }
        _ => Ok(()),
    }
}

/// Runs one step from `start` (listing 6's `search`).
pub fn search(
    start: &Term,
    step: &Step,
    on_iteration: impl FnMut(&IterationStats),
) -> Result<StepReport> {
    search_named(start, step, &Default::default(), on_iteration)
}

/// [`search`] of a program whose leading binders are named `names` (in `--why`).
pub fn search_named(
    start: &Term,
    step: &Step,
    names: &crate::rise::debruijn::Names,
    mut on_iteration: impl FnMut(&IterationStats),
) -> Result<StepReport> {
    let t0 = Instant::now();
    let (input, mut eg, snap) = prepare(start, step)?;
    let goal = step.goal.as_ref().map(|g| step.in_form(g)).transpose()?;
    let mut query = SketchQuery::install(&mut eg, &step.sketch.sketch, step.sketch_engine)?;
    let (outcome, pruned) = saturate_pruned(
        &mut eg,
        (&input, &snap),
        step,
        |eg, root| {
            let work = query.update(eg)?;
            let found = match &goal {
                Some(goal) => find_term(eg, goal) == Some(root),
                None => query.holds(eg, root),
            };
            Ok((found, work))
        },
        &mut on_iteration,
    )?;
    // A search stopped on request ends now: no dump, no analysis (which would take as long as
    // a search), and its e-graph is freed on a thread of its own.
    if outcome.stop == StopReason::Interrupted {
        drop(query);
        std::thread::spawn(move || drop((eg, snap)));
        let name = step.sketch.name.clone();
        return Ok(StepReport::of_search(name, outcome, None, true, t0, pruned));
    }
    if let Some(dump) = &step.dump {
        let sketched = !matches!(step.sketch.sketch, crate::sketch::Sketch::Any);
        let root = root_of(&eg, &input)?;
        dump.write_marked(&eg, root, |class| sketched && query.holds(&eg, class))?;
    }
    let why = if step.why && !outcome.found() {
        let graph = ExprGraph::read(&eg)?;
        let term_sort = crate::egraph::sort(&eg, crate::egraph::schema::Field::Term.sort());
        Some(crate::sketch::why::explain(
            &graph,
            &step.sketch.sketch,
            root_of(&eg, &input)?,
            &step.cost,
            names,
            |class| eg.value_to_class_id(&term_sort, class).to_string(),
        )?)
    } else {
        None
    };
    let (term, normalised) = match (outcome.found(), goal) {
        (true, Some(goal)) => (Some(goal), true),
        (true, None) => {
            drop(query);
            let (graph, root) = read_out(eg, &input)?;
            let (t, normalised) = satisfying_term(&graph, root, &step.sketch, &step.cost, step)?;
            (Some(t), normalised)
        }
        (false, _) => (None, true),
    };
    // The path search is not part of the step's time.
    let seconds = t0.elapsed().as_secs_f64();
    let explanation = match (&term, step.explain) {
        (Some(t), Some(budget)) => {
            let goal = if normalised {
                t.clone()
            } else {
                normalise(t, &step.limits)?.0
            };
            Some(explain::explain(
                &input,
                &goal,
                &step.rules,
                &step.limits,
                budget,
            )?)
        }
        _ => None,
    };
    Ok(StepReport {
        sketch: step.sketch.name.clone(),
        outcome,
        term,
        normalised,
        seconds,
        pruned,
        peak_rss_mb: resident_mb(true),
        why,
        explanation,
        strategy: None,
    })
}

/// Equality saturation without a target: grows the e-graph of `start` with the step's rules
/// until nothing changes or a limit stops it (the step's sketch and goal are not consulted),
/// then extracts the cheapest term of the start's class by the step's cost. The report's
/// outcome says why it stopped; its term is always there.
pub fn simplify(
    start: &Term,
    step: &Step,
    mut on_iteration: impl FnMut(&IterationStats),
) -> Result<StepReport> {
    let t0 = Instant::now();
    let (input, mut eg, snap) = prepare(start, step)?;
    let (outcome, pruned) = saturate_pruned(
        &mut eg,
        (&input, &snap),
        step,
        |_, _| Ok((false, 0)),
        &mut on_iteration,
    )?;
    if outcome.given_up {
        // Stopped and given up: the e-graph is gone, the term is the start.
        let name = SketchDecl::any("cheapest").name;
        let term = Some(Rc::new(start.clone()));
        return Ok(StepReport::of_search(
            name, outcome, term, false, t0, pruned,
        ));
    }
    if let Some(dump) = &step.dump {
        dump.write(&eg, root_of(&eg, &input)?)?;
    }
    let (graph, root) = read_out(eg, &input)?;
    let cheapest = SketchDecl::any("cheapest");
    let (term, normalised) = satisfying_term(&graph, root, &cheapest, &step.cost, step)?;
    let name = cheapest.name;
    Ok(StepReport::of_search(
        name,
        outcome,
        Some(term),
        normalised,
        t0,
        pruned,
    ))
}

/// Saturates `eg`, which holds `input`, with the step's rules and limits; before each check
/// the step's filter prunes below the input's class, then `found` decides from that class
/// (with its work). The outcome, and the e-nodes pruned.
fn saturate_pruned(
    eg: &mut EGraph,
    (input, snap): (&Term, &SharedSnapshot),
    step: &Step,
    mut found: impl FnMut(&mut EGraph, Value) -> Result<(bool, usize)>,
    on_iteration: impl FnMut(&IterationStats),
) -> Result<(Outcome, usize)> {
    let mut pruned = 0;
    let outcome = saturate(
        eg,
        "rw",
        snap,
        &step.limits,
        |eg| {
            let (root, n, filter_seconds) = pruned_root(eg, input, &step.filter)?;
            pruned += n;
            if step.limits.cancel.is_cancelled() {
                // Stopped while the filter ran: the search ends unchecked.
                return Ok(Check {
                    filter_seconds,
                    ..Check::default()
                });
            }
            let (found, work) = found(eg, root)?;
            Ok(Check {
                found,
                work,
                filter_seconds,
            })
        },
        on_iteration,
    )?;
    Ok((outcome, pruned))
}

/// Runs a strategy step from `start`: found when the strategy succeeds; where it fails or a
/// limit stops it, `why` says so.
fn rewrite(start: &Rc<Term>, step: &Step, rw: &Rewrite, sizes: &[String]) -> Result<StepReport> {
    use crate::strategy::{Ending, Settings};
    let t0 = Instant::now();
    let settings = Settings {
        time: step.limits.time,
        memory_mb: step.limits.memory_mb,
        sizes: sizes.to_vec(),
        searcher: Some(Rc::new(Searches::default())),
        ..Settings::default()
    };
    let run = crate::strategy::run(&rw.file, &rw.strategy, start, &settings)?;
    let (stop, term, why) = match run.ending {
        Ending::Success(t) => (StopReason::Found, Some(t), None),
        Ending::Failure(f) => (
            StopReason::Saturated,
            None,
            Some(Explanation::plain(format!("{}: {f}\n", f.span))),
        ),
        Ending::Stopped(limit) => {
            let stop = match limit {
                "memory" => StopReason::MemoryLimit,
                "time" => StopReason::TimeLimit,
                _ => StopReason::IterationLimit,
            };
            (
                stop,
                None,
                Some(Explanation::plain(format!(
                    "the {limit} limit stopped the strategy\n"
                ))),
            )
        }
    };
    Ok(StepReport {
        sketch: step.sketch.name.clone(),
        outcome: Outcome {
            stop,
            iterations: vec![],
            saturation: std::time::Duration::ZERO,
            given_up: false,
        },
        term,
        normalised: false,
        seconds: t0.elapsed().as_secs_f64(),
        pruned: 0,
        peak_rss_mb: resident_mb(true),
        why,
        explanation: None,
        strategy: Some(run.counts),
    })
}

/// A search's e-graph before its first iteration: `start` in the step's normal form (also
/// returned), the step's rules (with its filter), and extraction-based beta and eta (and
/// the normal form's own rules) reading the returned snapshot.
fn prepare(start: &Term, step: &Step) -> Result<(Rc<Term>, EGraph, SharedSnapshot)> {
    let (input, _) = step.normal_form.normalise(start, &step.limits)?;
    let mut eg = rise_egraph()?;
    encode::load_term(&mut eg, &input)?;
    let snap = SharedSnapshot::default();
    add_beta_eta(&mut eg, "rw", &snap)?;
    step.normal_form.add_rules(&mut eg, "rw", &snap)?;
    install_for(
        &mut eg,
        "rw",
        &step.rules,
        &snap,
        (Encoding::EFFICIENT, step.normal_form),
        &step.filter,
    )?;
    Ok((input, eg, snap))
}

/// The e-class of the search's start term.
fn root_of(eg: &EGraph, input: &Term) -> Result<Value> {
    find_term(eg, input).ok_or_else(|| Error::internal("the start term left the e-graph"))
}

/// The e-graph read out for extraction, with the start's e-class; egglog's copy is freed
/// before the extraction's tables are built (at a million e-nodes they are each a few hundred
/// MB).
fn read_out(eg: EGraph, input: &Term) -> Result<(ExprGraph, Value)> {
    Ok((ExprGraph::read(&eg)?, root_of(&eg, input)?))
}

/// The start's e-class after `filter` has pruned the e-graph below it, the e-nodes it
/// pruned, and the seconds that took.
fn pruned_root(eg: &mut EGraph, input: &Term, filter: &Filter) -> Result<(Value, usize, f64)> {
    let root = root_of(eg, input)?;
    let t = Instant::now();
    let pruned = filter.prune(eg, root, input.data_binders())?;
    Ok((root, pruned, t.elapsed().as_secs_f64()))
}

/// The cheapest term of the start's e-class satisfying `sketch` (found), in the normal form
/// of `step`'s search unless the normal form no longer satisfies the sketch (`map (fun x => f
/// x) xs` is found, `map f xs` printed): then the extracted term itself, and `false`.
fn extract_satisfying(
    eg: &EGraph,
    input: &Term,
    sketch: &SketchDecl,
    cost: &Cost,
    step: &Step,
) -> Result<(Rc<Term>, bool)> {
    satisfying_term(
        &ExprGraph::read(eg)?,
        root_of(eg, input)?,
        sketch,
        cost,
        step,
    )
}

/// [`extract_satisfying`] from the e-graph read out, below `root`.
fn satisfying_term(
    graph: &ExprGraph,
    root: Value,
    sketch: &SketchDecl,
    cost: &Cost,
    step: &Step,
) -> Result<(Rc<Term>, bool)> {
    let (_, t) = SketchExtractor::new(graph, cost).extract(&sketch.sketch, root)?;
    if !sketch.sketch.satisfied_by(&t) {
        return Err(Error::internal(format!(
            "the extracted term does not satisfy sketch `{}`",
            sketch.name
        )));
    }
    let nf = step.normal_form.normalise(&t, &step.limits)?.0;
    Ok(match sketch.sketch.satisfied_by(&nf) {
        true => (nf, true),
        false => (t, false),
    })
}

/// Runs the steps in order, each from the previous one's term; stops after a step that
/// does not find its sketch. `on_iteration` gets the step's index with each iteration.
pub fn run(
    guide: &Guide,
    mut on_iteration: impl FnMut(usize, &IterationStats),
    mut on_step: impl FnMut(usize, &StepReport),
) -> Result<Vec<StepReport>> {
    let mut term = guide.start.clone();
    let mut reports = vec![];
    for i in 0..guide.steps.len() {
        if i > 0 {
            // The last step's e-graph is freed: its pages are not kept for this one's.
            crate::egraph::saturate::trim_heap();
        }
        let found = run_step(guide, i, &term, |s| on_iteration(i, s))?;
        for report in found {
            on_step(i, &report);
            let next = report.term.clone();
            reports.push(report);
            match next {
                Some(t) => term = t,
                None => return Ok(reports),
            }
        }
    }
    Ok(reports)
}

/// Runs step `i` of `guide` from `term`: its report, or, for `step auto`, one report per
/// step it found (none when it found nothing; the next step then starts from `term`).
pub fn run_step(
    guide: &Guide,
    i: usize,
    term: &Rc<Term>,
    on_iteration: impl FnMut(&IterationStats),
) -> Result<Vec<StepReport>> {
    let step = &guide.steps[i];
    if let Some(candidates) = &step.auto {
        let settings = auto::Settings {
            cost: step.cost.clone(),
            limits: step.limits.clone(),
            filter: step.filter.clone(),
            normal_form: step.normal_form,
            total: auto::TOTAL_TIME,
        };
        let checkpoints = auto::checkpoints_before(&step.sketch);
        let (found, _) = auto::find(term, &checkpoints, candidates, &settings, |_| {})?;
        return Ok(found.into_iter().map(|f| f.report).collect());
    }
    Ok(vec![match &step.rewrite {
        Some(rw) => rewrite(term, step, rw, &guide.names.sizes)?,
        None => search_named(term, step, &guide.names, on_iteration)?,
    }])
}
