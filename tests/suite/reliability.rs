//! No input crashes sketchlog, every error is located, and an interrupted run loses nothing:
//! one regression test per case found by fuzzing, and a short fuzz run.

use crate::common;

use sketchlog::guide::{self, Step};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The unguided blocking search: minutes and gigabytes unless a limit stops it.
const UNGUIDED_BLOCKING: &[&str] = &[
    "check",
    "programs/matmul.rise:mm",
    "--sketch",
    "programs/mm.sketch:reorder1",
    "--rules",
    "rules/mm.rules:split",
    "--rules",
    "rules/mm.rules:reorder",
    "--array-depth",
    "6",
    "--sizes-positive",
];

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sketchlog-rel-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `sketchlog ARGS` with `input` on its standard input: its exit code and standard error.
fn with_stdin(args: &[&str], input: &[u8]) -> (Option<i32>, String) {
    use std::io::Write;
    let mut child = common::sketchlog(args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit code 2, and stderr starts with `location: error:` and mentions `needle`.
fn expect_error(args: &[&str], location: &str, needle: &str) {
    let out = common::output(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.starts_with(location) && stderr.contains(": error: ") && stderr.contains(needle),
        "{args:?}: want `{location}...: error:` and {needle:?}, got: {stderr}"
    );
}

#[test]
fn self_and_forward_references_are_located_errors() {
    let d = scratch("refs");
    let f = write(&d, "self.rise", "def f = f\n");
    expect_error(
        &["typecheck", &f],
        &format!("{f}:1:9"),
        "refers to its own definition",
    );
    let f = write(&d, "add.rise", "def add = fun x => add x 1.0\n");
    expect_error(
        &["typecheck", &f],
        &format!("{f}:1:20"),
        "refers to its own",
    );
    let f = write(
        &d,
        "later.rise",
        "def g = fun x => h x\ndef h = fun y => y\n",
    );
    expect_error(&["typecheck", &f], &format!("{f}:1:18"), "is defined later");
}

#[test]
fn deep_nesting_is_a_located_error_not_a_stack_overflow() {
    let d = scratch("deep");
    let deep = [
        (
            "parens.rise",
            format!("def f = {}1.0{}", "(".repeat(6000), ")".repeat(6000)),
        ),
        (
            "let.rise",
            format!("def f = fun x => {}x", "let y = x in ".repeat(3500)),
        ),
        (
            "fun.rise",
            format!("def f = {}1.0", "fun x => ".repeat(7000)),
        ),
        (
            "app.rise",
            format!("def f = fun x => x{}", " x".repeat(7000)),
        ),
        (
            "type.rise",
            format!("def f = fun (x : {}f32) => x", "1.".repeat(7000)),
        ),
    ];
    for (name, text) in deep {
        let f = write(&d, name, &text);
        let out = common::output(&["typecheck", &f]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.starts_with(&format!("{f}:1:")), "{name}: {stderr}");
        // (A type's nesting error is reported where the type parser gives up.)
        assert!(
            stderr.contains("levels deep") || name == "type.rise",
            "{name}: {stderr}"
        );
    }
    // Definitions inlined into each other nest too.
    let (open, close) = ("(id ".repeat(600), ")".repeat(600));
    let chain = format!("def d0 = fun x => {open}x{close}\ndef d1 = fun x => {open}d0 x{close}\n");
    let f = write(&d, "inline.rise", &chain);
    let out = common::output(&["typecheck", &f]);
    assert_eq!(out.status.code(), Some(2));
    // ... and can double a program at every definition.
    let doubling: String = (0..40)
        .map(|i| match i {
            0 => "def d0 = fun x => id x\n".to_string(),
            _ => format!("def d{i} = fun x => d{} (d{} x)\n", i - 1, i - 1),
        })
        .collect();
    let f = write(&d, "doubling.rise", &doubling);
    expect_error(&["typecheck", &f], &f, "nodes (sketchlog's limit)");
    let sketches = [
        format!("sketch s = {}?{}", "(".repeat(8000), ")".repeat(8000)),
        format!(
            "sketch s = {}?{}",
            "contains(".repeat(6000),
            ")".repeat(6000)
        ),
        format!("sketch s = ?{}", " or ?".repeat(6000)),
    ];
    let program = "programs/fission.rise:start";
    for text in sketches {
        let s = write(&d, "deep.sketch", &text);
        let spec = format!("{s}:s");
        let args = [
            "check",
            program,
            "--sketch",
            &spec,
            "--rules",
            "rules/table2.rules",
        ];
        expect_error(&args, &format!("{s}:1"), "levels deep");
    }
    let rules = format!(
        "rule r = {}map{} => map",
        "(".repeat(6000),
        ")".repeat(6000)
    );
    let r = write(&d, "deep.rules", &rules);
    expect_error(&["rules", &r], &format!("{r}:1"), "levels deep");
}

#[test]
fn deep_egg_programs_run_on_a_large_stack() {
    let d = scratch("egg");
    // 100,000 levels aborted on the main thread's stack before; runs now. (A debug build
    // needs about 8 KB of stack per level, and is slow at this depth: 20,000 there.)
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        100_000
    };
    let text = format!("(let x {}1{})\n", "(+ 1 ".repeat(n), ")".repeat(n));
    let out = common::output(&["run", &write(&d, "deep.egg", &text)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Past the documented limit: a located error before egglog sees it.
    let n = sketchlog::limits::MAX_EGG_NESTING + 1;
    let f = write(&d, "deeper.egg", &"(".repeat(n));
    expect_error(&["run", &f], &format!("{f}:1:{n}"), "levels deep");
}

/// `check` with `flag` set to `bad` is a bad-input error (exit 2) naming the flag.
fn check_refuses(flag: &str, bad: &str) {
    let out = common::output(&[
        "check",
        "programs/fission.rise:start",
        "--sketch",
        "programs/fission.sketch:two-maps",
        "--rules",
        "rules/table2.rules:fission",
        flag,
        bad,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{flag} {bad}: {stderr}");
    assert!(stderr.contains(flag), "{stderr}");
}

#[test]
fn times_and_numbers_are_validated_where_read() {
    let d = scratch("numbers");
    let head = "program ../../../work/x.rise:mm\n";
    for bad in ["-1", "inf", "NaN", "1e400", "99999999999999999999"] {
        let g = write(&d, "t.guide", &format!("limits time {bad}\n{head}"));
        expect_error(&["guide", &g], &format!("{g}:1:13"), "out of range");
        check_refuses("--time-s", bad);
    }
    let g = write(&d, "e.guide", "limits enodes 0\n");
    expect_error(&["guide", &g], &format!("{g}:1:15"), "below the minimum");
    // Counts that size what a command allocates or starts: bounded by what they mean.
    for (args, flag) in [
        (&["run", "-j", "99999"][..], "--threads"),
        (
            &["bench-c", "programs/mv.rise:mv", "--threads", "100000"],
            "--threads",
        ),
        (
            &["bench-c", "programs/mv.rise:mv", "--runs", "999999999999"],
            "--runs",
        ),
        (
            &["bench-c", "programs/mv.rise:mv", "--rounds", "100001"],
            "--rounds",
        ),
    ] {
        let out = common::output(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("above the maximum"),
            "{stderr}"
        );
    }
    // The term-size filter keeps a bucket per size up to its bound: bounded by the largest
    // term sketchlog reads.
    let g = write(&d, "a.guide", "filter ast-size 4294967295\n");
    expect_error(&["guide", &g], &format!("{g}:1:17"), "above the maximum");
    for bad in ["4294967295", "18446744073709551615", "0"] {
        check_refuses("--ast-size", bad);
    }
    let c = write(&d, "w.cost", "app 99999999999\n");
    let g = write(&d, "c.guide", &format!("cost weights {c}\n"));
    expect_error(
        &["guide", &g],
        &format!("{c}:1:1"),
        "whole number from 1 to",
    );
    let out = common::output(&["bench-c", "programs/parallel.guide", "--size", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unknown_names_are_located_and_list_what_exists() {
    let check = |program: &str, sketch: &str, rules: &str| {
        let args = ["check", program, "--sketch", sketch, "--rules", rules];
        let out = common::output(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let line = std::iter::once(env!("CARGO_BIN_EXE_sketchlog"))
            .chain(args)
            .collect::<Vec<_>>()
            .join(" ");
        (stderr, line)
    };
    let at = |line: &str, arg: &str| format!("command line:1:{}", line.find(arg).unwrap() + 1);
    let (p, s, r) = (
        "programs/fission.rise:start",
        "programs/fission.sketch:two-maps",
        "rules/table2.rules:fission",
    );
    let (e, line) = check(p, "programs/fission.sketch:nope", r);
    assert!(
        e.starts_with(&at(&line, "programs/fission.sketch:nope")),
        "{e}"
    );
    assert!(e.contains("no sketch named `nope` (the file has: two-maps, three-after-two)"));
    let (e, line) = check("programs/fission.rise:nope", s, r);
    assert!(
        e.starts_with(&at(&line, "programs/fission.rise:nope")),
        "{e}"
    );
    assert!(e.contains("(the file has: start, goal)"), "{e}");
    let (e, line) = check(p, s, "rules/table2.rules:nope");
    assert!(e.starts_with(&at(&line, "rules/table2.rules:nope")), "{e}");
    assert!(
        e.contains(
            "(the file's rulesets: reduction, fission, fission-any, binomial, separate-hv, separate-vh)"
        ),
        "{e}"
    );
    let (e, _) = check(p, "programs/fission.sketch", r);
    assert!(e.contains("FILE.sketch:NAME"), "{e}");
    // Files that cannot be read: no invented position.
    expect_error(
        &["typecheck", "no/such.rise"],
        "no/such.rise",
        "cannot read:",
    );
    expect_error(&["typecheck", "/"], "/", "cannot read:");
}

#[test]
fn egglog_errors_are_located_from_their_spans() {
    let d = scratch("egglog");
    let f = write(&d, "unbound.egg", "(datatype E (A))\n(check (= (A) (B)))\n");
    expect_error(&["run", &f], &format!("{f}:2:15"), "Unbound function B");
    let f = write(&d, "usage.egg", "(rise-load)\n");
    let out = common::output(&["run", &f]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.starts_with(&f), "{stderr}");
}

#[test]
fn sketch_relation_names_never_collide() {
    // `var` is relation 1 and `app(var, var)` relation 11: egglog names the rule's two `var`
    // atoms r1 and r1+"1", which was relation 11's own name.
    let text = format!(
        "{}var{} or app(var, var)",
        "contains(".repeat(9),
        ")".repeat(9)
    );
    let src = sketchlog::source::Source::new("s.sketch", format!("sketch s = {text}"));
    let file = sketchlog::sketch::parse::parse_sketch_file(&src).unwrap();
    let mut eg = sketchlog::egraph::rise_egraph().unwrap();
    let query = sketchlog::sketch::query::SketchQuery::install(
        &mut eg,
        &file.sketches[0].sketch,
        sketchlog::sketch::query::Engine::Egglog,
    );
    assert!(query.is_ok(), "{}", query.err().unwrap());
}

#[test]
fn the_printed_found_term_satisfies_the_sketch() {
    let d = scratch("found");
    let rules = write(
        &d,
        "eta.rules",
        "rule eta-abstraction = map f => fun x => map f x\nruleset s = eta-abstraction\n",
    );
    let sketch = write(
        &d,
        "eta.sketch",
        "sketch expanded = contains(lam(app(app(map, ?), var)))\n",
    );
    let g = guide::Guide::check(
        "programs/fission.rise:start",
        guide::Target::Sketch(&format!("{sketch}:expanded")),
        (&[format!("{rules}:s")], &Default::default()),
        Step::defaults(),
        &|_| None,
    )
    .unwrap();
    let reports = guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    let r = &reports[0];
    assert!(r.outcome.found());
    let term = r.term.as_ref().unwrap();
    assert!(g.steps[0].sketch.sketch.satisfied_by(term));
    // Its normal form is eta-reduced, so the extracted term is what is printed.
    assert!(!r.normalised);
    assert!(guide::report::summary("check", r, &g.names, None).contains("as extracted"));
}

#[test]
fn outputs_are_checked_before_any_work() {
    let d = scratch("outputs");
    let check = UNGUIDED_BLOCKING;
    let mut args = check.to_vec();
    args.extend(["--stats", "/proc/x.csv"]);
    expect_error(&args, "/proc/x.csv", "cannot write");
    let dir = d.display().to_string();
    let mut args = check.to_vec();
    args.extend(["--stats", &dir]);
    expect_error(&args, &dir, "it is a directory");
    expect_error(
        &["reproduce", "table2", "--dir", "/proc/x"],
        "/proc/x",
        "cannot write",
    );
    expect_error(
        &["codegen", "programs/parallel.guide", "-o", "/proc/x.c"],
        "/proc/x.c",
        "cannot write",
    );
    // None of them ran its search: nothing on standard output, no iteration reported.
    let mut args = check.to_vec();
    args.extend(["--stats", "/proc/x.csv"]);
    let out = common::output(&args);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("iteration"));
    let stray: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// Children of a process (Linux).
fn children(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .map(|t| {
            let t = t.unwrap().path().join("children");
            std::fs::read_to_string(t).unwrap_or_default() + " "
        })
        .collect::<String>()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

fn alive(pid: u32) -> bool {
    // Field 3 of /proc/PID/stat is the state; a zombie (`Z`) has exited.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.split_whitespace().nth(2) != Some("Z"))
}

#[test]
fn a_killed_reproduce_keeps_its_rows_leaves_no_child_and_a_rerun_finishes_the_rest() {
    let d = scratch("kill");
    let out = d.join("table2.csv");
    let reproduce = |out: Stdio| {
        common::sketchlog(&[])
            .args(["reproduce", "table2", "--workers", "1"])
            .args(["--time-s", "10", "--memory-mb", "500"])
            .arg("--dir")
            .arg(&d)
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .unwrap()
    };
    let mut parent = reproduce(Stdio::null());
    // Wait for some finished rows and a running child.
    let start = Instant::now();
    let rows = |p: &Path| std::fs::read_to_string(p).map_or(0, |s| s.lines().count());
    while rows(&out) < 3 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let kids = children(parent.id());
    parent.kill().unwrap(); // SIGKILL
    parent.wait().unwrap();
    let finished = rows(&out) - 1;
    assert!(
        finished >= 2,
        "the CSV holds the header and the finished rows"
    );
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.split(',').count() == sketchlog::experiments::table2::COLUMNS.len()),
        "{csv}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while kids.iter().any(|&k| alive(k)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        kids.iter().all(|&k| !alive(k)),
        "children outlived their parent"
    );
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["machine.txt", "runs.jsonl", "table2.csv"],
        "no stray temporary file"
    );
    // A rerun reuses every finished row and runs the rest: all 12 rows, the first unchanged.
    let rerun = reproduce(Stdio::piped()).wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{said}");
    let reused: usize = said
        .split("12 jobs: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    // The store may hold one more than the CSV: a kill between writing the two.
    assert!(reused == finished || reused == finished + 1, "{said}");
    let all = std::fs::read_to_string(&out).unwrap();
    assert_eq!(all.lines().count(), 1 + 12, "{all}");
    assert!(all.contains(csv.lines().nth(1).unwrap()), "{all}");
}

#[test]
fn a_killed_check_keeps_its_stats() {
    let d = scratch("stats");
    let stats = d.join("stats.csv");
    let mut child = common::sketchlog(&[])
        .args(UNGUIDED_BLOCKING)
        .arg("--stats")
        .arg(&stats)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let rows = |p: &Path| std::fs::read_to_string(p).map_or(0, |s| s.lines().count());
    while rows(&stats) < 3 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let csv = std::fs::read_to_string(&stats).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines.len() >= 3, "{csv}");
    assert!(lines[0].starts_with("step,iteration"));
    for (i, l) in lines[1..].iter().enumerate() {
        assert!(l.starts_with(&format!("1,{},", i + 1)), "{l}");
    }
}

#[test]
fn fuzz_smoke() {
    let worker = std::thread::Builder::new()
        .stack_size(sketchlog::limits::STACK_BYTES)
        .spawn(|| {
            let root = std::env::current_dir().unwrap();
            let corpus = sketchlog::fuzz::Corpus::load(&root).unwrap();
            let dir = scratch("fuzz");
            // The test build is not optimised, and CI machines differ: a hang is a run
            // ten times past the release build's deadline.
            let binary = sketchlog::fuzz::Binary {
                path: env!("CARGO_BIN_EXE_sketchlog").into(),
                root,
                deadline: 10 * sketchlog::fuzz::process::DEADLINE,
            };
            sketchlog::fuzz::run(&corpus, 2, 0..10_000, &dir, &binary, |_| {})
        })
        .unwrap();
    let (counts, failures) = worker.join().unwrap();
    use sketchlog::fuzz::Kind;
    let inputs: u64 = counts.values().map(|c| c.inputs).sum();
    assert_eq!(inputs, 10_000);
    assert_eq!(counts.len(), 14, "every kind of input: {counts:?}");
    // Files naming missing files and files that are not UTF-8 are never accepted.
    let always_refused = [Kind::Missing, Kind::Utf8];
    assert!(
        counts
            .iter()
            .all(|(k, c)| c.located > 0 && (c.accepted > 0) != always_refused.contains(k)),
        "{counts:?}"
    );
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn a_time_limit_stops_a_search_inside_an_iteration() {
    let out = common::output(&[UNGUIDED_BLOCKING, &["--time-s", "1"]].concat());
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("time-limit"), "{text}");
}

#[test]
fn a_row_over_its_memory_cap_is_recorded_as_a_memory_limit() {
    // Fission with explicit substitution and names grows without bound (as in the paper):
    // under a small cap it must be recorded as stopped by memory, not as an error.
    let dir = scratch("memory-cap");
    let out = dir.join("table2.csv");
    let run = common::output(&[
        "reproduce",
        "table2",
        "--dir",
        dir.to_str().unwrap(),
        "--memory-mb",
        "120",
        "--time-s",
        "120",
        "--substitution",
        "explicit",
        "--binding",
        "names",
    ]);
    assert!(run.status.success(), "{run:?}");
    let table = std::fs::read_to_string(&out).unwrap();
    let fission = table.lines().find(|l| l.starts_with("fission,")).unwrap();
    assert!(fission.ends_with(",memory-limit"), "{table}");
    assert!(fission.contains(",false,"), "{table}");
}

/// `.egg` files that include themselves, directly or through each other, are a located
/// error at the include that closes the cycle (egglog expands includes by recursion).
#[test]
fn include_cycles_are_located_errors() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("self.egg"), "(include \"self.egg\")\n").unwrap();
    std::fs::write(
        d.path().join("b.egg"),
        "(datatype M (N i64))\n(include \"c.egg\")\n",
    )
    .unwrap();
    std::fs::write(d.path().join("c.egg"), "; b again\n(include \"b.egg\")\n").unwrap();
    for (file, at) in [("self.egg", "self.egg:1:10:"), ("b.egg", "c.egg:2:10:")] {
        let out = common::sketchlog(&["run", file])
            .current_dir(d.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            stderr.contains(at) && stderr.contains("include cycle"),
            "{stderr}"
        );
    }
    // Including a file twice, without a cycle, still runs.
    std::fs::write(d.path().join("leaf.egg"), "(check (= 1 1))\n").unwrap();
    std::fs::write(
        d.path().join("twice.egg"),
        "(include \"leaf.egg\")\n(include \"leaf.egg\")\n",
    )
    .unwrap();
    let out = common::sketchlog(&["run", "twice.egg"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sketch abstractions that double at every step are refused where they are declared, not
/// expanded until memory runs out.
#[test]
fn self_expanding_sketch_abstractions_are_located_errors() {
    let dir = scratch("expanding");
    let mut text = String::from("def a0(x) = app(x, x)\n");
    for i in 1..40 {
        text.push_str(&format!("def a{i}(x) = a{}(a{}(x))\n", i - 1, i - 1));
    }
    text.push_str("sketch s = a39(?)\n");
    let file = write(&dir, "abs.sketch", &text);
    let sketch = format!("{file}:s");
    expect_error(
        &[
            "check",
            "programs/mv.rise:mv",
            "--sketch",
            &sketch,
            "--rules",
            "rules/mm.rules:baseline",
        ],
        &format!("{file}:5:5"),
        "`a4` expands to more than 100000 nodes",
    );
}

/// Sizes that do not fit the program, or whose arrays exceed the largest buffer, are refused
/// before anything is allocated, naming the argument or the array.
#[test]
fn sizes_that_do_not_fit_are_refused_before_allocating() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["codegen", "programs/mv.rise:mv", "--sizes", "4"],
            "--sizes 4: the program takes 2 size(s)",
        ),
        (
            &["bench-c", "programs/mv.rise:mv", "--size", "4294967296"],
            "holds more than 4294967296 floats",
        ),
        (
            &["bench-c", "programs/mv.rise:mv", "--size", "99999999999"],
            "above the maximum",
        ),
    ];
    for (args, needle) in cases {
        let out = common::output(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// A size multiplied out past the degree limit is refused where it is written, at once.
#[test]
fn huge_size_products_are_refused_where_written() {
    let dir = scratch("flat-product");
    let factors = vec!["n"; 100_000].join("*");
    let file = write(
        &dir,
        "flat.rise",
        &format!("def f = nfun n => fun (x : ({factors}*1).f32) => x\n"),
    );
    expect_error(
        &["typecheck", &file],
        &format!("{file}:1:"),
        "degree above 100",
    );
}

/// Messages that name what the user wrote: an unclosed parenthesis where it was opened, a
/// goal as a goal, and abstraction names with `-` as sketch names have them.
#[test]
fn messages_point_at_what_was_written() {
    let dir = scratch("messages");
    let file = write(
        &dir,
        "unclosed.rise",
        "def f = fun (x : f32) => add (mul x x\n  x\n",
    );
    expect_error(
        &["typecheck", &file],
        &format!("{file}:1:30"),
        "this `(` is never closed",
    );
    let out = common::output(&[
        "check",
        "programs/binomial.rise:start",
        "--goal",
        "programs/binomial.rise:goal",
        "--rules",
        "rules/mm.rules:baseline",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("goal `programs/binomial.rise:goal` not found"),
        "{stderr}"
    );
    let sketches = write(
        &dir,
        "hyphen.sketch",
        "def reduce-seq-in(f) = contains(reduceSeq(?, ?, f))\nsketch s = reduce-seq-in(?)\n",
    );
    let out = common::output(&[
        "check",
        "programs/mv.rise:mv",
        "--sketch",
        &format!("{sketches}:s"),
        "--rules",
        "rules/mm.rules:baseline",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `--dump-egraph` file of no known format is refused as the argument it is, before the
/// search; bytes on standard input that are not UTF-8 are located by line.
#[test]
fn arguments_and_standard_input_are_located() {
    let out = common::output(&[
        "check",
        "programs/mv.rise:mv",
        "--sketch",
        "programs/mv.sketch:sequential",
        "--rules",
        "rules/mm.rules:baseline",
        "--dump-egraph",
        "e.xyz",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'e.xyz' for '--dump-egraph") && stderr.contains(".json"),
        "{stderr}"
    );
    let (code, stderr) = with_stdin(&["run"], b"(datatype E (N i64))\n(let \xff x)\n");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.starts_with("<stdin>:2:6: error: invalid UTF-8"),
        "{stderr}"
    );
}

/// Run-time errors of generated code and of the interpreter point at the primitive whose
/// check failed, where the program wrote it.
#[test]
fn run_time_errors_point_at_the_primitive() {
    let dir = scratch("run-time");
    let slide = write(
        &dir,
        "slide.rise",
        "def f = nfun n => fun (x : n.f32) =>\n  mapSeq (mapSeq (fun y => y)) (transpose (slide<3, 1> x))\n",
    );
    let spec = format!("{slide}:f");
    // The program's result would have -1 rows, at n = 1: located at the body that computes it.
    expect_error(
        &["bench-c", &spec, "--size", "1"],
        &format!("{slide}:2:3"),
        "size 1 - 2 is negative (-1)",
    );
    let program = sketchlog::rise::load_def_ref(&spec, Path::new(".")).unwrap();
    let x = sketchlog::rise::interp::Value::f32s(&[1.0]);
    let e = sketchlog::rise::interp::run(&program.term, &[1], &[x]).unwrap_err();
    let error = sketchlog::error::Error::from(e);
    assert_eq!(error.location, Some(format!("{slide}:2:44")), "{error}");
    assert!(error.message.contains("slide<3, 1>"), "{error}");
}

/// Under egglog's term encoding, a name with a backslash (which egglog reads, but cannot read
/// back from the program its encoding prints, and panics) is a located error, from a file
/// and from standard input; a backslash in a string or a comment is not.
#[test]
fn the_term_encoding_refuses_a_name_it_cannot_read_back() {
    let d = scratch("term-encoding-names");
    let text = "(datatype M (C i64) (A M M))\n(ruleset p)\n(rule ((= e (A x y))) ((subsume (A x y))) :ruleset p\\ )\n";
    let f = write(&d, "names.egg", text);
    for flag in ["--term-encoding", "--proofs"] {
        expect_error(&["run", flag, &f], &format!("{f}:3:53"), "backslash");
        let (_, stderr) = with_stdin(&["run", flag], text.as_bytes());
        assert!(stderr.starts_with("<stdin>:3:53: error: "), "{stderr}");
    }
    let fine = write(
        &d,
        "strings.egg",
        "; a comment with a \\ backslash\n(datatype M (C String))\n(let $c (C \"a\\\\b\"))\n",
    );
    let out = common::output(&["run", "--term-encoding", &fine]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Under egglog's term encoding, whose check of each command is quadratic in its nesting,
/// deep programs are refused at a lower depth, from a file and from standard input alike;
/// sketchlog's commands are refused in the REPL as in a file.
#[test]
fn the_term_encoding_has_its_own_nesting_limit_on_every_input_path() {
    let d = scratch("term-encoding");
    let n = sketchlog::limits::MAX_TERM_ENCODING_NESTING + 1;
    let deep = format!(
        "(datatype E (A) (B E))\n(let $x {}(A){})\n",
        "(B ".repeat(n),
        ")".repeat(n)
    );
    let f = write(&d, "deep.egg", &deep);
    // `(let` is the first level; each `(B ` one more.
    let at = format!(
        "{f}:2:{}",
        9 + 3 * (sketchlog::limits::MAX_TERM_ENCODING_NESTING - 1)
    );
    expect_error(&["run", "--term-encoding", &f], &at, "levels deep");
    for input in [
        deep.as_str(),
        "(rise-load $r \"programs/mv.rise\" \"mv\")\n",
    ] {
        let (_, stderr) = with_stdin(&["run", "--term-encoding"], input.as_bytes());
        assert!(
            stderr.starts_with("<stdin>:") && stderr.contains(": error: "),
            "{stderr}"
        );
        assert!(
            stderr.contains("levels deep") || stderr.contains("cannot run with --term-encoding"),
            "{stderr}"
        );
    }
}

/// The e-node cap holds inside an iteration on a search with user rules whose e-graph grows
/// faster every iteration (the 4D reorder with shine's lambda-form rules: 4.6x, then about
/// 16x): every new e-node a fired match inserts is counted against the room under the cap,
/// within 10%.
#[test]
fn the_enode_cap_holds_on_a_search_growing_ever_faster() {
    for rules in ["reorder", "reorder-benf"] {
        let cap = 100_000;
        let out = common::output(&[
            "check",
            "programs/shine/reorder.rise:reorder4d",
            "--goal",
            "programs/shine/reorder.rise:reorder4d-4321",
            "--rules",
            &format!("rules/shine.rules:{rules}"),
            "--enodes",
            &cap.to_string(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("node-limit"), "{text}");
        let enodes: usize = text
            .split("  e-nodes ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            enodes <= cap * 11 / 10 && enodes > cap / 4,
            "{rules}: {enodes}"
        );
    }
}

/// A declaration that fails in the REPL leaves no half-made table behind: the commands
/// after it get egglog's errors, not a panic inside egglog (which a file, stopping at its
/// first error, never reaches).
#[test]
fn a_failed_declaration_in_the_repl_is_rolled_back() {
    let input = b"(function f (i64) i64 :merge (mijoin n old new))\n(set (f 1) 4)\n";
    let (code, stderr) = with_stdin(&["run"], input);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("<stdin>:1:") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// A size hole inside a size expression (`?w*n`) has nothing to match it by: refused where
/// the sketch is declared, not when its query is built.
#[test]
fn a_size_hole_inside_a_size_is_a_located_error() {
    let dir = scratch("size-hole");
    let file = write(
        &dir,
        "mixed.sketch",
        "sketch s = contains(add(?, ?) :: vec[?t, ?w*n])\n",
    );
    let src = sketchlog::files::read_source(Path::new(&file)).unwrap();
    let decl = sketchlog::sketch::parse::parse_sketch_file(&src)
        .unwrap()
        .get("s")
        .unwrap()
        .clone();
    let e = decl.resolve(&["n".to_string()]).unwrap_err();
    assert_eq!(e.location, Some(format!("{file}:1:1")), "{e}");
    assert!(
        e.message.contains("a size hole stands for a whole size"),
        "{e}"
    );
}

/// A panic inside egglog during a REPL entry is reported as egglog's failure, the e-graph is
/// put back as it was before the entry, and the session goes on.
#[test]
fn the_repl_survives_a_panic_inside_egglog() {
    use sketchlog::runner::{repl, EggFlags};
    /// A command that panics inside egglog's command loop, as an egglog bug would.
    struct Panics;
    impl egglog::UserDefinedCommand for Panics {
        fn update(
            &self,
            _: &mut egglog::EGraph,
            _: &[egglog::ast::Expr],
        ) -> Result<Vec<egglog::CommandOutput>, egglog::Error> {
            panic!("no entry found for key")
        }
    }
    let flags = EggFlags::plain();
    let mut eg = flags.egraph();
    eg.add_command("explode".into(), std::sync::Arc::new(Panics))
        .unwrap();
    let input =
        "(datatype E (A) (B E))\n(let $a (A))\n(union $a (B $a)) (explode)\n(extract (B $a))\n";
    let mut out = vec![];
    repl(&mut eg, &flags, input.as_bytes(), &mut out).unwrap();
    // The entry after the panic ran, and the union before it in the same entry was undone.
    assert_eq!(String::from_utf8(out).unwrap(), "(B (A))\n");
    let undone = eg.parse_and_run_program(None, "(check (= $a (B $a)))");
    assert!(undone.is_err(), "the panicking entry's union was kept");
}

/// Bytes that are not UTF-8, in every kind of file, are reported at their line and column.
#[test]
fn invalid_utf8_in_any_file_is_located_at_its_first_bad_byte() {
    let dir = scratch("utf8");
    let bad = |name: &str, text: &str| {
        let mut bytes = text.as_bytes().to_vec();
        let at = text.find('@').unwrap();
        bytes[at] = 0xFE;
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    let rise = bad(
        "p.rise",
        "def f = nfun n => fun (x : n.f32) =>\n  map (fun y => @ y) x\n",
    );
    expect_error(
        &["typecheck", &rise],
        &format!("{rise}:2:17"),
        "invalid UTF-8",
    );
    let sketch = bad("s.sketch", "sketch s = contains(@)\n");
    let args = [
        "check",
        "programs/mv.rise:mv",
        "--sketch",
        &format!("{sketch}:s"),
        "--rules",
        "rules/mm.rules:baseline",
    ];
    expect_error(&args, &format!("{sketch}:1:21"), "invalid UTF-8");
    let egg = bad("e.egg", "(datatype E (N i64))\n\n   @\n");
    expect_error(&["run", &egg], &format!("{egg}:3:4"), "invalid UTF-8");
    let guide = bad("g.guide", "program p.rise:f\n// @\n");
    expect_error(&["guide", &guide], &format!("{guide}:2:4"), "invalid UTF-8");
}

/// A file named inside another one (a guide, a `.egg` program) that cannot be read is
/// reported at the line that names it.
#[test]
fn a_missing_file_is_reported_where_it_is_named() {
    let dir = scratch("missing");
    let guide = write(&dir, "g.guide", "// a guide\nprogram  missing.rise:f\n");
    expect_error(
        &["guide", &guide],
        &format!("{guide}:2:10"),
        "cannot read `",
    );
    let guide = write(
        &dir,
        "h.guide",
        &format!(
            "program {}/programs/mv.rise:mv\nsketches nowhere.sketch\n",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    expect_error(
        &["guide", &guide],
        &format!("{guide}:2:10"),
        "nowhere.sketch",
    );
    let egg = write(
        &dir,
        "m.egg",
        "(datatype E (N i64))\n(rise-load $p \"gone.rise\" \"f\")\n",
    );
    expect_error(&["run", &egg], &format!("{egg}:2:"), "cannot read `");
    let egg = write(&dir, "n.egg", "(guide \"gone.guide\")\n");
    expect_error(&["run", &egg], &format!("{egg}:1:"), "gone.guide");
}

/// A user's globals, sorts, functions and rule sets named like the Rise schema's: a global
/// named like one of the schema's rule variables cannot clash (they are in the schema's
/// namespace), and a declared name the schema needs is a located error at the Rise command;
/// the e-graph is left as it was and the REPL goes on.
#[test]
fn user_names_never_break_the_rise_schema() {
    let double = format!("{}/programs/double.rise", env!("CARGO_MANIFEST_DIR"));
    let load = format!("(rise-load $r \"{double}\" \"double\")\n(rise-extract $r)\n");
    let schema = sketchlog::egraph::schema_text();
    // Every variable of the schema's rules, as a global.
    let mut globals: Vec<String> = vec![];
    for word in schema.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
        if let Some(v) = word.strip_prefix(sketchlog::egraph::schema::NAMESPACE) {
            for name in [v.to_string(), word.to_string()] {
                if !globals.contains(&name) {
                    globals.push(name);
                }
            }
        }
    }
    assert!(globals.len() > 10, "{globals:?}");
    for name in &globals {
        let program = format!("(let ${name} 1)\n{load}");
        let (code, stderr) = with_stdin(&["run"], program.as_bytes());
        assert_eq!(code, Some(0), "{name}: {stderr}");
        let prefixed = name.starts_with(sketchlog::egraph::schema::NAMESPACE);
        assert_eq!(stderr.contains("error"), prefixed, "{name}: {stderr}");
        if prefixed {
            assert!(
                stderr.contains("<stdin>:2:") && stderr.contains("Rise schema"),
                "{stderr}"
            );
        }
    }
    let names = sketchlog::egraph::schema_names();
    for must in [
        "Expr", "Type", "Nat", "App", "TF32", "NNum", "ty", "free", "nfree",
    ] {
        assert!(names.iter().any(|n| n == must), "{must}: {names:?}");
    }
    for name in &names {
        let declare = format!("(relation {name} (i64))\n");
        let program = format!("{declare}{load}(relation ok (i64))\n(ok 1)\n(print-function ok)\n");
        let (code, stderr) = with_stdin(&["run"], program.as_bytes());
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(!stderr.contains("internal"), "{name}: {stderr}");
        if !stderr.contains(&format!("`{name}`")) {
            // A name egglog itself refuses to declare (a built-in sort's).
            assert!(stderr.starts_with("<stdin>:1:"), "{name}: {stderr}");
        }
        let dir = scratch("schema-names");
        let file = write(&dir, "user.egg", &program);
        let out = common::output(&["run", &file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.starts_with(&format!("{file}:")), "{name}: {err}");
    }
    for ruleset in ["rise-types", "rise-free"] {
        let program = format!("(ruleset {ruleset})\n{load}");
        let (code, stderr) = with_stdin(&["run"], program.as_bytes());
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            stderr.contains("Rise schema") && !stderr.contains("internal"),
            "{stderr}"
        );
    }
}

/// `--workers` is bounded by this host's cores before anything is allocated.
#[test]
fn workers_are_bounded_by_the_host() {
    let out = common::output(&["reproduce", "table5", "--workers", "100000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--workers") && err.contains("per core"),
        "{err}"
    );
}

/// Under an inherited hard limit on the address space (as `prlimit --as` sets), jobs run
/// under it (their caps clamped to it, which is said) instead of failing to start.
#[test]
fn jobs_run_under_an_inherited_address_space_limit() {
    use std::os::unix::process::CommandExt;
    let dir = scratch("rlimit");
    let out_dir = dir.display().to_string();
    let args = [
        "reproduce",
        "table4",
        "--goals",
        "baseline",
        "--dir",
        &out_dir,
    ];
    let mut command = common::sketchlog(&args);
    // SAFETY: setrlimit is async-signal-safe and takes plain data.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = command.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("inherited address-space limit, 4096 MB"),
        "{err}"
    );
    let table = std::fs::read_to_string(dir.join("table4.csv")).unwrap();
    assert!(table.contains("\nbaseline,0,true,"), "{table}");
}

/// A code generation error inside a value built by elaboration (a composition, a pair
/// stored between loops) is located at the written term around it.
#[test]
fn code_generation_errors_are_located_through_built_terms() {
    let dir = scratch("codegen-located");
    let file = write(
        &dir,
        "pairs.rise",
        "def k = nfun n => fun (x : n.f32) =>\n  mapSeq (fun p => fst p) ((mapSeq (mapFst (fun y => y))) (zip x x))\n",
    );
    expect_error(
        &["codegen", &format!("{file}:k"), "--sizes", "8"],
        &format!("{file}:2:3"),
        "storing a value of type (f32, f32)",
    );
}

/// A usage error of one of sketchlog's `.egg` commands is located at the command, in a file
/// and on standard input.
#[test]
fn egg_command_usage_errors_are_located_at_the_command() {
    let dir = scratch("egg-usage");
    let text = "(datatype E (N i64))\n(rise-extract)\n";
    let file = write(&dir, "usage.egg", text);
    expect_error(
        &["run", &file],
        &format!("{file}:2:1"),
        "usage: (rise-extract expr)",
    );
    let (code, stderr) = with_stdin(&["run"], format!("{text}(rise-load)\n").as_bytes());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("<stdin>:2:1: error: usage: (rise-extract"),
        "{stderr}"
    );
    assert!(
        stderr.contains("<stdin>:3:1: error: usage: (rise-load"),
        "{stderr}"
    );
}

/// `guide-auto --total-time` bounds the whole search, however many trials its steps make:
/// no trial runs past it.
#[test]
fn the_automatic_search_stops_at_its_total_time() {
    let dir = scratch("total-time");
    let out = common::output(&[
        "guide-auto",
        "programs/matmul.rise:mm",
        "--sketch",
        "programs/mm.sketch:lower5",
        "--rules",
        "rules/mm.rules",
        "--total-time",
        "0.2",
        "-o",
        &dir.join("f.guide").display().to_string(),
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}{err}");
    assert!(said.contains("at most 0.2 s in all"), "{said}");
    // Between iterations the search reports the budget; inside one, the watchdog stops it.
    assert!(
        err.contains("the total time, 0.2 s, ran out")
            || err.contains("stopped inside an iteration by the time-limit"),
        "{err}"
    );
    assert!(!dir.join("f.guide").exists());
}

/// A guide in the REPL whose search overruns its time limit inside an iteration stops at
/// the iteration's end and is reported as that entry's failure; the session goes on (no
/// watchdog ends the process).
#[test]
fn a_guide_past_its_time_in_the_repl_ends_only_its_entry() {
    use std::io::Write;
    let dir = scratch("repl-guide");
    let root = env!("CARGO_MANIFEST_DIR");
    let guide = write(
        &dir,
        "slow.guide",
        &format!(
            "program  {root}/programs/matmul.rise:mm\nsketches {root}/programs/mm.sketch\n\
             rules    {root}/rules/mm.rules\nlimits   time 0.002\n\
             filter   array-depth 6 ast-size 300 sizes-positive\nstep split\n  rules split\n"
        ),
    );
    let input = format!(
        "(guide \"{guide}\")\n(datatype E (N i64))\n(let $x (N 1))\n(check (= $x (N 1)))\n"
    );
    let mut child = common::sketchlog(&["run", "--mode", "interactive"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{said}{err}");
    assert!(said.ends_with("(done)\n(done)\n(done)\n"), "{said}{err}");
    assert!(!err.contains("stopped inside an iteration"), "{err}");
}
