//! Explicit substitution with De Bruijn indices (paper section 4.1, in the style of the
//! lambda-sigma calculus): beta creates a `Sig` node, and rewrite rules push `Sig` (substitute)
//! and `Phi` (shift) through the term one constructor at a time.
//!
//! Every rule is a Rust rule reading the snapshot, as every rewrite of a search is: its
//! applications are counted and capped as the others' are. As in the reference prototype,
//! whether the term under a `Sig`/`Phi` is a variable or a constant is decided on its class's
//! representative: over every term of the class, the rule would also fire on terms from other
//! contexts.

use super::subst::{add_eta, Builder, RustRule, SharedSnapshot};
use crate::egraph::schema::Con;
use crate::error::Result;
use egglog::{EGraph, Value};

/// Beta, the rules that push `Sig`/`Phi` through a constructor (over every term of a class),
/// and the rules that apply them to a variable or a constant (on the representative).
/// `Sig`/`Phi` have the type of the term they act on; under a lambda that is the lambda's
/// result type.
pub const RULES: [RustRule; 9] = [
    RustRule {
        name: "beta-explicit",
        vars: &[
            ("e", "Expr"),
            ("body", "Expr"),
            ("arg", "Expr"),
            ("at", "Type"),
        ],
        query: "(= e (App (Lam body lt) arg at))",
        builds: "(Sig 0 body arg at)",
        rhs: |b, v| {
            let zero = b.base(0i64);
            Some(b.add(Con::Sig, &[zero, v[1], v[2]], v[3]))
        },
    },
    RustRule {
        name: "sig-lam",
        vars: &[
            ("e", "Expr"),
            ("i", "i64"),
            ("a", "Expr"),
            ("x", "Expr"),
            ("lt", "Type"),
            ("r", "Type"),
        ],
        query: "(= e (Sig i (Lam a lt) x t)) (= lt (TFun p r))",
        builds: "(Lam (Sig (+ i 1) a x r) lt)",
        rhs: |b, v| {
            let i = b.base(b.int(v[1]) + 1);
            let body = b.add(Con::Sig, &[i, v[2], v[3]], v[5]);
            Some(b.add(Con::Lam, &[body], v[4]))
        },
    },
    RustRule {
        name: "sig-app",
        vars: &[
            ("e", "Expr"),
            ("i", "i64"),
            ("f", "Expr"),
            ("y", "Expr"),
            ("at", "Type"),
            ("x", "Expr"),
        ],
        query: "(= e (Sig i (App f y at) x t))",
        builds: "(App (Sig i f x (ty f)) (Sig i y x (ty y)) at)",
        rhs: |b, v| {
            let f = pushed(b, Con::Sig, [v[1], v[2], v[5]])?;
            let y = pushed(b, Con::Sig, [v[1], v[3], v[5]])?;
            Some(b.add(Con::App, &[f, y], v[4]))
        },
    },
    RustRule {
        name: "sig-natapp",
        vars: &[
            ("e", "Expr"),
            ("i", "i64"),
            ("f", "Expr"),
            ("n", "Nat"),
            ("nt", "Type"),
            ("x", "Expr"),
        ],
        query: "(= e (Sig i (NatApp f n nt) x t))",
        builds: "(NatApp (Sig i f x (ty f)) n nt)",
        rhs: |b, v| {
            let f = pushed(b, Con::Sig, [v[1], v[2], v[5]])?;
            Some(b.add(Con::NatApp, &[f, v[3]], v[4]))
        },
    },
    RustRule {
        name: "phi-lam",
        vars: &[
            ("e", "Expr"),
            ("d", "i64"),
            ("k", "i64"),
            ("a", "Expr"),
            ("lt", "Type"),
            ("r", "Type"),
        ],
        query: "(= e (Phi d k (Lam a lt) t)) (= lt (TFun p r))",
        builds: "(Lam (Phi d (+ k 1) a r) lt)",
        rhs: |b, v| {
            let k = b.base(b.int(v[2]) + 1);
            let body = b.add(Con::Phi, &[v[1], k, v[3]], v[5]);
            Some(b.add(Con::Lam, &[body], v[4]))
        },
    },
    RustRule {
        name: "phi-app",
        vars: &[
            ("e", "Expr"),
            ("d", "i64"),
            ("k", "i64"),
            ("f", "Expr"),
            ("y", "Expr"),
            ("at", "Type"),
        ],
        query: "(= e (Phi d k (App f y at) t))",
        builds: "(App (Phi d k f (ty f)) (Phi d k y (ty y)) at)",
        rhs: |b, v| {
            let f = pushed(b, Con::Phi, [v[1], v[2], v[3]])?;
            let y = pushed(b, Con::Phi, [v[1], v[2], v[4]])?;
            Some(b.add(Con::App, &[f, y], v[5]))
        },
    },
    RustRule {
        name: "phi-natapp",
        vars: &[
            ("e", "Expr"),
            ("d", "i64"),
            ("k", "i64"),
            ("f", "Expr"),
            ("n", "Nat"),
            ("nt", "Type"),
        ],
        query: "(= e (Phi d k (NatApp f n nt) t))",
        builds: "(NatApp (Phi d k f (ty f)) n nt)",
        rhs: |b, v| {
            let f = pushed(b, Con::Phi, [v[1], v[2], v[3]])?;
            Some(b.add(Con::NatApp, &[f, v[4]], v[5]))
        },
    },
    RustRule {
        name: "sig-var-const",
        vars: &[("e", "Expr"), ("i", "i64"), ("a", "Expr"), ("x", "Expr")],
        query: "(= e (Sig i a x t))",
        builds: "a's representative: var > i: var - 1; var = i: (Phi i 0 x); else a",
        rhs: |b, v| {
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
        },
    },
    RustRule {
        name: "phi-var-const",
        vars: &[("e", "Expr"), ("d", "i64"), ("k", "i64"), ("a", "Expr")],
        query: "(= e (Phi d k a t))",
        builds: "a's representative: var >= k: var + d; else a",
        rhs: |b, v| {
            let (d, k) = (b.int(v[1]), b.int(v[2]));
            match b.snap().leaf(v[3])? {
                Some((var, vt)) if var >= k => {
                    let shifted = u32::try_from(var + d).ok()?;
                    Some(b.var(shifted, vt))
                }
                _ => Some(v[3]),
            }
        },
    },
];

/// A `Sig` or `Phi` node (`fields` without the type) over a class, at the class's type.
fn pushed(b: &mut Builder, con: Con, fields: [Value; 3]) -> Option<Value> {
    let over = if con == Con::Sig {
        fields[1]
    } else {
        fields[2]
    };
    let ty = b.snap().class_type_value(over)?;
    Some(b.add(con, &fields, ty))
}

/// Adds explicit-substitution beta, eta and the sigma/phi rules to `ruleset`.
pub fn add_explicit_substitution(
    eg: &mut EGraph,
    ruleset: &str,
    snap: &SharedSnapshot,
) -> Result<()> {
    super::add_family_analyses(eg, super::schema::Family::Explicit)?;
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    for rule in &RULES {
        rule.install(eg, ruleset, snap)?;
    }

    // eta: λ. f %0 => phi(-1, 1, f), when %0 is not free in f.
    add_eta(eg, "eta-explicit", ruleset, snap, |b, f| {
        let ft = b.snap().class_type_value(f)?;
        let (d, k) = (b.base(-1i64), b.base(1i64));
        Some(b.add(Con::Phi, &[d, k, f], ft))
    })?;
    Ok(())
}
