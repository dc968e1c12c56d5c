//! Strategies on the matrix multiplication: Elevate's seven versions keep the program's
//! meaning, the baseline finds the baseline guide's program and the versions up to the loop
//! permutation its C, guides run strategy steps, strategies run guided searches, and the
//! command line reports counts and failures.

use crate::common;

use common::{assert_computes_matmul, def, output, Rng};
use sketchlog::guide;
use sketchlog::rise::term::Term;
use sketchlog::rules::Params;
use sketchlog::strategy::{self, Ending, Outcome, Settings};
use std::rc::Rc;

const MM: &str = "programs/matmul.rise";

/// `mm` rewritten by `programs/mm.elevate:STRATEGY`.
fn rewrite(strategy: &str) -> (Rc<Term>, Outcome) {
    let (file, s) = strategy::load_spec(
        &format!("programs/mm.elevate:{strategy}"),
        &Params::default(),
    )
    .unwrap();
    let settings = Settings {
        sizes: ["m", "n", "k"].map(String::from).to_vec(),
        searcher: Some(Rc::new(guide::Searches::default())),
        ..Settings::default()
    };
    let outcome = strategy::run(&file, &s, &def(MM, "mm"), &settings).unwrap();
    match &outcome.ending {
        Ending::Success(t) => (t.clone(), outcome),
        other => panic!("{strategy}: {other:?}"),
    }
}

/// The beta-eta normal form of `t`, as the guides keep their terms.
fn benf(t: &Rc<Term>) -> Rc<Term> {
    let limits = sketchlog::egraph::saturate::Limits::default();
    sketchlog::egraph::saturate::normalise(t, &limits)
        .unwrap()
        .0
}

/// Elevate's seven versions, by their names in `mm.elevate`, and the guides of Table 5.
const VERSIONS: [(&str, &str); 7] = [
    ("baseline", "baseline"),
    ("blocking", "blocking"),
    ("vectorization", "vectorization"),
    ("loopPerm", "loop-perm"),
    ("arrayPacking", "array-packing"),
    ("cacheBlocks", "cache-blocks"),
    ("par", "parallel"),
];

/// The program a guide ends with.
fn guide_program(name: &str) -> Rc<Term> {
    let g = guide::parse::load_guide(format!("programs/{name}.guide").as_ref()).unwrap();
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    reports.last().unwrap().term.clone().unwrap()
}

/// The C of a program, lowered, at 1024 in every size.
fn c_of(t: &Rc<Term>) -> String {
    let sizes = sketchlog::codegen::sizes_of(t, 1024);
    let lowered = sketchlog::codegen::sequential(t);
    sketchlog::codegen::emit::program_c("mm", &lowered, &sizes)
        .unwrap()
        .c
}

#[test]
fn every_matrix_multiplication_strategy_keeps_the_meaning() {
    let versions = VERSIONS.iter().map(|(s, _)| *s);
    for s in versions.chain(["blockingSplit", "blockingSplit ;; normForSearch"]) {
        let (t, outcome) = rewrite(s);
        assert!(outcome.counts.rules > 0, "{s}");
        assert!(outcome.counts.steps > outcome.counts.rules, "{s}");
        assert_computes_matmul(&t, &mut Rng(7));
    }
}

#[test]
fn the_baseline_strategy_finds_the_baseline_guides_program() {
    let (t, outcome) = rewrite("baseline");
    let g = guide::parse::load_guide("programs/baseline.guide".as_ref()).unwrap();
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    let found = reports.last().unwrap().term.clone().unwrap();
    assert_eq!(benf(&t), found);
    // DFNF eta-abstracts the reduction's operator and the map's function; the fusion is the
    // one named rule applied.
    assert_eq!(outcome.counts.rules, 3);
}

#[test]
fn a_mixed_strategy_searches_only_for_the_loop_order() {
    let (t, outcome) = rewrite("blockingMixed");
    assert_eq!(outcome.counts.searches, 1);
    let sketches = sketchlog::sketch::parse::parse_sketch_file(
        &sketchlog::files::read_source("programs/mm.sketch".as_ref()).unwrap(),
    )
    .unwrap();
    let sizes = ["m", "n", "k"].map(String::from);
    let reorder1 = sketches
        .get("reorder1")
        .unwrap()
        .clone()
        .resolve(&sizes)
        .unwrap();
    assert!(reorder1.sketch.satisfied_by(&t));
    assert_computes_matmul(&t, &mut Rng(11));
    // The guide searches for the split loops too; the mixed search starts from them.
    let g = guide::parse::load_guide("programs/blocking.guide".as_ref()).unwrap();
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    let guide_enodes: usize = reports.iter().map(|r| r.outcome.size().0).sum();
    assert!(
        outcome.counts.enodes < guide_enodes,
        "{} vs {guide_enodes}",
        outcome.counts.enodes
    );
}

