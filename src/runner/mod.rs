//! `sketchlog run`: egglog 3.0's own command line, with sketchlog's commands registered.
//!
//! [`EggFlags`] are the flags of egglog's binary, with the same names, defaults and meaning,
//! and [`run`] does what that binary does with them: run each file in one e-graph and print
//! its outputs, write the serialized e-graph beside each file (`--to-json`, `--to-dot`,
//! `--to-svg`), save the run report, or read a REPL from standard input when no file is
//! given. egglog's own entry point (`egglog::cli`) parses the process's arguments itself, so
//! it cannot sit under a `run` subcommand; it is mirrored here instead.
//!
//! What differs, on purpose: errors are reported as `file:line:column: error: ...` with
//! sketchlog's exit codes (2 for bad input, 1 for a failed check, 3 for an internal error;
//! egglog exits 1 for all), and the DOT and SVG pictures of an e-graph holding Rise terms
//! show each term's type and sizes in its label ([`serialize`]).

mod commands;
mod errors;
mod includes;

pub use commands::{sketchlog_egraph, to_sexpr, type_sexpr};
pub use errors::from_egglog;

use crate::egraph::serialize;
use crate::error::{Error, Result};
use crate::source::Source;
use egglog::{CommandOutput, EGraph};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flags of egglog 3.0's binary.
#[derive(clap::Args, Debug, Clone)]
pub struct EggFlags {
    /// Directory for files read by `input` and written by `output`.
    #[arg(short = 'F', long)]
    pub fact_directory: Option<PathBuf>,
    /// Turns off the semi-naive optimisation.
    #[arg(long)]
    pub naive: bool,
    /// Skips tree decomposition during query planning (each query is evaluated as one bag).
    #[arg(long)]
    pub no_decomp: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t = RunMode::Normal)]
    pub mode: RunMode,
    /// Serializes the e-graph after each file as JSON, beside the file.
    #[arg(long)]
    pub to_json: bool,
    /// Serializes the e-graph after each file as a DOT file, beside the file.
    #[arg(long)]
    pub to_dot: bool,
    /// Serializes the e-graph after each file as an SVG (needs Graphviz's `dot`).
    #[arg(long)]
    pub to_svg: bool,
    /// Splits primitive outputs into e-classes of their own (files named `NAME-split.*`).
    #[arg(long)]
    pub serialize_split_primitive_outputs: bool,
    /// Maximum number of functions to serialize.
    #[arg(long, default_value_t = 40, value_parser = crate::limits::serialized)]
    pub max_functions: usize,
    /// Maximum number of calls per function to serialize.
    #[arg(long, default_value_t = 40, value_parser = crate::limits::serialized)]
    pub max_calls_per_function: usize,
    /// Number of times to inline leaves into their parents.
    #[arg(long, default_value_t = 0, value_parser = crate::limits::serialized)]
    pub serialize_n_inline_leaves: usize,
    /// Threads for parallel execution (0: as many as the machine has; at most 1024).
    #[arg(short = 'j', long, default_value_t = 1, value_parser = crate::limits::threads_or_all)]
    pub threads: usize,
    /// How much the run report records: time only, with query plans, or with stage details.
    #[arg(long, value_enum, default_value_t = egglog_reports::ReportLevel::TimeOnly)]
    pub report_level: egglog_reports::ReportLevel,
    /// Writes the overall run report as JSON to this file.
    #[arg(long)]
    pub save_report: Option<PathBuf>,
    /// Treats missing `$` prefixes on globals as errors instead of warnings.
    #[arg(long = "strict-mode")]
    pub strict_mode: bool,
    /// Runs the term encoding of equality saturation.
    #[arg(long)]
    pub term_encoding: bool,
    /// Runs with proof generation.
    #[arg(long)]
    pub proofs: bool,
    /// Turns every `check` into a `prove`.
    #[arg(long)]
    pub proof_testing: bool,
}

/// What a run prints (egglog's `--mode`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// The commands' outputs.
    Normal,
    /// The desugared program, instead of running it.
    #[value(name = "desugar")]
    ShowDesugaredEgglog,
    /// The outputs, then `(done)` or `(error)` after each file or REPL entry.
    Interactive,
    /// Nothing.
    NoMessages,
}

