//! The encoding's part of a compiled rule's right-hand side: how binders, bound variables and
//! pattern variables moved between binders are built. One small back-end per encoding
//! ([`for_encoding`]); the rest of a right-hand side (its template, types and sizes, the
//! constructors) is the same for all of them (`rhs`).
//!
//! - [`Extraction`] (De Bruijn indices, extraction-based substitution): a pattern variable
//!   moved between binders is re-indexed on its class's representative.
//! - [`Explicit`] (De Bruijn indices, explicit substitution): it is wrapped in a `Phi`.
//! - [`Named`] (names, either substitution): binders carry names (the matched name of the
//!   left-hand side binder of the same name, or one derived from the matched class), and a
//!   pattern variable must not be captured by an RHS binder it was not under on the left.

use super::compile::{CompiledRule, Tmpl};
use super::rhs::Match;
use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::egraph::names::class_number;
use crate::egraph::schema::Con;
use crate::egraph::subst::{Builder, Snapshot};
use egglog::Value;

/// A pattern variable's class placed in the right-hand side, under the binders `lhs` around it
/// on the left and `ctx` on the right (outermost first).
pub(super) struct Hole<'a> {
    pub class: Value,
    pub lhs: &'a [String],
    pub ctx: &'a [String],
}

/// A lambda of a right-hand side: its body, its slot and its type.
pub(super) struct Lambda<'a> {
    pub rule: &'a CompiledRule,
    pub body: &'a Tmpl,
    pub slot: usize,
    pub ty: Value,
}

/// A `notin` condition at a match: pattern variable `var` must not use the left-hand side
/// binder `j` around it (counted from the innermost).
pub(super) struct NotIn<'a> {
    pub rule: &'a CompiledRule,
    pub values: &'a [Value],
    pub var: usize,
    pub j: u32,
}

/// The encoding's part of building a right-hand side; the defaults are De Bruijn indices'.
pub(super) trait Backend: std::fmt::Debug + Send + Sync {
    /// May the class matched by the condition's pattern variable use the binder it names?
    /// Then the rule does not fire.
    fn may_use(&self, snap: &Snapshot, c: NotIn) -> bool {
        snap.may_be_free(c.values[1 + c.var], c.j)
    }

    /// The hole's class as the right-hand side uses it; `None` if it cannot be placed.
    fn hole(&self, b: &mut Builder, m: &Match, hole: Hole) -> Option<Value>;

    /// The variable of the `i`-th enclosing right-hand side binder (0: innermost).
    fn bound(&self, b: &mut Builder, m: &Match, i: u32, ty: Value) -> Value {
        let _ = m;
        b.var(i, ty)
    }

    /// A lambda of the rule's right-hand side.
    fn lambda(&self, b: &mut Builder, m: &mut Match, lam: Lambda) -> Option<Value> {
        let body = lam.rule.build(lam.body, b, m)?;
        Some(b.add(Con::Lam, &[body], lam.ty))
    }
}

/// The back-end of an encoding.
pub(super) fn for_encoding(encoding: Encoding) -> &'static dyn Backend {
    match (encoding.binding, encoding.substitution) {
        (Binding::DeBruijn, Substitution::Extraction) => &Extraction,
        (Binding::DeBruijn, Substitution::Explicit) => &Explicit,
        (Binding::Names, _) => &Named,
    }
}

/// De Bruijn indices, extraction-based substitution.
#[derive(Debug)]
pub(super) struct Extraction;

/// De Bruijn indices, explicit substitution.
#[derive(Debug)]
pub(super) struct Explicit;

/// Names, either substitution.
#[derive(Debug)]
pub(super) struct Named;

/// Where a pattern variable's free variable `j` (an index under its left-hand side binders
/// `lhs`, outermost first) points under the right-hand side binders `ctx`; `None` for a
/// left-hand side binder the right-hand side does not have around it.
pub(super) fn moved_index(lhs: &[String], ctx: &[String], j: u32) -> Option<u32> {
    let j = j as usize;
    if j < lhs.len() {
        let name = &lhs[lhs.len() - 1 - j];
        ctx.iter()
            .rposition(|c| c == name)
            .map(|p| (ctx.len() - 1 - p) as u32)
    } else {
        Some((j - lhs.len() + ctx.len()) as u32)
    }
}

