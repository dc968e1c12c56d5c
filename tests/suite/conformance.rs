//! `sketchlog run` is egglog 3.0.0's command line: on a fast subset of egglog's own test
//! programs it prints exactly what egglog's binary printed (recorded in `tests/egglog/`), and
//! succeeds or fails alike, with no flag, with `-j 2` and with `--no-decomp`; `--to-json`
//! writes egglog's JSON and `--to-dot` its DOT; `--mode desugar`, `--strict-mode` and the REPL
//! behave as egglog's do. The full set is run against egglog's binary by
//! `scripts/conformance.sh`.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// A scratch directory removed when dropped: programs that write files (`print-function
/// :file`, `--to-json`) write them here, not in the repository.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "sketchlog-conformance-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    /// Copies `file` into the scratch directory and returns the copy's path.
    fn copy(&self, file: &Path) -> PathBuf {
        let to = self.0.join(file.file_name().unwrap());
        std::fs::copy(file, &to).unwrap();
        to
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sketchlog_run(args: &[&str], dir: &Path, stdin: Option<&str>) -> Output {
    let mut child = common::sketchlog(&[])
        .arg("run")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    // No panic or backtrace, ever.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn recorded(name: &str) -> String {
    std::fs::read_to_string(Path::new("tests/egglog").join(name)).unwrap()
}

fn subset() -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir("tests/egglog")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "egg"))
        .collect();
    files.sort();
    files
}

#[test]
fn sketchlog_run_agrees_with_egglog_on_the_subset_under_each_evaluation_flag() {
    let scratch = Scratch::new("subset");
    let mut checked = 0;
    for egg in subset() {
        let egg = std::fs::canonicalize(egg).unwrap();
        let stem = egg.file_stem().unwrap().to_string_lossy().into_owned();
        let expected_ok = recorded(&format!("{stem}.status")).trim() == "ok";
        for flags in [&[][..], &["-j", "2"], &["--no-decomp"]] {
            // egglog's own output under `-j 2`, where it differs (rows printed in another order).
            let expected_out = match flags {
                ["-j", "2"] => std::fs::read_to_string(egg.with_extension("j2.stdout"))
                    .unwrap_or_else(|_| recorded(&format!("{stem}.stdout"))),
                _ => recorded(&format!("{stem}.stdout")),
            };
            let mut args = flags.to_vec();
            let path = egg.to_string_lossy().into_owned();
            args.push(&path);
            let out = sketchlog_run(&args, &scratch.0, None);
            assert_eq!(
                out.status.success(),
                expected_ok,
                "{stem} {flags:?}: success differs; stderr: {}",
                text(&out.stderr)
            );
            assert_eq!(
                text(&out.stdout),
                expected_out,
                "{stem} {flags:?}: output differs"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "subset too small: {checked}");
}

#[test]
fn to_json_writes_egglogs_json_and_to_dot_its_picture() {
    let scratch = Scratch::new("serialize");
    let egg = scratch.copy(Path::new("tests/egglog/web-demo_eqsat-basic.egg"));
    let out = sketchlog_run(
        &["--to-json", "--to-dot", "web-demo_eqsat-basic.egg"],
        &scratch.0,
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = std::fs::read_to_string(egg.with_extension("json")).unwrap();
    assert_eq!(json, recorded("flags/web-demo_eqsat-basic.json"));
    // egglog's DOT lists the e-classes of a sort in hash-map order: compare the lines.
    let lines = |s: &str| {
        let mut l: Vec<String> = s.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    let dot = std::fs::read_to_string(egg.with_extension("dot")).unwrap();
    assert_eq!(
        lines(&dot),
        lines(&recorded("flags/web-demo_eqsat-basic.dot"))
    );
    // Nothing else is left beside it: every file is written through a temporary and renamed.
    let mut left: Vec<_> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "web-demo_eqsat-basic.dot",
            "web-demo_eqsat-basic.egg",
            "web-demo_eqsat-basic.json"
        ]
    );
}

#[test]
fn desugar_mode_prints_egglogs_desugared_program() {
    let egg = std::fs::canonicalize("tests/egglog/web-demo_eqsat-basic.egg").unwrap();
    let scratch = Scratch::new("desugar");
    let out = sketchlog_run(
        &["--mode", "desugar", &egg.to_string_lossy()],
        &scratch.0,
        None,
    );
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        recorded("flags/web-demo_eqsat-basic.desugar.stdout")
    );
}

#[test]
fn strict_mode_turns_a_global_without_dollar_into_a_located_error() {
    let scratch = Scratch::new("strict");
    let egg = scratch.0.join("globals.egg");
    std::fs::write(&egg, "(datatype M (N i64))\n(let x (N 1))\n(extract x)\n").unwrap();
    let relaxed = sketchlog_run(&["globals.egg"], &scratch.0, None);
    assert!(relaxed.status.success());
    assert_eq!(text(&relaxed.stdout), "(N 1)\n");
    // egglog's warning, printed as egglog's binary prints it.
    assert!(
        text(&relaxed.stderr).contains("[WARN ]"),
        "{}",
        text(&relaxed.stderr)
    );
    let strict = sketchlog_run(&["--strict-mode", "globals.egg"], &scratch.0, None);
    assert_eq!(strict.status.code(), Some(2));
    assert_eq!(text(&strict.stdout), "");
    let err = text(&strict.stderr);
    assert!(
        err.contains("globals.egg:2:1: error:") && err.contains("must start with `$`"),
        "{err}"
    );
}

#[test]
fn the_repl_reads_standard_input_as_egglogs_does() {
    let scratch = Scratch::new("repl");
    let input = recorded("flags/repl.in");
    let out = sketchlog_run(&[], &scratch.0, Some(&input));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), recorded("flags/repl.stdout"));
    // The error is reported and the session goes on.
    assert!(text(&out.stderr).contains("Unbound symbol $undefined"));
    let interactive = sketchlog_run(&["--mode", "interactive"], &scratch.0, Some(&input));
    assert_eq!(
        text(&interactive.stdout),
        recorded("flags/repl.interactive.stdout")
    );
}

