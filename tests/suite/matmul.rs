//! The matrix multiplication case study (paper section 5.2): every goal's guide finds each of
//! its sketches, and the program it ends with still computes the product.

use crate::common;

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

/// One search for several sketches (Table 3's unguided goals that share their rules) finds
/// each where a search for it alone does, and stops at a limit for the one never found.
#[test]
fn a_shared_search_finds_each_sketch_where_its_own_search_does() {
    use sketchlog::cluster::child::ProcessLimits;
    use sketchlog::experiments::matmul::unguided_step;
    let g = guide::parse::load_guide(std::path::Path::new("programs/blocking.guide")).unwrap();
    let caps = ProcessLimits {
        memory_mb: 4000,
        time: std::time::Duration::from_secs(600),
    };
    let mut step = unguided_step(&g, caps);
    let (split, reorder) = (&g.steps[0], &g.steps[1]);
    step.sketch = split.sketch.clone();
    let alone = guide::search(&g.start, &step, |_| {}).unwrap();
    assert!(alone.outcome.found(), "{:?}", alone.outcome.stop);
    let k = alone.outcome.iterations.len();
    step.limits.iterations = k + 1;
    use guide::shared::Target;
    let sketches = [
        Target::Sketch(reorder.sketch.clone(), reorder.cost.clone()),
        Target::Sketch(split.sketch.clone(), split.cost.clone()),
    ];
    let mut found = vec![];
    let outcome = guide::shared::search_each(
        &g.start,
        &step,
        &sketches,
        |_| {},
        |i, f| {
            let Target::Sketch(sketch, _) = &sketches[i] else {
                unreachable!("sketches only")
            };
            assert!(satisfies(&f.term, &sketch.sketch));
            found.push((i, f.iterations));
        },
    )
    .unwrap();
    assert_eq!(found, [(1, k)]);
    assert_eq!(outcome.stop.name(), "iteration-limit");
    assert_eq!(outcome.iterations.len(), k + 1);
    let sizes = |o: &sketchlog::egraph::saturate::Outcome| -> Vec<usize> {
        o.iterations.iter().map(|i| i.enodes).collect()
    };
    assert_eq!(sizes(&outcome)[..k], sizes(&alone.outcome)[..]);
}

/// The seven goals grow four different e-graphs unguided: the goals lowered by the same
/// rules share one search.
#[test]
fn unguided_goals_with_the_same_rules_share_a_search() {
    use sketchlog::experiments::matmul::{unguided_groups, GOALS};
    let goals: Vec<String> = GOALS.map(String::from).to_vec();
    let groups = unguided_groups(&goals).unwrap();
    assert_eq!(
        groups,
        [
            vec!["baseline"],
            vec!["blocking"],
            vec!["vectorization", "loop-perm"],
            vec!["array-packing", "cache-blocks", "parallel"],
        ]
    );
}

/// `reproduce table3 table4 table5 fig16` with a small memory cap: every file is written, the
/// unguided blocking row (found at about 1 GB) names the cap that stopped it, and the guided
/// rows (about 30 MB) are found.
#[test]
fn reproduce_writes_the_case_study_tables() {
    let dir = std::env::temp_dir().join(format!("sketchlog-mm-{}", std::process::id()));
    let status = common::sketchlog(&[])
        .args(["reproduce", "table3", "table4", "table5", "fig16"])
        .args([
            "--goals",
            "baseline,blocking",
            "--memory-mb",
            "300",
            "--time-s",
            "600",
        ])
        .arg("--dir")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let table3 = read("table3.csv");
    let rows: Vec<Vec<&str>> = table3
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{table3}");
    assert_eq!(&rows[0][..2], ["baseline", "true"], "{table3}");
    assert_eq!(&rows[1][..2], ["blocking", "false"], "{table3}");
    assert!(
        ["time-limit", "memory-limit"].contains(&rows[1][8]),
        "{table3}"
    );
    let table4 = read("table4.csv");
    assert!(table4.contains("\nbaseline,0,true,"), "{table4}");
    assert!(table4.contains("\nblocking,1,true,"), "{table4}");
    assert_eq!(read("table4-steps.csv").lines().count(), 1 + 1 + 2);
    assert!(read("table5.csv").contains("\nblocking,split,reorder1,7 + 7,14,"));
    let fig16 = read("fig16.csv");
    for series in [
        "blocking,unguided",
        "parallel,unguided",
        "blocking,guided",
        "parallel,guided",
    ] {
        assert!(fig16.contains(&format!("\n{series},")), "{series}");
    }
    assert!(read("fig16.svg").starts_with("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}