impl EggFlags {
    /// The flags of a plain `egglog FILE` run.
    pub fn plain() -> EggFlags {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Plain {
            #[command(flatten)]
            flags: EggFlags,
        }
        Plain::parse_from(["run"]).flags
    }

    /// The flag that turns on egglog's term encoding, if one is given.
    fn term_encoding(&self) -> Option<&'static str> {
        [
            (self.proofs, "--proofs"),
            (self.proof_testing, "--proof-testing"),
            (self.term_encoding, "--term-encoding"),
        ]
        .into_iter()
        .find_map(|(on, flag)| on.then_some(flag))
    }

    /// The e-graph these flags ask for, with sketchlog's commands registered.
    pub fn egraph(&self) -> EGraph {
        let mut eg = if self.proofs || self.proof_testing {
            EGraph::new_with_proofs()
        } else if self.term_encoding {
            EGraph::new_with_term_encoding()
        } else {
            EGraph::default()
        };
        if self.proof_testing {
            eg = eg.with_proof_testing();
        }
        let mut eg = commands::with_commands(eg);
        eg.set_num_threads(self.threads);
        eg.fact_directory.clone_from(&self.fact_directory);
        eg.seminaive = !self.naive;
        eg.no_decomp = self.no_decomp;
        eg.set_report_level(self.report_level);
        if self.strict_mode {
            eg.set_strict_mode(true);
        }
        eg
    }
}

/// `sketchlog run`: the files in order in one e-graph (the first failure stops the run), or
/// a REPL on standard input when there are none; then the run report, if asked for.
/// egglog's warnings are printed as its binary prints them.
pub fn run(files: &[PathBuf], flags: &EggFlags, out: &mut dyn Write) -> Result<()> {
    StderrLog::install();
    outputs(files, flags).check(files, true)?;
    // The files the programs read as they run are known only then: each output is checked
    // again against them before it is written.
    crate::files::recording(|| run_quietly(files, flags, out)).0
}

/// [`run`] without egglog's warnings (for the fuzzer, which runs thousands of programs).
fn run_quietly(files: &[PathBuf], flags: &EggFlags, out: &mut dyn Write) -> Result<()> {
    let mut eg = flags.egraph();
    if files.is_empty() {
        repl(&mut eg, flags, std::io::stdin().lock(), out)?;
    }
    for file in files {
        let src = crate::files::read_source(file)?;
        let ran = check_input(&mut eg, &src, flags)
            .and_then(|()| run_text(&mut eg, Some(&src.name), &src.text, flags.mode, out));
        if flags.mode == RunMode::Interactive {
            let status = if ran.is_ok() { "(done)" } else { "(error)" };
            writeln!(out, "{status}").map_err(writing)?;
        }
        ran?;
        write_serialized(&eg, file, flags)?;
    }
    if let Some(path) = &flags.save_report {
        let mut report_file = crate::files::Outputs::default();
        report_file.add(path, &path.display().to_string());
        report_file.check(&crate::files::read_so_far(), true)?;
        let report = serde_json::to_vec(eg.get_overall_run_report())
            .map_err(|e| Error::internal(format!("serializing the run report: {e}")))?;
        crate::files::write_atomically(path, &report)?;
    }
    Ok(())
}

/// egglog's warnings (a global without `$`, say) on standard error, as egglog's binary
/// prints them: `[WARN ] message`. `RUST_LOG` set to a level changes the level (default
/// `warn`).
struct StderrLog;

impl StderrLog {
    fn install() {
        let level = std::env::var("RUST_LOG")
            .ok()
            .and_then(|l| l.parse().ok())
            .unwrap_or(log::LevelFilter::Warn);
        // A second install in one process (tests) keeps the first logger.
        if log::set_logger(&StderrLog).is_ok() {
            log::set_max_level(level);
        }
    }
}

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            let message = record.args().to_string().replace('\n', "\n    ");
            eprintln!("[{:<5}] {message}", record.level());
        }
    }
    fn flush(&self) {}
}

