//! A compiled rule applied to one term at its root, as a rewriting strategy applies it: the
//! left-hand side matched structurally, its types unified with the matched terms' types, and
//! the right-hand side built from the same template the e-graph's rules build from.

use super::backend::moved_index;
use super::compile::{compile_typed, CompiledRule, Tmpl};
use super::rhs::{is_size, vector_width};
use crate::egraph::encoding::Encoding;
use crate::egraph::subst::{vectorized, VECTORIZABLE};
use crate::error::Result;
use crate::rise::infer::Matcher;
use crate::rise::lambda::has_free;
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::syntax::RuleDecl;
use crate::rise::term::{Node, Term};
use crate::rise::types::{fun, Type};
use std::rc::Rc;

/// What matching the left-hand side binds: each pattern variable's term (standing under its
/// left-hand side binders) and each size variable's size.
struct Bindings {
    vars: Vec<Option<Rc<Term>>>,
    nats: Vec<Option<Nat>>,
}

/// A rule compiled to rewrite terms one at a time.
#[derive(Debug)]
pub struct TermRule {
    rule: CompiledRule,
    /// The typed left-hand side.
    lhs: Rc<Term>,
}

impl TermRule {
    /// Compiles (and type-checks) `rule`.
    pub fn new(rule: &RuleDecl) -> Result<TermRule> {
        let (rule, lhs) = compile_typed(rule, Encoding::EFFICIENT)?;
        Ok(TermRule { rule, lhs })
    }

    /// The rule's name.
    pub fn name(&self) -> &str {
        &self.rule.name
    }

    /// The rule applied at the root of `t`: `None` when the left-hand side does not match,
    /// a `notin` or stencil condition fails, or the rule's types do not fit the match.
    pub fn rewrite(&self, t: &Rc<Term>) -> Option<Rc<Term>> {
        self.rule.rewrite_term(&self.lhs, t)
    }
}

impl CompiledRule {
    fn rewrite_term(&self, lhs: &Term, t: &Rc<Term>) -> Option<Rc<Term>> {
        let mut b = Bindings {
            vars: vec![None; self.var_types.len()],
            nats: vec![None; self.nat_vars.len()],
        };
        self.match_term(lhs, t, 0, &mut b)?;
        let vars: Vec<Rc<Term>> = b.vars.into_iter().collect::<Option<_>>()?;
        let nats: Vec<Nat> = b.nats.into_iter().collect::<Option<_>>()?;
        for &(var, j) in &self.not_free {
            if has_free(&vars[var], j) {
                return None;
            }
        }
        for &var in &self.stencils {
            crate::rise::rows::row_stencil(&vars[var])?;
        }
        let mut m = Matcher::with_room(self.meta_room);
        for (k, ty) in self.var_types.iter().enumerate() {
            if !m.unify(&self.with_nats(ty, &nats), &vars[k].ty) {
                return None;
            }
        }
        if !m.unify(&self.with_nats(&self.root_type, &nats), &t.ty) || !m.solve() {
            return None;
        }
        let built = self.build_term(&self.rhs, &vars, &nats, &m)?;
        (built.ty == t.ty).then_some(built)
    }

    fn match_term(&self, p: &Term, t: &Rc<Term>, depth: u32, b: &mut Bindings) -> Option<()> {
        match (&p.node, &t.node) {
            (Node::Var(i), Node::Var(j)) if *i < depth => (i == j).then_some(()),
            (Node::Var(i), _) if *i < depth => None,
            (Node::Var(i), _) => {
                let k = self.var_types.len() - 1 - (*i - depth) as usize;
                match &b.vars[k] {
                    Some(bound) => (bound == t).then_some(()),
                    None => {
                        b.vars[k] = Some(t.clone());
                        Some(())
                    }
                }
            }
            (Node::Lam(p), Node::Lam(t)) => self.match_term(p, t, depth + 1, b),
            (Node::NatLam(p), Node::NatLam(t)) => self.match_term(p, t, depth, b),
            (Node::NatApp(pf, pn), Node::NatApp(tf, tn)) => {
                self.match_nat(pn, tn, b)?;
                self.match_term(pf, tf, depth, b)
            }
            (Node::App(pf, px), Node::App(tf, tx)) | (Node::Comp(pf, px), Node::Comp(tf, tx)) => {
                self.match_term(pf, tf, depth, b)?;
                self.match_term(px, tx, depth, b)
            }
            (Node::Prim(p), Node::Prim(q)) => (p == q).then_some(()),
            (Node::F32(x), Node::F32(y)) => (x == y).then_some(()),
            (Node::Int(x), Node::Int(y)) => (x == y).then_some(()),
            _ => None,
        }
    }

