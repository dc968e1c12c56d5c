//! Explicit substitution with De Bruijn indices (paper section 4.1, in the style of the
//! lambda-sigma calculus): beta creates a `Sig` node, and rewrite rules push `Sig` (substitute)
//! and `Phi` (shift) through the term one constructor at a time.
//!
//! The structural rules are plain egglog rules. As in the reference prototype, whether the
//! term under a `Sig`/`Phi` is a variable or a constant is decided on its class's
//! representative (a Rust rule reading the snapshot): plain egglog rules would also fire on
//! the other terms of the class, some of which come from other contexts.

use super::subst::{add_eta, add_snapshot_rule, SharedSnapshot};
use crate::egraph::schema::Con;
use crate::error::Result;
use egglog::EGraph;

/// The structural rules, over every term of a class. Types: `Sig`/`Phi` have the type of the
/// term they act on; under a lambda that is the lambda's result type.
pub const STRUCTURAL: &str = r#"
(rule ((= e (App (Lam body lt) arg at)))
      ((union e (Sig 0 body arg at))) :ruleset RS :name "beta-explicit")
(rule ((= e (Sig i (Lam a (TFun p r)) x t)))
      ((union e (Lam (Sig (+ i 1) a x r) (TFun p r)))) :ruleset RS :name "sig-lam")
(rule ((= e (Sig i (App f y at) x t)) (= ft (ty f)) (= yt (ty y)))
      ((union e (App (Sig i f x ft) (Sig i y x yt) at))) :ruleset RS :name "sig-app")
(rule ((= e (Sig i (NatApp f n nt) x t)) (= ft (ty f)))
      ((union e (NatApp (Sig i f x ft) n nt))) :ruleset RS :name "sig-natapp")
(rule ((= e (Phi d k (Lam a (TFun p r)) t)))
      ((union e (Lam (Phi d (+ k 1) a r) (TFun p r)))) :ruleset RS :name "phi-lam")
(rule ((= e (Phi d k (App f y at) t)) (= ft (ty f)) (= yt (ty y)))
      ((union e (App (Phi d k f ft) (Phi d k y yt) at))) :ruleset RS :name "phi-app")
(rule ((= e (Phi d k (NatApp f n nt) t)) (= ft (ty f)))
      ((union e (NatApp (Phi d k f ft) n nt))) :ruleset RS :name "phi-natapp")
"#;

/// The queries of the Rust rules for sigma and phi over a variable or a constant.
pub const SIG_QUERY: &str = "(= e (Sig i a x t))";
pub const PHI_QUERY: &str = "(= e (Phi d k a t))";

/// Adds explicit-substitution beta, eta and the sigma/phi rules to `ruleset`.
pub fn add_explicit_substitution(
    eg: &mut EGraph,
    ruleset: &str,
    snap: &SharedSnapshot,
) -> Result<()> {
    super::add_family_analyses(eg, super::schema::Family::Explicit)?;
    super::add_rule_text(eg, ruleset, STRUCTURAL)?;

    // sigma(i, a, x) where a's representative is a variable or a constant.
    let vars = [("e", "Expr"), ("i", "i64"), ("a", "Expr"), ("x", "Expr")];
    let query = SIG_QUERY;
    add_snapshot_rule(eg, "sig-var-const", ruleset, snap, &vars, query, |b, v| {
        let i = b.int(v[1]);
        match b.snap().leaf(v[2])? {
            None => Some(v[2]),
            Some((var, vt)) if var > i => Some(b.var((var - 1) as u32, vt)),
            Some((var, _)) if var < i => Some(v[2]),
            Some((_, vt)) => {
                // A variable of another type comes from a term of another context.
                let xt = b.snap().class_type_value(v[3]).filter(|xt| *xt == vt)?;
                let (d, k) = (b.base(i), b.base(0i64));
                Some(b.add(Con::Phi, &[d, k, v[3]], xt))
            }
        }
    })?;

    // phi(d, k, a) where a's representative is a variable or a constant.
    let vars = [("e", "Expr"), ("d", "i64"), ("k", "i64"), ("a", "Expr")];
    let query = PHI_QUERY;
    add_snapshot_rule(eg, "phi-var-const", ruleset, snap, &vars, query, |b, v| {
        let (d, k) = (b.int(v[1]), b.int(v[2]));
        match b.snap().leaf(v[3])? {
            Some((var, vt)) if var >= k => {
                let shifted = u32::try_from(var + d).ok()?;
                Some(b.var(shifted, vt))
            }
            _ => Some(v[3]),
        }
    })?;

    // eta: λ. f %0 => phi(-1, 1, f), when %0 is not free in f.
    add_eta(eg, "eta-explicit", ruleset, snap, |b, f| {
        let ft = b.snap().class_type_value(f)?;
        let (d, k) = (b.base(-1i64), b.base(1i64));
        Some(b.add(Con::Phi, &[d, k, f], ft))
    })?;
    Ok(())
}
