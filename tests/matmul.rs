//! The matrix multiplication case study (paper section 5.2): every goal's guide finds each of
//! its sketches, and the program it ends with still computes the product.

mod common;

use common::{assert_computes_matmul, satisfies, Rng};
use sketchlog::guide;

/// Runs a goal's guide: every step finds its sketch, the extracted term satisfies it, and
/// the final program equals the naive product on random matrices.
fn goal_is_found_and_keeps_the_meaning(goal: &str, steps: usize) {
    let path = format!("programs/{goal}.guide");
    let g = guide::parse::load_guide(std::path::Path::new(&path)).unwrap();
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    assert_eq!(reports.len(), steps, "{goal}");
    for (r, step) in reports.iter().zip(&g.steps) {
        assert!(
            r.outcome.found(),
            "{goal} {}: {:?}",
            r.sketch,
            r.outcome.stop
        );
        assert!(satisfies(r.term.as_ref().unwrap(), &step.sketch.sketch));
    }
    let last = reports.last().unwrap().term.clone().unwrap();
    assert_computes_matmul(&last, &mut Rng(42));
}

#[test]
fn baseline() {
    goal_is_found_and_keeps_the_meaning("baseline", 1);
}

#[test]
fn blocking() {
    goal_is_found_and_keeps_the_meaning("blocking", 2);
}

#[test]
fn vectorization() {
    goal_is_found_and_keeps_the_meaning("vectorization", 3);
}

#[test]
fn loop_perm() {
    goal_is_found_and_keeps_the_meaning("loop-perm", 3);
}

#[test]
fn array_packing() {
    goal_is_found_and_keeps_the_meaning("array-packing", 4);
}

#[test]
fn cache_blocks() {
    goal_is_found_and_keeps_the_meaning("cache-blocks", 4);
}

#[test]
fn parallel() {
    goal_is_found_and_keeps_the_meaning("parallel", 4);
}
