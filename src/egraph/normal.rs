//! The normal forms a search keeps its terms in, as shine's `ProveEquiv` has them (its
//! `BENF` and `CNF`):
//!
//! - **beta-eta normal form** (BENF): no beta-redexes, eta-reduced; a composition `f >> g`
//!   is the lambda `fun x => g (f x)`. Every search's default.
//! - **combinator normal form** (CNF): BENF, then every application of a function over data
//!   types to the result of another, `g (f x)`, written `(f >> g) x`, and chains of
//!   compositions nested to the left, `(f >> g) >> h`. Point-free rules (shine's
//!   `rules.combinatory`: `map f >> map g => map (f >> g)`) match terms in this form.
//!
//! A CNF search keeps its terms in CNF with two directed rules, as shine's does:
//! `composition-intro` and `composition-assoc` each add the normal form of what they match
//! and subsume the match (never chosen again: see [`super::rust_rule`]).

use super::extract::{CostModel, ENode, ExprGraph, Extractor, RedexesThenSize};
use super::saturate::{saturate, Check, Limits, StopReason};
use super::schema::Con;
use super::subst::{add_snapshot_rule, Builder, SharedSnapshot};
use crate::error::{Error, Result};
use crate::rise::term::{Node, Term};
use crate::rise::types::{fun, Type};
use egglog::{EGraph, Value};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// The normal form of a search's terms.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NormalForm {
    /// Beta-eta normal form: compositions are lambdas.
    #[default]
    Benf,
    /// Combinator normal form: compositions of functions over data types.
    Cnf,
}

impl NormalForm {
    /// `t` in this normal form, and why its saturation stopped (a limit means the result
    /// may not be normal).
    pub fn normalise(self, t: &Term, limits: &Limits) -> Result<(Rc<Term>, StopReason)> {
        let (benf, stop) = normalise(t, limits)?;
        match self {
            NormalForm::Benf => Ok((benf, stop)),
            NormalForm::Cnf => combinators(&benf, limits),
        }
    }

    /// Adds the rules that keep a search's terms in this normal form to `ruleset` (BENF's
    /// beta and eta are every search's; CNF adds `composition-intro` and `composition-assoc`).
    pub fn add_rules(self, eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
        if self == NormalForm::Cnf {
            add_composition_rules(eg, ruleset, snap)?;
        }
        Ok(())
    }
}

/// The beta-eta normal form of a term (BENF): saturate with extraction-based beta and eta
/// (and `composition-elim`, when the term has compositions), then extract with the fewest
/// redexes, then the smallest size. Also says why saturation stopped (a limit means the
/// result may still hold redexes). A term without redexes is its own normal form: it is
/// returned as it is, saturated, without an e-graph.
pub fn normalise(t: &Term, limits: &Limits) -> Result<(Rc<Term>, StopReason)> {
    if crate::rise::lambda::is_beta_eta_normal(t) {
        return Ok((Rc::new(t.clone()), StopReason::Saturated));
    }
    let compositions = t.has_compositions();
    saturate_extract(t, "benf", limits, RedexesThenSize::new, |eg, snap| {
        if compositions {
            add_composition_elim(eg, "benf", snap)?;
        }
        Ok(())
    })
}

/// The combinator normal form of a term in BENF: saturated with the directed composition
/// rules, then extracted with the fewest applications.
fn combinators(benf: &Term, limits: &Limits) -> Result<(Rc<Term>, StopReason)> {
    saturate_extract(
        benf,
        "cnf",
        limits,
        |_| FewestApplications,
        |eg, snap| add_composition_rules(eg, "cnf", snap),
    )
}

/// `t` saturated in an e-graph of its own with beta, eta and the rules `add` puts in
/// `ruleset`, then the cheapest term of its class by the cost `cost` makes of the e-graph.
fn saturate_extract<C: CostModel>(
    t: &Term,
    ruleset: &str,
    limits: &Limits,
    cost: impl FnOnce(&ExprGraph) -> C,
    add: impl FnOnce(&mut EGraph, &SharedSnapshot) -> Result<()>,
) -> Result<(Rc<Term>, StopReason)> {
    let mut eg = super::rise_egraph()?;
    super::encode::load_term(&mut eg, t)?;
    let snap = SharedSnapshot::default();
    super::subst::add_beta_eta(&mut eg, ruleset, &snap)?;
    add(&mut eg, &snap)?;
    let out = saturate(
        &mut eg,
        ruleset,
        &snap,
        limits,
        |_| Ok(Check::default()),
        |_| {},
    )?;
    let root = super::lookup::find_term(&eg, t)
        .ok_or_else(|| Error::internal("normalise: the term left the e-graph"))?;
    let graph = ExprGraph::read(&eg)?;
    let nf = Extractor::new(&graph, &cost(&graph)).extract(root)?;
    Ok((nf, out.stop))
}

/// Fewest applications, then smallest: the cost of combinator normal forms.
struct FewestApplications;

impl CostModel for FewestApplications {
    fn node_cost(&self, node: &ENode) -> u64 {
        super::extract::redexes_then_size(matches!(node, Node::App(..)))
    }
}

/// The function type `a -> b` of a class, if it is one between data types.
fn data_function(b: &Builder, class: Value) -> Option<(Type, Type)> {
    match b.snap().class_type(class)? {
        Type::Fun(a, r) if a.is_data() && r.is_data() => Some((Type::clone(a), Type::clone(r))),
        _ => None,
    }
}

