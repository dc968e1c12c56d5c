//! The lambda-calculus encodings inside egglog: Table 2 goals, normal forms, the table command.

use crate::common;
use common::*;
use sketchlog::egraph::encoding::{Binding, Encoding, Substitution};
use sketchlog::egraph::saturate::{normalise, Limits, StopReason};
use sketchlog::experiments::table2::search_goal;

#[test]
fn extraction_based_search_finds_every_table2_goal() {
    let limits = Limits {
        iterations: 20,
        enodes: 200_000,
        ..Limits::default()
    };
    for goal in ["reduction", "fission", "binomial"] {
        let out = search_goal(goal, Encoding::EFFICIENT, &limits, |_| {}).unwrap();
        assert_eq!(out.stop, StopReason::Found, "{goal}: {out:?}");
    }
}

#[test]
fn beta_normal_form_of_binomial_inlines_dot() {
    let start = def("programs/binomial.rise", "start");
    let (best, stop) = normalise(&start, &Limits::default()).unwrap();
    assert_eq!(stop, StopReason::Saturated);
    // The normal form has no redex left and means the same.
    assert_eq!(redexes(&start), 1);
    assert_eq!(redexes(&best), 0);
    assert!(best.size() < start.size());
    let mut rng = Rng(3);
    let img = rng.f32s(25);
    use sketchlog::rise::interp::{run, Value};
    let a = run(&start, &[3, 3], &[Value::matrix(5, 5, &img)])
        .unwrap()
        .flatten_f32()
        .unwrap();
    let b = run(&best, &[3, 3], &[Value::matrix(5, 5, &img)])
        .unwrap()
        .flatten_f32()
        .unwrap();
    assert_close(&a, &b, 1e-6);
}

#[test]
fn reduction_goal_is_found_with_explicit_substitution() {
    let out = search_goal(
        "reduction",
        Encoding {
            substitution: Substitution::Explicit,
            binding: Binding::DeBruijn,
        },
        &Limits::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.stop, StopReason::Found, "{out:?}");
    // Explicit substitution needs many more steps than extraction-based (5 iterations).
    assert!(out.iterations.len() > 10, "{}", out.iterations.len());
}

fn named(substitution: Substitution) -> Encoding {
    Encoding {
        substitution,
        binding: Binding::Names,
    }
}

#[test]
fn extraction_with_names_finds_reduction_and_fission() {
    for goal in ["reduction", "fission"] {
        let out = search_goal(
            goal,
            named(Substitution::Extraction),
            &Limits::default(),
            |_| {},
        )
        .unwrap();
        assert_eq!(out.stop, StopReason::Found, "{goal}: {out:?}");
    }
}

#[test]
fn explicit_with_names_finds_reduction() {
    let out = search_goal(
        "reduction",
        named(Substitution::Explicit),
        &Limits::default(),
        |_| {},
    )
    .unwrap();
    assert_eq!(out.stop, StopReason::Found, "{out:?}");
}

/// The paper's pattern: only extraction + De Bruijn finds binomial, and explicit + names
/// does not find fission. Here within a cap of 8K e-nodes, under which the efficient
/// encoding finds binomial (at 4.1K e-nodes; under a cap of 5K its last iteration would be
/// cut, the last iterations' growth predicting more than it adds); `reproduce table2` runs
/// them to the 2 GB memory cap.
#[test]
fn names_fail_where_the_paper_says_within_a_small_cap() {
    let limits = Limits {
        enodes: 8_000,
        ..Limits::default()
    };
    let efficient = search_goal("binomial", Encoding::EFFICIENT, &limits, |_| {}).unwrap();
    assert_eq!(efficient.stop, StopReason::Found);
    for (goal, substitution) in [
        ("fission", Substitution::Explicit),
        ("binomial", Substitution::Explicit),
        ("binomial", Substitution::Extraction),
    ] {
        let out = search_goal(goal, named(substitution), &limits, |_| {}).unwrap();
        assert_eq!(
            out.stop,
            StopReason::NodeLimit,
            "{goal} {substitution:?}: {out:?}"
        );
    }
}

#[test]
fn table2_rows_find_the_papers_inputs_from_any_working_directory() {
    let elsewhere = tempfile::tempdir().unwrap();
    use sketchlog::egraph::encoding::{Binding, Substitution};
    use sketchlog::experiments::jobs::{child_args, Work};
    let work = Work::Table2 {
        goal: "reduction".into(),
        substitution: Substitution::Extraction,
        binding: Binding::DeBruijn,
    };
    let caps = sketchlog::experiments::table2::CAPS;
    let out = common::sketchlog(&[])
        .current_dir(elsewhere.path())
        .args(child_args(work, caps))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\"found\":true"), "{stdout}");
}
