//! Helpers shared by the integration tests.
#![allow(dead_code)]

use sketchlog::error::Source;
use sketchlog::rise::term::Node;
use sketchlog::rise::{infer, parse, syntax::Program, term::Term};
use std::rc::Rc;

/// A small deterministic generator for random inputs (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    /// A float in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    pub fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

pub fn program(path: &str) -> Program {
    sketchlog::rise::load_program(std::path::Path::new(path)).expect("program parses")
}

pub fn def(path: &str, name: &str) -> Rc<Term> {
    infer::elaborate_def(&program(path), name).expect("definition elaborates")
}

/// Parses and elaborates a single expression.
pub fn term(src: &str) -> Rc<Term> {
    let e = parse::parse_expr(&Source::new("<test>", src)).expect("parses");
    infer::elaborate(None, &e).expect("elaborates")
}

pub fn assert_close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len(), "lengths differ");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "element {i}: {x} vs {y}"
        );
    }
}

/// Every program file of `programs/`.
pub fn program_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("programs")
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".rise"))
        .collect();
    v.sort();
    v
}

/// Number of beta-redexes `(fun ..) arg` in a term.
pub fn redexes(t: &Term) -> usize {
    let here = matches!(&t.node, Node::App(f, _) if matches!(f.node, Node::Lam(_)));
    here as usize + t.node.children().iter().map(|c| redexes(c)).sum::<usize>()
}