/// Runs `.egg` files in one e-graph with egglog's default flags, without its warnings.
pub fn run_files(
    files: &[PathBuf],
    fact_directory: Option<&Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let flags = EggFlags {
        fact_directory: fact_directory.map(Path::to_path_buf),
        ..EggFlags::plain()
    };
    run_quietly(files, &flags, out)
}

/// Runs one `.egg` program given as text (named `name` in its errors) in a fresh e-graph with
/// egglog's default flags, writing its outputs to `out`.
pub fn run_source(name: &str, text: &str, out: &mut dyn Write) -> Result<()> {
    let flags = EggFlags::plain();
    let mut eg = flags.egraph();
    let src = crate::source::Source::new(name, text);
    check_input(&mut eg, &src, &flags)?;
    run_text(&mut eg, Some(&src.name), &src.text, flags.mode, out)
}

/// The files a run writes: the serialized e-graph beside each file (`--to-json`, `--to-dot`,
/// `--to-svg`) and the run report (`--save-report`), each with the flag that asks for it.
pub fn outputs(files: &[PathBuf], flags: &EggFlags) -> crate::files::Outputs {
    let mut outputs = crate::files::Outputs::default();
    for file in files {
        for (path, flag) in serialized(file, flags) {
            outputs.add(path, flag);
        }
    }
    if let Some(path) = &flags.save_report {
        outputs.add(path, &path.display().to_string());
    }
    outputs
}

/// Where the serialized e-graph after running `program` goes, beside it as egglog's binary
/// writes it (`NAME.json`, or `NAME-split.json` with split primitive outputs), with the flag
/// that asks for each.
fn serialized(program: &Path, flags: &EggFlags) -> Vec<(PathBuf, &'static str)> {
    let base = if flags.serialize_split_primitive_outputs {
        let stem = program.file_stem().unwrap_or_default().to_string_lossy();
        program.with_file_name(format!("{stem}-split"))
    } else {
        program.to_path_buf()
    };
    [
        (flags.to_dot, "dot", "--to-dot"),
        (flags.to_svg, "svg", "--to-svg"),
        (flags.to_json, "json", "--to-json"),
    ]
    .into_iter()
    .filter(|(on, _, _)| *on)
    .map(|(_, ext, flag)| (base.with_extension(ext), flag))
    .collect()
}

/// Writes the serialized e-graph after running `program` ([`serialized`]).
fn write_serialized(eg: &EGraph, program: &Path, flags: &EggFlags) -> Result<()> {
    let paths = serialized(program, flags);
    if paths.is_empty() {
        return Ok(());
    }
    let mut outputs = crate::files::Outputs::default();
    for (path, flag) in &paths {
        outputs.add(path, flag);
    }
    outputs.check(&crate::files::read_so_far(), true)?;
    let options = serialize::Options {
        max_functions: flags.max_functions,
        max_calls_per_function: flags.max_calls_per_function,
        split_primitive_outputs: flags.serialize_split_primitive_outputs,
        inline_leaves: flags.serialize_n_inline_leaves,
    };
    let serialization = serialize::Serialization::new(eg, &options);
    if let Some(omitted) = &serialization.omitted {
        eprintln!("warning: {omitted}");
    }
    paths
        .iter()
        .try_for_each(|(path, _)| serialization.write(path))
}

/// The checks every input passes before egglog sees it, from a file or typed into the REPL:
/// its nesting, and under the term encoding, no backslash in a name and no sketchlog
/// command.
fn check_input(eg: &mut EGraph, src: &Arc<Source>, flags: &EggFlags) -> Result<()> {
    match flags.term_encoding() {
        None => crate::limits::check_egg_nesting(src, crate::limits::MAX_EGG_NESTING),
        Some(flag) => {
            crate::limits::check_egg_nesting(src, crate::limits::MAX_TERM_ENCODING_NESTING)?;
            if let Some(at) = crate::limits::egg_backslash(&src.text) {
                return Err(Error::at(
                    &crate::source::Span::new(src, at, at + 1),
                    format!(
                        "a name with a backslash cannot run with {flag}: egglog's term encoding \
                         prints the program it encodes and reads it back, and cannot read such a \
                         name; rename it or run without {flag}"
                    ),
                ));
            }
            refuse_sketchlog_commands(eg, src, flag)
        }
    }
}

