//! The lambda calculus on typed De Bruijn terms, one step at a time: shifting, substitution,
//! and the beta and eta steps a rewriting strategy applies where it is told to.
//!
//! The e-graph does the same with extraction-based substitution on e-classes
//! (`egraph/subst.rs`); these functions work on one term.

use super::term::{Node, Term};
use super::types::{fun, shift_nat, Type};
use std::rc::Rc;

/// `t` with its free value variables (indices from `cutoff` binders in) moved by `by` and its
/// free size indices moved by `nats`; `None` if a variable would fall below zero.
pub fn shift(t: &Rc<Term>, by: i64, cutoff: u32, nats: i64) -> Option<Rc<Term>> {
    shift_under(t, by, cutoff, nats, 0)
}

fn shift_under(t: &Rc<Term>, by: i64, cutoff: u32, nats: i64, nat_depth: u32) -> Option<Rc<Term>> {
    deep(|| shift_here(t, by, cutoff, nats, nat_depth))
}

/// Runs `f`, a step of a walk down a term, on a larger stack where the stack runs low: a
/// strategy can build terms of any depth.
fn deep<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, f)
}

fn shift_here(t: &Rc<Term>, by: i64, cutoff: u32, nats: i64, nat_depth: u32) -> Option<Rc<Term>> {
    if by == 0 && nats == 0 {
        return Some(t.clone());
    }
    let node = match &t.node {
        Node::Var(i) if *i >= cutoff => Node::Var(u32::try_from(*i as i64 + by).ok()?),
        Node::Lam(b) => Node::Lam(shift_under(b, by, cutoff + 1, nats, nat_depth)?),
        Node::NatLam(b) => Node::NatLam(shift_under(b, by, cutoff, nats, nat_depth + 1)?),
        Node::NatApp(f, n) => Node::NatApp(
            shift_under(f, by, cutoff, nats, nat_depth)?,
            shift_nat(n, nat_depth, nats),
        ),
        n => n.try_map(|c| shift_under(c, by, cutoff, nats, nat_depth))?,
    };
    let ty = t.ty.map_nats(nat_depth, &mut |n, d| shift_nat(n, d, nats));
    Some(Term::at(node, ty, t.span.clone()))
}

/// Is value variable `index` (counted from the term's edge) free in `t`?
pub fn has_free(t: &Term, index: u32) -> bool {
    deep(|| match &t.node {
        Node::Var(i) => *i == index,
        Node::Lam(b) => has_free(b, index + 1),
        n => n.children().into_iter().any(|c| has_free(c, index)),
    })
}

/// Does `t` use a variable below `index` (one bound by the first `index` binders around it)?
pub fn has_free_below(t: &Term, index: u32) -> bool {
    has_free_below_under(t, index, 0)
}

fn has_free_below_under(t: &Term, index: u32, depth: u32) -> bool {
    deep(|| match &t.node {
        Node::Var(i) => *i >= depth && *i - depth < index,
        Node::Lam(b) => has_free_below_under(b, index, depth + 1),
        n => n
            .children()
            .into_iter()
            .any(|c| has_free_below_under(c, index, depth)),
    })
}

/// `body` with variable 0 replaced by `arg` (both standing in the same scope, `body` under
/// one more binder) and the variables above it lowered by one.
pub fn substitute(body: &Rc<Term>, arg: &Rc<Term>) -> Rc<Term> {
    subst_under(body, arg, 0, 0)
}

fn subst_under(t: &Rc<Term>, arg: &Rc<Term>, depth: u32, nat_depth: u32) -> Rc<Term> {
    deep(|| subst_here(t, arg, depth, nat_depth))
}

fn subst_here(t: &Rc<Term>, arg: &Rc<Term>, depth: u32, nat_depth: u32) -> Rc<Term> {
    let node = match &t.node {
        Node::Var(i) if *i == depth => {
            return shift(arg, depth as i64, 0, nat_depth as i64).expect("raising never fails")
        }
        Node::Var(i) if *i > depth => Node::Var(i - 1),
        Node::Var(_) => return t.clone(),
        Node::Lam(b) => Node::Lam(subst_under(b, arg, depth + 1, nat_depth)),
        Node::NatLam(b) => Node::NatLam(subst_under(b, arg, depth, nat_depth + 1)),
        n => n.map(|c| subst_under(c, arg, depth, nat_depth)),
    };
    Term::at(node, t.ty.clone(), t.span.clone())
}