/// Adds shine's directed `composition-intro`, `g (f x) => (f >> g) x` for functions over
/// data types, and `composition-assoc`, `f >> (g >> h) => (f >> g) >> h`, to `ruleset`.
fn add_composition_rules(eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    let vars = [
        ("e", "Expr"),
        ("g", "Expr"),
        ("fx", "Expr"),
        ("f", "Expr"),
        ("x", "Expr"),
        ("t", "Type"),
    ];
    let query = "(= e (App g fx t)) (= fx (App f x ft))";
    add_snapshot_rule(
        eg,
        "composition-intro",
        ruleset,
        snap,
        &vars,
        query,
        |b, v| {
            let [_, g, fx, f, x, t] = v else { return None };
            let (a, _) = data_function(b, *f)?;
            let (_, c) = data_function(b, *g)?;
            let ty = b.type_value(&fun(a, c))?;
            let comp = b.add(Con::Comp, &[*f, *g], ty);
            let applied = b.add(Con::App, &[comp, *x], *t);
            b.subsume(Con::App, &[*g, *fx, *t]);
            Some(applied)
        },
    )?;
    let vars = [
        ("e", "Expr"),
        ("f", "Expr"),
        ("gh", "Expr"),
        ("g", "Expr"),
        ("h", "Expr"),
        ("t", "Type"),
    ];
    let query = "(= e (Comp f gh t)) (= gh (Comp g h ght))";
    add_snapshot_rule(
        eg,
        "composition-assoc",
        ruleset,
        snap,
        &vars,
        query,
        |b, v| {
            let [_, f, gh, g, h, t] = v else { return None };
            let (Type::Fun(a, _), Type::Fun(_, c)) =
                (b.snap().class_type(*f)?, b.snap().class_type(*g)?)
            else {
                return None;
            };
            let ty = b.type_value(&fun(Type::clone(a), Type::clone(c)))?;
            let fg = b.add(Con::Comp, &[*f, *g], ty);
            let left = b.add(Con::Comp, &[fg, *h], *t);
            b.subsume(Con::Comp, &[*f, *gh, *t]);
            Some(left)
        },
    )
}

/// Adds `composition-elim`, `f >> g => fun x => g (f x)`, to `ruleset`: beta-eta
/// normalisation of a term with compositions (a CNF search's result).
fn add_composition_elim(eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
    let vars = [("e", "Expr"), ("f", "Expr"), ("g", "Expr"), ("t", "Type")];
    let query = "(= e (Comp f g t))";
    add_snapshot_rule(
        eg,
        "composition-elim",
        ruleset,
        snap,
        &vars,
        query,
        |b, v| {
            let [_, f, g, t] = v else { return None };
            let Type::Fun(a, m) = b.snap().class_type(*f)?.clone() else {
                return None;
            };
            let Type::Fun(_, c) = b.snap().class_type(*g)?.clone() else {
                return None;
            };
            let (a, m, c) = (b.type_value(&a)?, b.type_value(&m)?, b.type_value(&c)?);
            let mut memo = HashMap::default();
            let f = b.shift(*f, 0, 1, &mut memo)?;
            let g = b.shift(*g, 0, 1, &mut memo)?;
            let x = b.var(0, a);
            let fx = b.add(Con::App, &[f, x], m);
            let gfx = b.add(Con::App, &[g, fx], c);
            Some(b.add(Con::Lam, &[gfx], *t))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rise::lambda::is_beta_eta_normal;
    use crate::rise::typed_term;

    /// The e-graph's normal form, never taking the shortcut for terms without redexes.
    fn by_saturation(t: &Term) -> Rc<Term> {
        let limits = Limits::default();
        saturate_extract(t, "benf", &limits, RedexesThenSize::new, |eg, snap| {
            add_composition_elim(eg, "benf", snap)
        })
        .unwrap()
        .0
    }

    #[test]
    fn redexes_are_told_apart_from_lambdas_that_are_not_one() {
        let normal = [
            "fun (x: f32) => x",
            "fun (f: f32 -> f32) => fun (x: f32) => f (f x)",
            "fun (x: f32 -> f32 -> f32) => fun (y: f32) => x y y",
            "fun (xs: 4.f32) => map (fun (x: f32) => add x x) (map (fun (x: f32) => add x x) xs)",
        ];
        let redexes = [
            "fun (y: f32) => (fun (x: f32) => x) y",
            "fun (f: f32 -> f32) => fun (x: f32) => f x",
            "fun (xs: 4.f32) => map (fun (x: f32) => neg x) xs",
        ];
        for src in normal {
            assert!(is_beta_eta_normal(&typed_term(src)), "{src}");
        }
        for src in redexes {
            assert!(!is_beta_eta_normal(&typed_term(src)), "{src}");
        }
    }

    /// The shortcut agrees with saturation: every definition the shipped programs hold, and
    /// its normal form, is normal exactly when saturation leaves it as it is.
    #[test]
    fn a_term_without_redexes_is_its_own_normal_form_and_saturation_leaves_none() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/programs");
        let (mut normal, mut not) = (0, 0);
        for file in ["matmul.rise", "harris.rise", "fission.rise", "double.rise"] {
            let program = crate::rise::load_program(&std::path::Path::new(dir).join(file));
            let program = program.unwrap();
            for def in &program.defs {
                // Helpers generic in their types are typed only where they are used.
                let Ok(t) = crate::rise::infer::elaborate_def(&program, &def.name) else {
                    continue;
                };
                let nf = by_saturation(&t);
                assert!(is_beta_eta_normal(&nf), "{file}:{}", def.name);
                assert_eq!(is_beta_eta_normal(&t), *nf == *t, "{file}:{}", def.name);
                let shortcut = normalise(&t, &Limits::default()).unwrap().0;
                assert_eq!(*shortcut, *nf, "{file}:{}", def.name);
                *if *nf == *t { &mut normal } else { &mut not } += 1;
            }
        }
        assert!(normal > 0 && not > 0, "{normal} normal, {not} with redexes");
    }
}
