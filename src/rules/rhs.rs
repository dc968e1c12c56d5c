//! The right-hand side of a compiled rule, built in Rust on each match: the new e-nodes'
//! types from the matched classes' types (unified with the rule's typed sides, cached per
//! match of types), pattern variables re-indexed (or, with explicit substitution, shifted by a
//! `Phi`) when they move between binders, `notin` conditions read from the free-variable
//! analysis, and, with names, binders named after the matched names or the matched class.

use super::compile::{CompiledRule, Tmpl};
use crate::egraph::encoding::{Binding, Substitution};
use crate::egraph::names::class_number;
use crate::egraph::schema::Con;
use crate::egraph::subst::{Builder, Snapshot};
use crate::rise::infer::Matcher;
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::term::Node;
use crate::rise::types::Type;
use egglog::Value;
use std::sync::Arc;

/// What the RHS needs from one typing of a match (cached by the matched types and sizes).
#[derive(Debug)]
pub(super) struct Typing {
    /// The type of each RHS slot, as an e-graph value, with the width of its first vector
    /// type (what `vectorize` needs; decoded types are large).
    slots: Vec<(Value, Option<Nat>)>,
    /// The size of each RHS size application, in pre-order, as e-graph values.
    nats: Vec<Value>,
}

/// What building a right-hand side needs from a match.
struct Match<'m> {
    values: &'m [Value],
    typing: Arc<Typing>,
    /// The next of `typing.nats` to use.
    next_nat: std::cell::Cell<usize>,
    /// With names: the next of the rule's `rhs_binders`, and the (rule name, name value) of
    /// the RHS binders around the node being built, innermost last.
    next_binder: std::cell::Cell<usize>,
    binders: std::cell::RefCell<Vec<(String, Value)>>,
}

impl Match<'_> {
    fn next(counter: &std::cell::Cell<usize>) -> usize {
        counter.replace(counter.get() + 1)
    }
}

impl CompiledRule {
    fn with_nats(&self, t: &Type, nats: &[Nat]) -> Type {
        if self.nat_vars.is_empty() {
            return t.clone();
        }
        t.map_nats(0, &mut |n, _| self.subst_nats(n, nats))
    }