/// Fails at the first of sketchlog's commands in `src`: egglog's term encoding (turned on by
/// `flag`) runs no user-defined command, and these could not be encoded anyway, since they
/// write and read the e-graph's tables directly and search with Rust-side substitution.
fn refuse_sketchlog_commands(
    eg: &mut EGraph,
    src: &crate::source::Source,
    flag: &str,
) -> Result<()> {
    let commands = eg
        .parse_program(Some(src.name.clone()), &src.text)
        .map_err(|e| from_egglog(e, &src.name))?;
    for command in commands {
        if let egglog::ast::Command::UserDefined(span, name, _) = command {
            if commands::is_sketchlog_command(&name) {
                return Err(Error {
                    location: errors::span_location(&span, &src.name),
                    ..Error::bad_input(format!(
                        "`{name}` cannot run with {flag}: egglog's term encoding runs no \
                         user-defined command, and sketchlog's commands write the e-graph's tables \
                         directly and rewrite with Rust-side substitution, which no proof \
                         could follow; run without {flag}"
                    ))
                });
            }
        }
    }
    Ok(())
}

/// Runs one program's text (from `file`, or typed into the REPL) and prints its outputs as
/// `mode` asks; in `desugar` mode prints the desugared program instead of running it.
fn run_text(
    eg: &mut EGraph,
    file: Option<&str>,
    text: &str,
    mode: RunMode,
    out: &mut dyn Write,
) -> Result<()> {
    let name = file.unwrap_or("<stdin>");
    includes::check(&crate::source::Source::new(name, text))?;
    // Each output is written as it is formatted, as egglog's binary writes it: one of them
    // can be hundreds of MB, which a string of its own would grow by copying.
    if mode == RunMode::ShowDesugaredEgglog {
        let resolved = eg
            .resolve_program(file.map(str::to_string), text)
            .map_err(|e| from_egglog(e, name))?;
        let commands = egglog::ast::sanitize_internal_names(&resolved);
        return commands
            .iter()
            .try_for_each(|c| writeln!(out, "{c}"))
            .map_err(writing);
    }
    // A panic inside egglog is egglog's error on this input, not sketchlog's: reported as
    // such (exit 3), with the input it ran.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_commands(eg, file, text, name)
    }));
    let outputs: Vec<CommandOutput> = match ran {
        Ok(outputs) => outputs?,
        Err(panic) => {
            return Err(Error {
                kind: crate::error::ErrorKind::Internal,
                location: Some(name.to_string()),
                ..Error::bad_input(format!(
                    "egglog 3.0.0 panicked running this input ({}): a bug in egglog, worth reporting upstream with the input",
                    crate::error::panic_message(&*panic)
                ))
            })
        }
    };
    if mode == RunMode::NoMessages {
        return Ok(());
    }
    outputs
        .iter()
        .try_for_each(|o| write!(out, "{o}"))
        .map_err(writing)
}

/// Parses and runs a program's commands one by one, as egglog would run them all: an error of
/// one of sketchlog's commands that names no place (a usage error, say) is located at the
/// command.
fn run_commands(
    eg: &mut EGraph,
    file: Option<&str>,
    text: &str,
    name: &str,
) -> Result<Vec<CommandOutput>> {
    let commands = eg
        .parse_program(file.map(str::to_string), text)
        .map_err(|e| from_egglog(e, name))?;
    let mut outputs = vec![];
    for command in commands {
        let at = match &command {
            egglog::ast::Command::UserDefined(span, ..) => errors::span_location(span, name),
            _ => None,
        };
        let ran = eg
            .run_program(vec![command])
            .map_err(|e| from_egglog(e, name));
        outputs.extend(ran.map_err(|e| match (&e.location, at) {
            (Some(only_file), Some(at)) if only_file == name => Error {
                location: Some(at),
                ..e
            },
            _ => e,
        })?);
    }
    Ok(outputs)
}

fn writing(e: std::io::Error) -> Error {
    Error::bad_input(format!("writing output: {e}"))
}

