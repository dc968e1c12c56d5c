//! The `sketchlog` command line.
//!
//! Exit codes: 0 success, 1 a `check` that failed, 2 bad input (syntax, types, unknown
//! names, missing files), 3 an internal error. Errors print as `file:line:column: error: ...`.

mod c_code;
mod check;
mod guides;
mod jobs;
mod rewrite;

use crate::codegen::target::Isa;
use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::egraph::serialize::Dump;
use crate::egraph::{self, encode, extract};
use crate::error::Result;
use crate::files::Outputs;
use crate::guide;
use crate::limits;
use crate::rise::{self, debruijn, infer, print};
use crate::rules::Params;
use c_code::BenchCArgs;
use check::CheckArgs;
use clap::{Parser, Subcommand};
use guides::{AutoArgs, GuideArgs};
use jobs::{JobArgs, ReproduceArgs};
use rewrite::RewriteArgs;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "sketchlog",
    version,
    about = "Sketch-guided equality saturation over Rise, on egglog"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run egglog programs (`.egg`) with sketchlog's commands registered: egglog 3.0's own
    /// command line (same flags); a REPL on standard input when no file is given.
    #[command(version = concat!(env!("CARGO_PKG_VERSION"), " (egglog 3.0.0)"))]
    Run {
        /// Files to run, in order, in one e-graph.
        files: Vec<PathBuf>,
        #[command(flatten)]
        flags: crate::runner::EggFlags,
    },
    /// Print the inferred type of every definition in a `.rise` file.
    Typecheck {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Reproduce tables and figures of the paper as CSV (and SVG) files in `results/`.
    ///
    /// Every row is a job, run in a child process under its caps by one of the workers;
    /// finished jobs are kept in `DIR/runs.jsonl` with a key of what determines them, and a
    /// rerun runs only the jobs that are missing or whose inputs changed.
    Reproduce(ReproduceArgs),
    /// Benchmarks. `table2`: the efficient encoding on Table 2's goals, medians of several
    /// runs. `scale`: Table 3's unguided blocking search until found or at `--enodes`,
    /// printing per iteration (CSV) the rewrite step's and the check's times, microseconds
    /// per new e-node and resident bytes per e-node.
    Bench {
        /// Which benchmark.
        #[arg(value_enum)]
        table: Benchmark,
        /// table2: runs per goal.
        #[arg(long, default_value_t = 5, value_parser = limits::runs)]
        runs: usize,
        /// scale: stop at this many e-nodes (the iteration that would pass them is cut).
        #[arg(long, default_value_t = 2_000_000, value_parser = limits::enodes)]
        enodes: usize,
        /// scale: time limit in seconds.
        #[arg(long, default_value = "600", value_parser = limits::parse_seconds)]
        time_s: Duration,
        /// scale: how the sketch query is evaluated.
        #[arg(long, value_enum, default_value_t)]
        sketch_engine: crate::sketch::query::Engine,
    },
    /// Run a guide over a grid of parameters (`FILE.sweep`: templates with `{NAME}`
    /// placeholders, each point instantiated, searched and optionally timed as C); one CSV
    /// row per point in `DIR/NAME.csv`, the best point printed. Points are jobs, as for
    /// `reproduce`: spread over workers or machines, kept and reused.
    Sweep {
        file: PathBuf,
        #[command(flatten)]
        jobs: JobArgs,
    },
    /// The command-line reference in Markdown, generated from these definitions
    /// (`docs/src/cli.md`).
    #[command(hide = true)]
    CliReference,
    /// A job of `reproduce` or `sweep` in a child process: its work and caps as JSON; reports
    /// as JSON lines.
    #[command(hide = true)]
    Job { work: String },
    /// Print (or write) the OpenMP C of a low-level program at given sizes, with the generator's
    /// remarks on its cost (accesses that evict each other from the cache) as notes on standard error.
    Codegen {
        /// `FILE.rise:NAME`, or `FILE.guide` for the program its guide finds.
        program: String,
        /// The program's sizes, outermost first, or by name (`h=2560,w=1536`); default: every
        /// size 1024.
        #[arg(long, value_delimiter = ',', value_parser = limits::size_arg)]
        sizes: Vec<limits::SizeArg>,
        /// `scalar`: the same loops without vector types or streaming stores (what `bench-c`
        /// times beside the program).
        #[arg(long, value_enum, default_value = "vector")]
        lowering: crate::codegen::emit::Lowering,
        /// A clock around each stored stage (a buffer of 1024 floats or more), the times
        /// written to the file `RISE_STAGES` names when the process exits (what `bench-c
        /// --stages` reports).
        #[arg(long)]
        stages: bool,
        #[arg(short, long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        remarks: c_code::RemarkArgs,
        #[command(flatten)]
        params: ParamArgs,
    },
    /// Compile a program's C, check it against the interpreter (a guide's: against the
    /// program the guide starts from) and time it.
    BenchC(BenchCArgs),
    /// Search for a program satisfying a sketch: normalise, grow an e-graph with the rules
    /// until the sketch is satisfied or a limit is hit, extract. Exit 1 if not found.
    Check(CheckArgs),
    /// Run a guide (`.guide`): a sequence of sketch-satisfying searches. Exit 1 if a step
    /// does not find its sketch.
    Guide(GuideArgs),
    /// Find a guide for a program from its final sketch or goal alone and write it (`-o`):
    /// checkpoints derived from the target (a sketch relaxed towards the program, a goal with
    /// its conjugating stages peeled), the rules of each step chosen among the rule sets
    /// given, alone, in pairs, then all, at growing e-node caps. Exit 1 (nothing written) if
    /// the target is not reached.
    GuideAuto(AutoArgs),
    /// Rewrite a program with a strategy (`.elevate`): Elevate's combinators and
    /// traversals, the rules of `.rules` files, and guided searches. Prints the result, the
    /// rewrite steps (every success, as Elevate counts them) and rule applications, the time
    /// and the peak memory. Exit 1 if the strategy fails (saying where) or a limit stops it.
    Rewrite(RewriteArgs),
    /// Serve the studio: a local web page on which a guide for a program is built step by
    /// step (rule sets, sketches, limits), with each search's progress, the `--why` tree of a
    /// miss, the e-graph, the C and its timing in view, and saved as a `.guide`. It binds
    /// 127.0.0.1 and prints the page's URL, whose token every request must carry; it reads
    /// and writes only under the current directory.
    Studio {
        /// `FILE.rise:NAME`, under the current directory.
        program: String,
        /// The port (0: a free one, printed).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// The address to bind; another than a loopback address makes the studio reachable
        /// from other machines (a warning says so). Requests must name it in their Host
        /// header (or a name `--allow-host` gives).
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// A further name requests may give in their Host header (and pages in their
        /// Origin), with the studio's port: the machine's own name, when the studio is bound
        /// to 0.0.0.0 for other machines. Repeatable.
        #[arg(long, value_parser = host_name)]
        allow_host: Vec<String>,
    },
    /// Print the compiled egglog form of rules (`FILE.rules[:SET]`) for an encoding, with
    /// the encoding's own substitution rules; or, with `--written`, the rule sets and rules
    /// as written.
    Rules {
        rules: String,
        /// The rule sets and each rule as written in the file, instead of compiled.
        #[arg(long)]
        written: bool,
        /// How substitution is done.
        #[arg(long, value_enum, default_value_t = Substitution::Extraction)]
        substitution: Substitution,
        /// How variables are bound.
        #[arg(long, value_enum, default_value_t = Binding::DeBruijn)]
        binding: Binding,
    },
    /// Print the Rise schema every e-graph starts with: sizes and types
    /// (`schemas/types.egg`), the term constructors declared from sketchlog's table, and the
    /// free-variable analyses (`schemas/free.egg`); then the analyses that Table 2's explicit
    /// and named encodings add.
    Schema,
    /// Load a definition into an e-graph and extract it back: `FILE.rise:NAME`.
    Show {
        /// `FILE.rise:NAME` (NAME may be omitted when the file has one definition).
        program: String,
        #[command(flatten)]
        dump: DumpArgs,
    },
    /// Print the sketch a program satisfies exactly: its beta-eta normal form in the sketch
    /// language (`sketch NAME = ...`), to copy into a `.sketch` file and cut holes into (`?`,
    /// `contains(..)`). Sizes are written with the program's names for them.
    SketchOf {
        /// `FILE.rise:NAME` (NAME may be omitted when the file has one definition).
        program: String,
    },
}

