//! Which rule sets can reach a checkpoint at all: a rewrite only brings in the primitives its
//! right-hand side names, so a checkpoint that needs a primitive the term lacks is out of
//! reach of every set none of whose rules makes it. Such sets are not searched, and a
//! checkpoint no set can reach is said so at once.

use super::{Aim, Candidate, Checkpoint};
use crate::rise::primitives::Prim;
use crate::rise::syntax::{Expr, ExprKind};
use crate::rise::term::{Node, Term};
use crate::sketch::{Op, Sketch};
use std::collections::BTreeSet;

/// The primitives `checkpoint` needs that `term` lacks.
pub fn missing(term: &Term, checkpoint: &Checkpoint) -> BTreeSet<Prim> {
    let needed = match &checkpoint.aim {
        Aim::Sketch { decl, .. } => needed_by(&decl.sketch),
        Aim::Goal { term, .. } => prims_of(term),
    };
    let have = prims_of(term);
    needed.difference(&have).copied().collect()
}

/// Whether `c`'s rules can make every primitive of `missing`.
pub fn can_make(c: &Candidate, missing: &BTreeSet<Prim>) -> bool {
    if missing.is_empty() {
        return true;
    }
    let mut made = BTreeSet::new();
    for r in &c.rules {
        if !made_by(&r.rhs, &mut made) {
            return true;
        }
    }
    missing.is_subset(&made)
}

/// The primitives every term satisfying `s` has.
fn needed_by(s: &Sketch) -> BTreeSet<Prim> {
    match s {
        Sketch::Any => BTreeSet::new(),
        Sketch::Contains(k) | Sketch::Typed(k, _) => needed_by(k),
        Sketch::Or(a, b) => needed_by(a).intersection(&needed_by(b)).copied().collect(),
        Sketch::Node(op, kids) => {
            let mut all: BTreeSet<Prim> = kids.iter().flat_map(needed_by).collect();
            if let Op::Prim(p) = op {
                all.insert(*p);
            }
            all
        }
    }
}

/// The primitives of a term.
fn prims_of(t: &Term) -> BTreeSet<Prim> {
    let (mut out, mut todo) = (BTreeSet::new(), vec![t]);
    while let Some(t) = todo.pop() {
        if let Node::Prim(p) = &t.node {
            out.insert(*p);
        }
        todo.extend(t.node.children().into_iter().map(|c| &**c));
    }
    out
}

/// Adds the primitives a right-hand side names to `made`; `false` if it may make others
/// (`vectorize f` builds the vector form of what `f` matched).
fn made_by(rhs: &Expr, made: &mut BTreeSet<Prim>) -> bool {
    let mut todo = vec![rhs];
    while let Some(e) = todo.pop() {
        match &e.kind {
            ExprKind::Var(x) => match Prim::from_name(x) {
                Some(Prim::Vectorize) => return false,
                // Size binders and applications around what `f` matched: no primitive.
                Some(Prim::Generalize) => {}
                Some(p) => {
                    made.insert(p);
                }
                None => {}
            },
            ExprKind::Lam(_, _, b)
            | ExprKind::NatLam(_, b)
            | ExprKind::DataLam(_, b)
            | ExprKind::NatApp(b, _)
            | ExprKind::Annot(b, _) => todo.push(b),
            ExprKind::App(f, x) | ExprKind::Comp(f, x) => todo.extend([&**f, &**x]),
            ExprKind::F32(_) | ExprKind::Int(_) => {}
        }
    }
    true
}
