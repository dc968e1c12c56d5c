//! `codegen` and `bench-c`: a program's C, and the C compiled, checked against the
//! interpreter and timed.

use super::{at_argument, written_by};
use crate::error::Result;
use crate::limits;
use clap::Args;
use std::path::Path;

/// `sketchlog bench-c`'s arguments.
#[derive(Args)]
pub(super) struct BenchCArgs {
    /// `FILE.rise:NAME`, or `FILE.guide` for the program its guide finds.
    program: String,
    /// Every size of the program (a matrix multiplication: m = n = k).
    #[arg(long, default_value_t = 1024, value_parser = limits::positive_size)]
    size: i64,
    /// The program's sizes one by one, outermost first, or by name (`h=2560,w=1536`),
    /// instead of `--size`.
    #[arg(long, value_delimiter = ',', value_parser = limits::size_arg, conflicts_with = "size")]
    sizes: Vec<limits::SizeArg>,
    /// OpenMP thread counts to time (each at most 1024).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = limits::threads)]
    threads: Vec<usize>,
    /// Timed runs per round, after one warm-up run, at most 100,000: fewer for a slow
    /// program (a round of its runs takes about a second, one run at least), more for a fast
    /// one (a round takes 20 ms at least, up to 100 runs).
    #[arg(long, default_value_t = 5, value_parser = limits::runs)]
    runs: usize,
    /// Rounds, interleaved with the reference GEMM's (program, reference, program, ...);
    /// medians over all runs (at most 100,000).
    #[arg(long, default_value_t = 3, value_parser = limits::runs)]
    rounds: usize,
    /// C compiler flags after `-O3`, `CFLAGS` and OpenMP's (default: `--isa`'s `-march`).
    #[arg(long, allow_hyphen_values = true)]
    cflags: Option<String>,
    /// The largest max relative error against the program's meaning; above it, exit 1.
    #[arg(long, default_value_t = 1e-3, value_parser = limits::tolerance)]
    tolerance: f64,
    /// Only check the program (and its scalar lowering) against its meaning, one run at
    /// each thread count, without timing.
    #[arg(long, conflicts_with_all = ["runs", "rounds"])]
    validate: bool,
    /// A command timed beside the program in the same interleaved rounds (your own Halide,
    /// NumPy or OpenCV version): run by `sh -c` once per round, after the program's runs,
    /// with the sizes in `SKETCHLOG_SIZES` (outermost first, comma-separated) and the
    /// thread count in `OMP_NUM_THREADS`. It prints the milliseconds of each run it timed,
    /// one number a line; other lines are ignored.
    #[arg(long, conflicts_with = "validate")]
    peer: Option<String>,
    /// Then, at each thread count, where the program's time goes: its C built again with a
    /// clock around each stored stage (`codegen --stages`), run for a round, and each stage's
    /// milliseconds a run (summed over threads) printed beside that build's own time.
    #[arg(long, conflicts_with = "validate")]
    stages: bool,
    #[command(flatten)]
    remarks: RemarkArgs,
    #[command(flatten)]
    params: super::ParamArgs,
}

/// What to do with the code generator's remarks on a program's cost.
#[derive(Args, Debug, Clone, Copy, Default)]
pub(super) struct RemarkArgs {
    /// Refuse a program the code generator remarks on (accesses that evict each other from
    /// the cache), as `-Werror` refuses warnings: the remarks printed, no C written or run,
    /// exit 1.
    #[arg(long)]
    deny_remarks: bool,
}