/// The path search's budget for `--explain=N`.
fn explain_limits(expansions: u32) -> guide::explain::PathLimits {
    guide::explain::PathLimits {
        expansions: expansions as usize,
        ..Default::default()
    }
}

/// The cost model of `--weights FILE`, AST size without it.
fn cost_of(weights: Option<&Path>) -> Result<guide::Cost> {
    Ok(match weights {
        Some(w) => guide::Cost::Weighted(extract::Weighted::load(w)?),
        None => guide::Cost::AstSize,
    })
}

/// The one file `path` a command writes, named on the command line as it is.
fn written_by(path: &Path) -> Outputs {
    let mut outputs = Outputs::default();
    outputs.add(path, &path.display().to_string());
    outputs
}

/// Locates an error without a position at command-line argument `spec`.
fn at_argument<T>(spec: &str, r: Result<T>) -> Result<T> {
    r.map_err(|e| {
        e.or_at(&crate::source::argument_span(
            &crate::source::command_line(),
            spec,
        ))
    })
}

fn typecheck(path: &Path) -> Result<()> {
    let program = rise::load_program(path)?;
    for def in &program.defs {
        println!("{} : {}", def.name, infer::def_type(&program, &def.name)?);
    }
    Ok(())
}

fn sketch_of(spec: &str) -> Result<()> {
    let def = at_argument(spec, rise::load_def_ref(spec, Path::new("")))?;
    println!("{}", crate::sketch::of::declaration(&def)?);
    Ok(())
}

