//! Installing compiled rules in an e-graph: each rule's query with its right-hand side as a
//! Rust rule reading the snapshot ([`add_snapshot_rule`]).

use super::compile::{compile_for, CompiledRule};
use crate::egraph::encoding::Encoding;
use crate::egraph::filter::Filter;
use crate::egraph::subst::{add_snapshot_rule, SharedSnapshot};
use crate::error::Result;
use crate::rise::syntax::RuleDecl;
use egglog::EGraph;
use std::sync::Arc;

/// Adds compiled rules to `ruleset` as Rust rules reading `snapshot`; their new e-nodes
/// must pass `filter`'s type conditions.
pub fn add_rules(
    eg: &mut EGraph,
    ruleset: &str,
    rules: Vec<CompiledRule>,
    snapshot: &SharedSnapshot,
    filter: &Filter,
) -> Result<()> {
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    for mut rule in rules {
        rule.filter = filter.clone();
        let rule = Arc::new(rule);
        let vars: Vec<(&str, &str)> = rule.vars.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let r = rule.clone();
        add_snapshot_rule(
            eg,
            &rule.name,
            ruleset,
            snapshot,
            &vars,
            &rule.query,
            move |b, values| {
                let snap = b.snap();
                match r.lone {
                    true => r.apply(b, snap, &[values[0], values[0]]),
                    false => r.apply(b, snap, values),
                }
            },
        )?;
    }
    Ok(())
}

/// Compiles and adds rules; a rule that does not type-check is an error at its location.
pub fn install(
    eg: &mut EGraph,
    ruleset: &str,
    rules: &[RuleDecl],
    snapshot: &SharedSnapshot,
) -> Result<()> {
    install_for(
        eg,
        ruleset,
        rules,
        snapshot,
        Encoding::EFFICIENT,
        &Filter::default(),
    )
}

/// [`install`] for the given encoding.
pub fn install_for(
    eg: &mut EGraph,
    ruleset: &str,
    rules: &[RuleDecl],
    snapshot: &SharedSnapshot,
    encoding: Encoding,
    filter: &Filter,
) -> Result<()> {
    let compiled = rules
        .iter()
        .map(|r| compile_for(r, encoding))
        .collect::<Result<Vec<_>>>()?;
    add_rules(eg, ruleset, compiled, snapshot, filter)
}