impl RemarkArgs {
    /// Prints the code generator's remarks on a program's C, each a note on standard error;
    /// an error if there are any and they are denied.
    fn report(self, remarks: &[String]) -> Result<()> {
        for remark in remarks {
            eprintln!("note: {remark}");
        }
        if self.deny_remarks && !remarks.is_empty() {
            let n = remarks.len();
            return Err(crate::error::Error::check_failed(format!(
                "the code generator remarked on the program's cost {n} time{} \
                 (--deny-remarks refuses it)",
                if n == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }
}

impl BenchCArgs {
    /// Compiles, checks and times the program at each thread count.
    pub(super) fn run(self) -> Result<()> {
        let mut opts = crate::codegen::run::COptions {
            runs: self.runs,
            tolerance: self.tolerance,
            target: self.params.target()?,
            ..Default::default()
        };
        let isa = self.params.isa;
        isa.check_runs_here()
            .map_err(|e| crate::error::Error::bad_input(format!("--isa: {e}")))?;
        opts.flags = match &self.cflags {
            Some(f) => f.split_whitespace().map(String::from).collect(),
            None => vec![isa.cflags().into()],
        };
        bench_c(
            (&self.program, self.params.params()?),
            (self.size, self.sizes),
            &self.threads,
            (!self.validate).then_some(self.rounds),
            (opts, self.peer.as_deref(), self.remarks, self.stages),
        )
    }
}

pub(super) fn codegen(
    (program, params): (&str, crate::rules::Params),
    sizes: Vec<limits::SizeArg>,
    (lowering, target, stages): (
        crate::codegen::emit::Lowering,
        crate::codegen::target::Target,
        bool,
    ),
    (out, remarks): (Option<&Path>, RemarkArgs),
) -> Result<()> {
    let (named, reads) =
        crate::files::recording(|| crate::guide::program::read_program(program, params));
    let named = at_argument(program, named)?;
    if let Some(path) = out {
        written_by(path).check(&reads, true)?;
    }
    let sizes = sizes_named(&sizes, &named)?;
    let names = named.size_names().to_vec();
    let p = crate::codegen::sequential(&at_argument(program, named.term())?);
    let sizes = if sizes.is_empty() {
        crate::codegen::sizes_of(&p, 1024)
    } else {
        sizes
    };
    at_argument("--sizes", crate::codegen::check_sizes(&p, &sizes, &names))?;
    let generated = crate::codegen::emit::lowered_c_staged(
        "rise_program",
        &p,
        &sizes,
        (lowering, target),
        stages,
    )?;
    remarks.report(&generated.remarks)?;
    let c = generated.c;
    match out {
        Some(path) => crate::files::write_atomically(path, c.as_bytes()),
        None => {
            print!("{c}");
            Ok(())
        }
    }
}

/// Compiles, checks and (with `rounds`) times `program` at each thread count.
fn bench_c(
    (program, params): (&str, crate::rules::Params),
    (size, sizes): (i64, Vec<limits::SizeArg>),
    threads: &[usize],
    rounds: Option<usize>,
    (opts, peer, remarks, stages): (
        crate::codegen::run::COptions,
        Option<&str>,
        RemarkArgs,
        bool,
    ),
) -> Result<()> {
    use crate::codegen::run::COptions;
    let named = at_argument(
        program,
        crate::guide::program::read_program(program, params),
    )?;
    let flag = if sizes.is_empty() {
        "--size"
    } else {
        "--sizes"
    };
    let sizes = sizes_named(&sizes, &named)?;
    let names = named.size_names().to_vec();
    let (found, meaning) = at_argument(program, named.term_and_meaning())?;
    let p = crate::codegen::sequential(&found);
    let sizes = if sizes.is_empty() {
        crate::codegen::sizes_of(&p, size)
    } else {
        sizes
    };
    at_argument(flag, crate::codegen::check_sizes(&p, &sizes, &names))?;
    let (exe, scalar, expected) =
        crate::codegen::measure::compile_both(&p, &meaning, &sizes, &opts)?;
    let (inputs, output) = exe.shapes();
    let floats: i64 = inputs
        .iter()
        .chain([&output.to_vec()])
        .map(|s| s.iter().product::<i64>())
        .sum();
    println!(
        "{program} at sizes {sizes:?}: {:.4e} arithmetic operations, {:.1} MB of inputs and output per run",
        exe.flops,
        4.0 * floats as f64 / 1e6
    );
    remarks.report(&exe.remarks)?;
    let staged = stages
        .then(|| {
            let opts = COptions {
                stages: true,
                ..opts.clone()
            };
            crate::codegen::run::compile(&p, &sizes, &opts)
        })
        .transpose()?;
    for &t in threads {
        let opts = COptions {
            threads: t,
            ..opts.clone()
        };
        let Some(rounds) = rounds else {
            validate(&exe, &scalar, &expected, &opts)?;
            continue;
        };
        let mut round = || peer_round(peer.unwrap_or_default(), &sizes, t);
        let beside = peer
            .is_some()
            .then_some(&mut round as crate::codegen::measure::Peer);
        let m = crate::codegen::measure::measure_beside(
            &exe,
            Some(&scalar),
            &expected,
            &opts,
            crate::codegen::measure::Rounds::exactly(rounds),
            beside,
        )?;
        report_measured(&m, &exe, t, rounds, peer);
        if let Some(staged) = &staged {
            report_stages(staged, &expected, &opts)?;
        }
    }
    Ok(())
}

/// Runs the build of the program that times its stages for a round ([`COptions::stages`]) and
/// prints each stage's time a run beside that build's own.
fn report_stages(
    staged: &crate::codegen::run::Compiled,
    expected: &crate::codegen::run::Expected,
    opts: &crate::codegen::run::COptions,
) -> Result<()> {
    let opts = crate::codegen::run::COptions {
        round: Some(crate::codegen::measure::ROUND),
        ..opts.clone()
    };
    let times = staged.time(expected, &opts)?;
    let median = crate::codegen::measure::median(&times);
    let stages = staged.stage_times()?;
    // The threads' time a run: each stage's share of it.
    let threads_ms = median * opts.threads as f64;
    println!(
        "    stages (this C with a clock around each stored stage, {} runs: median {median:.3} ms a run; each stage's ms a run summed over the threads, and its share of {} x that median):",
        times.len(),
        opts.threads
    );
    let mut outside = threads_ms;
    // A stage whose loops never ran (a branch for sizes other than these) is left out.
    for s in stages.iter().filter(|s| s.runs_per_call > 0.0) {
        if s.stage.depth == 0 {
            outside -= s.ms_per_call;
        }
        println!(
            "      {}{} ({}): {:.3} ms, {:.1}%, its loops run {} a run",
            "  ".repeat(s.stage.depth),
            s.stage.buffer,
            s.stage.ty,
            s.ms_per_call,
            100.0 * s.ms_per_call / threads_ms,
            match s.runs_per_call.round() as u64 {
                1 => "once".to_string(),
                n => format!("{n} times"),
            }
        );
    }
    let outside = outside.max(0.0);
    println!(
        "      outside the stages: {outside:.3} ms, {:.1}%",
        100.0 * outside / threads_ms
    );
    Ok(())
}

/// Prints what `bench-c` measured at `t` threads.
fn report_measured(
    m: &crate::codegen::measure::Measured,
    exe: &crate::codegen::run::Compiled,
    t: usize,
    rounds: usize,
    peer: Option<&str>,
) {
    let compared = compared(&m.check);
    println!(
        "  {t} thread(s): median {:.3} ms (min {:.3}, {} runs in {rounds} rounds), {:.1} GFLOP/s, {:.1} GB/s; max relative error {:.2e} over {compared}",
        m.median_ms(),
        m.min_ms(),
        m.times_ms.len(),
        m.gflops,
        m.gbytes,
        m.check.max_rel_error,
    );
    if let Some(scalar_ms) = m.scalar_median_ms() {
        println!(
            "    scalar lowering (plain loops, no vector types), in turn in one process: median {scalar_ms:.3} ms; this program at {:.2}x its speed",
            scalar_ms / m.median_ms()
        );
    }
    if let (Some((ms, ratio)), Some(command)) = (m.peer(), peer) {
        println!(
            "    peer `{command}`, interleaved: median {ms:.3} ms; this program at {ratio:.2}x its speed"
        );
    }
    if let Some((gflops, ratio)) = m.reference(exe) {
        println!(
            "    reference GEMM (gemm crate) on the same inputs, interleaved: {gflops:.1} GFLOP/s; this program at {ratio:.2}x the reference"
        );
    }
}

/// One round of `bench-c --peer`: the command run at `sizes` on `threads` threads, and the
/// times it printed. A failure, or no time printed, is an error at the flag.
fn peer_round(command: &str, sizes: &[i64], threads: usize) -> Result<Vec<f64>> {
    let sizes: Vec<String> = sizes.iter().map(i64::to_string).collect();
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .env("SKETCHLOG_SIZES", sizes.join(","))
        .env("OMP_NUM_THREADS", threads.to_string())
        .stderr(std::process::Stdio::inherit())
        .output();
    let failed = |why: String| at_argument("--peer", Err(crate::error::Error::bad_input(why)));
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => return failed(format!("the peer `{command}` failed ({})", out.status)),
        Err(e) => return failed(format!("the peer `{command}` did not run: {e}")),
    };
    let times: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    match times.is_empty() {
        true => failed(format!(
            "the peer `{command}` printed no time (milliseconds of a run, one number a line)"
        )),
        false => Ok(times),
    }
}

/// The output elements a check compared, in words.
fn compared(v: &crate::codegen::run::Validation) -> String {
    match v.compared == v.output.len() {
        true => format!("all {} output elements", v.compared),
        false => format!("{} sampled output elements", v.compared),
    }
}

/// `bench-c --validate` at one thread count: the program and its scalar lowering checked
/// against the program's meaning, one run each.
fn validate(
    exe: &crate::codegen::run::Compiled,
    scalar: &crate::codegen::run::Compiled,
    expected: &crate::codegen::run::Expected,
    opts: &crate::codegen::run::COptions,
) -> Result<()> {
    let v = crate::codegen::measure::check_once(exe, Some(scalar), expected, opts)?;
    println!(
        "  {} thread(s): valid, max relative error {:.2e} over {} (the scalar lowering too)",
        opts.threads,
        v.max_rel_error,
        compared(&v)
    );
    Ok(())
}

/// `--sizes` resolved against the program's size names, located at the flag when wrong.
fn sizes_named(
    sizes: &[limits::SizeArg],
    named: &crate::guide::program::Named,
) -> Result<Vec<i64>> {
    let resolved = limits::resolve_sizes(sizes, named.size_names());
    at_argument("--sizes", resolved.map_err(crate::error::Error::bad_input))
}