/// egglog's REPL: reads lines until they make whole commands, runs them, prints their
/// outputs (errors go to standard error and the REPL goes on). On a terminal it greets and
/// prompts as egglog does.
pub fn repl(
    eg: &mut EGraph,
    flags: &EggFlags,
    input: impl BufRead,
    out: &mut dyn Write,
) -> Result<()> {
    let terminal = std::io::stdin().is_terminal();
    let prompt = |out: &mut dyn Write| -> Result<()> {
        if terminal {
            write!(out, "> ")
                .and_then(|()| out.flush())
                .map_err(writing)?;
        }
        Ok(())
    };
    if terminal {
        writeln!(out, "Welcome to sketchlog's egglog REPL! (egglog 3.0.0)").map_err(writing)?;
    }
    prompt(out)?;
    let mut buffer = String::new();
    let mut first_line = 1;
    for (n, line) in input.split(b'\n').enumerate() {
        let line =
            line.map_err(|e| Error::bad_input(format!("standard input, line {}: {e}", n + 1)))?;
        // A line that is not UTF-8 is reported at its first bad byte and left out; the
        // session goes on.
        let line = match crate::files::utf8("<stdin>", line) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("{}", on_input_line(e, n + 1));
                continue;
            }
        };
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if buffer.is_empty() {
            first_line = n + 1;
        }
        buffer.push_str(line);
        buffer.push('\n');
        if crate::limits::egg_input_complete(&buffer) {
            repl_command(eg, flags, (&std::mem::take(&mut buffer), first_line), out)?;
            prompt(out)?;
        }
    }
    if !buffer.is_empty() {
        repl_command(eg, flags, (&buffer, first_line), out)?;
    }
    Ok(())
}

/// The commands that declare sorts, tables, rule sets or bring in files.
const DECLARATIONS: &[&str] = &[
    "(function",
    "(constructor",
    "(relation",
    "(datatype",
    "(sort",
    "(ruleset",
    "(include",
];

/// Runs one REPL entry, `text` from line `first_line` of standard input: an error is
/// reported (at its line of standard input) and the REPL goes on. An entry passes the checks
/// a file passes.
fn repl_command(
    eg: &mut EGraph,
    flags: &EggFlags,
    (text, first_line): (&str, usize),
    out: &mut dyn Write,
) -> Result<()> {
    let mode = flags.mode;
    // Every entry runs with a copy of the e-graph kept, put back when egglog panics (its
    // tables cannot be trusted after that) or when a declaration fails (it can leave
    // egglog's tables half made, and a later command on them panics inside egglog; a file
    // stops at its first error and never gets there). Other failures keep what the entry did
    // before it failed, as egglog's REPL does.
    let saved = eg.clone();
    let ran = check_input(eg, &Source::new("<stdin>", text), flags)
        .and_then(|()| run_text(eg, None, text, mode, out));
    if let Err(e) = &ran {
        let e = &on_input_line(e.clone(), first_line);
        let declares = DECLARATIONS.iter().any(|d| text.contains(d));
        if declares || e.kind == crate::error::ErrorKind::Internal {
            *eg = saved;
        }
        match e.kind {
            crate::error::ErrorKind::Internal => {
                eprintln!("{e}; the e-graph is as it was before this entry")
            }
            _ => eprintln!("{e}"),
        }
    }
    if mode == RunMode::Interactive {
        let status = if ran.is_ok() { "(done)" } else { "(error)" };
        writeln!(out, "{status}").map_err(writing)?;
        out.flush().map_err(writing)?;
    }
    Ok(())
}

/// An error located in a REPL entry (`<stdin>:L:C`, counted from the entry's first line),
/// located on standard input's own lines instead.
fn on_input_line(mut e: Error, first_line: usize) -> Error {
    let shifted = e.location.as_deref().and_then(|l| {
        let (line, column) = l.strip_prefix("<stdin>:")?.split_once(':')?;
        let line: usize = line.parse().ok()?;
        Some(format!("<stdin>:{}:{column}", line + first_line - 1))
    });
    if let Some(location) = shifted {
        e.location = Some(location);
    }
    e
}