#[test]
fn a_guide_runs_a_strategy_step_then_searches_from_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let programs = std::fs::canonicalize("programs").unwrap();
    let text = format!(
        "program {p}/matmul.rise:mm\nsketches {p}/mm.sketch\nrules {p}/../rules/mm.rules\n\
         limits iterations 60 enodes 5000000 time 300 memory 4000\n\
         filter array-depth 6 ast-size 200 sizes-positive\n\
         step strategy {p}/mm.elevate:blockingSplit ;; normForSearch\n\
         step reorder1\n  rules reorder\n",
        p = programs.display()
    );
    let path = dir.path().join("mixed.guide");
    std::fs::write(&path, text).unwrap();
    let g = guide::parse::load_guide(&path).unwrap();
    assert!(g.inputs.iter().any(|p| p.ends_with("mm.elevate")));
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    assert_eq!(reports.len(), 2);
    assert!(reports[0].strategy.is_some_and(|c| c.rules > 0));
    assert!(reports.iter().all(|r| r.outcome.found()));
    assert_computes_matmul(reports[1].term.as_ref().unwrap(), &mut Rng(3));
}

#[test]
fn rewrite_prints_the_result_and_counts_and_says_where_a_strategy_failed() {
    let out = output(&[
        "rewrite",
        "programs/matmul.rise:mm",
        "--strategy",
        "programs/mm.elevate:baseline",
        "--trace",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("def mm = nfun m n k =>"), "{stdout}");
    assert!(stdout.contains("rewrite steps "), "{stdout}");
    assert_eq!(
        stdout.matches(" fuse-reduce-map at [").count(),
        1,
        "{stdout}"
    );
    // The reduction is a fused reduceSeq below the leading binders and two maps.
    let failing = "programs/mm.elevate:baseline ; body(body(body(body(body(is(reduce))))))";
    let out = output(&["rewrite", "programs/matmul.rise:mm", "--strategy", failing]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("strategy failed: `is(reduce)`"), "{stderr}");
    assert!(stderr.contains("at position [0,0,0,0,0]"), "{stderr}");
    // A limit stops a strategy that does not terminate, with its counts.
    let forever = "programs/mm.elevate:repeat(id)";
    let out = output(&["rewrite", MM, "--strategy", forever, "--max-steps", "5000"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout.contains("rewrite steps 5000"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("steps limit"));
}

#[test]
fn elevates_seven_versions_give_the_guides_c() {
    // Their terms differ from the guides' in where maps are fused, where the reduction's input
    // is split and where the packed copy is bound (views and lets that lower to the same loops).
    for (strategy, g) in &VERSIONS {
        let (t, _) = rewrite(strategy);
        assert_eq!(c_of(&benf(&t)), c_of(&guide_program(g)), "{strategy}");
    }
}

#[test]
fn harris_strategy_steps_give_the_guides_c() {
    let c = |guide: &str| {
        let program = common::lowered(&format!("programs/{guide}.guide"));
        sketchlog::codegen::emit::program_c("harris", &program, &[256, 256])
            .unwrap()
            .c
    };
    for (ours, theirs) in [
        ("harris-parallel-strategy", "harris-parallel"),
        ("harris-strips-strategy", "harris-strips"),
        ("harris-fused-strategy", "harris-fused"),
        ("harris-separated-strategy", "harris-separated"),
        ("harris-line-buffered-strategy", "harris-line-buffered"),
        ("harris-line-buffered-mixed", "harris-line-buffered"),
        ("harris-rotated-strategy", "harris-rotated"),
        (
            "harris-separated-rotated-strategy",
            "harris-separated-rotated",
        ),
    ] {
        assert_eq!(c(ours), c(theirs), "{ours}");
    }
}

#[test]
fn a_guided_search_runs_on_the_subterm_a_traversal_gives_it() {
    let search = "saturate(\"../rules/mm.rules:baseline\", \"mm.sketch:baseline\")";
    let under_parameters = format!("body(body(body(body(body({search})))))");
    let (t, outcome) = rewrite(&under_parameters);
    assert_eq!(outcome.counts.searches, 1);
    assert!(outcome.counts.enodes > 0);
    // The program's parameters are as they were; below them, the baseline's loops.
    assert_eq!(t.ty, def(MM, "mm").ty);
    assert_eq!(benf(&t), guide_program("baseline"));
}

#[test]
fn the_harris_strategies_vectorise_at_the_width_they_are_given() {
    let c = |guide: &str| {
        let guide = format!("programs/{guide}.guide");
        let out = output(&[
            "codegen",
            &guide,
            "--sizes",
            "h=32,w=32",
            "--param",
            "lanes=8",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let ours = c("harris-separated-strategy");
    assert!(
        ours.contains("f32x8 ") && !ours.contains("f32x16 "),
        "{ours}"
    );
    assert_eq!(ours, c("harris-separated"));
}
