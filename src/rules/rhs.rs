//! The right-hand side of a compiled rule, built in Rust on each match: the new e-nodes'
//! types (and sizes) from the matched classes' types, unified with the rule's typed sides and
//! cached per match of types; `notin` conditions, binders and pattern variables moved between
//! binders by the encoding's back-end (`backend`).

use super::backend::{Hole, Lambda, NotIn};
use super::compile::{CompiledRule, Tmpl};
use crate::egraph::schema::{Arg, Con};
use crate::egraph::subst::{Builder, Snapshot};
use crate::rise::infer::Matcher;
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::term::Node;
use crate::rise::types::{shift_nat, Type};
use egglog::Value;
use smallvec::SmallVec;
use std::sync::Arc;

/// What the RHS needs from one typing of a match (cached by the matched types and sizes):
/// for each RHS slot, its type as an e-graph value, the width of its first vector type (what
/// `vectorize` needs; decoded types are large) and, at a size application, its size.
#[derive(Debug)]
pub(super) struct Typing {
    slots: Vec<SlotValues>,
}

#[derive(Debug)]
struct SlotValues {
    ty: Value,
    width: Option<Nat>,
    nat: Option<Value>,
}

/// What building a right-hand side needs from a match.
pub(super) struct Match<'m> {
    pub values: &'m [Value],
    typing: Arc<Typing>,
    /// With names: the (rule's name, name value) of the RHS binders around the node being
    /// built, innermost last.
    pub binders: Vec<(String, Value)>,
}

impl CompiledRule {
    /// `t` with the rule's size variables replaced by the matched sizes `nats` (sizes of
    /// the match's context: under `depth` size binders of `t`, their free indices shift).
    pub(super) fn with_nats(&self, t: &Type, nats: &[Nat]) -> Type {
        if self.nat_vars.is_empty() {
            return t.clone();
        }
        t.map_nats(0, &mut |n, depth| self.subst_nats(n, nats, depth))
    }

    pub(super) fn subst_nats(&self, n: &Nat, nats: &[Nat], depth: u32) -> Nat {
        n.substitute(&mut |a| match a {
            NatAtom::Var(v) => self
                .nat_vars
                .iter()
                .position(|x| x == v)
                .map(|i| shift_nat(&nats[i], 0, depth as i64)),
            _ => None,
        })
    }

    /// Unifies the rule's types with the matched ones and returns the RHS slots' types.
    fn type_rhs(
        &self,
        b: &mut Builder,
        snap: &Snapshot,
        values: &[Value],
        nats: &[Nat],
    ) -> Option<Arc<Typing>> {
        let mut m = Matcher::with_room(self.meta_room);
        for (k, t) in self.var_types.iter().enumerate() {
            let actual = snap.class_type(values[1 + k])?;
            if !m.unify(&self.with_nats(t, nats), actual) {
                return None;
            }
        }
        let root_ty = snap.class_type(values[0])?;
        if !m.unify(&self.with_nats(&self.root_type, nats), root_ty) || !m.solve() {
            return None;
        }
        let slots = (self.slots.iter())
            .map(|slot| {
                if !slot.metas.iter().all(|v| m.resolves(*v)) {
                    return None;
                }
                let t = m.resolve(&self.with_nats(&slot.ty, nats));
                if !self.filter.admits(&t) {
                    return None;
                }
                let nat = match &slot.nat {
                    Some(n) => {
                        let n = m.resolve_nat(&self.subst_nats(n, nats, 0));
                        if !is_size(&n) {
                            return None;
                        }
                        Some(b.nat_value(&n)?)
                    }
                    None => None,
                };
                Some(SlotValues {
                    ty: b.type_value(&t)?,
                    width: vector_width(&t).cloned(),
                    nat,
                })
            })
            .collect::<Option<_>>()?;
        Some(Arc::new(Typing { slots }))
    }

