//! The built-ins run on a term: combinators, one-level and whole-term traversals, predicates
//! and the lambda-calculus steps.

use super::builtins::Op;
use super::eval::{Env, Machine, Step};
use super::traverse::{child, visit_order, with_child, with_children};
use super::{Call, Expr};
use crate::error::{Error, Result};
use crate::rise::lambda;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use std::rc::Rc;

impl Machine<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn builtin(
        &mut self,
        site: &Rc<Expr>,
        op: Op,
        c: &Call,
        args: &[Rc<Expr>],
        env: &Env,
        t: &Rc<Term>,
    ) -> Step {
        // Every call's arguments were counted when its text was checked (`check`).
        let r = match op {
            Op::Id => return self.success(t.clone()),
            Op::Fail => None,
            Op::Try => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                match self.apply(&s, &e, t)? {
                    Some(u) => Some(u),
                    None => return self.success(t.clone()),
                }
            }
            Op::Repeat => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                return self.repeat(&s, &e, t);
            }
            Op::RepeatNTimes => {
                let n = self.number(&args[0], env)?;
                let (s, e) = self.strategy_arg(args, 1, env)?;
                let mut u = t.clone();
                for _ in 0..n.max(0) {
                    match self.apply(&s, &e, &u)? {
                        Some(v) => u = v,
                        None => return Ok(None),
                    }
                }
                return self.success(u);
            }
            Op::Not => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                match self.apply(&s, &e, t)? {
                    Some(_) => None,
                    None => return self.success(t.clone()),
                }
            }
            Op::One | Op::All | Op::Some => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let mut f = |m: &mut Self, c: &Rc<Term>| m.apply(&s, &e, c);
                match op {
                    Op::One => self.one(t, &mut f)?,
                    Op::All => self.all(t, &mut f)?,
                    _ => self.some(t, &mut f)?,
                }
            }
            Op::TopDown
            | Op::BottomUp
            | Op::AllTopdown
            | Op::AllBottomup
            | Op::TryAll
            | Op::Alltd
            | Op::Sometd
            | Op::Somebu => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                // Counted inside; fails as a whole where `s` applies nowhere (as Elevate's
                // `one` at the root does).
                match self.whole(op, &s, &e, t)? {
                    Some(u) => return Ok(Some(u)),
                    None => None,
                }
            }
            Op::Normalize => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let top_down = |m: &mut Self, u: &Rc<Term>| m.whole(Op::TopDown, &s, &e, u);
                return self.repeat_with(t, top_down);
            }
            Op::Body | Op::Function | Op::Argument | Op::DepFunction => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let i = match (op, &t.node) {
                    (Op::Body, Node::Lam(_) | Node::NatLam(_)) => Some(0),
                    (Op::Function, Node::App(..)) => Some(0),
                    (Op::Argument, Node::App(..)) => Some(1),
                    (Op::DepFunction, Node::NatApp(..)) => Some(0),
                    _ => None,
                };
                match i {
                    // The child's failure is the traversal's (as in Elevate).
                    Some(i) => return self.passing(t, i, &s, &e),
                    None => None,
                }
            }
            Op::ArgumentOf => {
                let p = prim_arg(&args[0])?;
                let (s, e) = self.strategy_arg(args, 1, env)?;
                match &t.node {
                    Node::App(f, _) if head_is(f, p) => return self.passing(t, 1, &s, &e),
                    _ => None,
                }
            }
            Op::StoreInMemory => {
                let (what, we) = self.strategy_arg(args, 0, env)?;
                let (how, he) = self.strategy_arg(args, 1, env)?;
                self.store_in_memory((&what, &we), (&how, &he), t)?
            }
            Op::Is
            | Op::IsPrim(_)
            | Op::IsLambda
            | Op::IsDepLambda
            | Op::IsComputation
            | Op::IsApply
            | Op::IsIdentifier
            | Op::IsApp
            | Op::IsApplied => self.holds(op, args, env, t)?.then(|| t.clone()),
            Op::Beta | Op::Eta | Op::EtaAbstraction => {
                let u = match op {
                    Op::Beta => lambda::beta(t),
                    Op::Eta => lambda::eta_reduce(t),
                    _ => lambda::eta_abstract(t),
                };
                return match u {
                    Some(u) => self.applied(&c.name, u),
                    None => self.failed(site, t),
                };
            }
            Op::Saturate | Op::Search => self.saturate(op, args, env, t)?,
        };
        match r {
            Some(u) => self.success(u),
            None => self.failed(site, t),
        }
    }

    /// Whether the predicate `op` holds of `t` (its inner strategies' successes counted).
    fn holds(&mut self, op: Op, args: &[Rc<Expr>], env: &Env, t: &Rc<Term>) -> Result<bool> {
        Ok(match op {
            Op::Is | Op::IsPrim(_) => {
                let p = match op {
                    Op::IsPrim(p) => p,
                    _ => prim_arg(&args[0])?,
                };
                head_is(t, p)
            }
            Op::IsLambda => matches!(t.node, Node::Lam(_)),
            Op::IsDepLambda => matches!(t.node, Node::NatLam(_)),
            Op::IsComputation => is_computation(t),
            Op::IsApply => matches!(t.node, Node::App(..)),
            Op::IsIdentifier => matches!(t.node, Node::Var(_)),
            Op::IsApp | Op::IsApplied => {
                let (fs, fe) = self.strategy_arg(args, 0, env)?;
                match &t.node {
                    Node::App(f, x) => {
                        self.apply(&fs, &fe, f)?.is_some()
                            && match op {
                                Op::IsApp => {
                                    let (xs, xe) = self.strategy_arg(args, 1, env)?;
                                    self.apply(&xs, &xe, x)?.is_some()
                                }
                                // `isApplied(f)` is `isApp(f, id)`: `id` succeeds.
                                _ => self.success(x.clone())?.is_some(),
                            }
                    }
                    _ => false,
                }
            }
            _ => unreachable!("not a predicate"),
        })
    }

    /// `repeat(s)`: `s` until it fails, then `id`.
    pub(super) fn repeat(&mut self, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        self.repeat_with(t, |m, u| m.apply(s, env, u))
    }

    pub(super) fn repeat_with(
        &mut self,
        t: &Rc<Term>,
        mut f: impl FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Step {
        let mut u = t.clone();
        while let Some(v) = f(self, &u)? {
            u = v;
        }
        self.success(u)
    }

    /// `s` on child `i` of `t`, and `t` rebuilt around its result (a success); the child's
    /// failure is passed on.
    pub(super) fn passing(&mut self, t: &Rc<Term>, i: usize, s: &Rc<Expr>, env: &Env) -> Step {
        match self.at_child(t, i, &mut |m, c| m.apply(s, env, c))? {
            Some(u) => self.success(u),
            None => Ok(None),
        }
    }

    /// `f` on child `i` of `t`, and `t` rebuilt around its result.
    pub(super) fn at_child(
        &mut self,
        t: &Rc<Term>,
        i: usize,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        self.path.push(i);
        let r = f(self, child(t, i));
        self.path.pop();
        Ok(r?.map(|c| with_child(t, i, c)))
    }

    pub(super) fn one(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        for &i in visit_order(t, self.settings.order) {
            if let Some(u) = self.at_child(t, i, f)? {
                return Ok(Some(u));
            }
        }
        Ok(None)
    }

    pub(super) fn all(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        let mut kids = vec![];
        for (i, c) in t.node.children().into_iter().enumerate() {
            self.path.push(i);
            let r = f(self, c);
            self.path.pop();
            match r? {
                Some(u) => kids.push(u),
                None => return Ok(None),
            }
        }
        Ok(Some(with_children(t, kids)))
    }

    pub(super) fn some(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        let (mut kids, mut any) = (vec![], false);
        for (i, c) in t.node.children().into_iter().enumerate() {
            self.path.push(i);
            let r = f(self, c);
            self.path.pop();
            match r? {
                Some(u) => {
                    any = true;
                    kids.push(u)
                }
                None => kids.push(c.clone()),
            }
        }
        Ok(any.then(|| with_children(t, kids)))
    }

    /// A whole-term traversal of `s` (a success of its own is counted by the caller, as the
    /// traversal's last one-level step or `s` itself).
    pub(super) fn whole(&mut self, op: Op, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || {
            self.whole_here(op, s, env, t)
        })
    }

    pub(super) fn whole_here(&mut self, op: Op, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        let mut rec = |m: &mut Self, c: &Rc<Term>| m.whole(op, s, env, c);
        let counted = |m: &mut Self, r: Option<Rc<Term>>| match r {
            Some(u) => m.success(u),
            None => Ok(None),
        };
        match op {
            Op::TopDown | Op::Alltd | Op::Sometd => {
                if let Some(u) = self.apply(s, env, t)? {
                    return Ok(Some(u));
                }
                let r = match op {
                    Op::TopDown => self.one(t, &mut rec)?,
                    Op::Alltd => self.all(t, &mut rec)?,
                    _ => self.some(t, &mut rec)?,
                };
                counted(self, r)
            }
            Op::BottomUp | Op::Somebu => {
                let r = match op {
                    Op::BottomUp => self.one(t, &mut rec)?,
                    _ => self.some(t, &mut rec)?,
                };
                match r {
                    Some(u) => self.success(u),
                    None => self.apply(s, env, t),
                }
            }
            Op::AllTopdown => match self.apply(s, env, t)? {
                Some(u) => {
                    let r = self.all(&u, &mut rec)?;
                    counted(self, r)
                }
                None => Ok(None),
            },
            Op::AllBottomup => match self.all(t, &mut rec)? {
                Some(u) => {
                    let u = self.success(u)?.expect("a success");
                    self.apply(s, env, &u)
                }
                None => Ok(None),
            },
            Op::TryAll => {
                let u = self.all(t, &mut rec)?.expect("tryAll never fails");
                let u = self.success(u)?.expect("a success");
                match self.apply(s, env, &u)? {
                    Some(v) => Ok(Some(v)),
                    None => self.success(u),
                }
            }
            _ => unreachable!("not a whole-term traversal"),
        }
    }
}

