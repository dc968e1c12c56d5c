//! Helpers shared by the integration tests.

use sketchlog::rise::term::Node;
use sketchlog::rise::{infer, parse, syntax::Program, term::Term};
use sketchlog::sketch::Sketch;
use sketchlog::source::Source;
use std::rc::Rc;

/// The `sketchlog` binary built for these tests, with `args`.
pub fn sketchlog(args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sketchlog"));
    c.args(args);
    c
}

/// What `sketchlog args` printed, and how it exited.
pub fn output(args: &[&str]) -> std::process::Output {
    sketchlog(args).output().expect("the sketchlog binary runs")
}

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

/// R(s): does a term satisfy a sketch? (The paper's figure 6, directly on terms.)
pub fn satisfies(t: &Term, s: &Sketch) -> bool {
    s.satisfied_by(t)
}

/// The naive product of an m x k and a k x n matrix.
pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

/// Checks that a matmul program (`nfun m n k => fun a b => ...`) computes the product of
/// random matrices at a square-ish and a non-square size.
pub fn assert_computes_matmul(program: &Term, rng: &mut Rng) {
    use sketchlog::rise::interp::{run, Value};
    for (m, n, k) in [(64, 32, 8), (32, 64, 12)] {
        let (a, b) = (rng.f32s(m * k), rng.f32s(k * n));
        let args = [Value::matrix(m, k, &a), Value::matrix(k, n, &b)];
        let got = run(program, &[m as i64, n as i64, k as i64], &args).unwrap();
        assert_close(&got.flatten_f32().unwrap(), &matmul(&a, &b, m, n, k), 1e-4);
    }
}

/// The program `FILE.rise:NAME` or the one `FILE.guide` finds, after the last lowering.
pub fn lowered(spec: &str) -> Rc<Term> {
    let program = sketchlog::guide::program::load_program(spec).unwrap();
    sketchlog::codegen::sequential(&program)
}
