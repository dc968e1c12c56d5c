//! OpenMP C code generation from low-level Rise ([`emit`], over the values of partial
//! evaluation in [`emit::value`], with [`index`] arithmetic as affine forms, after the C
//! [`preamble`] of vector types, buffers and streaming stores), compiling, running and
//! validating the generated C against the interpreter ([`run`]), with a clock around each
//! stored stage if asked ([`stages`]), and the reference GEMM it is timed beside
//! ([`mod@reference`]), for a [`target`] machine, whose level-1 data cache
//! ([`crate::machine::cache`]) the generator's remarks describe.

pub mod emit;
pub mod index;
pub mod kernel;
#[cfg(feature = "cli")]
pub mod measure;
pub mod preamble;
#[cfg(feature = "cli")]
pub mod reference;
pub mod run;
pub mod stages;
pub mod target;

use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use std::rc::Rc;

/// The last lowering before code generation (the reference's `mapSeq` and `reduceSeq`
/// lowering rules): every `map` whose function computes (adds, multiplies or reduces)
/// becomes a sequential loop, every `reduce` a sequential reduction. Maps that only
/// rearrange data stay maps (views, index arithmetic); parallel maps, unrolled reductions
/// and vectors are what the program already says. A sequential reduction of a computing
/// map applies the map's function to each element as it accumulates it (`reduceSeq (fun
/// acc x => op acc (f x)) init xs`), as the reference generates a reduction of a functional
/// map, instead of storing the map first. A program whose body is still a function (`nfun n
/// => map f`, as beta-eta normal form writes it) is first given a lambda per parameter.
pub fn sequential(t: &Rc<Term>) -> Rc<Term> {
    lower_maps(&with_parameters(t))
}

/// The program with a lambda for every parameter: a function under its leading `nfun`s and
/// `fun`s eta-expanded (the generated C names each parameter).
pub fn with_parameters(t: &Rc<Term>) -> Rc<Term> {
    let node = match &t.node {
        Node::NatLam(b) => Node::NatLam(with_parameters(b)),
        Node::Lam(b) => Node::Lam(with_parameters(b)),
        _ => match crate::rise::lambda::eta_abstract(t) {
            Some(expanded) => return with_parameters(&expanded),
            None => return t.clone(),
        },
    };
    Term::at(node, t.ty.clone(), t.span.clone())
}

fn lower_maps(t: &Rc<Term>) -> Rc<Term> {
    if let Some(fused) = fuse_reduce_map(t) {
        return fused;
    }
    let node = match &t.node {
        Node::App(f, g) if f.node == Node::Prim(Prim::Map) && computes(g) => {
            let map_seq = Term::at(Node::Prim(Prim::MapSeq), f.ty.clone(), f.span.clone());
            Node::App(map_seq, lower_maps(g))
        }
        Node::Prim(Prim::Reduce) => Node::Prim(Prim::ReduceSeq),
        n => n.map(lower_maps),
    };
    Term::at(node, t.ty.clone(), t.span.clone())
}

/// `reduce op init (map f xs)` (or `reduceSeq`, `reduceSeqUnroll`) with a computing `f`,
/// as `reduceSeq (fun acc x => op acc (f x)) init xs` (unrolled if it was), lowered.
fn fuse_reduce_map(t: &Rc<Term>) -> Option<Rc<Term>> {
    let Node::App(reduce_op_init, mapped) = &t.node else {
        return None;
    };
    let Node::App(reduce_op, init) = &reduce_op_init.node else {
        return None;
    };
    let Node::App(reduce, op) = &reduce_op.node else {
        return None;
    };
    let Node::App(map_f, xs) = &mapped.node else {
        return None;
    };
    let Node::App(map, f) = &map_f.node else {
        return None;
    };
    let prim = match reduce.node {
        Node::Prim(Prim::Reduce | Prim::ReduceSeq) => Prim::ReduceSeq,
        Node::Prim(Prim::ReduceSeqUnroll) => Prim::ReduceSeqUnroll,
        _ => return None,
    };
    if map.node != Node::Prim(Prim::Map) || !computes(f) {
        return None;
    }
    use crate::rise::types::fun;
    let Type::Arr(_, elem_ty) = &xs.ty else {
        return None;
    };
    let (acc_ty, elem_ty) = (init.ty.clone(), (**elem_ty).clone());
    let var = |i, ty: &Type| Term::new(Node::Var(i), ty.clone());
    let app = |f: &Rc<Term>, x: Rc<Term>| match &f.ty {
        Type::Fun(_, result) => Some(Term::new(Node::App(f.clone(), x), (**result).clone())),
        _ => None,
    };
    let (op, f) = (lower_maps(&raised(op)), lower_maps(&raised(f)));
    let body = app(&app(&op, var(1, &acc_ty))?, app(&f, var(0, &elem_ty))?)?;
    let inner = Term::new(Node::Lam(body), fun(elem_ty.clone(), acc_ty.clone()));
    let lam = Term::new(
        Node::Lam(inner.clone()),
        fun(acc_ty.clone(), inner.ty.clone()),
    );
    let rest = fun(acc_ty.clone(), fun(xs.ty.clone(), acc_ty.clone()));
    let reduce = Term::at(
        Node::Prim(prim),
        fun(lam.ty.clone(), rest),
        reduce.span.clone(),
    );
    app(&app(&app(&reduce, lam)?, lower_maps(init))?, lower_maps(xs))
}

