//! `reproduce harris`: the Harris corner detector (`programs/harris.rise`), its naive
//! lowering and every guided version (`programs/harris-*.guide`), each compiled to OpenMP C,
//! validated against the interpreter and timed beside its scalar lowering and beside the
//! peers, Halide's `apps/harris` schedule and OpenCV's `cornerHarris`
//! (`scripts/harris-peer.py`, installed by `scripts/peers.sh` when missing), on the same
//! input, in interleaved rounds (`results/harris.csv`).

use crate::codegen::measure::Rounds;
use crate::codegen::run::{compile_with_scalar, COptions, Compiled, Expected};
use crate::codegen::target::Isa;
use crate::error::{Error, Result};
use crate::guide::program::read_program;
use crate::rise::term::Term;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The versions: a label and the program (`FILE.rise:NAME` or `FILE.guide`).
const VERSIONS: [(&str, &str); 16] = [
    ("naive", "programs/harris.rise:harris"),
    ("parallel", "programs/harris-parallel.guide"),
    ("strips", "programs/harris-strips.guide"),
    ("fused", "programs/harris-fused.guide"),
    ("separated", "programs/harris-separated.guide"),
    ("line-buffered", "programs/harris-line-buffered.guide"),
    ("rotated", "programs/harris-rotated.guide"),
    (
        "separated-rotated",
        "programs/harris-separated-rotated.guide",
    ),
    (
        "parallel-strategy",
        "programs/harris-parallel-strategy.guide",
    ),
    ("strips-strategy", "programs/harris-strips-strategy.guide"),
    ("fused-strategy", "programs/harris-fused-strategy.guide"),
    (
        "separated-strategy",
        "programs/harris-separated-strategy.guide",
    ),
    (
        "line-buffered-strategy",
        "programs/harris-line-buffered-strategy.guide",
    ),
    (
        "line-buffered-mixed",
        "programs/harris-line-buffered-mixed.guide",
    ),
    ("rotated-strategy", "programs/harris-rotated-strategy.guide"),
    (
        "separated-rotated-strategy",
        "programs/harris-separated-rotated-strategy.guide",
    ),
];

/// Image sizes (height, width): Halide's `apps/harris` estimate (1536 wide, 2560 high), and
/// 4096 x 4096.
pub const SIZES: [(i64, i64); 2] = [(2560, 1536), (4096, 4096)];

pub const COLUMNS: [&str; 12] = [
    "version",
    "threads",
    "width",
    "height",
    "median_ms",
    "min_ms",
    "max_rel_error",
    "scalar_ms",
    "halide_ms",
    "opencv_ms",
    "ratio_vs_halide",
    "ratio_vs_opencv",
];

/// A row of the table: one version at one size on one thread count; the peers' medians
/// over the same rounds, and the peers' time over the version's (above 1: faster than the
/// peer), the median of the rounds' ratios. Peers that did not run are empty cells.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub version: String,
    pub threads: usize,
    pub width: i64,
    pub height: i64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_rel_error: f64,
    pub scalar_ms: f64,
    pub halide_ms: Option<f64>,
    pub opencv_ms: Option<f64>,
    pub ratio_vs_halide: Option<f64>,
    pub ratio_vs_opencv: Option<f64>,
}

impl Row {
    /// Its cells, in the order of [`COLUMNS`].
    pub fn fields(&self) -> Vec<String> {
        let ms = |x: Option<f64>| super::cell(x, |v| format!("{v:.3}"));
        let ratio = |x: Option<f64>| super::cell(x, |v| format!("{v:.2}"));
        vec![
            self.version.clone(),
            self.threads.to_string(),
            self.width.to_string(),
            self.height.to_string(),
            format!("{:.3}", self.median_ms),
            format!("{:.3}", self.min_ms),
            format!("{:.2e}", self.max_rel_error),
            format!("{:.3}", self.scalar_ms),
            ms(self.halide_ms),
            ms(self.opencv_ms),
            ratio(self.ratio_vs_halide),
            ratio(self.ratio_vs_opencv),
        ]
    }
}

/// The files the table depends on.
pub fn inputs() -> Result<Vec<PathBuf>> {
    let specs = VERSIONS.map(|(_, spec)| super::input(spec).display().to_string());
    let mut files = super::codegen::program_inputs(specs.into_iter())?;
    files.push(super::input("scripts/harris-peer.py"));
    Ok(files)
}

/// The child process of `reproduce harris`: every version at every size on 1 and 2
/// threads, 3 to 5 interleaved rounds of 5 timed runs; reports the rows.
pub fn row_main(isa: Isa) -> Result<()> {
    super::codegen::report_rows(rows(&SIZES, &[1, 2], 5, Rounds::up_to(5), isa)?);
    Ok(())
}