#[test]
fn a_rise_egraphs_picture_folds_types_and_sizes_into_labels() {
    let scratch = Scratch::new("rise-picture");
    // The program names `double.rise` relative to itself.
    let egg = scratch.copy(Path::new("programs/double.egg"));
    scratch.copy(Path::new("programs/double.rise"));
    let out = sketchlog_run(&["--to-dot", "--to-json", "double.egg"], &scratch.0, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "nfun n => fun (x : n.f32) => map (fun y => add y y) x\n"
    );
    let dot = std::fs::read_to_string(egg.with_extension("dot")).unwrap();
    for label in [
        "Var 0 : f32",
        "Prim &quot;mul&quot; : f32 -&gt; f32 -&gt; f32",
        "F32 2.0 : f32",
    ] {
        assert!(dot.contains(label), "no `{label}` in\n{dot}");
    }
    assert!(!dot.contains(">TF32<") && !dot.contains(">NVar<"), "{dot}");
    // The JSON is egglog's: every type is an e-node of its own.
    let json = std::fs::read_to_string(egg.with_extension("json")).unwrap();
    assert!(json.contains("\"op\": \"TF32\""));
    // Split as egglog splits it, types and sizes shown as e-nodes.
    let args = [
        "--to-dot",
        "--serialize-split-primitive-outputs",
        "double.egg",
    ];
    let out = sketchlog_run(&args, &scratch.0, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let split = std::fs::read_to_string(scratch.0.join("double-split.dot")).unwrap();
    assert!(split.contains(">TF32<"), "{split}");
}

#[test]
fn sketchlogs_commands_under_proofs_are_a_located_error_naming_the_command() {
    let repo = std::env::current_dir().unwrap();
    for flag in ["--proofs", "--term-encoding", "--proof-testing"] {
        let out = sketchlog_run(&[flag, "programs/double.egg"], &repo, None);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = text(&out.stderr);
        assert!(
            err.contains("programs/double.egg:3:1: error: `rise-load` cannot run with ")
                && err.contains(flag),
            "{flag}: {err}"
        );
        assert_eq!(text(&out.stdout), "");
    }
    // Plain egglog programs run under proofs as under egglog's binary.
    let egg = std::fs::canonicalize("tests/egglog/web-demo_eqsat-basic.egg").unwrap();
    let out = sketchlog_run(&["--proofs", &egg.to_string_lossy()], &repo, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn sketchlogs_commands_run_alike_under_evaluation_flags() {
    let repo = std::env::current_dir().unwrap();
    for program in ["programs/matmul.egg", "programs/sketches.egg"] {
        let plain = sketchlog_run(&[program], &repo, None);
        assert!(plain.status.success(), "{program}: {}", text(&plain.stderr));
        let flagged = sketchlog_run(&["-j", "2", "--no-decomp", "--naive", program], &repo, None);
        assert!(
            flagged.status.success(),
            "{program}: {}",
            text(&flagged.stderr)
        );
        // Timings aside, the same report.
        let steady = |o: &Output| {
            text(&o.stdout)
                .lines()
                .filter(|l| !l.contains("time "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(steady(&plain), steady(&flagged), "{program}");
    }
    // Paths are read from the program's directory, wherever it is run from.
    let elsewhere = Scratch::new("elsewhere");
    let matmul = repo.join("programs/matmul.egg");
    let out = sketchlog_run(&[&matmul.to_string_lossy()], &elsewhere.0, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