/// `t` under two more binders: its free variables raised by two.
fn raised(t: &Rc<Term>) -> Rc<Term> {
    crate::rise::lambda::shift(t, 2, 0, 0).expect("raising never fails")
}

/// Does the term do arithmetic or reduce?
fn computes(t: &Term) -> bool {
    use Prim::*;
    match &t.node {
        Node::Prim(p) => {
            matches!(
                p,
                Add | Mul | Sub | Div | Neg | Reduce | ReduceSeq | ReduceSeqUnroll
            ) || p.math_function().is_some()
        }
        n => n.children().iter().any(|c| computes(c)),
    }
}

/// The sizes a program takes (its leading `nfun`s), each `size`.
pub fn sizes_of(program: &crate::rise::term::Term, size: i64) -> Vec<i64> {
    let mut n = 0;
    let mut t = program;
    while let crate::rise::term::Node::NatLam(b) = &t.node {
        n += 1;
        t = b;
    }
    vec![size; n]
}

/// Whether every size `program` applies a size function or primitive to (`split<w/16>`) is a
/// whole number at the program's `sizes` (named `names`, outermost first); an error naming
/// the first that is not, and the sizes. A size function applied to sizes (`(nfun n m =>
/// ..)<16><w>`) is checked at them; sizes under other binders of the program's own are not
/// checked here. Sizes in types may be fractions: the blocks of a `split` or `slide` that do
/// not tile their array (code generation shifts the last inward, or says why it cannot).
pub fn check_sizes(program: &Term, sizes: &[i64], names: &[String]) -> crate::error::Result<()> {
    use crate::rise::nat::{Nat, NatAtom};
    // Each size binder's value where known, innermost last, and the binder's name.
    type Env = Vec<(Option<i64>, Option<String>)>;
    let mut top = program;
    let mut env: Env = vec![];
    while let (Node::NatLam(b), true) = (&top.node, env.len() < sizes.len()) {
        env.push((Some(sizes[env.len()]), names.get(env.len()).cloned()));
        top = b;
    }
    let at: Vec<String> = (names.iter().zip(sizes))
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    let check = |n: &Nat, env: &Env| -> crate::error::Result<()> {
        let binder = |a: &NatAtom| match a {
            NatAtom::Index(i) => env.len().checked_sub(1 + *i as usize).map(|k| &env[k]),
            _ => None,
        };
        let value = |a: &NatAtom| binder(a).and_then(|b| b.0);
        if !n.atoms().into_iter().all(|a| value(a).is_some()) || n.eval(&value).is_ok() {
            return Ok(());
        }
        let shown = n.show(&|a| match binder(a) {
            Some((_, Some(name))) => name.clone(),
            _ => value(a).map_or_else(|| format!("{a:?}"), |v| v.to_string()),
        });
        Err(crate::error::Error::bad_input(format!(
            "at {}, the program's size `{shown}` is not a whole number: give sizes it divides",
            at.join(", ")
        )))
    };
    let mut todo: Vec<(&Term, Env)> = vec![(top, env)];
    while let Some((t, mut env)) = todo.pop() {
        // `(nfun n m => b)<x><y>`: b with n and m known.
        let mut args = vec![];
        let mut head = t;
        while let Node::NatApp(f, n) = &head.node {
            check(n, &env)?;
            args.push(n);
            head = f;
        }
        if !args.is_empty() {
            // Each argument's value, and its name where it is one binder (`w`).
            let outer = |i: u32| env.len().checked_sub(1 + i as usize).map(|k| &env[k]);
            let values: Vec<(Option<i64>, Option<String>)> = (args.iter().rev())
                .map(|n| {
                    let value = n.eval(&|a| match a {
                        NatAtom::Index(i) => outer(*i).and_then(|b| b.0),
                        _ => None,
                    });
                    let name = match n.atoms().into_iter().next() {
                        Some(NatAtom::Index(i)) if **n == Nat::index(*i) => {
                            outer(*i).and_then(|b| b.1.clone())
                        }
                        _ => None,
                    };
                    (value.ok(), name)
                })
                .collect();
            let mut body = head;
            let mut inner = env.clone();
            for v in values.iter().cloned() {
                let Node::NatLam(b) = &body.node else { break };
                inner.push(v);
                body = b;
            }
            if inner.len() == env.len() + values.len() {
                todo.push((body, inner));
                continue;
            }
            todo.push((head, env));
            continue;
        }
        if matches!(t.node, Node::NatLam(_)) {
            env.push((None, None));
        }
        todo.extend(t.node.children().into_iter().map(|c| (&**c, env.clone())));
    }
    Ok(())
}
