//! The guided search a strategy runs as a combinator (`saturate`): a guide's step read from
//! the files the strategy names.

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