/// Runs [`row_main`] in a child process under `caps`; its rows.
pub fn run_child(isa: Isa, caps: crate::cluster::child::ProcessLimits) -> Result<Vec<Row>> {
    super::codegen::rows_child(super::jobs::Work::Harris { isa }, caps, "harris")
}

/// A program's C, compiled in both lowerings, and its error against the interpreter.
struct Timed {
    c: String,
    exe: Compiled,
    scalar: Compiled,
    max_rel_error: f64,
}

/// Every version at each size with each thread count, its C and Halide's for `isa`: per
/// round (of `rounds`, settled by each version's ratios to its scalar lowering and to
/// Halide), each version's runs, its scalar lowering's, then the peers' on the same input. A
/// version whose C is an earlier version's (a strategy that reaches its guide's program) is
/// compiled and timed once: its rows repeat the earlier version's figures.
pub fn rows(
    sizes: &[(i64, i64)],
    threads: &[usize],
    runs: usize,
    rounds: Rounds,
    isa: Isa,
) -> Result<Vec<Row>> {
    let (params, base) = super::codegen::for_isa(isa)?;
    install_peers();
    let mut rows = vec![];
    for &(h, w) in sizes {
        // Each version's label and the index of its program in `timed`.
        let mut versions: Vec<(&str, usize)> = vec![];
        let mut timed: Vec<Timed> = vec![];
        let mut expected = None;
        for (label, spec) in VERSIONS {
            eprintln!("{label} at {w} x {h} ...");
            let spec = super::input(spec).display().to_string();
            let program: Rc<Term> =
                crate::codegen::sequential(&read_program(&spec, params.clone())?.term()?);
            let c = crate::codegen::emit::lowered_c(
                "harris",
                &program,
                &[h, w],
                base.lowering,
                base.target,
            )?
            .c;
            if let Some(k) = timed.iter().position(|t| t.c == c) {
                versions.push((label, k));
                continue;
            }
            let (exe, scalar) = compile_with_scalar(&program, &[h, w], &base)?;
            // The same inputs for every version (a fixed seed), each checked against the
            // meaning of the first, the naive program, interpreted once.
            if expected.is_none() {
                expected = Some(Expected::of(&exe, &program)?);
            }
            let e = expected.as_ref().expect("the first version's meaning");
            let max_rel_error = exe.check_beside(&scalar, e, &base)?.0.max_rel_error;
            versions.push((label, timed.len()));
            timed.push(Timed {
                c,
                exe,
                scalar,
                max_rel_error,
            });
        }
        let expected = expected.expect("a version");
        let image = tempfile::Builder::new()
            .prefix("sketchlog-harris-")
            .tempfile()
            .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let bytes: Vec<u8> = expected.inputs[0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        std::fs::write(image.path(), bytes).map_err(|e| Error::io(image.path(), e))?;
        for &t in threads {
            let opts = COptions {
                threads: t,
                runs,
                ..base.clone()
            };
            let mut peers = Peers::default();
            // Each program's timed runs and its scalar lowering's, over the rounds, and per
            // round the scalar lowering's, Halide's and OpenCV's median time over each
            // program's (the scalar's and Halide's settle the rounds).
            let mut times = vec![(vec![], vec![]); timed.len()];
            let mut ratios: Vec<Vec<f64>> = vec![vec![]; 2 * timed.len()];
            let mut opencv_ratios: Vec<Vec<f64>> = vec![vec![]; timed.len()];
            let mut done = 0;
            while rounds.more(done, &ratios.iter().map(Vec::as_slice).collect::<Vec<_>>()) {
                done += 1;
                let mut medians = vec![];
                for (k, (v, (program, scalar))) in timed.iter().zip(&mut times).enumerate() {
                    let (ours, theirs) = v.exe.time_beside(&v.scalar, &expected, &opts)?;
                    medians.push(super::median(&ours));
                    ratios[2 * k].push(super::median(&theirs) / medians[k]);
                    program.extend(ours);
                    scalar.extend(theirs);
                }
                let before = (peers.halide.len(), peers.opencv.len());
                peers.run(image.path(), (h, w), t, runs, isa);
                let round = |all: &[f64], from: usize| {
                    (all.len() > from).then(|| super::median(&all[from..]))
                };
                for (k, ms) in medians.iter().enumerate() {
                    if let Some(halide) = round(&peers.halide, before.0) {
                        ratios[2 * k + 1].push(halide / ms);
                    }
                    if let Some(opencv) = round(&peers.opencv, before.1) {
                        opencv_ratios[k].push(opencv / ms);
                    }
                }
            }
            if let Some(why) = &peers.unavailable {
                eprintln!("  peers: {why}");
            }
            for &(label, k) in &versions {
                let ((program, scalar), v) = (&times[k], &timed[k]);
                rows.push(Row {
                    version: label.to_string(),
                    threads: t,
                    width: w,
                    height: h,
                    median_ms: super::median(program),
                    min_ms: program.iter().copied().fold(f64::INFINITY, f64::min),
                    max_rel_error: v.max_rel_error,
                    scalar_ms: super::median(scalar),
                    halide_ms: median_of(&peers.halide),
                    opencv_ms: median_of(&peers.opencv),
                    ratio_vs_halide: median_of(&ratios[2 * k + 1]),
                    ratio_vs_opencv: median_of(&opencv_ratios[k]),
                });
                eprintln!(
                    "  {}",
                    rows.last().map(Row::fields).unwrap_or_default().join(",")
                );
            }
        }
    }
    Ok(rows)
}

/// The median of a peer's times or ratios, if it ran.
fn median_of(ratios: &[f64]) -> Option<f64> {
    (!ratios.is_empty()).then(|| super::median(ratios))
}

/// The peers' timed runs, from `scripts/harris-peer.py`, and why one did not run.
#[derive(Default)]
struct Peers {
    halide: Vec<f64>,
    opencv: Vec<f64>,
    unavailable: Option<String>,
    /// The script serving this image size and thread count's rounds (`--serve`): Halide's
    /// pipeline compiled once, not once a round.
    server: Option<PeerServer>,
}

struct PeerServer {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peers {
    /// One round of the peers on the image in `path`, Halide compiled for `isa` and OpenCV
    /// kept from wider kernels. A peer that cannot run (Python or its package missing)
    /// leaves its times empty and says why.
    fn run(&mut self, path: &Path, (h, w): (i64, i64), threads: usize, runs: usize, isa: Isa) {
        use std::io::Write;
        if self.server.is_none() && self.unavailable.is_none() {
            match serve(path, (h, w), threads, isa) {
                Ok(server) => self.server = Some(server),
                Err(e) => self.unavailable = Some(format!("no Python to run the peers ({e})")),
            }
        }
        let Some(server) = self.server.as_mut() else {
            return;
        };
        if let Err(e) = writeln!(server.input, "run {runs}") {
            return self.stopped(format!("the peers stopped ({e})"));
        }
        loop {
            let line = match server.output.next() {
                Some(Ok(line)) if line != "done" => line,
                Some(Ok(_)) => return,
                _ => return self.stopped("the peers stopped before the round's end".into()),
            };
            let mut words = line.split_whitespace();
            let times = match words.next() {
                Some("halide") => &mut self.halide,
                Some("opencv") => &mut self.opencv,
                _ => continue,
            };
            match line.contains("unavailable") {
                true => self.unavailable = Some(line.to_string()),
                false => times.extend(words.filter_map(|w| w.parse::<f64>().ok())),
            }
        }
    }

    /// The serving process is gone: the rounds left run without peers, saying why.
    fn stopped(&mut self, why: String) {
        self.unavailable = Some(why);
        self.server = None;
    }
}

/// `scripts/harris-peer.py --serve` on the image in `path`, its rounds asked for on its
/// standard input.
fn serve(path: &Path, (h, w): (i64, i64), threads: usize, isa: Isa) -> std::io::Result<PeerServer> {
    use std::process::{Command, Stdio};
    let mut command = Command::new(python());
    if let Some(target) = isa.halide_target() {
        command.env("HL_JIT_TARGET", target);
    }
    if let Some(features) = isa.opencv_disabled() {
        command.env("OPENCV_CPU_DISABLE", features);
    }
    let mut child = command
        .arg(super::input("scripts/harris-peer.py"))
        .arg(path)
        .args([h.to_string(), w.to_string()])
        .args(["--threads", &threads.to_string(), "--serve"])
        .env("HL_NUM_THREADS", threads.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let (input, output) = (child.stdin.take(), child.stdout.take());
    let (Some(input), Some(output)) = (input, output) else {
        return Err(std::io::Error::other("no pipes to the peers"));
    };
    let output = std::io::BufRead::lines(std::io::BufReader::new(output));
    Ok(PeerServer {
        child,
        input,
        output,
    })
}

/// Installs the peers if they are missing (`scripts/peers.sh`: Halide and OpenCV from PyPI
/// into `target/peers/venv`; it says what it did, and a failure leaves their columns empty).
fn install_peers() {
    let script = super::input("scripts/peers.sh");
    match std::process::Command::new("bash").arg(&script).output() {
        Ok(out) => eprint!("{}", String::from_utf8_lossy(&out.stdout)),
        Err(e) => eprintln!("peers: could not run {}: {e}", script.display()),
    }
}

/// The Python that runs the peers: the virtual environment `scripts/peers.sh` makes
/// (`target/peers/venv`), else `python3`.
fn python() -> PathBuf {
    let venv = super::input("target/peers/venv/bin/python");
    match venv.exists() {
        true => venv,
        false => "python3".into(),
    }
}