fn show(spec: &str, dump: Option<Dump>) -> Result<()> {
    let (def, reads) = crate::files::recording(|| rise::load_def_ref(spec, Path::new("")));
    let rise::LoadedDef {
        name, term, names, ..
    } = at_argument(spec, def)?;
    if let Some(d) = &dump {
        written_by(&d.path).check(&reads, true)?;
    }
    let mut eg = egraph::rise_egraph()?;
    let root = encode::load_term(&mut eg, &term)?;
    if let Some(dump) = dump {
        dump.write(&eg, root)?;
    }
    let graph = extract::ExprGraph::read(&eg)?;
    let (nodes, classes) = graph.size();
    let back = extract::Extractor::new(&graph, &extract::AstSize).extract(root)?;
    println!("{name} : {}", back.ty);
    println!(
        "e-graph: {nodes} e-nodes, {classes} e-classes (term size {})",
        term.size()
    );
    println!(
        "round trip: {}",
        if back == term {
            "identical"
        } else {
            "DIFFERENT"
        }
    );
    println!(
        "{}",
        print::print_expr(&debruijn::to_named_as(
            &back,
            debruijn::Annotate::Leading,
            &names
        ))
    );
    Ok(())
}

/// `rules FILE.rules[:SET] --written`: the rule sets (the one named, or all) and their rules,
/// as the file writes them.
fn print_written_rules(spec: &str) -> Result<()> {
    let (path, set) = crate::rules::split_spec(spec);
    let file = crate::rules::load_rule_file(Path::new(path))?;
    let rules = at_argument(spec, crate::rules::select(&file, set, &Params::default()))?;
    for ruleset in file
        .rulesets
        .iter()
        .filter(|r| set.is_none_or(|s| s == r.name))
    {
        let names: Vec<String> = ruleset.rules.iter().map(|r| r.to_string()).collect();
        println!("ruleset {} = {}", ruleset.name, names.join(" "));
    }
    for rule in &rules {
        println!("{}", rule.span.text());
    }
    Ok(())
}

fn print_rules(spec: &str, substitution: Substitution, binding: Binding) -> Result<()> {
    let encoding = Encoding::new(substitution, binding);
    let rules = at_argument(spec, crate::rules::load_selection(spec, &Params::default()))?;
    println!(";; Encoding: {substitution} substitution, {binding} binding.");
    println!("{}", encoding.rules_text());
    for r in &rules {
        let c = crate::rules::compile::compile_for(r, encoding)?;
        println!(";; {} (right-hand side built in Rust)", c.name);
        println!("(rule ({}) (({}-rhs root ...)))", c.query, c.name);
    }
    Ok(())
}

/// The Rise schema, then what the explicit and named encodings add to it.
fn print_schema() {
    print!("{}", egraph::schema_text());
    use egraph::schema::{family_rules, Family};
    for (family, encoding) in [
        (Family::Explicit, "explicit substitution"),
        (Family::Names, "named binders"),
    ] {
        print!(
            "\n;; Added by the encodings with {encoding}:\n{}",
            family_rules(family)
        );
    }
}

