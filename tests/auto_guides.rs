//! `sketchlog guide --auto`: guides found from the final sketch or goal alone, written as
//! guide files that `sketchlog guide` re-runs; and its errors.

mod common;
use common::output;

/// Runs `guide --auto` with `args`, then the guide it wrote; returns what the search printed.
fn found_and_rerun(args: &[&str], dir: &std::path::Path, steps: usize) -> String {
    let guide = dir.join("found.guide");
    let mut all = vec!["guide", "--auto"];
    all.extend(args);
    all.extend(["-o", guide.to_str().unwrap()]);
    let out = output(&all);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("guide found: {steps} steps")),
        "{said}"
    );
    let rerun = output(&["guide", guide.to_str().unwrap()]);
    let again = String::from_utf8_lossy(&rerun.stdout);
    assert!(rerun.status.success(), "{again}");
    assert_eq!(again.matches(": found after").count(), steps, "{again}");
    said
}

/// Loop permutation from its final sketch and all of `rules/mm.rules`: the checkpoints are
/// the paper's split and reorder2 (derived, not read), and each step picks the paper's set.
#[test]
fn loop_permutation_is_found_from_its_final_sketch_alone() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "programs/matmul.rise:mm",
        "--sketch",
        "programs/mm.sketch:lower2",
        "--rules",
        "rules/mm.rules",
        "--array-depth",
        "6",
        "--ast-size",
        "300",
        "--sizes-positive",
        "--iterations",
        "60",
    ];
    let said = found_and_rerun(&args, dir.path(), 3);
    assert!(
        said.contains("3 checkpoints (lower2-split, lower2-unlowered, lower2), 7 rule sets"),
        "{said}"
    );
    for set in ["mm.rules:split;", "mm.rules:reorder;", "mm.rules:lower;"] {
        assert!(said.contains(set), "{set}: {said}");
    }
    let sketches = std::fs::read_to_string(dir.path().join("found.sketch")).unwrap();
    assert!(sketches.contains("sketch lower2-split = "), "{sketches}");
}

/// The 4D reorder 4321, which the Rise project's suite marks too hard: found from its goal
/// term through the five goals its conjugating transposes peel into.
#[test]
fn the_4d_reorder_is_found_from_its_goal_alone() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "programs/shine/reorder.rise:reorder4d",
        "--goal",
        "programs/shine/reorder.rise:reorder4d-4321",
        "--rules",
        "rules/shine.rules:reorder-cnf",
        "--normal-form",
        "cnf",
    ];
    found_and_rerun(&args, dir.path(), 6);
    let goals = std::fs::read_to_string(dir.path().join("found.rise")).unwrap();
    assert!(goals.contains("def reorder4d-4321-outer5 = "), "{goals}");
}

/// Missing targets, limits given to a guide file, and a target out of reach: clear errors,
/// the right exit codes, and no guide written.
#[test]
fn auto_guide_errors() {
    let dir = tempfile::tempdir().unwrap();
    let guide = dir.path().join("found.guide");
    let out_arg = guide.to_str().unwrap();
    let out = output(&[
        "guide",
        "--auto",
        "programs/matmul.rise:mm",
        "--rules",
        "rules/mm.rules",
        "-o",
        out_arg,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`--auto` needs the target"), "{err}");

    let out = output(&["guide", "programs/vectorization.guide", "--enodes", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("are for `--auto`"), "{err}");

    let out = output(&[
        "guide",
        "programs/vectorization.guide",
        "--sketch",
        "x.sketch:s",
    ]);
    assert_eq!(out.status.code(), Some(2));

    // The baseline rules alone never vectorise: not reached, exit 1, nothing written.
    let out = output(&[
        "guide",
        "--auto",
        "programs/matmul.rise:mm",
        "--sketch",
        "programs/mm.sketch:lower1",
        "--rules",
        "rules/mm.rules:baseline",
        "--enodes",
        "20000",
        "-o",
        out_arg,
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}{err}");
    assert!(err.contains("not reached"), "{err}");
    assert!(said.contains("skipped"), "{said}");
    assert!(!guide.exists() && !dir.path().join("found.sketch").exists());
}

/// `step auto` in a written guide: the steps before the next written one are found, each
/// with one of the guide's rule sets; the written step then runs with its own rules.
#[test]
fn a_written_guide_may_leave_steps_to_auto() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::env::current_dir().unwrap();
    let guide = dir.path().join("vectorization.guide");
    let at = |p: &str| root.join(p).display().to_string();
    std::fs::write(
        &guide,
        format!(
            "program  {}:mm\nsketches {}\nrules    {}\n\
             limits   iterations 60 enodes 10000000 time 300\n\
             filter   array-depth 6 ast-size 300 sizes-positive\n\
             step auto\nstep lower1\n  rules lower\n",
            at("programs/matmul.rise"),
            at("programs/mm.sketch"),
            at("rules/mm.rules")
        ),
    )
    .unwrap();
    let out = output(&["guide", guide.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    for line in [
        "step 1 `lower1-split`: found",
        "step 1 `lower1-unlowered`: found",
        "step 2 `lower1`: found",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
    // An automatic step needs a sketch step after it.
    std::fs::write(
        &guide,
        format!(
            "program  {}:mm\nrules {}\nstep auto\n",
            at("programs/matmul.rise"),
            at("rules/mm.rules")
        ),
    )
    .unwrap();
    let out = output(&["guide", guide.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("vectorization.guide:3:6:"), "{err}");
}
