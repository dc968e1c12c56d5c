//! The children of a Rise term as one-level traversals see them, and the term rebuilt around
//! a rewritten child.

use super::settings::Order;
use crate::rise::term::{Node, Term};
use std::rc::Rc;

/// The children `one` and `some` visit, in the order they visit them: an application's
/// function and argument in `order`; a lambda's or size lambda's body; a size application's
/// function.
pub fn visit_order(t: &Term, order: Order) -> &'static [usize] {
    match (&t.node, order) {
        (Node::App(..) | Node::Comp(..), Order::ArgumentFirst) => &[1, 0],
        (Node::App(..) | Node::Comp(..), Order::FunctionFirst) => &[0, 1],
        (Node::Lam(_) | Node::NatLam(_) | Node::NatApp(..), _) => &[0],
        _ => &[],
    }
}

/// Child `i` of `t`.
pub fn child(t: &Term, i: usize) -> &Rc<Term> {
    t.node.children()[i]
}

/// `t` with child `i` replaced by `c` (of the same type: rewrites keep types).
pub fn with_child(t: &Rc<Term>, i: usize, c: Rc<Term>) -> Rc<Term> {
    let mut k = 0;
    let node = t.node.map(|old| {
        k += 1;
        if k - 1 == i {
            c.clone()
        } else {
            old.clone()
        }
    });
    Term::at(node, t.ty.clone(), t.span.clone())
}

/// `t` with its children replaced by `kids`, in order.
pub fn with_children(t: &Rc<Term>, kids: Vec<Rc<Term>>) -> Rc<Term> {
    let mut kids = kids.into_iter();
    let node = t.node.map(|_| kids.next().expect("one per child"));
    Term::at(node, t.ty.clone(), t.span.clone())
}
