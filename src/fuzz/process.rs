//! The fuzzer's inputs that run the `sketchlog` binary as a user would: command lines with
//! out-of-range numbers, REPL sessions on standard input, and generated low-level programs
//! whose C is compiled, run and checked against the interpreter (`bench-c`).
//!
//! Each runs as a child process with a deadline, so what an in-process run cannot survive is
//! counted instead: an abort (a signal, or Rust's abort code), an internal error (exit 3), a
//! hang (past the binary's deadline, [`DEADLINE`] for a release build), and an exit-2 error
//! that names no place.

use super::{Choose, Rng};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one command of a release build may run before it counts as a hang.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// What became of one input, in-process or through the binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    /// Refused with an error that names its place (exit 2), or a search or check that did
    /// not hold (exit 1) where that is an answer.
    Located,
    /// The failures, each with what was printed.
    Abort(String),
    Internal(String),
    Hang(String),
    Unlocated(String),
    /// The compiled C disagreed with the interpreter.
    Wrong(String),
    /// A command changed a file it read.
    Overwrote(String),
}

/// Command lines: a command with the files it reads, then flags with values at and past the
/// edges of their ranges. Paths a command writes are in the scratch directory.
pub fn flags(rng: &mut Rng, dir: &Path) -> Vec<String> {
    const COMMANDS: &[&[&str]] = &[
        &[
            "check",
            "programs/fission.rise:start",
            "--sketch",
            "programs/fission.sketch:two-maps",
            "--rules",
            "rules/table2.rules:fission",
        ],
        &[
            "check",
            "programs/reduction.rise:start",
            "--goal",
            "programs/reduction.rise:goal",
            "--rules",
            "rules/table2.rules:reduction",
        ],
        &["guide", "programs/fission.guide"],
        &[
            "bench-c",
            "programs/mv.rise:mv",
            "--rounds",
            "1",
            "--runs",
            "1",
        ],
        &["codegen", "programs/mv.rise:mv"],
        &["show", "programs/mv.rise:mv"],
        &["typecheck", "programs/harris.rise"],
        &["rules", "rules/mm.rules:baseline"],
        &["run"],
        &["reproduce", "table4", "--goals", "baseline"],
        &[
            "guide-auto",
            "programs/fission.rise:start",
            "--sketch",
            "programs/fission.sketch:two-maps",
            "--rules",
            "rules/table2.rules",
        ],
    ];
    const FLAGS: &[&str] = &[
        "--iterations",
        "--enodes",
        "--time-s",
        "--memory-mb",
        "--array-depth",
        "--ast-size",
        "--size",
        "--sizes",
        "--threads",
        "-j",
        "--runs",
        "--rounds",
        "--tolerance",
        "--lowering",
        "--sketch-engine",
        "--normal-form",
        "--substitution",
        "--binding",
        "--mode",
        "--report-level",
        "--dump-max-enodes",
        "--explain",
        "--why",
        "--sizes-positive",
        "--term-encoding",
        "--cflags",
        "--workers",
        "--total-time",
        "--max-functions",
        "--serialize-n-inline-leaves",
        "--nope",
    ];
    const VALUES: &[&str] = &[
        "-1",
        "0",
        "1",
        "2",
        "3",
        "7",
        "64",
        "1e3",
        "1e400",
        "-1e400",
        "inf",
        "NaN",
        "0.5",
        "99999",
        "99999999999",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "99999999999999999999",
        "1,2",
        "4,0",
        "",
        "x",
        "scalar",
        "vector",
        "cnf",
        "benf",
        "dataflow",
        "desugar",
        "interactive",
        "-O0",
        "-fno-such-flag",
        // The upper bounds of the numeric flags, and one past each.
        "8",
        "9",
        "256",
        "257",
        "1000",
        "1001",
        "1024",
        "1025",
        "100000",
        "100001",
        "1000000",
        "1000001",
        "10000000000",
        "10000000001",
        "1073741824",
        "1073741825",
        "4294967297",
        "1000000000",
        "1000000001",
    ];
    let mut args: Vec<String> = rng.pick(COMMANDS).iter().map(|s| s.to_string()).collect();
    if args[0] == "reproduce" {
        args.extend(["--dir".into(), dir.join("results").display().to_string()]);
    }
    if args[0] == "run" {
        args.push(
            rng.pick(&["programs/double.egg", "programs/sketches.egg"])
                .to_string(),
        );
    }
    for _ in 0..rng.below(4) {
        args.push(rng.pick(FLAGS).to_string());
        if rng.below(5) > 0 {
            args.push(rng.pick(VALUES).to_string());
        }
    }
    // Outputs go to the scratch directory (`guide-auto` needs one).
    if args[0] == "guide-auto" {
        args.extend([
            "-o".into(),
            dir.join("auto.guide").display().to_string(),
            "--force".into(),
        ]);
    }
    for flag in ["--stats", "--dump-egraph", "-o", "--save-report"] {
        if rng.below(12) == 0 {
            args.push(flag.to_string());
            let name = *rng.pick(&["out.json", "out.dot", "out.csv", "out.c", "out.xyz"]);
            args.push(dir.join(name).display().to_string());
        }
    }
    if rng.below(10) == 0 && args.len() > 1 {
        let drop = 1 + rng.below(args.len() - 1);
        args.remove(drop);
    }
    args
}