/// What the process does before `command` runs: how a closed pipe ends it, and for a command
/// that searches, the watchdog that holds its limits inside an iteration.
fn prepare(command: &Command) {
    // A command whose output goes to a closed pipe (`sketchlog typecheck F | head`) ends as
    // other command-line tools do, by SIGPIPE, not with an internal error. Not for the
    // commands that run jobs, whose cluster connections report a closed peer as an error.
    if !matches!(
        command,
        Command::Reproduce(..) | Command::Sweep { .. } | Command::Run { .. }
    ) {
        // SAFETY: restoring a signal's default disposition has no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // Every command that searches: limits hold inside an iteration too, by ending the
    // process (egglog cannot be interrupted within one).
    match command {
        Command::Check { .. }
        | Command::Guide { .. }
        | Command::GuideAuto { .. }
        | Command::Bench { .. } => egraph::saturate::start_watchdog(|_| std::process::exit(1)),
        // Files run to their end or first error; the REPL goes on after an entry's error, so
        // a search there stops between iterations instead.
        Command::Run { files, .. } if !files.is_empty() => {
            egraph::saturate::start_watchdog(|_| std::process::exit(1))
        }
        Command::Job { .. } => egraph::saturate::start_watchdog(|stop| {
            use crate::cluster::child::{report_stop, ProcessLimit};
            match stop {
                egraph::saturate::StopReason::MemoryLimit => report_stop(ProcessLimit::Memory),
                _ => report_stop(ProcessLimit::Time),
            }
            std::process::exit(1)
        }),
        _ => {}
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    prepare(&cli.command);
    match cli.command {
        Command::Run { files, flags } => {
            let mut stdout = std::io::stdout().lock();
            crate::runner::run(&files, &flags, &mut stdout)
        }
        Command::Typecheck { files } => files.iter().try_for_each(|f| typecheck(f)),
        Command::Show { program, dump } => show(&program, dump.dump()?),
        Command::SketchOf { program } => sketch_of(&program),
        Command::Reproduce(args) => args.run(),
        Command::Sweep { file, jobs } => jobs.sweep(&file),
        Command::Bench {
            table,
            runs,
            enodes,
            time_s,
            sketch_engine,
        } => match table {
            Benchmark::Scale => crate::experiments::scale::run(enodes, time_s, sketch_engine),
            Benchmark::Table2 => {
                crate::experiments::table2::bench(crate::experiments::table2::CAPS, runs)
            }
        },
        Command::CliReference => {
            print!("{}", cli_reference());
            Ok(())
        }
        Command::Job { work } => crate::experiments::jobs::child_main(&work),
        Command::Codegen {
            program,
            sizes,
            lowering,
            stages,
            out,
            remarks,
            params,
        } => c_code::codegen(
            (&program, params.params()?),
            sizes,
            (lowering, params.target()?, stages),
            (out.as_deref(), remarks),
        ),
        Command::BenchC(args) => args.run(),
        Command::Rules {
            rules,
            written: true,
            ..
        } => print_written_rules(&rules),
        Command::Rules {
            rules,
            substitution,
            binding,
            ..
        } => print_rules(&rules, substitution, binding),
        Command::Check(args) => check::check(&args),
        Command::Schema => {
            print_schema();
            Ok(())
        }
        Command::Guide(args) => args.run(),
        Command::GuideAuto(args) => args.run(),
        Command::Rewrite(args) => args.run(),
        Command::Studio {
            program,
            port,
            host,
            allow_host,
        } => crate::studio::serve(crate::studio::Options {
            program,
            host,
            port,
            allowed_hosts: allow_host,
        }),
    }
}

/// A host name for `--allow-host`: letters, digits, `-` and `.`, without a port.
fn host_name(text: &str) -> std::result::Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    match !text.is_empty() && text.chars().all(fits) {
        true => Ok(text.to_ascii_lowercase()),
        false => Err("a host name (letters, digits, `-` and `.`), without a port".into()),
    }
}

/// `sketchlog bench`'s benchmarks.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Benchmark {
    Table2,
    Scale,
}

/// The width terms are printed to: on a terminal, its width (`COLUMNS`, else 100); elsewhere
/// (a file, a pipe) none, one line a term, for programs to read.
fn term_width() -> Option<usize> {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal().then(|| {
        (std::env::var("COLUMNS").ok())
            .and_then(|c| c.parse().ok())
            .filter(|w| *w >= 40)
            .unwrap_or(100)
    })
}

/// `--dump-egraph`: where to write the final e-graph.
#[derive(clap::Args, Debug, Clone)]
struct DumpArgs {
    /// Write the final e-graph to this file: `.json` (egglog's serialized format, read by the
    /// e-graph visualizer and by `sketchlog studio`; the program's e-class is the root, and
    /// the e-classes that satisfy the sketch carry `"sketch": "satisfied"` in their class data),
    /// `.dot` (Graphviz) or `.svg` (needs Graphviz's `dot`). A guide writes one per step:
    /// `F.step1.json`, ...
    #[arg(long, value_parser = dump_path)]
    dump_egraph: Option<PathBuf>,
    /// At most this many e-nodes of each constructor in the dump.
    #[arg(long, default_value_t = 10_000, value_parser = crate::limits::enodes)]
    dump_max_enodes: usize,
}

