//! `sketchlog guide-auto`: guides found from the final sketch or goal alone, written as
//! guide files that `sketchlog guide` re-runs; and its errors.

use crate::common;
use common::output;

/// Runs `guide-auto` with `args`, then the guide it wrote; returns what the search printed.
fn found_and_rerun(args: &[&str], dir: &std::path::Path, steps: usize) -> String {
    let guide = dir.join("found.guide");
    let mut all = vec!["guide-auto"];
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
    let sketches = std::fs::read_to_string(dir.path().join("found.checkpoints.sketch")).unwrap();
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
    let goals = std::fs::read_to_string(dir.path().join("found.checkpoints.rise")).unwrap();
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
        "guide-auto",
        "programs/matmul.rise:mm",
        "--rules",
        "rules/mm.rules",
        "-o",
        out_arg,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--sketch <SKETCH>"), "{err}");

    // A guide file sets its own limits: `guide` has no limit flags.
    for flag in [&["--enodes", "5"][..], &["--enodes=5"]] {
        let out = output(&[&["guide", "programs/vectorization.guide"][..], flag].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("unexpected argument '--enodes"), "{err}");
    }

    let out = output(&[
        "guide",
        "programs/vectorization.guide",
        "--sketch",
        "x.sketch:s",
    ]);
    assert_eq!(out.status.code(), Some(2));

    // The baseline rules alone never vectorise: not reached, exit 1, nothing written.
    let out = output(&[
        "guide-auto",
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
    assert!(!guide.exists() && !dir.path().join("found.checkpoints.sketch").exists());
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

/// `guide-auto -o` beside its own inputs: the checkpoints go to `FOUND.checkpoints.*`, an
/// output that is an input is refused before any search, and an existing file is replaced
/// only with `--force`. The inputs stay byte for byte as they were.
#[test]
fn auto_guide_never_writes_over_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for file in ["fission.sketch", "fission.rise", "shine/reorder.rise"] {
        let name = std::path::Path::new(file).file_name().unwrap();
        std::fs::copy(std::path::Path::new("programs").join(file), d.join(name)).unwrap();
    }
    let inputs = ["fission.sketch", "fission.rise", "reorder.rise"];
    let before: Vec<Vec<u8>> = inputs
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    let rules = std::fs::canonicalize("rules").unwrap();
    let table2 = format!("{}/table2.rules:fission", rules.display());
    let reorder = format!("{}/shine.rules:reorder-cnf", rules.display());
    let sketch = ["fission.rise:start", "--sketch", "fission.sketch:two-maps"];
    let goal = [
        "reorder.rise:reorder3d",
        "--goal",
        "reorder.rise:reorder3d-321",
        "--normal-form",
        "cnf",
    ];
    let run = |target: &[&str], rules: &str, out: &str, force: bool| {
        let mut c = common::sketchlog(&["guide-auto"]);
        c.args(target)
            .args(["--rules", rules, "-o", out])
            .current_dir(d);
        if force {
            c.arg("--force");
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), err)
    };
    // Outputs over the inputs: the guide itself, or a checkpoint file the guide would name.
    for (target, rules, out, input) in [
        (&sketch[..], &table2, "fission.sketch", "fission.sketch"),
        (&goal[..], &reorder, "reorder.rise", "reorder.rise"),
        (&sketch[..], &table2, "fission.rise", "fission.rise"),
    ] {
        let (code, err) = run(target, rules, out, true);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("which this command reads"), "{err}");
        assert!(err.contains(&format!("`{input}`")), "{err}");
        assert!(!err.contains("guide found"), "{err}");
    }
    // Beside the inputs: written, then refused as existing, then replaced with --force.
    for (target, rules, out, checkpoints) in [
        (
            &sketch[..],
            &table2,
            "fission.guide",
            "fission.checkpoints.sketch",
        ),
        (
            &goal[..],
            &reorder,
            "reorder.guide",
            "reorder.checkpoints.rise",
        ),
        // A guide named like a sketch file is not written over by its checkpoints.
        (
            &sketch[..],
            &table2,
            "found.sketch",
            "found.checkpoints.sketch",
        ),
    ] {
        let (code, err) = run(target, rules, out, false);
        assert_eq!(code, Some(0), "{err}");
        assert!(d.join(checkpoints).exists(), "{checkpoints}");
        let (code, err) = run(target, rules, out, false);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("exists: give `--force`"), "{err}");
        let (code, err) = run(target, rules, out, true);
        assert_eq!(code, Some(0), "{err}");
        let rerun = common::sketchlog(&["guide", out])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            rerun.status.success(),
            "{}",
            String::from_utf8_lossy(&rerun.stderr)
        );
    }
    for (file, bytes) in inputs.iter().zip(&before) {
        assert_eq!(
            &std::fs::read(d.join(file)).unwrap(),
            bytes,
            "{file} changed"
        );
    }
    let out = common::sketchlog(&["typecheck", "reorder.rise"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// A checkpoint that needs a primitive no rule set makes is said out of reach at once, and
/// the sets that cannot make what a checkpoint needs are not tried.
#[test]
fn a_checkpoint_out_of_every_sets_reach_is_said_without_a_search() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("found.guide");
    let run = |sets: &[&str]| {
        let mut args = vec![
            "guide-auto",
            "programs/harris.rise:harris",
            "--sketch",
            "programs/harris.sketch:parallel",
            "-o",
            out.to_str().unwrap(),
            "--force",
        ];
        for s in sets {
            args.extend(["--rules", s]);
        }
        common::output(&args)
    };
    let missed = run(&[
        "rules/harris.rules:fuse-products",
        "rules/harris.rules:vectorise",
    ]);
    let said = String::from_utf8_lossy(&missed.stdout);
    let err = String::from_utf8_lossy(&missed.stderr);
    assert_eq!(missed.status.code(), Some(1), "{said}{err}");
    assert!(
        said.contains("out of reach of every rule set, none of which makes `mapPar`"),
        "{said}"
    );
    assert!(
        err.contains("not reached (no rule set makes `mapPar`)"),
        "{err}"
    );
    assert!(!out.exists());
    // With a set that makes it, the others are not tried: one trial.
    let found = run(&[
        "rules/harris.rules:fuse-products",
        "rules/harris.rules:parallel",
    ]);
    let said = String::from_utf8_lossy(&found.stdout);
    assert!(found.status.success(), "{said}");
    assert!(
        said.contains("harris.rules:parallel; found in 1 trials"),
        "{said}"
    );
}
