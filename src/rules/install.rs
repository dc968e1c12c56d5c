//! Installing compiled rules in an e-graph: each rule's query with its right-hand side as a
//! Rust rule reading the snapshot ([`add_snapshot_rule`]).

use super::compile::{compile_for, CompiledRule};
use crate::egraph::encoding::Encoding;
use crate::egraph::filter::Filter;
use crate::egraph::normal::NormalForm;
use crate::egraph::subst::{add_snapshot_rule, SharedSnapshot};
use crate::error::Result;
use crate::rise::syntax::RuleDecl;
use egglog::EGraph;
use std::sync::Arc;

/// Adds compiled rules to `ruleset` as Rust rules reading `snapshot`; their new e-nodes
/// must pass `filter`'s type conditions. Rules with the same left-hand side (the binomial
/// filter's two ways to separate a dot product) share one egglog rule: its query is matched
/// once, and each right-hand side is built on each match.
pub fn add_rules(
    eg: &mut EGraph,
    ruleset: &str,
    rules: Vec<CompiledRule>,
    snapshot: &SharedSnapshot,
    filter: &Filter,
) -> Result<()> {
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    for group in same_query(rules) {
        let rules: Vec<Arc<CompiledRule>> = (group.into_iter())
            .map(|mut rule| {
                rule.filter = filter.clone();
                Arc::new(rule)
            })
            .collect();
        let first = rules[0].clone();
        crate::egraph::views::declare(eg, ruleset, &first.views)?;
        let name = (rules.iter().map(|r| r.name.as_str()))
            .collect::<Vec<_>>()
            .join("+");
        let vars: Vec<(&str, &str)> = (first.vars.iter()).map(|(n, s)| (n.as_str(), *s)).collect();
        add_snapshot_rule(
            eg,
            &name,
            ruleset,
            snapshot,
            &vars,
            &first.query,
            move |b, values| {
                let snap = b.snap();
                // The last right-hand side's value is unioned with the match by the caller.
                let values = match rules[0].lone {
                    true => &[values[0], values[0]][..],
                    false => values,
                };
                let (last, others) = rules.split_last()?;
                for r in others {
                    if let Some(v) = r.apply(b, snap, values) {
                        b.union(values[0], v)?;
                    }
                }
                last.apply(b, snap, values)
            },
        )?;
    }
    Ok(())
}

/// `rules` grouped by their query and callback variables, in their order.
fn same_query(rules: Vec<CompiledRule>) -> Vec<Vec<CompiledRule>> {
    let mut groups: Vec<Vec<CompiledRule>> = vec![];
    let same = |a: &CompiledRule, b: &CompiledRule| {
        a.query == b.query && a.vars == b.vars && a.lone == b.lone
    };
    for rule in rules {
        match groups.iter_mut().find(|g| same(&g[0], &rule)) {
            Some(g) => g.push(rule),
            None => groups.push(vec![rule]),
        }
    }
    groups
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
        (Encoding::EFFICIENT, NormalForm::Benf),
        &Filter::default(),
    )
}

/// [`install`] for the given encoding, in a search that keeps its terms in normal form `nf`:
/// a rule's compositions are lambdas in beta-eta normal form, composition nodes in
/// combinator normal form.
pub fn install_for(
    eg: &mut EGraph,
    ruleset: &str,
    rules: &[RuleDecl],
    snapshot: &SharedSnapshot,
    (encoding, nf): (Encoding, NormalForm),
    filter: &Filter,
) -> Result<()> {
    let compiled = rules
        .iter()
        .map(|r| match nf {
            NormalForm::Benf => compile_for(&r.compositions_expanded(), encoding),
            NormalForm::Cnf => compile_for(r, encoding),
        })
        .collect::<Result<Vec<_>>>()?;
    add_rules(eg, ruleset, compiled, snapshot, filter)
}
