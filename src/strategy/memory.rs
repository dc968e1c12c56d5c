//! Elevate's `storeInMemory`: a subterm computed into memory first and bound by `let`.

use super::eval::{Env, Machine};
use super::Expr;
use crate::error::Result;
use crate::rise::lambda;
use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use crate::rise::types::fun;
use std::rc::Rc;

impl Machine<'_> {
    /// Elevate's `storeInMemory(what, how)`: the first subterm where `what` succeeds (a
    /// term of the root's scope: it uses no variable bound inside the root), `how` applied to
    /// it, and the root with every occurrence of it replaced by a variable bound to the stored
    /// result: `let (toMem how(e)) (fun x => root[e := x])`.
    pub(super) fn store_in_memory(
        &mut self,
        what: (&Rc<Expr>, &Env),
        how: (&Rc<Expr>, &Env),
        t: &Rc<Term>,
    ) -> Result<Option<Rc<Term>>> {
        let Some(e) = self.extract(what, t, 0)? else {
            return Ok(None);
        };
        let Some(stored) = self.apply(how.0, how.1, &e)? else {
            return Ok(None);
        };
        let Some(body) = replace_all(&e, t, 0) else {
            return Ok(None);
        };
        let to_mem = Term::new(Node::Prim(Prim::ToMem), fun(e.ty.clone(), e.ty.clone()));
        let value = Term::new(Node::App(to_mem, stored), e.ty.clone());
        let lam = lambda::lambda(e.ty.clone(), body);
        let let_ty = fun(e.ty.clone(), fun(lam.ty.clone(), t.ty.clone()));
        let bind = Term::new(Node::Prim(Prim::Let), let_ty);
        let partial = Term::new(Node::App(bind, value), fun(lam.ty.clone(), t.ty.clone()));
        Ok(Some(Term::new(Node::App(partial, lam), t.ty.clone())))
    }

    /// The first subterm of `t` (under `depth` binders of the root) where `what` succeeds, in
    /// Elevate's order (the node, then an application's function and argument, a lambda's
    /// body), lowered to the root's scope; `None` where it uses a variable bound inside.
    pub(super) fn extract(
        &mut self,
        what: (&Rc<Expr>, &Env),
        t: &Rc<Term>,
        depth: u32,
    ) -> Result<Option<Rc<Term>>> {
        if self.apply(what.0, what.1, t)?.is_some() {
            let outer = !lambda::has_free_below(t, depth);
            return Ok(outer
                .then(|| lambda::shift(t, -(depth as i64), 0, 0))
                .flatten());
        }
        match &t.node {
            Node::App(f, x) => match self.extract(what, f, depth)? {
                Some(e) => Ok(Some(e)),
                None => self.extract(what, x, depth),
            },
            Node::Lam(b) => self.extract(what, b, depth + 1),
            _ => Ok(None),
        }
    }
}

/// `t` (under `depth` binders of the root) with every occurrence of `e` (a term of the root's
/// scope) replaced by the variable of a new binder around the root; `None` across a size
/// binder.
fn replace_all(e: &Rc<Term>, t: &Rc<Term>, depth: u32) -> Option<Rc<Term>> {
    if t.ty == e.ty && lambda::shift(t, -(depth as i64), 0, 0).is_some_and(|u| u == *e) {
        return Some(Term::new(Node::Var(depth), t.ty.clone()));
    }
    let node = match &t.node {
        Node::Var(i) if *i >= depth => Node::Var(i + 1),
        Node::Lam(b) => Node::Lam(replace_all(e, b, depth + 1)?),
        Node::NatLam(_) => return None,
        n => n.try_map(|c| replace_all(e, c, depth))?,
    };
    Some(Term::at(node, t.ty.clone(), t.span.clone()))
}
