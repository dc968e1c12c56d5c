//! What a user meets around their own programs: the e-graph of a search written out for a
//! viewer (`--dump-egraph`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

fn sketchlog(args: &[&str]) -> Output {
    let out = common::sketchlog(&[]).args(args).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    out
}

/// [`sketchlog`], which must succeed.
fn sketchlog_ok(args: &[&str]) -> Output {
    let out = sketchlog(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sketchlog-user-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The e-nodes of a serialized e-graph (egglog's JSON), by operator.
fn ops(json: &Path) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["nodes"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n["op"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dump_egraph_writes_each_steps_final_egraph_for_a_viewer() {
    let dir = scratch("dump");
    let json = dir.join("fission.json");
    sketchlog_ok(&[
        "guide",
        "programs/fission.guide",
        "--dump-egraph",
        json.to_str().unwrap(),
    ]);
    let (one, two) = (
        ops(&dir.join("fission.step1.json")),
        ops(&dir.join("fission.step2.json")),
    );
    let count = |ops: &[String], op: &str| ops.iter().filter(|o| *o == op).count();
    // The second step grows its e-graph further than the first (6 iterations against 1).
    assert!(
        count(&two, "App") > count(&one, "App"),
        "{} {}",
        one.len(),
        two.len()
    );
    assert!(count(&one, "Lam") > 0 && count(&one, "TF32") == 1);
    // The program's e-class is the root; it satisfies the step's sketch, and is marked so.
    let two: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fission.step2.json")).unwrap())
            .unwrap();
    let root = two["root_eclasses"][0].as_str().unwrap();
    assert_eq!(
        two["class_data"][root]["sketch"], "satisfied",
        "{}",
        two["class_data"][root]
    );
    let marked = (two["class_data"].as_object().unwrap().values())
        .filter(|d| d["sketch"] == "satisfied")
        .count();
    assert!(marked >= 1 && marked < two["class_data"].as_object().unwrap().len());

    // A cap on e-nodes per constructor, said on standard error.
    let capped = dir.join("capped.dot");
    let out = sketchlog_ok(&[
        "check",
        "programs/fission.rise:start",
        "--sketch",
        "programs/fission.sketch:two-maps",
        "--rules",
        "rules/table2.rules:fission",
        "--dump-egraph",
        capped.to_str().unwrap(),
        "--dump-max-enodes",
        "3",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("at most 3 e-nodes of each constructor"),
        "{err}"
    );
    let dot = std::fs::read_to_string(&capped).unwrap();
    assert!(dot.starts_with("digraph") && dot.contains(" : "), "{dot}");

    // `show` writes the loaded program's e-graph; an unknown format is refused before work.
    let shown = dir.join("start.json");
    let out = sketchlog_ok(&[
        "show",
        "programs/fission.rise:start",
        "--dump-egraph",
        shown.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(ops(&shown).contains(&"NatLam".to_string()));
    let out = sketchlog(&[
        "show",
        "programs/fission.rise:start",
        "--dump-egraph",
        "x.txt",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".json (egglog's format), .dot or .svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_goal_stops_when_the_exact_goal_term_is_reached() {
    let out = sketchlog(&[
        "check",
        "programs/fission.rise:start",
        "--goal",
        "programs/fission.rise:goal",
        "--rules",
        "rules/table2.rules:fission",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("check `goal programs/fission.rise:goal`: found after"),
        "{stdout}"
    );
    // What is printed is the goal, with the program's own parameter names.
    assert!(
        stdout.contains(
            "(w : n.f32) => map (fun x6 => f5 (f4 (f3 x6))) (map (fun x6 => f2 (f1 x6)) w)"
        ),
        "{stdout}"
    );

    // Without the rule that splits maps, the goal is not reached: exit 1.
    let out = sketchlog(&[
        "check",
        "programs/fission.rise:start",
        "--goal",
        "programs/fission.rise:goal",
        "--rules",
        "rules/table2.rules:reduction",
        "--iterations",
        "4",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A goal of another type is refused where it is written.
    let out = sketchlog(&[
        "check",
        "programs/fission.rise:start",
        "--goal",
        "programs/reduction.rise:goal",
        "--rules",
        "rules/table2.rules",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("command line:1:") && err.contains("goal `goal` has type int -> int"),
        "{err}"
    );
}

#[test]
fn a_target_met_by_normalisation_alone_says_so() {
    // The reduction start beta-reduces to its goal: no rewrite is needed.
    let out = sketchlog(&[
        "check",
        "programs/reduction.rise:start",
        "--goal",
        "programs/reduction.rise:goal",
        "--rules",
        "rules/table2.rules",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        stdout.contains(": satisfied by the normalised input, no rewrite needed"),
        "{stdout}"
    );
    assert!(!stdout.contains("e-nodes 0"), "{stdout}");
}

/// `check --why` of a search that does not find its sketch: what it prints.
fn check_why(program: &str, sketch: &str, rules: &str) -> String {
    let out = sketchlog(&[
        "check", program, "--sketch", sketch, "--rules", rules, "--why",
    ]);
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn check_why_says_which_sub_sketches_hold_and_where_the_program_leaves_the_sketch() {
    // Matrix multiplication searched for the tiled `split` sketch with only the baseline's
    // rules: nothing splits the loops, so the sizes never become n/32.
    let why = check_why(
        "programs/matmul.rise:mm",
        "programs/mm.sketch:split",
        "rules/mm.rules:baseline",
    );
    // Every sub-sketch, with the e-classes satisfying it and whether the program does.
    assert!(why.contains("program  e-classes  sub-sketch"), "{why}");
    assert!(why.contains("yes             23"), "{why}");
    // The nearest miss, with its term.
    assert!(
        why.contains("largest sub-sketch the program satisfies (6 of 30 nodes): contains(add(?, contains(mul)))"),
        "{why}"
    );
    assert!(
        why.contains("cheapest such term: nfun m n k => fun (a : m.k.f32)"),
        "{why}"
    );
    // Where it fails, with the program's own size names: the outer map is over m, not m/32.
    assert!(
        why.contains("the term has type (k.f32 -> n.f32) -> m.k.f32 -> m.n.f32, the sketch asks for ? -> (m/32).? -> ?"),
        "{why}"
    );

    // A sketch that asks for an application eta-reduced away says so.
    let why = check_why(
        "programs/fission.rise:start",
        "programs/fission.sketch:two-maps",
        "rules/table2.rules:reduction",
    );
    assert!(why.contains("the program satisfies no sub-sketch"), "{why}");
    assert!(
        why.contains("`map(?)` is there, but not applied to one more argument"),
        "{why}"
    );
    // Variables bound outside a subterm print with their binders' names, the program's own
    // where it has them.
    assert!(
        why.contains("cheapest such subterm: map (fun w => f5 (f4 (f3 (f2 (f1 w)))))"),
        "{why}"
    );
    assert!(!why.contains('%'), "{why}");
}

#[test]
fn printed_programs_keep_their_own_size_and_parameter_names_and_parse_back() {
    let dir = scratch("names");
    let mv = dir.join("mv.rise");
    std::fs::write(
        &mv,
        "def mv = nfun m k => fun (a : m.k.f32) (v : k.f32) =>\n  \
         map (fun row => reduce add 0.0 (map (fun p => mul (fst p) (snd p)) (zip row v))) a\n",
    )
    .unwrap();
    let spec = format!("{}:mv", mv.display());
    let out = sketchlog(&["show", &spec]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed = stdout.lines().last().unwrap().to_string();
    assert!(
        printed.starts_with("nfun m k => fun (a : m.k.f32) (v : k.f32) =>"),
        "{printed}"
    );
    // What is printed parses back to the same typed term, parameter names and all.
    let back = dir.join("back.rise");
    std::fs::write(&back, format!("def mv = {printed}\n")).unwrap();
    let load = |p: &Path| sketchlog::rise::load_def(p, "mv").unwrap();
    assert_eq!(load(&mv), load(&back));
    let out = sketchlog(&["show", &format!("{}:mv", back.display())]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().last().unwrap(),
        printed
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn codegen_of_a_definition_applies_the_last_lowering_as_for_a_guide() {
    // `map (fun x => add x x)` computes, so it is lowered to `mapSeq` before C is emitted (a
    // high-level `map` has no C); the sequential map over 8 floats is then one vector addition.
    let dir = scratch("codegen");
    let c = dir.join("double.c");
    sketchlog_ok(&[
        "codegen",
        "programs/double.rise:double",
        "--sizes",
        "8",
        "-o",
        c.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&c).unwrap();
    assert!(text.contains("&out[0] =") && text.contains(" + "), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `check` of matrix multiplication for `sketch` (`FILE:NAME`) with the baseline rules.
fn check_matmul(sketch: &str) -> Output {
    sketchlog(&[
        "check",
        "programs/matmul.rise:mm",
        "--sketch",
        sketch,
        "--rules",
        "rules/mm.rules:baseline",
        "--iterations",
        "4",
    ])
}

#[test]
fn sketches_tell_literals_and_variables_apart() {
    let dir = scratch("literals");
    let sketches = dir.join("lit.sketch");
    std::fs::write(
        &sketches,
        "sketch zero = contains(reduceSeq(?, 0.0, ?))\n\
         sketch one = contains(reduceSeq(?, 1.0, ?))\n\
         // fun acc p => add acc (mul ..): the accumulator is variable 1 under the inner binder.\n\
         sketch acc = contains(lam(lam(add(var(1), contains(mul)))))\n\
         sketch wrong = contains(lam(lam(add(var(0), contains(mul)))))\n",
    )
    .unwrap();
    let check = |name: &str| {
        check_matmul(&format!("{}:{name}", sketches.display()))
            .status
            .code()
    };
    assert_eq!(check("zero"), Some(0));
    assert_eq!(check("one"), Some(1));
    assert_eq!(check("acc"), Some(0));
    assert_eq!(check("wrong"), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_bad_sketch_leaves_the_rest_of_its_file_usable() {
    let dir = scratch("bad-sketch");
    let file = dir.join("some.sketch");
    std::fs::write(
        &file,
        "sketch good = contains(map)\nsketch bad = contains(map(?, nosuch))\nsketch also = contains(reduce)\n",
    )
    .unwrap();
    let check = |name: &str| check_matmul(&format!("{}:{name}", file.display()));
    assert!(check("good").status.success());
    assert!(check("also").status.success());
    let bad = check("bad");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.starts_with(&format!(
            "{}:2:30: error: unknown sketch `nosuch`",
            file.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn let_binds_functions_and_normalisation_inlines_them() {
    let dir = scratch("let");
    let file = dir.join("let.rise");
    std::fs::write(
        &file,
        "def p = nfun n => fun (xs : n.f32) => let f = fun (y : f32) => add y 1.0 in map f xs\n\
         def goal = nfun n => fun (xs : n.f32) => map (fun y => add y 1.0) xs\n\
         def data = nfun n => fun (xs : n.f32) => let ys = map (fun y => add y 1.0) xs in map (fun z => mul z z) ys\n",
    )
    .unwrap();
    let at = |name: &str| format!("{}:{name}", file.display());
    sketchlog_ok(&["typecheck", file.to_str().unwrap()]);
    // The function is inlined by normalisation alone.
    let out = sketchlog(&[
        "check",
        &at("p"),
        "--goal",
        &at("goal"),
        "--rules",
        "rules/table2.rules:reduction",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("satisfied by the normalised input"),
        "{stdout}"
    );
    // A data `let` stays the primitive (code generation may store what it binds).
    let out = sketchlog(&["show", &at("data")]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("let "));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn explain_prints_each_rewrite_and_ends_at_the_extracted_term() {
    let out = sketchlog_ok(&["guide", "programs/fission.guide", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("rewrite path (1 rewrites")
            && text.contains("1. map-fission at nfun body > fun body x5:")
            && text.contains("map (fun w => f5 (f4 (f3 (f2 (f1 w)))))"),
        "{text}"
    );
    // Each step's path ends at the term the step printed.
    let lines: Vec<&str> = text.lines().collect();
    let terms = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("term (size"));
    let results = lines
        .iter()
        .filter_map(|l| l.trim().strip_prefix("result: "));
    let printed: Vec<&str> = terms.map(|(i, _)| lines[i + 1].trim()).collect();
    assert_eq!(printed.len(), 2);
    assert_eq!(results.collect::<Vec<_>>(), printed);
    let bad = sketchlog(&["guide", "programs/fission.guide", "--explain=0"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A map whose body uses its element in the first of two arguments (`div (reduce add 0.0 nbh)
/// 3.0`, a stencil's mean) is fissioned by `map-fission-first`; `map-fission` alone takes only
/// the last argument and cannot.
#[test]
fn a_map_is_fissioned_on_the_first_argument_of_a_function() {
    let mut rng = common::Rng(7);
    start_reaches_goal_only_with(
        "mean",
        "def start = nfun n => fun (x : n.3.f32) => map (fun nbh => div (reduce add 0.0 nbh) 3.0) x\n\
         def goal = nfun n => fun (x : n.3.f32) =>\n  \
           map (fun s => div s 3.0) (map (fun nbh => reduce add 0.0 nbh) x)\n",
        ("rules/table2.rules:fission-any", "rules/table2.rules:fission"),
        (&[5], sketchlog::rise::interp::Value::matrix(5, 3, &rng.f32s(15))),
    );
}

/// Writes `source`, which defines `start` and `goal`, to a scratch file: `check` reaches
/// `goal` from `start` with the rules `with` and not with `without`, and the two mean the
/// same on `input` at `sizes`.
fn start_reaches_goal_only_with(
    name: &str,
    source: &str,
    (with, without): (&str, &str),
    (sizes, input): (&[i64], sketchlog::rise::interp::Value),
) {
    let dir = scratch(name);
    let rise = dir.join(format!("{name}.rise"));
    std::fs::write(&rise, source).unwrap();
    let (start, goal) = (
        format!("{}:start", rise.display()),
        format!("{}:goal", rise.display()),
    );
    let check = |rules: &str| sketchlog(&["check", &start, "--goal", &goal, "--rules", rules]);
    assert!(check(with).status.success());
    assert_eq!(check(without).status.code(), Some(1));
    let path = rise.to_str().unwrap();
    let out = |name: &str| {
        sketchlog::rise::interp::run(
            &common::def(path, name),
            sizes,
            std::slice::from_ref(&input),
        )
        .and_then(|v| v.flatten_f32())
        .unwrap()
    };
    common::assert_close(&out("start"), &out("goal"), 1e-6);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `stencil.rules`' register rotation of vectors: a row's windows in blocks of 4 are the
/// windows of the last two blocks of the row (padded on the left), rotated along it; the
/// scalar rotation does not reach that form. The two mean the same. Windows longer than a
/// block and one are not rotated (the padding would be a negative size).
#[test]
fn the_blocks_of_a_rows_windows_are_read_from_rotated_vectors() {
    let dir = scratch("rotate-vectors-long");
    let (rise, sketch) = (dir.join("long.rise"), dir.join("long.sketch"));
    let long = "nfun n => fun (x : (4*n+6).f32) => split<4> (slide<7, 1> x)";
    std::fs::write(&rise, format!("def long = {long}\n")).unwrap();
    std::fs::write(&sketch, "sketch rotated = contains(rotateValues)\n").unwrap();
    let check = sketchlog(&[
        "check",
        &format!("{}:long", rise.display()),
        "--sketch",
        &format!("{}:rotated", sketch.display()),
        "--rules",
        "rules/stencil.rules:rotate-vectors<4>",
    ]);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    std::fs::remove_dir_all(&dir).unwrap();

    let mut rng = common::Rng(12);
    start_reaches_goal_only_with(
        "rotate-vectors",
        "def sums = map (map (fun w => reduce add 0.0 w))\n\
         def start = nfun n => fun (x : (4*n+2).f32) => sums (split<4> (slide<3, 1> x))\n\
         def goal = nfun n => fun (x : (4*n+2).f32) =>\n  \
           sums (map (fun v => slide<3, 1> (drop<2> (join v)))\n    \
             (rotateValues<2> (fun y => y) (split<4> (padClamp<2, 0> x))))\n",
        (
            "rules/stencil.rules:rotate-vectors<4>",
            "rules/stencil.rules:rotate-values",
        ),
        (&[3], sketchlog::rise::interp::Value::f32s(&rng.f32s(14))),
    );
}

/// `sketch-of` prints a sketch file's line that `check` reads back and finds the program
/// satisfies as it is.
#[test]
fn sketch_of_prints_a_sketch_the_program_satisfies() {
    let dir = scratch("sketch-of");
    let out = sketchlog_ok(&["sketch-of", "programs/matmul.rise:mm"]);
    let file = dir.join("mm.sketch");
    std::fs::write(&file, &out.stdout).unwrap();
    let spec = format!("{}:mm", file.display());
    let check = sketchlog_ok(&[
        "check",
        "programs/matmul.rise:mm",
        "--sketch",
        &spec,
        "--rules",
        "rules/mm.rules:split",
    ]);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        stdout.contains("satisfied by the normalised input"),
        "{stdout}"
    );
    let missing = sketchlog(&["sketch-of", "programs/matmul.rise:nope"]);
    assert_eq!(missing.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A user's own separable filter, its weights written as an outer product, is separated by
/// `stencil.rules`' rule: per window of three rows, a row of weighted column sums, then three
/// of them weighted. The two mean the same.
#[test]
fn a_filter_whose_weights_are_an_outer_product_is_separated() {
    let mut rng = common::Rng(11);
    start_reaches_goal_only_with(
        "blur",
        "def dot = fun a b => reduce add 0.0 (map (fun p => mul (fst p) (snd p)) (zip a b))\n\
         def outer = fun col row => join (map (fun a => map (fun b => mul a b) row) col)\n\
         def w = makeArray<3> 0.25 0.5 0.25\n\
         def start = nfun n m => fun (x : (n+2).(m+2).f32) =>\n  \
           map (map (fun nbh => dot (outer w w) (join nbh)))\n    \
             (map transpose (slide<3, 1> (map slide<3, 1> x)))\n\
         def goal = nfun n m => fun (x : (n+2).(m+2).f32) =>\n  \
           map (fun rows => map (fun ws => dot w ws) (slide<3, 1> (map (fun c => dot w c) (transpose rows))))\n    \
             (slide<3, 1> x)\n",
        ("rules/stencil.rules:separate-outer-dot", "rules/stencil.rules:rotate-values"),
        (&[5, 7], sketchlog::rise::interp::Value::matrix(7, 9, &rng.f32s(63))),
    );
}
