//! OpenMP C code generation from low-level Rise ([`emit`], over the values of partial
//! evaluation in [`emit::value`], with [`index`] arithmetic as affine forms, after the C [`preamble`] of vector
//! types, buffers and streaming stores), compiling, running and validating the generated C against the
//! interpreter ([`run`]), and the reference GEMM it is timed beside ([`mod@reference`]).

pub mod emit;
pub mod index;
pub mod preamble;
pub mod reference;
pub mod run;

use crate::error::Result;

use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use std::rc::Rc;

/// The last lowering before code generation (the reference's `mapSeq` and `reduceSeq`
/// lowering rules): every `map` whose function computes (adds, multiplies or reduces)
/// becomes a sequential loop, every `reduce` a sequential reduction. Maps that only
/// rearrange data stay maps (views, index arithmetic); parallel maps, unrolled reductions
/// and vectors are what the program already says.
pub fn sequential(t: &Rc<Term>) -> Rc<Term> {
    let node = match &t.node {
        Node::App(f, g) if f.node == Node::Prim(Prim::Map) && computes(g) => {
            let map_seq = Term::new(Node::Prim(Prim::MapSeq), f.ty.clone());
            Node::App(map_seq, sequential(g))
        }
        Node::Prim(Prim::Reduce) => Node::Prim(Prim::ReduceSeq),
        n => n.map(sequential),
    };
    Term::new(node, t.ty.clone())
}

/// Does the term do arithmetic or reduce?
fn computes(t: &Term) -> bool {
    use Prim::*;
    match &t.node {
        Node::Prim(p) => matches!(
            p,
            Add | Mul | Sub | Div | Reduce | ReduceSeq | ReduceSeqUnroll
        ),
        n => n.children().iter().any(|c| computes(c)),
    }
}

/// The program to generate code for, after the last lowering ([`sequential`]):
/// `FILE.rise:NAME`, or `FILE.guide`'s result (found by running the guide).
pub fn load_program(spec: &str) -> Result<Rc<Term>> {
    if spec.ends_with(".guide") {
        let g = crate::guide::parse::load_guide(std::path::Path::new(spec))?;
        let reports = crate::guide::run(&g, |_, _| {}, |_, _| {})?;
        crate::guide::check_found(&reports)?;
        let found = reports.last().and_then(|r| r.term.clone()).expect("found");
        return Ok(sequential(&found));
    }
    let program = crate::rise::load_def_ref(spec, std::path::Path::new("."))?.term;
    Ok(sequential(&program))
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