/// A REPL session: `.egg` text on standard input, with the flags `run` takes with it.
pub fn repl(rng: &mut Rng, text: String) -> (Vec<String>, String) {
    let mut args = vec!["run".to_string()];
    // Commands that may search for long are only desugared.
    if super::PARSE_ONLY.iter().any(|w| text.contains(w)) {
        args.extend(["--mode", "desugar"].map(String::from));
    } else if rng.below(3) == 0 {
        args.extend(["--mode", "interactive"].map(String::from));
    }
    if rng.below(4) == 0 {
        args.push("--term-encoding".into());
    }
    (args, text)
}

/// A low-level program over a vector (or matrix) of `n`, its parameters drawn at and past
/// the sizes that fit, and the `bench-c` command that compiles, runs and validates it.
pub fn low_level(rng: &mut Rng, dir: &Path, number: u64) -> (Vec<String>, String) {
    const BODIES: &[&str] = &[
        "mapSeq (fun y => add y 1.0) x",
        "mapPar (fun y => mul y y) x",
        "join (mapSeq (mapSeq (fun y => add y 1.0)) (split<{A}> x))",
        "join (mapPar (fun r => mapSeq (fun y => mul y 2.0) r) (split<{A}> x))",
        "mapSeq (reduceSeq add 0.0) (slide<{A}, {B}> x)",
        "mapSeq (reduceSeqUnroll add 0.0) (slide<{A}, {B}> x)",
        "mapSeq (mapSeq (fun y => y)) (transpose (slide<{A}, {B}> x))",
        "mapSeq (fun y => y) (padClamp<{A}, {B}> x)",
        "mapSeq (reduceSeq add 0.0) (slide<3, 1> (padClamp<{A}, {B}> x))",
        "toMem (mapSeq (fun y => add y y) x)",
        "mapSeq (fun p => mul (fst p) (snd p)) (zip x x)",
        "asScalar (mapSeq (fun v => add v v) (asVector<{A}> x))",
        "mapSeq (fun y => y) (take<{A}> x)",
        "mapSeq (fun y => y) (drop<{A}> x)",
        "reduceSeq add 0.0 (mapSeq (fun y => mul y y) x)",
        // Values built by elaboration: compositions, pairs stored between loops.
        "(mapSeq (fun y => y) o mapSeq (fun y => add y 1.0)) x",
        "(mapSeq (fun y => add y 1.0) >> mapSeq (fun y => mul y y)) x",
        "mapSeq (fun p => fst p) ((mapSeq (mapFst (fun y => y))) (zip x x))",
        "mapSeq (fun p => snd p) (toMem (mapSeq (fun y => makePair y y) x))",
        "mapSeq (fun q => fst (mapFst (fun y => add y 1.0) q)) (zip x x)",
    ];
    const MATRIX: &[&str] = &[
        "mapSeq (reduceSeq add 0.0) x",
        "mapPar (mapSeq (fun y => add y 1.0)) (transpose x)",
        "join (mapSeq (mapSeq (reduceSeq add 0.0)) (split<{A}> (mapSeq (slide<3, 1>) x)))",
        "mapSeq (mapSeq (fun y => y)) (slide<{A}, {B}> x)",
        // Reductions chained onto an enclosing one's accumulator (run in it), and one whose
        // input reads that accumulator too (not run in it).
        "reduceSeq (fun acc b => reduceSeq (fun a r => mapSeq (fun p => add (fst p) (snd p)) (zip a r)) acc b) (generate (fun i => 0.0)) (split<{A}> x)",
        "reduceSeq (fun acc b => reduceSeq (fun a r => mapSeq (fun p => add (fst p) (snd p)) (zip a r)) acc (mapSeq (fun z => acc) b)) (generate (fun i => 1.0) : n.f32) (split<{A}> x)",
    ];
    let matrix = rng.below(4) == 0;
    let body = if matrix {
        rng.pick(MATRIX)
    } else {
        rng.pick(BODIES)
    };
    let param = |rng: &mut Rng| {
        rng.pick(&["0", "1", "2", "3", "4", "8", "16", "33"])
            .to_string()
    };
    let body = body.replace("{A}", &param(rng)).replace("{B}", &param(rng));
    let ty = if matrix { "n.n.f32" } else { "n.f32" };
    let text = format!("def f = nfun n => fun (x : {ty}) =>\n  {body}\n");
    let file = dir.join(format!("low-{number}.rise"));
    let size = rng.pick(&["1", "2", "3", "4", "8", "17", "64", "100"]);
    let args = [
        "bench-c",
        &format!("{}:f", file.display()),
        "--size",
        size,
        "--rounds",
        "1",
        "--runs",
        "1",
    ]
    .map(String::from)
    .to_vec();
    (args, text)
}