/// A `--dump-egraph` file: its extension names a format.
fn dump_path(text: &str) -> std::result::Result<PathBuf, String> {
    use crate::egraph::serialize::{Format, FORMATS};
    let path = PathBuf::from(text);
    Format::of(&path).map(|_| path).map_err(|_| FORMATS.into())
}

impl DumpArgs {
    fn dump(&self) -> Result<Option<Dump>> {
        self.dump_egraph
            .as_deref()
            .map(|path| Dump::new(path, self.dump_max_enodes))
            .transpose()
    }
}

/// `--param` and `--isa`: sizes that rules' parameters name, and the target they describe.
#[derive(clap::Args, Debug, Clone, Default)]
struct ParamArgs {
    /// `NAME=VALUE`, repeatable: a size that rules' parameters name (`rule split-join<k>`
    /// instantiated as `split-join<lanes>`), over a guide's `param` lines. `lanes` is the
    /// target's vector width in 32-bit lanes unless set (16 with AVX-512, 8 with AVX, 4
    /// otherwise), `registers` its number of vector registers (32 with AVX-512, 16
    /// otherwise), `line` the floats in a line of its level-1 data cache (16 in 64 bytes);
    /// `lanes=native`, `registers=native` and `line=native` are the target's. Given here,
    /// `lanes` and `registers` are also the machine `codegen` and `bench-c` write C for.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = param_assignment)]
    param: Vec<String>,
    /// The instruction set to search and write C for: this machine's, or one of x86-64's,
    /// which sets `lanes` and `registers` (a `--param` of either wins) and `bench-c`'s
    /// `-march` (unless `--cflags`). `--isa avx2` on any x86-64 reaches and times the
    /// schedule an AVX2 machine gets.
    #[arg(long, value_enum, default_value_t = Isa::Native)]
    isa: Isa,
}

/// A `--param` value: `NAME=VALUE`.
fn param_assignment(text: &str) -> std::result::Result<String, String> {
    Params::given(&[text.to_string()]).map(|_| text.to_string())
}

impl ParamArgs {
    /// The sizes given: `--param`'s, and the instruction set's others (the first given of a
    /// name is kept).
    fn params(&self) -> Result<Params> {
        let given = [self.param.clone(), self.isa.params()].concat();
        Params::given(&given).map_err(crate::error::Error::bad_input)
    }

    /// The machine the C is generated for: this one, or the `lanes` and `registers` given.
    fn target(&self) -> Result<crate::codegen::target::Target> {
        crate::codegen::target::Target::of(&self.params()?)
            .map_err(|e| crate::error::Error::bad_input(format!("--param: {e}")))
    }
}

/// The command-line reference in Markdown: each command's long help, as `--help` prints it.
pub fn cli_reference() -> String {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    let mut out = String::from(
        "# Command line\n\n<!-- Generated by `sketchlog cli-reference > docs/src/cli.md`; \
         a test checks that it is current. -->\n\n",
    );
    out += "```text\n";
    out += &cli.render_long_help().to_string();
    out += "```\n";
    for sub in cli
        .get_subcommands_mut()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        let name = sub.get_name().to_string();
        out += &format!("\n## `sketchlog {name}`\n\n```text\n");
        let help = sub.render_long_help().to_string();
        out += &help.replacen(
            &format!("Usage: {name}"),
            &format!("Usage: sketchlog {name}"),
            1,
        );
        out += "```\n";
    }
    out
}

/// Where the last panic happened, for the internal-error report.
static PANIC_AT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Runs the CLI and returns the process exit code. Never panics to the user: an internal
/// panic is reported with its message and location, exit code 3.
pub fn main() -> i32 {
    let cli = <Cli as clap::Parser>::parse();
    std::panic::set_hook(Box::new(|info| {
        if let Some(l) = info.location() {
            *PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = Some(l.to_string());
        }
    }));
    // The work runs on the main thread, on a large stack of its own (deep programs recurse
    // deeply): a second thread would have an allocator heap of its own, which cost egglog's
    // small test programs 20% more memory than egglog's binary.
    let outcome = stacker::grow(crate::limits::STACK_BYTES, move || {
        std::panic::catch_unwind(move || dispatch(cli))
    });
    match outcome {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            eprintln!("{e:#}");
            e.exit_code()
        }
        Err(panic) => {
            let msg = crate::error::panic_message(&*panic);
            let at = PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()).take();
            let at = at.map_or_else(String::new, |l| format!(" (at {l})"));
            eprintln!("error: internal error: {msg}{at}");
            3
        }
    }
}
