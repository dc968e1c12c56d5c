//! Views: relations naming a primitive applied to its arguments, derived from the e-nodes
//! before each rewrite step, so that a rule's query joins one atom where it would join a
//! whole application spine.
//!
//! As e-nodes, `map f (map g x)` is six atoms: four `App` and two `Prim`. egglog's
//! semi-naive evaluation runs one join per atom of a query every step, each from that atom's
//! new rows and probing the others. Over the view `(view-map-2 out f x)`, which holds when
//! class `out` has an e-node `map f x`, the same pattern is two atoms. The view is a plain
//! egglog relation kept by one egglog rule (`(= out (App (App (Prim "map" _) f _) x _))`),
//! which runs in its own step before the rewrite step ([`refresh`]): the rewrite step then
//! matches against views of the very e-graph it would have matched, so its matches are the
//! same. (A view row that a rebuild canonicalised counts as new, as the `App` rows under it
//! do, so a few old matches may be found again.)
//!
//! The compiler ([`crate::rules::compile`]) writes a view atom for each spine of two or more
//! arguments headed by a primitive, in a query that joins two such spines or more (a query of
//! one spine would only move its join into the view's rule). A spine's own type variables are
//! never constrained elsewhere in a query, so the view loses nothing the query asked.

use super::schema::{Arg, Con};
use crate::error::{Error, Result};
use crate::rise::primitives::Prim;
use egglog::EGraph;
use rustc_hash::FxHashSet;

/// Primitive `prim` applied to `arity` arguments: `(view-<prim>-<arity> out a1 .. ak)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct View {
    pub prim: Prim,
    pub arity: usize,
}

impl View {
    fn relation(self) -> String {
        format!("view-{}-{}", self.prim.name(), self.arity)
    }

    /// The query atom: class `out` holds the primitive applied to `args`.
    pub fn atom(self, out: &str, args: &[String]) -> String {
        debug_assert_eq!(args.len(), self.arity);
        format!("({} {out} {})", self.relation(), args.join(" "))
    }

    /// The egglog rule that keeps the view, in `ruleset`. Like the Rust rules it serves, it
    /// also reads subsumed e-nodes, and is planned as one bag.
    fn rule(self, ruleset: &str) -> String {
        let prim = Arg::<()>::Prim(self.prim.name()).literal();
        let mut spine = Con::Prim.apply(&[prim.expect("a primitive's name"), "t0".into()]);
        let args: Vec<String> = (1..=self.arity).map(|k| format!("a{k}")).collect();
        for (k, a) in args.iter().enumerate() {
            spine = Con::App.apply(&[spine, a.clone(), format!("t{}", k + 1)]);
        }
        format!(
            "(rule ((= out {spine})) ({}) :ruleset {ruleset} :name \"{}\" :no-decomp :internal-include-subsumed)",
            self.atom("out", &args),
            self.relation(),
        )
    }
}

/// The views declared in an e-graph, and the rulesets whose queries read views.
#[derive(Clone, Default)]
struct Declared {
    relations: FxHashSet<View>,
    rules: FxHashSet<(String, View)>,
}

/// The ruleset that keeps the views `ruleset`'s queries read.
fn views_ruleset(ruleset: &str) -> String {
    format!("{ruleset}-views")
}

/// Declares `views` (once per e-graph) and adds the rules that keep them to the views step of
/// `ruleset` (once per ruleset).
pub fn declare(eg: &mut EGraph, ruleset: &str, views: &[View]) -> Result<()> {
    let mut program = String::new();
    let declared = eg.extension_state_or_default::<Declared>();
    for &v in views {
        if declared.relations.insert(v) {
            program += &format!("(relation {} (Expr", v.relation());
            program += &" Expr".repeat(v.arity);
            program += "))\n";
        }
        if declared.rules.insert((ruleset.to_string(), v)) {
            program += &v.rule(&views_ruleset(ruleset));
            program += "\n";
        }
    }
    if program.is_empty() {
        return Ok(());
    }
    let _ = egglog::prelude::add_ruleset(eg, &views_ruleset(ruleset));
    eg.parse_and_run_program(None, &program)
        .map(|_| ())
        .map_err(|e| Error::internal(format!("views of {ruleset}: {e}")))
}

/// Brings the views `ruleset`'s queries read up to date with the e-graph (one step: a view
/// reads e-nodes only). Nothing to do for a ruleset without views.
pub fn refresh(eg: &mut EGraph, ruleset: &str) -> Result<()> {
    if let Some(views) = views_of(eg, ruleset) {
        eg.step_rules(&views).map_err(super::engine)?;
    }
    Ok(())
}

/// The ruleset that refreshes the views `ruleset`'s rules read, if they read any.
pub fn views_of(eg: &mut EGraph, ruleset: &str) -> Option<String> {
    let declared = eg.extension_state_or_default::<Declared>();
    let reads = declared.rules.iter().any(|(r, _)| r == ruleset);
    reads.then(|| views_ruleset(ruleset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::{encode::load_term, rise_egraph};
    use crate::rise::typed_term;

    /// A view holds one row per e-node of its spine, and each refresh adds the rows of the
    /// e-nodes added since: `map f (map g x)` has two `map` applications, and a second term
    /// with one more brings three.
    #[test]
    fn a_refreshed_view_holds_every_application_of_its_primitive() {
        let mut eg = rise_egraph().unwrap();
        let map2 = View {
            prim: Prim::Map,
            arity: 2,
        };
        declare(&mut eg, "r", &[map2]).unwrap();
        let t = "fun (x: 4.f32) => map (fun (a: f32) => add a a) (map (fun (a: f32) => mul a a) x)";
        load_term(&mut eg, &typed_term(t)).unwrap();
        refresh(&mut eg, "r").unwrap();
        assert_eq!(eg.get_size("view-map-2"), 2);
        let u = "fun (y: 4.f32) => map (fun (a: f32) => add a a) y";
        load_term(&mut eg, &typed_term(u)).unwrap();
        refresh(&mut eg, "r").unwrap();
        assert_eq!(eg.get_size("view-map-2"), 3);
        // A ruleset that reads no view has nothing to refresh.
        refresh(&mut eg, "other").unwrap();
    }
}