    fn subst_nats(&self, n: &Nat, nats: &[Nat]) -> Nat {
        n.substitute(&mut |a| match a {
            NatAtom::Var(v) => self
                .nat_vars
                .iter()
                .position(|x| x == v)
                .map(|i| nats[i].clone()),
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
        let mut m = Matcher::default();
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
        let slots = self
            .slot_types
            .iter()
            .map(|t| {
                let t = m.resolve(&self.with_nats(t, nats));
                if t.has_metas() || !self.filter.admits(&t) {
                    return None;
                }
                Some((b.type_value(&t)?, vector_width(&t).cloned()))
            })
            .collect::<Option<_>>()?;
        let nats = self
            .rhs_nats
            .iter()
            .map(|n| b.nat_value(&self.subst_nats(n, nats)))
            .collect::<Option<_>>()?;
        Some(Arc::new(Typing { slots, nats }))
    }

    /// Fires on one match: checks types and conditions, builds the RHS.
    pub(super) fn apply(
        &self,
        b: &mut Builder,
        snap: &Snapshot,
        values: &[Value],
    ) -> Option<Value> {
        for (k, j) in &self.not_free {
            let free = match self.encoding.binding {
                Binding::DeBruijn => snap.may_be_free(values[1 + k], *j),
                Binding::Names => {
                    let lhs = &self.lhs_ctx[*k];
                    let binder = &lhs[lhs.len() - 1 - *j as usize];
                    snap.may_have_free_name(values[1 + k], self.lhs_binder(binder, values)?)
                }
            };
            if free {
                return None;
            }
        }
        let nvars = self.var_types.len();
        let nat_values = &values[1 + nvars..1 + nvars + self.nat_vars.len()];
        let mut key: Vec<Value> = (0..=nvars)
            .map(|k| snap.class_type_value(values[k]))
            .collect::<Option<_>>()?;
        key.extend_from_slice(nat_values);
        let mut typings = self.typings.lock().unwrap();
        let typing = match typings.get(&key) {
            Some(t) => t.clone()?,
            None => {
                let nats: Vec<Nat> = nat_values
                    .iter()
                    .map(|v| snap.nat(*v).cloned())
                    .collect::<Option<_>>()?;
                let t = self.type_rhs(b, snap, values, &nats);
                typings.insert(key, t.clone());
                t?
            }
        };
        drop(typings);
        let m = Match {
            values,
            typing,
            next_nat: Default::default(),
            next_binder: Default::default(),
            binders: Default::default(),
        };
        self.build(&self.rhs, b, &m)
    }

    /// The matched name of the LHS binder the rule calls `x`.
    fn lhs_binder(&self, x: &str, values: &[Value]) -> Option<Value> {
        let (_, k) = self.lhs_binders.iter().find(|(n, _)| n == x)?;
        Some(values[*k])
    }

    /// With names, a pattern variable's class used as it is: it must not have free the name
    /// of an RHS binder around it that was not around it on the left (it would be captured).
    fn named_hole(&self, class: Value, var: usize, snap: &Snapshot, m: &Match) -> Option<Value> {
        let lhs = &self.lhs_ctx[var];
        let captures = m
            .binders
            .borrow()
            .iter()
            .any(|(x, v)| !lhs.contains(x) && snap.may_have_free_name(class, *v));
        (!captures).then_some(class)
    }

    /// The name value of the next RHS binder: the matched name of the LHS binder of the same
    /// name, or a name derived from the matched root class.
    fn rhs_binder(&self, b: &mut Builder, m: &Match) -> Value {
        let x = &self.rhs_binders[Match::next(&m.next_binder)];
        self.lhs_binder(x, m.values)
            .unwrap_or_else(|| b.base(format!("{x}_{}", class_number(m.values[0]))))
    }

    fn build(&self, t: &Tmpl, b: &mut Builder, m: &Match) -> Option<Value> {
        match t {
            Tmpl::Hole { var, ctx } => {
                let class = m.values[1 + var];
                if self.encoding.binding == Binding::Names {
                    return self.named_hole(class, *var, b.snap(), m);
                }
                let lhs = &self.lhs_ctx[*var];
                if lhs == ctx {
                    return Some(class);
                }
                let map = |j: u32| -> Option<u32> {
                    let j = j as usize;
                    if j < lhs.len() {
                        let name = &lhs[lhs.len() - 1 - j];
                        ctx.iter()
                            .rposition(|c| c == name)
                            .map(|p| (ctx.len() - 1 - p) as u32)
                    } else {
                        Some((j - lhs.len() + ctx.len()) as u32)
                    }
                };
                match self.encoding.substitution {
                    Substitution::Extraction => b.reindex(class, 0, &map, &mut Default::default()),
                    Substitution::Explicit => {
                        let (d, k) = as_shift(&map, lhs.len())?;
                        if d == 0 {
                            return Some(class);
                        }
                        let (dv, kv) = (b.base(d), b.base(k as i64));
                        let ty = b.snap().class_type_value(class)?;
                        Some(b.add(Con::Phi, vec![dv, kv, class], ty))
                    }
                }
            }
            Tmpl::Bound(i, slot) => {
                let ty = m.typing.slots[*slot].0;
                match self.encoding.binding {
                    Binding::DeBruijn => Some(b.var(*i, ty)),
                    Binding::Names => {
                        let binders = m.binders.borrow();
                        let name = binders[binders.len() - 1 - *i as usize].1;
                        Some(b.add(Con::NamedVar, vec![name], ty))
                    }
                }
            }
            Tmpl::Vectorize(f, slot) => {
                let f = self.build(f, b, m)?;
                b.vectorize(f, m.typing.slots[*slot].1.as_ref()?)
            }
            Tmpl::Node(n, slot) => {
                let (name, inputs) = match n {
                    Node::App(f, x) => (Con::App, vec![self.build(f, b, m)?, self.build(x, b, m)?]),
                    Node::Lam(body) if self.encoding.binding == Binding::Names => {
                        let x = self.rhs_binders[m.next_binder.get()].clone();
                        let name = self.rhs_binder(b, m);
                        m.binders.borrow_mut().push((x, name));
                        let body = self.build(body, b, m);
                        m.binders.borrow_mut().pop();
                        (Con::NamedLam, vec![name, body?])
                    }
                    Node::Lam(body) => (Con::Lam, vec![self.build(body, b, m)?]),
                    Node::NatLam(body) => (Con::NatLam, vec![self.build(body, b, m)?]),
                    Node::NatApp(f, _) => {
                        // Sizes are used in pre-order: this one before those inside `f`.
                        let n = m.typing.nats[Match::next(&m.next_nat)];
                        (Con::NatApp, vec![self.build(f, b, m)?, n])
                    }
                    Node::Prim(p) => (Con::Prim, vec![b.base(p.name())]),
                    Node::F32(x) => (Con::F32, vec![b.base(x.0 as f64)]),
                    Node::Int(i) => (Con::Int, vec![b.base(*i)]),
                    Node::Var(_) => unreachable!("variables are holes or bound"),
                };
                Some(b.add(name, inputs, m.typing.slots[*slot].0))
            }
        }
    }
}

/// The width of the first vector type in `t` (the type of a `vectorize` result).
fn vector_width(t: &Type) -> Option<&Nat> {
    match t {
        Type::Vector(_, n) => Some(n),
        Type::Arr(_, e) => vector_width(e),
        Type::Pair(a, b) | Type::Fun(a, b) => vector_width(a).or_else(|| vector_width(b)),
        _ => None,
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
