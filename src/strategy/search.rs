//! The guided search a strategy runs as a combinator (`saturate`, `search`): a guide's step
//! read from the files the strategy names.

use super::eval::Settings;
use crate::error::{Error, Result};
use crate::guide::{load_goal, Step};
use crate::rise::term::Term;
use crate::sketch::SketchDecl;
use crate::source::Span;
use std::path::Path;

/// The step searching from `term` with the rules `rules` (`FILE.rules[:SET]`) until `target`
/// (`FILE.sketch:NAME`, or the goal `FILE.rise:NAME`) is found; files relative to `dir`, an
/// error located where the reference is written.
pub fn step(
    dir: &Path,
    (rules, rules_at): (&str, &Span),
    (target, target_at): (&str, &Span),
    term: &Term,
    settings: &Settings,
) -> Result<Step> {
    let (file, set) = crate::rules::split_spec(rules);
    let rule_file = crate::rules::load_rule_file(&dir.join(file)).map_err(|e| e.or_at(rules_at))?;
    let rules = crate::rules::select(&rule_file, set).map_err(|e| e.or_at(rules_at))?;
    let (file, name) = target.rsplit_once(':').ok_or_else(|| {
        Error::at(
            target_at,
            "name a sketch or goal: \"FILE.sketch:NAME\" or \"FILE.rise:NAME\"",
        )
    })?;
    let path = dir.join(file);
    let (sketch, goal) = if file.ends_with(".rise") {
        let spec = format!("{}:{name}", path.display());
        let goal = load_goal(
            &spec,
            Path::new(""),
            ("the term", &term.ty),
            &settings.search,
        )
        .map_err(|e| e.or_at(target_at))?;
        (SketchDecl::any(&format!("goal {target}")), Some(goal))
    } else {
        let spec = format!("{}:{name}", path.display());
        let sketch = crate::sketch::load(&spec, &settings.sizes).map_err(|e| e.or_at(target_at))?;
        (sketch, None)
    };
    let (cost, _, filter) = Step::defaults();
    let mut step = Step::new(sketch, rules, (cost, settings.search.clone(), filter));
    step.goal = goal;
    Ok(step)
}

/// The step of the guide `spec` (`FILE.guide:SKETCH`, relative to `dir`) that searches for
/// sketch (or goal) `SKETCH`.
pub fn guide_step(dir: &Path, (spec, at): (&str, &Span)) -> Result<Step> {
    let (file, name) = spec
        .rsplit_once(':')
        .ok_or_else(|| Error::at(at, "name a guide's step: \"FILE.guide:SKETCH\""))?;
    let guide = crate::guide::parse::load_guide(&dir.join(file)).map_err(|e| e.or_at(at))?;
    let found = guide
        .steps
        .iter()
        .find(|s| s.sketch.name == name && s.rewrite.is_none() && s.auto.is_none());
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