/// The primitive named by a built-in's primitive argument.
fn prim_arg(e: &Expr) -> Result<crate::rise::primitives::Prim> {
    match e {
        Expr::Call(c) if c.args.is_empty() => crate::rise::primitives::Prim::from_name(&c.name)
            .ok_or_else(|| Error::at(&c.span, format!("`{}` is not a Rise primitive", c.name))),
        _ => Err(Error::at(e.span(), "expected a Rise primitive's name")),
    }
}

/// Is `t` the primitive `p`, applied to sizes or not?
fn head_is(t: &Term, p: crate::rise::primitives::Prim) -> bool {
    match &t.node {
        Node::Prim(q) => *q == p,
        Node::NatApp(f, _) => head_is(f, p),
        _ => false,
    }
}

/// Elevate's `isComputation`: the identity, or a lambda from scalars (or pairs of them) to
/// scalars (or pairs).
fn is_computation(t: &Term) -> bool {
    pub(super) fn basic(t: &Type) -> bool {
        match t {
            Type::F32 | Type::Int | Type::Bool | Type::Vector(..) => true,
            Type::Pair(a, b) => basic(a) && basic(b),
            _ => false,
        }
    }
    match (&t.node, &t.ty) {
        (Node::Lam(b), _) if b.node == Node::Var(0) => true,
        (Node::Lam(_), Type::Fun(a, r)) => basic(a) && basic(r),
        _ => false,
    }
}
