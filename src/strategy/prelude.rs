//! The prelude: Elevate's normal forms and Rise traversals, defined in the strategy language
//! (`prelude.elevate`) with the rules of `rules/elevate.rules`. Every strategy sees it.

use super::parse::StrategyFile;
use crate::error::Result;
use crate::source::Source;
use std::rc::Rc;

const TEXT: &str = include_str!("prelude.elevate");
const RULES: &str = include_str!("../../rules/elevate.rules");

thread_local! {
    static PRELUDE: std::cell::OnceCell<Rc<StrategyFile>> = const { std::cell::OnceCell::new() };
}

/// The prelude, read once per thread.
pub fn prelude() -> Result<Rc<StrategyFile>> {
    PRELUDE.with(|p| {
        if let Some(file) = p.get() {
            return Ok(file.clone());
        }
        let rules =
            crate::rise::parse::parse_rule_file(&Source::new("rules/elevate.rules", RULES))?;
        let mut file = super::parse::parse_defs(&Source::new("prelude.elevate", TEXT))?;
        file.rules = rules.rules;
        super::check::check(&file, None)?;
        let file = Rc::new(file);
        let _ = p.set(file.clone());
        Ok(file)
    })
}
