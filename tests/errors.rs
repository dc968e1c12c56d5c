//! Bad input gets a located message (`file:line:column`), exit code 2 (1 for a failed
//! check), and never a panic or a backtrace.

use std::process::{Command, Output};

fn sketchlog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlog"))
        .args(args)
        .output()
        .unwrap()
}

/// Writes `text` to a fresh file named `name` and returns its path.
fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sketchlog-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs and checks the exit code and that stderr starts with `path:line:col: error:` and
/// mentions `needle`.
fn expect_error(args: &[&str], code: i32, location: &str, needle: &str) {
    let out = sketchlog(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(
        stderr.starts_with(&format!("{location}: error:")),
        "{args:?}: want {location}, got: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: want {needle:?} in: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
}

#[test]
fn egglog_syntax_error() {
    let f = file(
        "syntax.egg",
        "(datatype Math\n  (Num i64)\n(extract (Num 1)",
    );
    // egglog reports the unclosed form at the end of the input.
    expect_error(&["run", &f], 2, &format!("{f}:3:17"), "parse error");
}

#[test]
fn egglog_type_error() {
    let f = file(
        "types.egg",
        "(datatype Math (Num i64))\n(extract (Num \"one\"))\n",
    );
    expect_error(
        &["run", &f],
        2,
        &format!("{f}:2:15"),
        "to have type i64, but get type String",
    );
}

#[test]
fn failed_check_exits_with_1() {
    let f = file(
        "check.egg",
        "(datatype Math (Num i64))\n(check (= (Num 1) (Num 2)))\n",
    );
    expect_error(&["run", &f], 1, &format!("{f}:2:1"), "Check failed");
}

#[test]
fn rise_syntax_error() {
    let f = file(
        "syntax.rise",
        "def ok = fun (x : f32) => x\ndef bad = fun => x\n",
    );
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:2:15"),
        "expected a parameter",
    );
}

#[test]
fn rise_type_error() {
    let f = file("types.rise", "def bad =\n  add 1 2.0\n");
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:2:9"),
        "expected int, found f32",
    );
}

#[test]
fn rise_size_mismatch() {
    let f = file(
        "sizes.rise",
        "def bad = fun (a : 3.f32) (b : 4.f32) => zip a b\n",
    );
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:1:48"),
        "expected 3.f32, found 4.f32",
    );
}

#[test]
fn unknown_primitive() {
    let f = file(
        "prim.rise",
        "def bad = fun (x : 8.f32) => mapp (fun y => y) x\n",
    );
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:1:30"),
        "unknown identifier `mapp`",
    );
}

#[test]
fn unknown_size_variable() {
    let f = file("natvar.rise", "def bad = fun (x : n.f32) => x\n");
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:1:11"),
        "unknown size variable `n`",
    );
}

#[test]
fn missing_file() {
    expect_error(
        &["typecheck", "no/such/file.rise"],
        2,
        "no/such/file.rise:1:1",
        "cannot read file",
    );
    expect_error(
        &["run", "no/such/file.egg"],
        2,
        "no/such/file.egg:1:1",
        "cannot read file",
    );
}

#[test]
fn rise_error_inside_an_egg_program() {
    let rise = file("inner.rise", "def p = fun (x : f32) => add x 1\n");
    let egg = file("outer.egg", &format!("(rise-load $p \"{rise}\" \"p\")\n"));
    expect_error(
        &["run", &egg],
        2,
        &format!("{rise}:1:32"),
        "expected f32, found int",
    );
}
