//! Rules whose right-hand side is Rust, registered as egglog's `prelude::rust_rule` does,
//! except that their atoms also match subsumed e-nodes.
//!
//! **What a subsumed e-node is.** The term-size filter and the combinator normal form subsume
//! e-nodes. A subsumed e-node is still matched by every rewrite (these rules, and the views
//! their queries read, which are kept with `:internal-include-subsumed`), and it is never
//! chosen: extraction, the sketch checks, the snapshot's representatives that extraction-based
//! substitution copies, and the free-variable analyses read only the others. A right-hand
//! side types the class it rewrites from the snapshot, so a class whose every e-node is
//! subsumed (one the filter pruned whole) is not rewritten. `tests/suite/subsumption.rs` holds
//! both, for a rule over views and one over e-nodes.
//!
//! egglog 3.0 gives every constructor atom of a rule a "not subsumed" constraint unless the
//! rule includes subsumed rows, and resolves that constraint on every step by intersecting
//! the atom's table with an index of its subsumption column: work and memory that follow
//! the whole table, not what is new (most of the peak heap of a large search; the figures are
//! in the book's performance chapter). Only the term-size filter and the combinator normal
//! form subsume e-nodes, and few: rewriting them anyway is sound, and the sketch query and
//! extraction still skip them.
//!
//! A rule with a large left-hand side is evaluated naively ([`naive`]): semi-naive
//! evaluation runs one join per atom of the query every step, each from that atom's new
//! rows, and for a large query that matches rarely (the binomial filter's 28-atom dot
//! product) those joins cost more than one whole join a step.

use egglog::ast::{
    Command, Facts, GenericAction, GenericActions, GenericExpr, GenericFact, Rule, RuleEvalMode,
};
use egglog::constraint::{SimpleTypeConstraint, TypeConstraint};
use egglog::prelude::exprs;
use egglog::prelude::BaseSort;
use egglog::sort::UnitSort;
use egglog::{span, ArcSort, CommandOutput, Core, EGraph, Primitive, Value, WritePrim, WriteState};

/// The right-hand side: a write primitive that calls the Rust function on the match.
#[derive(Clone)]
struct Rhs<F> {
    name: String,
    inputs: Vec<ArcSort>,
    func: F,
}

impl<F: Clone + Send + Sync + 'static> Primitive for Rhs<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn get_type_constraints(&self, span: &egglog::ast::Span) -> Box<dyn TypeConstraint> {
        let mut sorts = self.inputs.clone();
        sorts.push(UnitSort.to_arcsort());
        SimpleTypeConstraint::new(self.name(), sorts, span.clone()).into_box()
    }
}

impl<F> WritePrim for Rhs<F>
where
    F: for<'a, 'db> Fn(WriteState<'a, 'db>, &[Value]) -> Option<()> + Clone + Send + Sync + 'static,
{
    fn apply<'a, 'db>(&self, state: WriteState<'a, 'db>, values: &[Value]) -> Option<Value> {
        let unit = state.base_values().get(());
        (self.func)(state, values)?;
        Some(unit)
    }
}

/// Queries of more atoms than this are evaluated naively.
const SEMI_NAIVE_ATOMS: usize = 15;

/// Whether a rule with this query is evaluated naively: every step joins the whole query
/// once and finds every match again, old ones too, where semi-naive evaluation runs one join
/// per atom to find only the new ones. A large query is usually a rare pattern. The
/// unguided blocking search, whose `lift-reduce-seq` rules have 18 and 20 atoms, took the
/// same time with them naive, to 626K e-nodes (two runs each, side by side).
pub fn naive(facts: &Facts<String, String>) -> bool {
    fn atoms(e: &GenericExpr<String, String>) -> usize {
        match e {
            GenericExpr::Call(_, _, args) => 1 + args.iter().map(atoms).sum::<usize>(),
            GenericExpr::Var(..) | GenericExpr::Lit(..) => 0,
        }
    }
    let total: usize = (facts.0.iter())
        .map(|f| match f {
            GenericFact::Eq(_, a, b) => atoms(a) + atoms(b),
            GenericFact::Fact(e) => atoms(e),
        })
        .sum();
    total > SEMI_NAIVE_ATOMS
}

/// Adds a rule to `ruleset`, evaluated semi-naively unless [`naive`] says otherwise: on
/// every match of `facts` (new ones only, semi-naively), `func` gets the values of `vars`.
pub fn rust_rule(
    eg: &mut EGraph,
    name: &str,
    ruleset: &str,
    vars: &[(&str, ArcSort)],
    facts: Facts<String, String>,
    func: impl for<'a, 'db> Fn(WriteState<'a, 'db>, &[Value]) -> Option<()>
        + Clone
        + Send
        + Sync
        + 'static,
) -> Result<Vec<CommandOutput>, egglog::Error> {
    let prim = fresh_name(eg, &format!("{name}-rhs"));
    eg.add_write_primitive(
        Rhs {
            name: prim.clone(),
            inputs: vars.iter().map(|(_, s)| s.clone()).collect(),
            func,
        },
        None,
    );
    let call = exprs::call(&prim, vars.iter().map(|(v, _)| exprs::var(v)).collect());
    let eval_mode = match naive(&facts) {
        true => RuleEvalMode::Naive,
        false => RuleEvalMode::Seminaive,
    };
    let rule = Rule {
        span: span!(),
        head: GenericActions(vec![GenericAction::Expr(span!(), call)]),
        body: facts.0,
        name: fresh_name(eg, name),
        ruleset: ruleset.into(),
        eval_mode,
        // One bag: egglog's tree decomposition cost more than it saved on these tree-shaped
        // patterns (the unguided blocking search's rewrite step 1.5-2x faster without it).
        no_decomp: true,
        include_subsumed: true,
    };
    eg.run_program(vec![Command::Rule { rule }])
}

/// Parses egglog facts text into the AST `rust_rule` takes.
pub(crate) fn parse_facts(
    eg: &mut EGraph,
    text: &str,
) -> crate::error::Result<Facts<String, String>> {
    super::note_type_reads(eg, text);
    let cmds = eg
        .parse_program(None, &format!("(rule ({text}) ())"))
        .map_err(|e| {
            crate::error::Error::internal(format!("compiled query does not parse: {e}"))
        })?;
    match cmds.into_iter().next() {
        Some(Command::Rule { rule, .. }) => Ok(Facts(rule.body)),
        _ => Err(crate::error::Error::internal(
            "compiled query is not a rule",
        )),
    }
}

/// A name no primitive or rule of the e-graph has yet.
fn fresh_name(eg: &mut EGraph, base: &str) -> String {
    let n = eg.extension_state_or_default::<Names>();
    n.0 += 1;
    format!("{base}__{}", n.0)
}

#[derive(Clone, Default)]
struct Names(usize);