    /// Fires on one match: checks types and conditions, builds the RHS.
    pub(super) fn apply(
        &self,
        b: &mut Builder,
        snap: &Snapshot,
        values: &[Value],
    ) -> Option<Value> {
        for (var, j) in &self.not_free {
            let c = NotIn {
                rule: self,
                values,
                var: *var,
                j: *j,
            };
            if self.backend.may_use(snap, c) {
                return None;
            }
        }
        for var in &self.stencils {
            let f = b.representative(values[1 + var])?;
            crate::rise::rows::row_stencil(&f)?;
        }
        let nvars = self.var_types.len();
        let nat_values = &values[1 + nvars..1 + nvars + self.nat_vars.len()];
        let mut key: SmallVec<[Value; 8]> = (0..=nvars)
            .map(|k| snap.class_type_value(values[k]))
            .collect::<Option<_>>()?;
        key.extend_from_slice(nat_values);
        let mut typings = self.typings.lock().unwrap();
        let typing = match typings.get(&key[..]) {
            Some(t) => t.clone()?,
            None => {
                let nats: Vec<Nat> = nat_values
                    .iter()
                    .map(|v| snap.nat(*v).cloned())
                    .collect::<Option<_>>()?;
                let t = self.type_rhs(b, snap, values, &nats);
                typings.insert(key.to_vec(), t.clone());
                t?
            }
        };
        drop(typings);
        let mut m = Match {
            values,
            typing,
            binders: vec![],
        };
        self.build(&self.rhs, b, &mut m)
    }

    pub(super) fn build(&self, t: &Tmpl, b: &mut Builder, m: &mut Match) -> Option<Value> {
        match t {
            Tmpl::Hole { var, ctx } => {
                let hole = Hole {
                    class: m.values[1 + var],
                    lhs: &self.lhs_ctx[*var],
                    ctx,
                };
                self.backend.hole(b, m, hole)
            }
            Tmpl::Bound(i, slot) => {
                let ty = m.typing.slots[*slot].ty;
                Some(self.backend.bound(b, m, *i, ty))
            }
            Tmpl::Built(Prim::Generalize, f, _) => {
                let f = self.build(f, b, m)?;
                b.generalize(f)
            }
            Tmpl::Built(_, f, slot) => {
                let f = self.build(f, b, m)?;
                b.vectorize(f, m.typing.slots[*slot].width.as_ref()?)
            }
            Tmpl::Node(Node::Lam(body), slot) => {
                let lam = Lambda {
                    rule: self,
                    body,
                    slot: *slot,
                    ty: m.typing.slots[*slot].ty,
                };
                self.backend.lambda(b, m, lam)
            }
            Tmpl::Node(node, slot) => {
                let (con, args) = Con::of(node);
                let mut row = SmallVec::<[Value; 3]>::new();
                for arg in args {
                    row.push(match arg {
                        Arg::Child(c) => self.build(c, b, m)?,
                        Arg::Nat(_) => m.typing.slots[*slot].nat?,
                        base => b.literal(&base)?,
                    });
                }
                Some(b.add(con, &row, m.typing.slots[*slot].ty))
            }
        }
    }
}

/// Is `n`, a size the right-hand side gives a primitive, one: known (no unsolved variable) and
/// not a negative number (`drop<k + 1 - sz>` when `sz > k + 1`: the rule does not apply)?
pub(super) fn is_size(n: &Nat) -> bool {
    n.metas().next().is_none() && n.as_const().is_none_or(|c| c.num >= 0)
}

/// The width of the first vector type in `t` (the type of a `vectorize` result).
pub(super) fn vector_width(t: &Type) -> Option<&Nat> {
    match t {
        Type::Vector(_, n) => Some(n),
        Type::Arr(_, e) => vector_width(e),
        Type::Pair(a, b) | Type::Fun(a, b) => vector_width(a).or_else(|| vector_width(b)),
        _ => None,
    }
}