/// Beta reduction at the root: `(fun x => b) a` becomes `b[x := a]`. A size function applied
/// to sizes stays, as in the e-graph's beta-eta normal form (rules match it: Harris's strips).
pub fn beta(t: &Rc<Term>) -> Option<Rc<Term>> {
    match &t.node {
        Node::App(f, a) => match &f.node {
            Node::Lam(b) => Some(substitute(b, a)),
            _ => None,
        },
        _ => None,
    }
}

/// Eta reduction at the root: `fun x => f x` becomes `f` when `x` is not free in `f`.
pub fn eta_reduce(t: &Rc<Term>) -> Option<Rc<Term>> {
    shift(eta_redex(t)?, -1, 0, 0)
}

/// The `f` of an eta-redex `fun x => f x` at the root (`x` not free in `f`).
fn eta_redex(t: &Term) -> Option<&Rc<Term>> {
    let Node::Lam(body) = &t.node else {
        return None;
    };
    let Node::App(f, x) = &body.node else {
        return None;
    };
    (x.node == Node::Var(0) && !has_free(f, 0)).then_some(f)
}

/// Is `t` in beta-eta normal form: no composition `f >> g`, no beta-redex `(fun x => b) a`
/// and no eta-redex `fun x => f x` with `x` not free in `f`? (A size function applied to sizes
/// is normal, as in [`beta`].)
pub fn is_beta_eta_normal(t: &Term) -> bool {
    deep(|| {
        let redex = match &t.node {
            Node::Comp(..) => true,
            Node::App(f, _) => matches!(f.node, Node::Lam(_)),
            _ => eta_redex(t).is_some(),
        };
        !redex && t.node.children().into_iter().all(|c| is_beta_eta_normal(c))
    })
}

/// Eta abstraction at the root: a function `f` becomes `fun x => f x`.
pub fn eta_abstract(t: &Rc<Term>) -> Option<Rc<Term>> {
    let Type::Fun(param, result) = &t.ty else {
        return None;
    };
    let f = shift(t, 1, 0, 0)?;
    let x = Term::new(Node::Var(0), (**param).clone());
    let body = Term::new(Node::App(f, x), (**result).clone());
    Some(Term::new(Node::Lam(body), t.ty.clone()))
}

/// `fun (x : param) => body`, typed.
pub fn lambda(param: Type, body: Rc<Term>) -> Rc<Term> {
    let ty = fun(param, body.ty.clone());
    Term::new(Node::Lam(body), ty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rise::typed_term;

    fn show(t: &Term) -> String {
        let e = crate::rise::debruijn::to_named(t, crate::rise::debruijn::Annotate::Bare);
        crate::rise::print::print_expr(&e)
    }

    #[test]
    fn beta_substitutes_and_lowers_outer_variables() {
        let t = typed_term(
            "fun (y : f32) => (fun (x : f32) => fun (z : f32) => add (mul x y) z) (add y 1.0)",
        );
        let Node::Lam(body) = &t.node else { panic!() };
        let reduced = beta(body).unwrap();
        let whole = Term::new(Node::Lam(reduced), t.ty.clone());
        assert_eq!(
            show(&whole),
            show(&typed_term(
                "fun (y : f32) => fun (z : f32) => add (mul (add y 1.0) y) z"
            ))
        );
    }

    #[test]
    fn eta_reduces_only_when_the_variable_is_not_used() {
        let t = typed_term("fun (f : f32 -> f32) => fun (x : f32) => f x");
        let Node::Lam(inner) = &t.node else { panic!() };
        let reduced = eta_reduce(inner).unwrap();
        assert_eq!(reduced.node, Node::Var(0));
        let used = typed_term("fun (x : f32) => add x x");
        assert!(eta_reduce(&used).is_none());
    }

    #[test]
    fn eta_abstraction_then_reduction_is_the_identity() {
        let whole = typed_term("fun (xs : 4.f32) => map (fun x => add x 1.0) xs");
        let Node::Lam(body) = &whole.node else {
            panic!()
        };
        let Node::App(t, _) = &body.node else {
            panic!()
        };
        let abstracted = eta_abstract(t).unwrap();
        assert!(matches!(abstracted.node, Node::Lam(_)));
        assert_eq!(abstracted.ty, t.ty);
        assert_eq!(&eta_reduce(&abstracted).unwrap(), t);
        assert!(eta_abstract(&typed_term("1.0")).is_none());
    }
}