/// How a run is judged beyond its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judge {
    /// By its exit code alone.
    Exit,
    /// A REPL session, which reports each entry's error and goes on (exit 0): every error
    /// it printed must be located.
    Session,
    /// `bench-c`: an exit of 1 means the program's C disagreed with the interpreter.
    Validated,
}

/// Runs `binary` with `args` (and `stdin`) in `root`, under an inherited address-space limit
/// of `address_space` bytes if given, and judges what it did. Its standard error goes to a
/// file in `scratch` (a pipe left unread would block it), and its standard input is written
/// by a thread of its own (a child that does not read would block us).
pub fn run(
    binary: &super::Binary,
    scratch: &Path,
    (args, stdin): (&[String], &str),
    judge: Judge,
    address_space: Option<u64>,
) -> Outcome {
    use std::os::unix::process::CommandExt;
    let log = scratch.join("stderr.txt");
    let started = std::fs::File::create(&log).and_then(|file| {
        let mut command = Command::new(&binary.path);
        command
            .args(args)
            .current_dir(&binary.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(file);
        if let Some(bytes) = address_space {
            // SAFETY: setrlimit is async-signal-safe and takes plain data.
            unsafe {
                command.pre_exec(move || {
                    let limit = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                        0 => Ok(()),
                        _ => Err(std::io::Error::last_os_error()),
                    }
                });
            }
        }
        command.spawn()
    });
    let mut child = match started {
        Ok(c) => c,
        Err(e) => return Outcome::Abort(format!("could not start {}: {e}", binary.path.display())),
    };
    if let Some(mut input) = child.stdin.take() {
        let text = stdin.to_string();
        // A child that exits before reading all of it closes the pipe: not an error here.
        std::thread::spawn(move || input.write_all(text.as_bytes()));
    }
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > binary.deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::Hang(format!("over {} s", binary.deadline.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Outcome::Abort(format!("waiting: {e}")),
        }
    };
    let stderr = std::fs::read(&log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
    let said = || first.chars().take(300).collect::<String>();
    match status.code() {
        Some(0) if judge == Judge::Session => {
            let unlocated = stderr.lines().find(|l| l.contains("error:") && !located(l));
            match unlocated {
                Some(line) => Outcome::Unlocated(line.chars().take(300).collect()),
                None if first.is_empty() => Outcome::Accepted,
                None => Outcome::Located,
            }
        }
        Some(0) => Outcome::Accepted,
        Some(1) if judge == Judge::Validated => Outcome::Wrong(said()),
        Some(1) => Outcome::Located,
        Some(2) if located(&stderr) => Outcome::Located,
        Some(2) => Outcome::Unlocated(said()),
        Some(3) => Outcome::Internal(said()),
        Some(code) => Outcome::Abort(format!("exit {code}: {}", said())),
        None => Outcome::Abort(format!("killed by a signal: {}", said())),
    }
}

/// Whether an exit-2 error names its place: `file:line:column:` or `file:` before
/// `error:`, the command-line argument it is about, or the line of standard input.
fn located(stderr: &str) -> bool {
    stderr.lines().filter(|l| l.contains("error")).any(|line| {
        let at_file = line
            .split_once(": error:")
            .is_some_and(|(place, _)| !place.is_empty() && !place.contains(' '));
        let at_command_line = line.starts_with("command line:");
        let at_argument = line.starts_with("error: ")
            && [" '-", " '<", " '[", " --", "argument"]
                .iter()
                .any(|a| line.contains(a));
        at_file || at_command_line || at_argument || line.contains("standard input, line")
    })
}

#[cfg(test)]
mod tests {
    use super::located;

    #[test]
    fn an_error_is_located_by_its_file_argument_or_input_line() {
        assert!(located("a.rise:1:2: error: nope"));
        assert!(located("<stdin>:3:1: error: nope"));
        assert!(located(
            "command line:1:40: error: `a.rise` would be written over"
        ));
        assert!(located(
            "error: invalid value 'x' for '--size <SIZE>': not a number"
        ));
        assert!(located("error: --sizes 4: the program takes 2 size(s)"));
        assert!(located(
            "error: a value is required for '<FILES>...' but none was supplied"
        ));
        assert!(located(
            "error: standard input, line 2: stream did not contain valid UTF-8"
        ));
        assert!(!located("error: code generation: expected an array"));
        assert!(!located("error: this e-class contains no finite term"));
    }
}
