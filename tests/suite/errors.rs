//! Bad input gets a located message (`file:line:column`), exit code 2 (1 for a failed
//! check), and never a panic or a backtrace.

use crate::common;

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
    let out = common::output(args);
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
        "no/such/file.rise",
        "cannot read:",
    );
    expect_error(
        &["run", "no/such/file.egg"],
        2,
        "no/such/file.egg",
        "cannot read:",
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

// ---- sketch files, guide files, sketch checks ----

fn check_sketch(sketch_file: &str, name: &str) -> Vec<String> {
    [
        "check",
        "programs/matmul.rise:mm",
        "--sketch",
        &format!("{sketch_file}:{name}"),
        "--rules",
        "rules/mm.rules:baseline",
        "--iterations",
        "2",
    ]
    .map(String::from)
    .to_vec()
}

fn expect_sketch_error(text: &str, location: &str, needle: &str) {
    // One file per case: the tests run in parallel.
    let name = format!(
        "bad-{:x}.sketch",
        text.bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31) + b as u64)
    );
    let f = file(&name, text);
    let args = check_sketch(&f, "s");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    expect_error(&args, 2, &format!("{f}:{location}"), needle);
}

#[test]
fn sketch_unknown_abstraction() {
    expect_sketch_error("sketch s = foo(?)", "1:12", "unknown sketch `foo`");
}

#[test]
fn sketch_wrong_argument_count() {
    expect_sketch_error(
        "def c(f) = contains(f)\nsketch s = c(?, ?)",
        "2:15",
        "takes 1 argument",
    );
}

#[test]
fn sketch_size_parameter_used_as_sketch() {
    expect_sketch_error("def c(n: nat) = contains(n)", "1:26", "size parameter");
}

#[test]
fn sketch_reserved_name() {
    expect_sketch_error("def map = ?", "1:5", "reserved");
}

#[test]
fn sketch_syntax_error() {
    expect_sketch_error("sketch s = contains(map", "1:24", "expected `)`");
}

#[test]
fn sketch_size_not_of_the_program() {
    expect_sketch_error(
        "sketch s = contains(map :: ?f -> q.?s -> ?r)",
        "1:28",
        "`q` is not a size parameter",
    );
}

#[test]
fn holes_only_in_sketches() {
    let f = file("hole.rise", "def f = fun (x : ?t) => x");
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:1:18"),
        "belong in sketches",
    );
}

#[test]
fn sketch_not_found_is_a_failed_check() {
    let args = check_sketch("programs/mm.sketch", "split");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::output(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Stopped by its iteration limit: exit code 1, the limit named.
    assert!(
        stderr.contains("sketch `split` not found (iteration-limit)"),
        "{stderr}"
    );
}

fn expect_guide_error(text: &str, location: &str, needle: &str) {
    let dir = std::env::current_dir().unwrap().join("programs");
    let path = dir.join(format!(
        "bad-{}.guide",
        std::process::id() ^ text.len() as u32
    ));
    std::fs::write(&path, text).unwrap();
    let f = path.display().to_string();
    let out = common::output(&["guide", &f]);
    std::fs::remove_file(&path).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("{f}:{location}: error:")) && stderr.contains(needle),
        "want {location} and {needle:?}: {stderr}"
    );
}

const GUIDE_HEAD: &str = "program matmul.rise:mm\nsketches mm.sketch\nrules ../rules/mm.rules\n";

#[test]
fn guide_unknown_setting() {
    expect_guide_error(
        &format!("{GUIDE_HEAD}step baseline\n  rulez baseline\n"),
        "5:3",
        "unknown setting `rulez`",
    );
}

#[test]
fn guide_bad_number() {
    expect_guide_error(
        &format!("{GUIDE_HEAD}limits iterations many\n"),
        "4:19",
        "`many` is not a whole number",
    );
}

#[test]
fn guide_unknown_ruleset() {
    expect_guide_error(
        &format!("{GUIDE_HEAD}step baseline\n  rules nope\n"),
        "5:9",
        "no ruleset or rule named `nope`",
    );
}

#[test]
fn guide_unknown_sketch() {
    expect_guide_error(
        &format!("{GUIDE_HEAD}step nope\n"),
        "4:6",
        "no sketch named `nope`",
    );
}

#[test]
fn guide_without_program() {
    expect_guide_error("sketches mm.sketch\nstep baseline\n", "1:1", "no `program");
}

