//! One search for several targets, sketches or exact goals: the unguided searches of Table 3
//! whose goals share their start program, rules, filter and limits grow the same e-graph,
//! iteration for iteration, and differ only in the sketch that stops them; `check` with
//! several `--goal`s and `--sketch`es asks, as shine's `ProveEquiv` does, for every goal in
//! one search. [`search_each`] grows the e-graph once and checks every target after each
//! iteration, reporting each one as it is found (when, how large the e-graph was, the
//! process's peak memory so far), until all are found or a limit stops the search.

use super::{extract_satisfying, prepare, pruned_root, read_out, satisfying_term, Cost, Step};
use crate::egraph::lookup::find_term;
use crate::egraph::saturate::{resident_mb, saturate, Check, IterationStats, Outcome};
use crate::error::Result;
use crate::rise::term::Term;
use crate::sketch::query::SketchQuery;
use crate::sketch::SketchDecl;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

/// What [`search_each`] looks for.
#[derive(Clone, Debug)]
pub enum Target {
    /// A program satisfying the sketch, extracted with the cost.
    Sketch(SketchDecl, Cost),
    /// This exact term (in beta-eta normal form) in the program's e-class.
    Goal { name: String, term: Rc<Term> },
}

impl Target {
    pub fn name(&self) -> &str {
        match self {
            Target::Sketch(sketch, _) => &sketch.name,
            Target::Goal { name, .. } => name,
        }
    }
}

/// How a target is checked while the search runs.
enum Probe {
    Sketch(Box<SketchQuery>),
    Goal(Rc<Term>),
}

/// A target of [`search_each`] found.
#[derive(Clone, Debug)]
pub struct Found {
    /// The iterations run when the check found it (0: the start program satisfies it).
    pub iterations: usize,
    /// Seconds from the start of the search to its extracted term.
    pub seconds: f64,
    pub peak_rss_mb: f64,
    /// The cheapest term satisfying it (see [`super::StepReport::term`]).
    pub term: Rc<Term>,
}

impl Found {
    /// `term`, found after `iterations`, now: seconds since `t0`, the peak memory so far.
    fn now(iterations: usize, t0: Instant, term: Rc<Term>) -> Found {
        Found {
            iterations,
            seconds: t0.elapsed().as_secs_f64(),
            peak_rss_mb: resident_mb(true),
            term,
        }
    }
}

/// Grows `step`'s e-graph from `start` (its rules, filter and limits; its own sketch is not
/// checked) until every target of `targets` is found or a limit stops it. `on_found` gets
/// a target's index and what was found (a sketch's cheapest satisfying term, a goal's own
/// term), as it is found (after `on_iteration` has had the iteration it was found after);
/// the outcome's stop reason holds for the targets never found.
pub fn search_each(
    start: &Term,
    step: &Step,
    targets: &[Target],
    mut on_iteration: impl FnMut(&IterationStats),
    mut on_found: impl FnMut(usize, Found),
) -> Result<Outcome> {
    let t0 = Instant::now();
    let (input, mut eg, snap) = prepare(start, step)?;
    let mut queries = targets
        .iter()
        .map(|t| match t {
            Target::Sketch(s, _) => SketchQuery::install(&mut eg, &s.sketch, step.sketch_engine)
                .map(|q| Probe::Sketch(Box::new(q))),
            Target::Goal { term, .. } => step.in_form(term).map(Probe::Goal),
        })
        .map(|probe| probe.map(Some))
        .collect::<Result<Vec<_>>>()?;
    let mut iterations = 0;
    // Sketches found, extracted while the search goes on for the others.
    let pending = RefCell::new(vec![]);
    // The sketches found by the search's last check (and its iterations): extracted after
    // the search, from the e-graph read out with egglog's copy freed (at a million e-nodes
    // the extraction's tables are each a few hundred MB).
    let mut last = (vec![], 0);
    let outcome = saturate(
        &mut eg,
        "rw",
        &snap,
        &step.limits,
        |eg| {
            let (root, _, filter_seconds) = pruned_root(eg, &input, &step.filter)?;
            let mut work = 0;
            let mut holding = vec![];
            for (i, slot) in queries.iter_mut().enumerate() {
                let holds = match slot {
                    None => continue,
                    Some(Probe::Sketch(query)) => {
                        work += query.update(eg)?;
                        query.holds(eg, root)
                    }
                    Some(Probe::Goal(goal)) => find_term(eg, goal) == Some(root),
                };
                if holds {
                    holding.push(i);
                    *slot = None;
                }
            }
            let found = queries.iter().all(Option::is_none);
            if found {
                last = (holding, iterations);
            } else {
                for i in holding {
                    let term = match &targets[i] {
                        Target::Sketch(sketch, cost) => {
                            extract_satisfying(eg, &input, sketch, cost, step)?.0
                        }
                        Target::Goal { term, .. } => term.clone(),
                    };
                    pending
                        .borrow_mut()
                        .push((i, Found::now(iterations, t0, term)));
                }
            }
            iterations += 1;
            Ok(Check {
                found,
                work,
                filter_seconds,
            })
        },
        |s| {
            on_iteration(s);
            pending
                .borrow_mut()
                .drain(..)
                .for_each(|(i, f)| on_found(i, f));
        },
    )?;
    // Found by the check before the first iteration.
    pending
        .into_inner()
        .into_iter()
        .for_each(|(i, f)| on_found(i, f));
    let (holding, iterations) = last;
    if !holding.is_empty() {
        drop(queries);
        let (graph, root) = read_out(eg, &input)?;
        for i in holding {
            let term = match &targets[i] {
                Target::Sketch(sketch, cost) => {
                    satisfying_term(&graph, root, sketch, cost, step)?.0
                }
                Target::Goal { term, .. } => term.clone(),
            };
            on_found(i, Found::now(iterations, t0, term));
        }
    }
    Ok(outcome)
}
