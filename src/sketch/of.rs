//! The sketch a program satisfies exactly (`sketchlog sketch-of`): its beta-eta normal form
//! written in the sketch language, to copy into a `.sketch` file and cut holes into.

use super::{Op, Sketch};
use crate::egraph::saturate::{normalise, Limits};
use crate::error::Result;
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::term::{Node, Term};
use crate::rise::LoadedDef;

/// The line of a sketch file (`sketch NAME = ...`) that exactly `def`'s beta-eta normal form
/// satisfies ([`exact`]), named after the definition.
pub fn declaration(def: &LoadedDef) -> Result<String> {
    let (normal, _) = normalise(&def.term, &Limits::default())?;
    let name = def.name.replace('_', "-");
    Ok(format!("sketch {name} = {}", exact(&normal, &def.sizes)))
}

/// The sketch that exactly `t`'s terms satisfy, `t` in beta-eta normal form with leading
/// `nfun`s named `sizes` (outermost first). Sizes are written with those names, as a sketch
/// file writes them; a size under a further `nfun`, which a sketch cannot name, is a hole,
/// and so is a composition (which beta-eta normal form does not have).
pub fn exact(t: &Term, sizes: &[String]) -> Sketch {
    of(t, sizes, 0)
}

/// [`exact`] of `t` under `depth` `nfun`s of the program.
fn of(t: &Term, sizes: &[String], depth: usize) -> Sketch {
    let node = |op, kids| Sketch::Node(op, kids);
    match &t.node {
        Node::App(f, x) => node(Op::App, vec![of(f, sizes, depth), of(x, sizes, depth)]),
        Node::Lam(b) => node(Op::Lam, vec![of(b, sizes, depth)]),
        Node::NatLam(b) => node(Op::NatLam, vec![of(b, sizes, depth + 1)]),
        Node::NatApp(f, n) => node(
            Op::NatApp(named(n, sizes, depth)),
            vec![of(f, sizes, depth)],
        ),
        Node::Var(i) => node(Op::Var(Some(*i)), vec![]),
        Node::Prim(p) => node(Op::Prim(*p), vec![]),
        Node::F32(x) => node(Op::F32(*x), vec![]),
        Node::Int(i) => node(Op::Int(*i), vec![]),
        Node::Comp(..) => Sketch::Any,
    }
}

/// Size `n` met under `depth` `nfun`s, with the program's sizes by name, or a hole.
fn named(n: &Nat, sizes: &[String], depth: usize) -> Nat {
    let indices = n
        .atoms()
        .into_iter()
        .any(|a| matches!(a, NatAtom::Index(_)));
    if indices && depth != sizes.len() {
        return Nat::meta(0);
    }
    n.substitute(&mut |a| match a {
        NatAtom::Index(i) => {
            (sizes.len().checked_sub(1 + *i as usize)).map(|p| Nat::var(&sizes[p]))
        }
        _ => None,
    })
}
