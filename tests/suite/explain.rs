//! `--explain`: the rewrite path from a step's input to the term it extracted. Every printed
//! rewrite must be an application of the named rule that keeps the program's meaning, and the
//! path must end at the extracted term.

use crate::common;

use common::{assert_close, Rng};
use sketchlog::guide::{self, explain::Explanation, explain::Rewrite};
use sketchlog::rise::interp::{run, Value};
use sketchlog::rise::term::Term;
use std::path::Path;

/// The matrix-vector product of an m x k matrix and a k-vector.
fn mv(a: &[f32], v: &[f32], m: usize, k: usize) -> Vec<f32> {
    (0..m)
        .map(|i| (0..k).map(|l| a[i * k + l] * v[l]).sum())
        .collect()
}

/// `program` computes `mv` at sizes its blocks divide: rows in blocks of 32, each row's sum
/// in chunks of a cache line.
fn assert_computes_mv(program: &Term, rng: &mut Rng) {
    let line = sketchlog::machine::native_line() as usize;
    for (m, k) in [(64, line), (96, 5 * line)] {
        let (a, v) = (rng.f32s(m * k), rng.f32s(k));
        let args = [Value::matrix(m, k, &a), Value::f32s(&v)];
        let got = run(program, &[m as i64, k as i64], &args).and_then(|r| r.flatten_f32());
        assert_close(&got.unwrap(), &mv(&a, &v, m, k), 1e-4);
    }
}

fn rewrites(e: &Explanation) -> &[Rewrite] {
    match e {
        Explanation::Path { rewrites, .. } => rewrites,
        Explanation::NotFound { .. } => panic!("no rewrite path: {e:?}"),
    }
}

/// The matrix-vector blocking guide (split, in chunks, then reorder) explained step by step:
/// each rewrite names a rule of its step, the program after it still computes the product,
/// and the last one is the step's extracted term.
#[test]
fn every_rewrite_of_the_blocking_path_keeps_the_meaning() {
    let mut g = guide::parse::load_guide(Path::new("programs/mv-blocking.guide")).unwrap();
    for s in &mut g.steps {
        s.explain = Some(Default::default());
    }
    let mut rng = Rng(16);
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    assert_eq!(reports.len(), 3);
    for (step, report) in g.steps.iter().zip(&reports) {
        let path = rewrites(report.explanation.as_ref().unwrap());
        assert!(
            !path.is_empty(),
            "the sketch is not met by the input itself"
        );
        for rw in path {
            assert!(step.rules.iter().any(|r| r.name == rw.rule), "{}", rw.rule);
            assert_ne!(rw.before, rw.after);
            assert_computes_mv(&rw.term, &mut rng);
        }
        assert_eq!(Some(&path.last().unwrap().term), report.term.as_ref());
    }
}

/// Path limits too small for any path says so instead of printing a wrong one.
#[test]
fn a_path_beyond_the_limits_is_reported_not_found() {
    let mut g = guide::parse::load_guide(Path::new("programs/fission.guide")).unwrap();
    g.steps[1].explain = Some(guide::explain::PathLimits {
        expansions: 1,
        depth: 40,
    });
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    assert!(reports[0].explanation.is_none());
    assert!(matches!(
        reports[1].explanation,
        Some(Explanation::NotFound { explored: 1, .. })
    ));
}