    /// A size of the left-hand side (a constant or one size variable) against a matched one.
    fn match_nat(&self, p: &Nat, n: &Nat, b: &mut Bindings) -> Option<()> {
        if p.as_const().is_some() {
            return (p == n).then_some(());
        }
        let atoms = p.atoms();
        let Some(NatAtom::Var(v)) = atoms.first() else {
            return None;
        };
        let k = self.nat_vars.iter().position(|x| x == v)?;
        match &b.nats[k] {
            Some(bound) => (bound == n).then_some(()),
            None => {
                b.nats[k] = Some(n.clone());
                Some(())
            }
        }
    }

    fn slot_type(&self, slot: usize, nats: &[Nat], m: &Matcher) -> Option<Type> {
        let slot = &self.slots[slot];
        (slot.metas.iter().all(|v| m.resolves(*v)))
            .then(|| m.resolve(&self.with_nats(&slot.ty, nats)))
    }

    fn build_term(
        &self,
        t: &Tmpl,
        vars: &[Rc<Term>],
        nats: &[Nat],
        m: &Matcher,
    ) -> Option<Rc<Term>> {
        Some(match t {
            Tmpl::Hole { var, ctx } => {
                let lhs = &self.lhs_ctx[*var];
                if lhs == ctx {
                    return Some(vars[*var].clone());
                }
                reindex(&vars[*var], 0, &|j| moved_index(lhs, ctx, j))?
            }
            Tmpl::Bound(i, slot) => Term::new(Node::Var(*i), self.slot_type(*slot, nats, m)?),
            Tmpl::Built(Prim::Generalize, f, _) => {
                self.build_term(f, vars, nats, m)?.generalized()?
            }
            Tmpl::Built(_, f, slot) => {
                let f = self.build_term(f, vars, nats, m)?;
                let ty = self.slot_type(*slot, nats, m)?;
                vectorize(&f, vector_width(&ty)?, 0)?
            }
            Tmpl::Node(node, slot) => {
                let ty = self.slot_type(*slot, nats, m)?;
                let node = match node {
                    Node::NatApp(f, _) => {
                        let n = self.slots[*slot].nat.as_ref()?;
                        let n = m.resolve_nat(&self.subst_nats(n, nats, 0));
                        if !is_size(&n) {
                            return None;
                        }
                        Node::NatApp(self.build_term(f, vars, nats, m)?, n)
                    }
                    node => node.try_map(|c| self.build_term(c, vars, nats, m))?,
                };
                Term::new(node, ty)
            }
        })
    }
}

/// `t` (under `depth` binders of its own) with each free variable `j` moved to `map(j)`.
fn reindex(t: &Rc<Term>, depth: u32, map: &dyn Fn(u32) -> Option<u32>) -> Option<Rc<Term>> {
    let node = match &t.node {
        Node::Var(i) if *i >= depth => Node::Var(map(i - depth)? + depth),
        Node::Lam(b) => Node::Lam(reindex(b, depth + 1, map)?),
        Node::NatLam(_) => return None,
        n => n.try_map(|c| reindex(c, depth, map))?,
    };
    Some(Term::at(node, t.ty.clone(), t.span.clone()))
}

/// The vector version of the scalar function `t`, `n` lanes wide: its `f32`s become vectors,
/// its constants are broadcast; `None` if it uses anything but its own variables, `add`,
/// `mul`, pairs and constants.
fn vectorize(t: &Rc<Term>, n: &Nat, depth: u32) -> Option<Rc<Term>> {
    let ty = vectorized(&t.ty, n);
    let node = match &t.node {
        Node::Var(i) if *i < depth => Node::Var(*i),
        Node::App(f, x) => Node::App(vectorize(f, n, depth)?, vectorize(x, n, depth)?),
        Node::Lam(b) => Node::Lam(vectorize(b, n, depth + 1)?),
        Node::Prim(p) if VECTORIZABLE.contains(p) => Node::Prim(*p),
        Node::F32(_) => {
            let broadcast = Term::new(
                Node::Prim(Prim::VectorFromScalar),
                fun(t.ty.clone(), ty.clone()),
            );
            Node::App(broadcast, t.clone())
        }
        _ => return None,
    };
    Some(Term::new(node, ty))
}
