//! The guided searches strategies run as combinators (`saturate`, `search`): a guide's step
//! read from the files the strategy names, run from the strategy's term.

use super::{load_goal, Step};
use crate::error::{Error, Result};
use crate::rise::term::Term;
use crate::sketch::SketchDecl;
use crate::source::Span;
use crate::strategy::{Found, SearchCall, Searcher};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// Runs the searches strategies name, each step read once.
#[derive(Debug, Default)]
pub struct Searches {
    steps: RefCell<HashMap<Vec<String>, Rc<Step>>>,
}

impl Searcher for Searches {
    fn search(&self, call: &SearchCall, t: &Rc<Term>) -> Result<Found> {
        let key: Vec<String> = std::iter::once(call.dir.display().to_string())
            .chain(call.files.iter().map(|(f, _)| f.to_string()))
            .collect();
        let known = self.steps.borrow().get(&key).cloned();
        let step = match known {
            Some(step) => step,
            None => {
                let step = Rc::new(read_step(call, t)?);
                self.steps.borrow_mut().insert(key, step.clone());
                step
            }
        };
        let mut step = (*step).clone();
        step.limits.time = step.limits.time.min(call.time);
        let report = super::search(t, &step, |_| {})?;
        Ok(Found {
            term: report.term,
            enodes: report.outcome.size().0,
            out_of_time: report.outcome.stop == crate::egraph::saturate::StopReason::TimeLimit
                && call.time <= step.limits.time,
        })
    }
}

fn read_step(call: &SearchCall, t: &Term) -> Result<Step> {
    match (call.guide_step, call.files) {
        (true, [(spec, at)]) => guide_step(call.dir, (spec, at)),
        (false, [(rules, rules_at), (target, target_at)]) => {
            step(call, (rules, rules_at), (target, target_at), t)
        }
        _ => Err(Error::internal(
            "a guided search with the wrong number of files",
        )),
    }
}

/// The step searching from `term` with the rules `rules` (`FILE.rules[:SET]`) until `target`
/// (`FILE.sketch:NAME`, or the goal `FILE.rise:NAME`) is found; files relative to the call's
/// directory, an error located where the reference is written.
fn step(
    call: &SearchCall,
    (rules, rules_at): (&str, &Span),
    (target, target_at): (&str, &Span),
    term: &Term,
) -> Result<Step> {
    let (file, set) = crate::rules::split_spec(rules);
    let rule_file =
        crate::rules::load_rule_file(&call.dir.join(file)).map_err(|e| e.or_at(rules_at))?;
    let rules = crate::rules::select(&rule_file, set, &Default::default())
        .map_err(|e| e.or_at(rules_at))?;
    let (file, name) = target.rsplit_once(':').ok_or_else(|| {
        Error::at(
            target_at,
            "name a sketch or goal: \"FILE.sketch:NAME\" or \"FILE.rise:NAME\"",
        )
    })?;
    let spec = format!("{}:{name}", call.dir.join(file).display());
    let (sketch, goal) = if file.ends_with(".rise") {
        let goal = load_goal(&spec, Path::new(""), ("the term", &term.ty), call.limits)
            .map_err(|e| e.or_at(target_at))?;
        (SketchDecl::any(&format!("goal {target}")), Some(goal))
    } else {
        let sketch = crate::sketch::load(&spec, call.sizes).map_err(|e| e.or_at(target_at))?;
        (sketch, None)
    };
    let (cost, _, filter) = Step::defaults();
    let mut step = Step::new(sketch, rules, (cost, call.limits.clone(), filter));
    step.goal = goal;
    Ok(step)
}

/// The step of the guide `spec` (`FILE.guide:SKETCH`, relative to `dir`) that searches for
/// sketch (or goal) `SKETCH`.
fn guide_step(dir: &Path, (spec, at): (&str, &Span)) -> Result<Step> {
    let (file, name) = spec
        .rsplit_once(':')
        .ok_or_else(|| Error::at(at, "name a guide's step: \"FILE.guide:SKETCH\""))?;
    let guide = super::parse::load_guide(&dir.join(file)).map_err(|e| e.or_at(at))?;
    let searches = |s: &&Step| s.rewrite.is_none() && s.auto.is_none();
    let found = guide
        .steps
        .iter()
        .filter(searches)
        .find(|s| s.sketch.name == name);
    found.cloned().ok_or_else(|| {
        let names: Vec<&str> = guide.steps.iter().map(|s| s.sketch.name.as_str()).collect();
        Error::at(
            at,
            format!(
                "{file} has no step `{name}` (its steps: {})",
                crate::error::listing(&names)
            ),
        )
    })
}