impl Backend for Extraction {
    fn hole(&self, b: &mut Builder, _: &Match, hole: Hole) -> Option<Value> {
        if hole.lhs == hole.ctx {
            return Some(hole.class);
        }
        let map = |j| moved_index(hole.lhs, hole.ctx, j);
        b.reindex(hole.class, 0, &map, &mut Default::default())
    }
}

impl Backend for Explicit {
    fn hole(&self, b: &mut Builder, _: &Match, hole: Hole) -> Option<Value> {
        let map = |j| moved_index(hole.lhs, hole.ctx, j);
        let (d, k) = as_shift(&map, hole.lhs.len())?;
        if d == 0 {
            return Some(hole.class);
        }
        let (dv, kv) = (b.base(d), b.base(k as i64));
        let ty = b.snap().class_type_value(hole.class)?;
        Some(b.add(Con::Phi, &[dv, kv, hole.class], ty))
    }
}

impl Named {
    /// The matched name of the left-hand side binder the rule calls `x`.
    fn lhs_binder(rule: &CompiledRule, x: &str, values: &[Value]) -> Option<Value> {
        let (_, k) = rule.lhs_binders.iter().find(|(n, _)| n == x)?;
        Some(values[*k])
    }
}

impl Backend for Named {
    fn may_use(&self, snap: &Snapshot, c: NotIn) -> bool {
        let lhs = &c.rule.lhs_ctx[c.var];
        let binder = &lhs[lhs.len() - 1 - c.j as usize];
        Named::lhs_binder(c.rule, binder, c.values)
            .is_none_or(|name| snap.may_have_free_name(c.values[1 + c.var], name))
    }

    /// The class as it is, unless it may have free the name of a right-hand side binder
    /// around it that was not around it on the left (it would be captured).
    fn hole(&self, b: &mut Builder, m: &Match, hole: Hole) -> Option<Value> {
        let captures = (m.binders.iter())
            .any(|(x, v)| !hole.lhs.contains(x) && b.snap().may_have_free_name(hole.class, *v));
        (!captures).then_some(hole.class)
    }

    fn bound(&self, b: &mut Builder, m: &Match, i: u32, ty: Value) -> Value {
        let name = m.binders[m.binders.len() - 1 - i as usize].1;
        b.add(Con::NamedVar, &[name], ty)
    }

    /// Named after the matched left-hand side binder of the same name, or after the
    /// matched root class.
    fn lambda(&self, b: &mut Builder, m: &mut Match, lam: Lambda) -> Option<Value> {
        let x = lam.rule.slots[lam.slot].binder.clone()?;
        let name = Named::lhs_binder(lam.rule, &x, m.values)
            .unwrap_or_else(|| b.base(format!("{x}_{}", class_number(m.values[0]))));
        m.binders.push((x, name));
        let body = lam.rule.build(lam.body, b, m);
        m.binders.pop();
        Some(b.add(Con::NamedLam, &[name, body?], lam.ty))
    }
}

/// Writes a re-indexing of a pattern variable's free variables (`map`, over a context of
/// `bound` binders) as a shift `phi(d, k)`: indices below `k` stay (or are unused), those from
/// `k` on move by `d`. `None` if it is not a shift.
fn as_shift(map: &dyn Fn(u32) -> Option<u32>, bound: usize) -> Option<(i64, u32)> {
    let d = map(bound as u32)? as i64 - bound as i64;
    (0..=bound as u32).find_map(|k| {
        let fits = (0..bound as u32).all(|j| match map(j) {
            None => true,
            Some(m) if j < k => m == j,
            Some(m) => m as i64 == j as i64 + d,
        });
        fits.then_some((d, k))
    })
}