#[test]
fn an_int_literal_among_floats_is_reported_where_it_is_written() {
    // The lambda's parameter type comes from `xs` (inferred first), so the mismatch is at `1`.
    let src = "def f = nfun n => fun (xs : n.f32) => map (fun y => add y 1) xs\n";
    let f = file("literal.rise", src);
    let col = src.find("1)").unwrap() + 1;
    expect_error(
        &["typecheck", &f],
        2,
        &format!("{f}:1:{col}"),
        "expected f32, found int",
    );
}

#[test]
fn rules_written_lists_the_rule_sets_and_rules_as_in_the_file() {
    let out = common::output(&["rules", "rules/table2.rules:fission", "--written"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ruleset fission = map-fusion map-fission\n\
         rule map-fusion = map f (map g a) => map (fun x => f (g x)) a\n\
         rule map-fission = map (fun x => f gx) => fun y => map f (map (fun x => gx) y) where x notin f\n"
    );
}

/// Every command that writes files refuses, before any work, an output that is one of its
/// inputs or another of its outputs; the input is left byte for byte as it was.
#[test]
fn no_command_writes_over_its_input_or_one_file_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let copy = |from: &str, to: &str| {
        std::fs::copy(from, d.join(to)).unwrap();
        d.join(to).display().to_string()
    };
    let rise = copy("programs/fission.rise", "fission.rise");
    let sketch = copy("programs/fission.sketch", "fission.sketch");
    let mv = copy("programs/mv.rise", "mv.rise");
    // A program of one definition, named without `:NAME`, in a file a dump could be.
    let one_json = copy("programs/double.rise", "one.json");
    let egg = std::fs::canonicalize("programs/double.egg").unwrap();
    let egg = copy(egg.to_str().unwrap(), "double.egg");
    copy("programs/double.rise", "double.rise");
    let guide = d.join("fission.guide").display().to_string();
    let root = std::env::current_dir().unwrap();
    std::fs::write(
        &guide,
        format!(
            "program {rise}:start\nsketches {sketch}\nrules {}\nstep two-maps\n  rules fission\n",
            root.join("rules/table2.rules").display()
        ),
    )
    .unwrap();
    let at = |f: &str| d.join(f).display().to_string();
    let (start, two_maps) = (format!("{rise}:start"), format!("{sketch}:two-maps"));
    let check = [
        "check",
        &start,
        "--sketch",
        &two_maps,
        "--rules",
        "rules/table2.rules:fission",
    ];
    let with = |base: &[&str], more: &[&str]| -> Vec<String> {
        base.iter().chain(more).map(|s| s.to_string()).collect()
    };
    let (json, step1) = (at("x.json"), at("x.step1.json"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            with(&check, &["--stats", &rise]),
            "which this command reads",
        ),
        (
            with(&check, &["--stats", &sketch]),
            "which this command reads",
        ),
        (
            with(&check, &["--stats", &json, "--dump-egraph", &json]),
            "written twice",
        ),
        (
            with(&["guide", &guide], &["--stats", &guide]),
            "which this command reads",
        ),
        (
            with(&["guide", &guide], &["--stats", &sketch]),
            "which this command reads",
        ),
        (
            with(
                &["guide", &guide],
                &["--dump-egraph", &json, "--stats", &step1],
            ),
            "written twice",
        ),
        (
            with(&["codegen", &format!("{mv}:mv")], &["-o", &mv]),
            "which this command reads",
        ),
        (
            with(&["codegen", &guide], &["-o", &rise]),
            "which this command reads",
        ),
        (
            with(&["show", &one_json], &["--dump-egraph", &one_json]),
            "which this command reads",
        ),
        (
            with(&["run", &egg], &["--save-report", &egg]),
            "which this command reads",
        ),
        (
            with(
                &["run", &egg],
                &["--to-json", "--save-report", &at("double.json")],
            ),
            "written twice",
        ),
    ];
    let inputs = [&rise, &sketch, &mv, &one_json, &egg, &guide];
    let before: Vec<Vec<u8>> = inputs.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::output(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.starts_with("command line:1:"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} worked before refusing");
    }
    for (file, bytes) in inputs.iter().zip(&before) {
        assert_eq!(&std::fs::read(file).unwrap(), bytes, "{file} changed");
    }
    assert!(!std::path::Path::new(&json).exists() && !std::path::Path::new(&step1).exists());
}
