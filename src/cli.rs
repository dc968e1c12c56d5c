//! The `sketchlog` command line.
//!
//! Exit codes: 0 success, 1 a `check` that failed, 2 bad input (syntax, types, unknown
//! names, missing files), 3 an internal error. Errors print as `file:line:column: error: ...`.

use crate::cluster::child::{report_failure, Caps};
use crate::egraph::encoding::{Binding, Encoding, Substitution};
use crate::egraph::serialize::Dump;
use crate::egraph::{self, encode, extract};
use crate::error::{Error, Result};
use crate::files::Outputs;
use crate::guide::{self, report};
use crate::limits;
use crate::rise::{self, debruijn, infer, print};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
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

/// Where jobs run and where their results go (`reproduce`, `sweep`).
#[derive(Args, Clone, Debug)]
pub struct JobArgs {
    /// Directory of the result files and of the finished jobs (`runs.jsonl`).
    #[arg(long, default_value = "results")]
    dir: PathBuf,
    /// Run every job asked for again, ignoring their finished results on disk (the store
    /// keeps those of other tasks).
    #[arg(long)]
    fresh: bool,
    /// Worker threads in this process, each running one job at a time (default: as many
    /// as the cores and the available memory at the largest memory cap allow; timed jobs
    /// always run alone). At most 4 per core of this host, and 256.
    #[arg(long, value_parser = limits::workers)]
    workers: Option<usize>,
    /// Several processes (machines): a file of `host:port` lines, one per process, the
    /// same on every machine; start the same command on each with its `--process`.
    #[arg(long)]
    hostfile: Option<PathBuf>,
    /// This process's index in the hostfile (process 0 writes the files).
    #[arg(long, default_value_t = 0, requires = "hostfile", value_parser = limits::process)]
    process: usize,
}

impl JobArgs {
    /// The cluster asked for; `None` for this machine with the default workers.
    fn cluster(&self) -> Option<crate::cluster::Cluster> {
        match (self.workers, &self.hostfile) {
            (None, None) => None,
            (workers, hostfile) => Some(crate::cluster::Cluster {
                workers: workers.unwrap_or(1),
                hostfile: hostfile.clone(),
                process: self.process,
            }),
        }
    }
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
    Reproduce {
        /// Which: `table2`, `table3`, `table4`, `table5`, `fig16`, `codegen`, `harris`, `steps`
        /// (every guide step's C beside its scalar lowering), `shine`, `auto` (several in one
        /// run share their searches: fig16 reuses the rows of table3 and table4).
        #[arg(required = true)]
        tables: Vec<String>,
        #[command(flatten)]
        jobs: JobArgs,
        /// Memory cap per row, in MB (table2: 2000 as in the paper; unguided rows of table3
        /// and fig16: 3000, or 60000 with `--paper-caps`).
        #[arg(long, value_parser = limits::memory_mb)]
        memory_mb: Option<u64>,
        /// Time limit per row, in seconds (table2: 240; unguided rows: 200, or 7200 with
        /// `--paper-caps`).
        #[arg(long, value_parser = limits::whole_seconds)]
        time_s: Option<u64>,
        /// The paper's caps for the unguided rows (60 GB, 2 hours each): a run for several
        /// machines (`--hostfile`), hours long.
        #[arg(long)]
        paper_caps: bool,
        /// table2: only the rows of one substitution encoding.
        #[arg(long, value_enum)]
        substitution: Option<Substitution>,
        /// table2: only the rows of one binding encoding.
        #[arg(long, value_enum)]
        binding: Option<Binding>,
        /// table3/4/5: only these goals (comma-separated; default all seven).
        #[arg(long, value_delimiter = ',')]
        goals: Vec<String>,
        /// codegen: the matrices' size (m = n = k); the 2D programs (matrix-vector, binomial
        /// filters) run at 4 times it in each dimension.
        #[arg(long, default_value_t = 1024, value_parser = limits::positive_size)]
        size: i64,
    },
    /// Benchmarks. `table2`: the efficient encoding on Table 2's goals, medians of several
    /// runs. `scale`: Table 3's unguided blocking search until found or at `--enodes`,
    /// printing per iteration (CSV) the rewrite step's and the check's times, microseconds
    /// per new e-node and resident bytes per e-node.
    Bench {
        /// Which benchmark: `table2` or `scale`.
        table: String,
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
    /// One row of Table 2 (run by `reproduce table2` in a child process).
    #[command(hide = true)]
    Table2Row {
        goal: String,
        #[arg(long, value_enum, default_value_t = Substitution::Extraction)]
        substitution: Substitution,
        #[arg(long, value_enum, default_value_t = Binding::DeBruijn)]
        binding: Binding,
        #[arg(long, default_value_t = 240, value_parser = limits::whole_seconds)]
        time_s: u64,
    },
    /// One goal of the matmul case study, guided, or unguided goals that share one search
    /// (run by `reproduce table3|table4|fig16` in a child process): reports each iteration,
    /// step and goal as a JSON line.
    #[command(hide = true)]
    MatmulRow {
        #[arg(required = true)]
        goals: Vec<String>,
        #[arg(long)]
        unguided: bool,
        #[arg(long, default_value_t = 8000, value_parser = limits::memory_mb)]
        memory_mb: u64,
        #[arg(long, default_value_t = 600, value_parser = limits::whole_seconds)]
        time_s: u64,
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
    /// One point of a sweep (run by `sweep` in a child process): reports its row.
    #[command(hide = true)]
    SweepPoint {
        file: PathBuf,
        #[arg(long)]
        point: String,
    },
    /// One test of the Rise project's suite (run by `reproduce shine` in a child process):
    /// reports a row per goal as a JSON line.
    #[command(hide = true)]
    ShineRow {
        test: String,
        #[arg(long, default_value_t = 120, value_parser = limits::whole_seconds)]
        time_s: u64,
    },
    /// One target of the automatic guides' table (run by `reproduce auto` in a child
    /// process): reports its row as a JSON line.
    #[command(hide = true)]
    AutoRow {
        target: String,
        /// The written guide (or the unguided search) instead of the automatic one.
        #[arg(long)]
        written: bool,
    },
    /// The command-line reference in Markdown, generated from these definitions
    /// (`docs/src/cli.md`).
    #[command(hide = true)]
    CliReference,
    /// The codegen table (run by `reproduce codegen` in a child process): reports its rows
    /// as a JSON line.
    #[command(hide = true)]
    CodegenRow {
        #[arg(long, default_value_t = 1024, value_parser = limits::positive_size)]
        size: i64,
    },
    /// The Harris table (run by `reproduce harris` in a child process): reports its rows as
    /// a JSON line.
    #[command(hide = true)]
    HarrisRow,
    /// A guide's rows of the steps table (run by `reproduce steps` in a child process):
    /// reports them as a JSON line.
    #[command(hide = true)]
    StepsRow { guide: String },
    /// Print (or write) the OpenMP C of a low-level program at given sizes.
    Codegen {
        /// `FILE.rise:NAME`, or `FILE.guide` for the program its guide finds.
        program: String,
        /// The program's sizes, outermost first (default: every size 1024).
        #[arg(long, value_delimiter = ',', value_parser = limits::positive_size)]
        sizes: Vec<i64>,
        /// `scalar`: the same loops without vector types or streaming stores (what `bench-c`
        /// times beside the program).
        #[arg(long, value_enum, default_value = "vector")]
        lowering: crate::codegen::emit::Lowering,
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Compile a program's C, check it against the interpreter and time it.
    BenchC {
        /// `FILE.rise:NAME`, or `FILE.guide` for the program its guide finds.
        program: String,
        /// Every size of the program (a matrix multiplication: m = n = k).
        #[arg(long, default_value_t = 1024, value_parser = limits::positive_size)]
        size: i64,
        /// The program's sizes one by one (instead of `--size`).
        #[arg(long, value_delimiter = ',', value_parser = limits::positive_size, conflicts_with = "size")]
        sizes: Vec<i64>,
        /// OpenMP thread counts to time (each at most 1024).
        #[arg(long, value_delimiter = ',', default_value = "1", value_parser = limits::threads)]
        threads: Vec<usize>,
        /// Timed runs per round, after one warm-up run (fewer for a program whose run takes
        /// longer than 200 ms: a round of its runs takes about a second, one run at least; at
        /// most 100,000).
        #[arg(long, default_value_t = 5, value_parser = limits::runs)]
        runs: usize,
        /// Rounds, interleaved with the reference GEMM's (program, reference, program, ...);
        /// medians over all runs (at most 100,000).
        #[arg(long, default_value_t = 3, value_parser = limits::runs)]
        rounds: usize,
        /// C compiler flags after `-O3`, `CFLAGS` and OpenMP's (default `-march=native`).
        #[arg(long, allow_hyphen_values = true)]
        cflags: Option<String>,
        /// The largest max relative error against the program's meaning; above it, exit 1.
        #[arg(long, default_value_t = 1e-3, value_parser = limits::tolerance)]
        tolerance: f64,
    },
    /// Search for a program satisfying a sketch: normalise, grow an e-graph with the rules
    /// until the sketch is satisfied or a limit is hit, extract. Exit 1 if not found.
    Check(CheckArgs),
    /// Run a guide (`.guide`): a sequence of sketch-satisfying searches. Exit 1 if a step
    /// does not find its sketch. With `--auto`, find a guide for a program from its final
    /// sketch or goal alone and write it (`-o`).
    Guide {
        /// The guide file; with `--auto`, the program `FILE.rise:NAME`.
        file: PathBuf,
        #[command(flatten)]
        auto: AutoArgs,
        /// Per-iteration figures of every step to this CSV file.
        #[arg(long)]
        stats: Option<PathBuf>,
        /// Print each step's rewrite path: every rule applied, where, and the subterm before
        /// and after; `--explain=N` lets the path search expand N terms (default 500).
        #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "500",
              value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        explain: Option<u32>,
        #[command(flatten)]
        dump: DumpArgs,
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
}

/// Limits and filters of a search, as flags.
#[derive(clap::Args)]
struct LimitArgs {
    #[arg(long, default_value_t = 30, value_parser = limits::iterations)]
    iterations: usize,
    /// E-node cap: the iteration that would pass it fires only the matches that fit, and
    /// the search stops there.
    #[arg(long, default_value_t = 1_000_000, value_parser = limits::enodes)]
    enodes: usize,
    /// Time limit in seconds.
    #[arg(long, default_value = "60", value_parser = limits::parse_seconds, allow_hyphen_values = true)]
    time_s: Duration,
    /// Stop when the process's resident memory exceeds this many MB.
    #[arg(long, value_parser = limits::memory_mb)]
    memory_mb: Option<u64>,
    /// Filter: array nesting depth of every new e-node's type at most this.
    #[arg(long, value_parser = limits::depth)]
    array_depth: Option<usize>,
    /// Filter: keep e-nodes through which a term of at most this size passes (at most
    /// 1,000,000).
    #[arg(long, value_parser = limits::ast_size)]
    ast_size: Option<usize>,
    /// What the term-size filter keeps: `enode`s through which a term of at most the bound
    /// passes, or every e-node of such an e-`class` (shine's `ASTSizePredicate`).
    #[arg(long, value_enum, default_value_t)]
    ast_size_scope: egraph::filter::SizeScope,
    /// Filter: all array, vector and index sizes at least 1.
    #[arg(long)]
    sizes_positive: bool,
    /// How the sketch query is evaluated after each iteration: `scan` (Rust, from a scan of
    /// the e-graph) or `egglog` (the printed rules, semi-naively).
    #[arg(long, value_enum, default_value_t)]
    sketch_engine: crate::sketch::query::Engine,
    /// The normal form the search keeps its terms in: `benf` (beta-eta: a composition is a
    /// lambda) or `cnf` (combinator: `g (f x)` is `(f >> g) x`, and the rules' compositions
    /// are composition nodes, for point-free rules such as `map f >> map g => map (f >> g)`).
    #[arg(long, value_enum, default_value_t)]
    normal_form: egraph::normal::NormalForm,
}

impl LimitArgs {
    fn limits(&self) -> egraph::saturate::Limits {
        egraph::saturate::Limits {
            iterations: self.iterations,
            enodes: self.enodes,
            time: self.time_s,
            memory_mb: self.memory_mb,
        }
    }
    fn filter(&self) -> egraph::filter::Filter {
        egraph::filter::Filter {
            array_depth: self.array_depth,
            sizes_positive: self.sizes_positive,
            ast_size: self.ast_size,
            ast_size_scope: self.ast_size_scope,
        }
    }
}

/// Runs steps with progress bars (a line per iteration when stderr is not a terminal),
/// prints each step's summary, rewrites `--stats` as each iteration finishes (so a stopped
/// or killed search keeps every finished iteration); fails with exit code 1 when a step did
/// not find its sketch.
fn run_steps(guide: &guide::Guide, stats: Option<&Path>) -> Result<()> {
    use std::io::IsTerminal;
    let mut log = report::StatsLog::default();
    if let Some(path) = stats {
        crate::files::check_writable(path)?;
        log.write(path)?;
    }
    let lines = !std::io::stderr().is_terminal();
    let mut write_error = None;
    let bar = std::cell::RefCell::new(None);
    let reports = guide::run(
        guide,
        |i, s| {
            let mut bar = bar.borrow_mut();
            let b = bar.get_or_insert_with(|| {
                progress(&guide.steps[i].limits, &guide.steps[i].sketch.name)
            });
            tick(b, s);
            if lines {
                eprintln!("{}", report::iteration_line(i, s));
            }
            log.push(i, s);
            if let Some(path) = stats {
                if let Err(e) = log.write(path) {
                    write_error.get_or_insert(e);
                }
            }
        },
        |i, r| {
            if let Some(b) = bar.borrow_mut().take() {
                b.finish_and_clear();
            }
            println!(
                "{}",
                report::summary(&report::step_label(guide, i), r, &guide.names)
            );
            if let Some(why) = &r.why {
                print!("{why}");
            }
            if let Some(e) = &r.explanation {
                print!("{}", report::explanation(e, &guide.names));
            }
        },
    )?;
    if let Some(e) = write_error {
        return Err(e);
    }
    guide::check_found(&reports)
}

/// The path search's budget for `--explain=N`.
fn explain_budget(expansions: u32) -> guide::explain::Budget {
    guide::explain::Budget {
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

fn check(args: &CheckArgs) -> Result<()> {
    let dump = args.dump.dump()?;
    let cost = cost_of(args.weights.as_deref())?;
    let line = crate::error::command_line();
    let limits = &args.limits;
    let target = match (args.sketch.first(), args.goal.first()) {
        (Some(sketch), _) => guide::Target::Sketch(sketch),
        (None, Some(goal)) => guide::Target::Goal(goal),
        (None, None) => unreachable!("clap requires --sketch or --goal"),
    };
    let (g, mut reads) = crate::files::recording(|| {
        guide::Guide::check(
            &args.program,
            target,
            &args.rules,
            (cost.clone(), limits.limits(), limits.filter()),
            &|spec| Some(crate::error::argument_span(&line, spec)),
        )
    });
    let mut g = g?;
    // Every file the targets and rules name, the ones read later for several targets too.
    let specs = [&args.program]
        .into_iter()
        .chain(&args.sketch)
        .chain(&args.goal);
    reads.extend(specs.map(|s| PathBuf::from(guide::file_of(s))));
    let rules = args.rules.iter().map(|r| crate::rules::split_spec(r).0);
    reads.extend(rules.map(PathBuf::from).chain(args.weights.clone()));
    let mut outputs = Outputs::default();
    if let Some(path) = &args.stats {
        outputs.add(path, &path.display().to_string());
    }
    if let Some(d) = &dump {
        outputs.add(&d.path, &d.path.display().to_string());
    }
    outputs.check(&reads, true)?;
    g.steps[0].normal_form = limits.normal_form;
    g.steps[0].sketch_engine = limits.sketch_engine;
    if args.explain.is_some() && limits.normal_form != egraph::normal::NormalForm::Benf {
        return at_argument(
            "--explain",
            Err(Error::bad_input(
                "`--explain` follows rewrites in beta-eta normal form: leave out `--normal-form`",
            )),
        );
    }
    if args.sketch.len() + args.goal.len() > 1 {
        return check_many(args, g, cost);
    }
    g.steps[0].dump = dump;
    g.steps[0].why = args.why;
    g.steps[0].explain = args.explain.map(explain_budget);
    if args.show_query && args.goal.is_empty() {
        let query = crate::sketch::query::SketchQuery::compile(&g.steps[0].sketch.sketch)?;
        print!("{}", query.program);
    }
    run_steps(&g, args.stats.as_deref())
}

/// `check` with several targets (`--sketch` and `--goal` given more than once): one search
/// from the program with the step of `g` (its own target aside) for all of them, each
/// reported as it is found; a failed check when one is not found.
fn check_many(args: &CheckArgs, g: guide::Guide, cost: guide::Cost) -> Result<()> {
    use guide::shared::{search_each, Target};
    let one_target_only = [
        ("--why", args.why),
        ("--explain", args.explain.is_some()),
        ("--dump-egraph", args.dump.dump_egraph.is_some()),
        ("--show-query", args.show_query),
    ];
    if let Some((flag, _)) = one_target_only.iter().find(|(_, set)| *set) {
        return at_argument(
            flag,
            Err(Error::bad_input(format!(
                "`{flag}` explains one target: give one `--sketch` or `--goal`"
            ))),
        );
    }
    let step = &g.steps[0];
    let def = at_argument(
        &args.program,
        rise::load_def_ref(&args.program, Path::new("")),
    )?;
    let mut targets = vec![];
    for spec in &args.sketch {
        let sketch = at_argument(spec, crate::sketch::load(spec, &def.sizes))?;
        targets.push(Target::Sketch(sketch, cost.clone()));
    }
    for spec in &args.goal {
        let program = (def.name.as_str(), &def.term.ty);
        let loaded = guide::load_goal(spec, Path::new(""), program, &step.limits);
        let term = at_argument(spec, loaded)?;
        let name = format!("goal {spec}");
        targets.push(Target::Goal { name, term });
    }
    let mut log = report::StatsLog::default();
    if let Some(path) = &args.stats {
        crate::files::check_writable(path)?;
    }
    let mut found = vec![false; targets.len()];
    let outcome = search_each(
        &g.start,
        step,
        &targets,
        |s| {
            eprintln!("{}", report::iteration_line(0, s));
            log.push(0, s);
        },
        |i, f| {
            found[i] = true;
            let named = debruijn::to_named_as(&f.term, debruijn::Annotate::Leading, &g.names);
            println!(
                "`{}`: found after {} iterations ({:.3} s)
    {}",
                targets[i].name(),
                f.iterations,
                f.seconds,
                print::print_expr(&named)
            );
        },
    )?;
    if let Some(path) = &args.stats {
        log.write(path)?;
    }
    for (target, _) in targets.iter().zip(&found).filter(|(_, found)| !**found) {
        println!("`{}`: NOT found ({})", target.name(), outcome.stop);
    }
    let (enodes, eclasses) = outcome.size();
    let hits = found.iter().filter(|f| **f).count();
    println!(
        "{hits} of {} targets found after {} iterations (stop: {}); e-nodes {enodes}, e-classes {eclasses}, rules applied {}",
        targets.len(),
        outcome.iterations.len(),
        outcome.stop,
        outcome.rules_applied()
    );
    match hits == targets.len() {
        true => Ok(()),
        false => Err(Error::check_failed(format!(
            "{} of {} targets not found ({})",
            targets.len() - hits,
            targets.len(),
            outcome.stop
        ))),
    }
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
        e.or_at(&crate::error::argument_span(
            &crate::error::command_line(),
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
        dump.write(&eg)?;
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
    let rules = at_argument(spec, crate::rules::select(&file, set))?;
    for ruleset in file
        .rulesets
        .iter()
        .filter(|r| set.is_none_or(|s| s == r.name))
    {
        let names: Vec<&str> = ruleset.rules.iter().map(|(n, _)| n.as_str()).collect();
        println!("ruleset {} = {}", ruleset.name, names.join(" "));
    }
    for rule in &rules {
        println!("{}", rule.span.text());
    }
    Ok(())
}

fn print_rules(spec: &str, substitution: Substitution, binding: Binding) -> Result<()> {
    let encoding = Encoding::new(substitution, binding);
    let rules = at_argument(spec, crate::rules::load_selection(spec))?;
    println!(";; Encoding: {substitution} substitution, {binding} binding.");
    println!("{}", encoding.rules_text());
    for r in &rules {
        let c = crate::rules::compile::compile_for(r, encoding)?;
        println!(";; {} (right-hand side built in Rust)", c.name);
        println!("(rule ({}) (({}-rhs root ...)))", c.query, c.name);
    }
    Ok(())
}

fn dispatch(cli: Cli) -> Result<()> {
    // A command whose output goes to a closed pipe (`sketchlog typecheck F | head`) ends as
    // other command-line tools do, by SIGPIPE, not with an internal error. Not for the
    // commands that run jobs, whose cluster connections report a closed peer as an error.
    if !matches!(
        cli.command,
        Command::Reproduce { .. } | Command::Sweep { .. } | Command::Run { .. }
    ) {
        // SAFETY: restoring a signal's default disposition has no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // Every command that searches: limits hold inside an iteration too, by ending the
    // process (egglog cannot be interrupted within one).
    match &cli.command {
        Command::Check { .. } | Command::Guide { .. } | Command::Bench { .. } => {
            egraph::saturate::start_watchdog(|_| std::process::exit(1))
        }
        // Files run to their end or first error; the REPL goes on after an entry's error, so
        // a search there stops between iterations instead.
        Command::Run { files, .. } if !files.is_empty() => {
            egraph::saturate::start_watchdog(|_| std::process::exit(1))
        }
        Command::Table2Row { .. }
        | Command::MatmulRow { .. }
        | Command::ShineRow { .. }
        | Command::AutoRow { .. } => egraph::saturate::start_watchdog(|stop| {
            crate::cluster::child::report_stop(stop);
            std::process::exit(1)
        }),
        _ => {}
    }
    match cli.command {
        Command::Run { files, flags } => {
            let mut stdout = std::io::stdout().lock();
            crate::runner::run(&files, &flags, &mut stdout)
        }
        Command::Typecheck { files } => files.iter().try_for_each(|f| typecheck(f)),
        Command::Show { program, dump } => show(&program, dump.dump()?),
        Command::Reproduce {
            tables,
            jobs,
            memory_mb,
            time_s,
            paper_caps,
            substitution,
            binding,
            goals,
            size,
        } => {
            use crate::experiments::matmul::{PAPER_UNGUIDED_CAPS, UNGUIDED_CAPS};
            let caps = |default: Caps| Caps {
                memory_mb: memory_mb.unwrap_or(default.memory_mb),
                time: time_s.map_or(default.time, Duration::from_secs),
            };
            let settings = crate::experiments::reproduce::Settings {
                tables,
                dir: jobs.dir.clone(),
                table2: caps(crate::experiments::table2::CAPS),
                substitution,
                binding,
                unguided: caps(match paper_caps {
                    true => PAPER_UNGUIDED_CAPS,
                    false => UNGUIDED_CAPS,
                }),
                goals: match goals.is_empty() {
                    true => crate::experiments::matmul::GOALS.map(String::from).to_vec(),
                    false => goals,
                },
                size,
                fresh: jobs.fresh,
            };
            crate::experiments::reproduce::reproduce(&settings, jobs.cluster())
        }
        Command::Sweep { file, jobs } => {
            crate::experiments::sweep::sweep(&file, &jobs.dir, jobs.fresh, jobs.cluster())
        }
        Command::SweepPoint { file, point } => {
            report_failure(crate::experiments::sweep::point_main(&file, &point))
        }
        Command::Bench {
            table,
            runs,
            enodes,
            time_s,
            sketch_engine,
        } => match table.as_str() {
            "scale" => crate::experiments::scale::run(enodes, time_s, sketch_engine),
            "table2" => crate::experiments::table2::bench(crate::experiments::table2::CAPS, runs),
            other => Err(Error::bad_input(format!(
                "unknown benchmark `{other}` (available: table2, scale)"
            ))),
        },
        Command::Table2Row {
            goal,
            substitution,
            binding,
            time_s,
        } => report_failure(crate::experiments::table2::row_main(
            &goal,
            Encoding::new(substitution, binding),
            std::time::Duration::from_secs(time_s),
        )),
        Command::ShineRow { test, time_s } => report_failure(crate::experiments::shine::row_main(
            &test,
            Duration::from_secs(time_s),
        )),
        Command::AutoRow { target, written } => {
            report_failure(crate::experiments::auto::row_main(&target, written))
        }
        Command::CliReference => {
            print!("{}", cli_reference());
            Ok(())
        }
        Command::CodegenRow { size } => report_failure(crate::experiments::codegen::row_main(size)),
        Command::HarrisRow => report_failure(crate::experiments::harris::row_main()),
        Command::StepsRow { guide } => report_failure(crate::experiments::steps::row_main(&guide)),
        Command::MatmulRow {
            goals,
            unguided,
            memory_mb,
            time_s,
        } => report_failure(match (unguided, goals.as_slice()) {
            (true, _) => crate::experiments::matmul::unguided_main(
                &goals,
                Caps {
                    memory_mb,
                    time: Duration::from_secs(time_s),
                },
            ),
            (false, [goal]) => crate::experiments::matmul::guided_main(goal),
            (false, _) => Err(crate::error::Error::bad_input(
                "a guided matmul row runs one goal",
            )),
        }),
        Command::Codegen {
            program,
            sizes,
            lowering,
            out,
        } => codegen(&program, sizes, lowering, out.as_deref()),
        Command::BenchC {
            program,
            size,
            sizes,
            threads,
            runs,
            rounds,
            cflags,
            tolerance,
        } => {
            let mut opts = crate::codegen::run::COptions {
                runs,
                tolerance,
                ..Default::default()
            };
            if let Some(f) = cflags {
                opts.flags = f.split_whitespace().map(String::from).collect();
            }
            bench_c(&program, (size, sizes), &threads, rounds, opts)
        }
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
        Command::Check(args) => check(&args),
        Command::Schema => {
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
            Ok(())
        }
        Command::Guide {
            file,
            auto,
            stats,
            explain,
            dump,
        } if auto.on => {
            let unused = [
                ("--stats", stats.is_some()),
                ("--explain", explain.is_some()),
                ("--dump-egraph", dump.dump_egraph.is_some()),
            ];
            if let Some((flag, _)) = unused.iter().find(|(_, given)| *given) {
                return at_argument(
                    flag,
                    Err(Error::bad_input(format!(
                        "`{flag}` is for running a guide: run the guide `--auto` writes"
                    ))),
                );
            }
            auto_guide(&file.to_string_lossy(), &auto)
        }
        Command::Guide {
            file,
            auto,
            stats,
            explain,
            dump,
        } => {
            if auto.limits_given {
                return Err(Error::bad_input(
                    "limits and filters on the command line are for `--auto`: a guide file sets its own (`limits`, `filter`)",
                ));
            }
            let dump = dump.dump()?;
            let (g, reads) = crate::files::recording(|| guide::parse::load_guide(&file));
            let mut g = g?;
            let mut outputs = Outputs::default();
            if let Some(path) = &stats {
                outputs.add(path, &path.display().to_string());
            }
            for (i, step) in g.steps.iter_mut().enumerate() {
                step.dump = dump.as_ref().map(|d| d.for_step(i));
                step.explain = explain.map(explain_budget);
                if let (Some(step_dump), Some(d)) = (&step.dump, &dump) {
                    outputs.add(&step_dump.path, &d.path.display().to_string());
                }
            }
            outputs.check(&reads, true)?;
            println!(
                "guide {}: {} steps on {}",
                file.display(),
                g.steps.len(),
                g.program
            );
            run_steps(&g, stats.as_deref())
        }
    }
}

/// `sketchlog check`'s arguments.
#[derive(clap::Args)]
struct CheckArgs {
    /// `FILE.rise:NAME`.
    program: String,
    /// `FILE.sketch:NAME`: found when the program's e-class satisfies the sketch.
    /// Repeatable, and with `--goal`: one search for every target, each reported at the
    /// iteration where it is found, until all are found or a limit stops it.
    #[arg(long, required_unless_present = "goal")]
    sketch: Vec<String>,
    /// `FILE.rise:NAME`: found when this exact term (up to renaming, in beta-eta normal
    /// form) is in the program's e-class. Repeatable, as `--sketch`.
    #[arg(long)]
    goal: Vec<String>,
    /// `FILE.rules[:SET]`, repeatable.
    #[arg(long, required = true)]
    rules: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Extract with weights from a cost file (default: AST size).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Per-iteration figures to this CSV file.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// Print the compiled sketch query (egglog relations and rules) too.
    #[arg(long)]
    show_query: bool,
    /// When the sketch is not found, say why: which sub-sketches hold where, the nearest
    /// misses with their terms, and where the program's terms leave the sketch.
    #[arg(long, conflicts_with = "goal")]
    why: bool,
    /// When it is found, print the rewrite path from the program to the extracted term:
    /// every rule applied, where, and the subterm before and after; `--explain=N` lets the
    /// path search expand N terms (default 500).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "500",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    explain: Option<u32>,
    #[command(flatten)]
    dump: DumpArgs,
}

/// `guide --auto`: what to find a guide for, and how each step searches.
#[derive(clap::Args)]
#[command(next_help_heading = "Finding a guide (--auto)")]
struct AutoArgs {
    /// Find a guide: checkpoints derived from the target (a sketch relaxed towards the
    /// program, a goal with its conjugating stages peeled), the rules of each step chosen
    /// among the rule sets given, alone, in pairs, then all, at growing e-node caps.
    #[arg(long = "auto", requires = "output")]
    on: bool,
    /// `FILE.sketch:NAME`: the final sketch.
    #[arg(long, requires = "on", conflicts_with = "goal")]
    sketch: Option<String>,
    /// `FILE.rise:NAME`: the exact goal.
    #[arg(long, requires = "on")]
    goal: Option<String>,
    /// `FILE.rules[:SET]`, repeatable: a file's rule sets (or the set named) are the
    /// candidates for each step.
    #[arg(long, requires = "on")]
    rules: Vec<String>,
    /// Extract with weights from a cost file (default: AST size).
    #[arg(long, requires = "on")]
    weights: Option<PathBuf>,
    /// Write the guide here (`FOUND.guide`), its checkpoints beside it
    /// (`FOUND.checkpoints.sketch` or `FOUND.checkpoints.rise`). None of them may be a file the
    /// command reads, nor, without `--force`, a file that exists.
    #[arg(short, long, requires = "on")]
    output: Option<PathBuf>,
    /// Replace the files `-o` names if they exist.
    #[arg(long, requires = "on")]
    force: bool,
    /// The whole search's time in seconds: no trial runs past it (each trial's own limit is
    /// `--time-s`).
    #[arg(long, default_value = "600", value_parser = limits::parse_seconds)]
    total_time: Duration,
    /// Each step's limits and filters, as for `check`; `--enodes` is the largest cap.
    #[command(flatten)]
    limits: LimitArgs,
    /// Set when a limit or filter flag was given (they apply with `--auto` only).
    #[arg(skip)]
    limits_given: bool,
}

impl AutoArgs {
    /// The `-o` argument as the command line has it (where a refused output is located).
    fn output_arg(&self) -> String {
        let out = self.output.as_deref().unwrap_or(Path::new(""));
        out.display().to_string()
    }
}

/// `--dump-egraph`: where to write the final e-graph.
#[derive(clap::Args, Debug, Clone)]
struct DumpArgs {
    /// Write the final e-graph to this file: `.json` (egglog's serialized format, read by the
    /// e-graph visualizer), `.dot` (Graphviz) or `.svg` (needs Graphviz's `dot`). A guide
    /// writes one per step: `F.step1.json`, ...
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
    let cli = parse_command_line();
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

/// The command line, parsed; whether `guide` was given limit or filter flags is noted (they
/// are `--auto`'s).
fn parse_command_line() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Command::Guide { auto, .. }, Some(("guide", sub))) =
        (&mut cli.command, matches.subcommand())
    {
        let limit_ids = LimitArgs::augment_args(clap::Command::new("limits"));
        auto.limits_given = limit_ids.get_arguments().any(|a| {
            sub.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine)
        });
    }
    cli
}

/// `guide --auto`: finds the steps, printing each as it is found, and writes the guide;
/// exit 1 (nothing written) when the target is not reached. The files it will write are
/// checked before the search against every file it reads, and are never an existing file
/// unless `--force`.
fn auto_guide(program: &str, args: &AutoArgs) -> Result<()> {
    use guide::auto;
    let target =
        match (&args.sketch, &args.goal) {
            (Some(s), _) => guide::Target::Sketch(s),
            (None, Some(g)) => guide::Target::Goal(g),
            (None, None) => return Err(Error::bad_input(
                "`--auto` needs the target: `--sketch FILE.sketch:NAME` or `--goal FILE.rise:NAME`",
            )),
        };
    let Some(first_rules) = args.rules.first() else {
        return Err(Error::bad_input(
            "`--auto` needs `--rules FILE.rules[:SET]`",
        ));
    };
    let out = args.output.as_deref().expect("clap requires --output");
    let spec = match target {
        guide::Target::Sketch(s) | guide::Target::Goal(s) => s,
    };
    let (loaded, reads) = crate::files::recording(|| -> Result<_> {
        let cost = cost_of(args.weights.as_deref())?;
        let def = at_argument(program, rise::load_def_ref(program, Path::new("")))?;
        let limits = args.limits.limits();
        let checkpoints = at_argument(spec, auto::checkpoints(target, &def, &limits))?;
        let mut candidates = vec![];
        for spec in &args.rules {
            candidates.extend(at_argument(spec, auto::candidates(spec))?);
        }
        Ok((cost, def, checkpoints, candidates))
    });
    let (cost, def, checkpoints, candidates) = loaded?;
    let (sketch_file, rise_file) = auto::write::checkpoint_files(out);
    let named_by = args.output_arg();
    let mut outputs = Outputs::default();
    outputs.add(out, &named_by);
    match target {
        guide::Target::Sketch(_) => outputs.add(sketch_file, &named_by),
        guide::Target::Goal(_) => outputs.add(rise_file, &named_by),
    }
    outputs.check(&reads, args.force)?;
    let settings = auto::Settings {
        cost,
        limits: args.limits.limits(),
        filter: args.limits.filter(),
        normal_form: args.limits.normal_form,
        total: args.total_time,
    };
    let names: Vec<&str> = checkpoints.iter().map(|c| c.name.as_str()).collect();
    println!(
        "guide --auto: {} checkpoints ({}), {} rule sets, at most {} s in all",
        checkpoints.len(),
        names.join(", "),
        candidates.len(),
        settings.total.as_secs_f64()
    );
    let t0 = std::time::Instant::now();
    let (steps, missed) = auto::find(&def.term, &checkpoints, &candidates, &settings, |e| {
        match e {
            auto::Event::Found(f) => {
                let sets: Vec<String> = f.candidate.sets.iter().map(|s| s.label()).collect();
                println!(
                    "{}\n  rules {}; found in {} trials, {:.2} s",
                    report::summary(
                        &format!("step {}", f.checkpoint + 1),
                        &f.report,
                        &def.names
                    ),
                    sets.join(" "),
                    f.trials,
                    f.seconds
                );
            }
            auto::Event::Satisfied(i) => println!(
                "step {} `{}`: satisfied by the term so far, no step needed",
                i + 1,
                checkpoints[i].name
            ),
            auto::Event::Skipped(i, trials, seconds) => println!(
                "step {} `{}`: not reached by any rule set within the caps ({trials} trials, {seconds:.2} s): skipped",
                i + 1,
                checkpoints[i].name
            ),
        }
    })?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(stop) = missed {
        let why = match t0.elapsed() >= settings.total {
            true => format!(
                "the total time, {} s, ran out",
                settings.total.as_secs_f64()
            ),
            false => format!("its last trial: {stop}"),
        };
        return Err(Error::check_failed(format!(
            "`{spec}` not reached ({why}): {} of {} checkpoints found before it, {seconds:.2} s",
            steps.len(),
            checkpoints.len() - 1
        )));
    }
    let rules_file = Path::new(crate::rules::split_spec(first_rules).0);
    let line = crate::error::command_line();
    let from = auto::write::Source {
        program,
        goal_file: args.goal.as_deref().map(|g| Path::new(guide::file_of(g))),
        rules: rules_file,
        weights: args.weights.as_deref(),
        settings: &settings,
        command: &line.text,
    };
    let written = auto::write::write(out, &from, &checkpoints, &steps)?;
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    println!(
        "guide found: {} steps in {seconds:.2} s, peak RSS {:.1} MB; wrote {}",
        steps.len(),
        crate::egraph::saturate::resident_mb(true),
        files.join(", ")
    );
    Ok(())
}

fn codegen(
    program: &str,
    sizes: Vec<i64>,
    lowering: crate::codegen::emit::Lowering,
    out: Option<&Path>,
) -> Result<()> {
    let (named, reads) = crate::files::recording(|| crate::codegen::read_program(program));
    let named = at_argument(program, named)?;
    if let Some(path) = out {
        written_by(path).check(&reads, true)?;
    }
    let p = at_argument(program, named.lowered())?;
    let sizes = if sizes.is_empty() {
        crate::codegen::sizes_of(&p, 1024)
    } else {
        sizes
    };
    let c = crate::codegen::emit::lowered_c("rise_program", &p, &sizes, lowering)?.c;
    match out {
        Some(path) => crate::files::write_atomically(path, c.as_bytes()),
        None => {
            print!("{c}");
            Ok(())
        }
    }
}

fn bench_c(
    program: &str,
    (size, sizes): (i64, Vec<i64>),
    threads: &[usize],
    rounds: usize,
    opts: crate::codegen::run::COptions,
) -> Result<()> {
    use crate::codegen::run::{compile, COptions};
    let p = at_argument(program, crate::codegen::load_program(program))?;
    let sizes = if sizes.is_empty() {
        crate::codegen::sizes_of(&p, size)
    } else {
        sizes
    };
    let exe = compile(&p, &sizes, &opts)?;
    let scalar = compile(&p, &sizes, &opts.scalar())?;
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
    let expected = crate::codegen::run::Expected::of(&exe, &p)?;
    for &t in threads {
        let opts = COptions {
            threads: t,
            ..opts.clone()
        };
        let m =
            crate::experiments::codegen::measure(&exe, Some(&scalar), &expected, &opts, rounds)?;
        let compared = match m.check.compared == m.check.output.len() {
            true => format!("all {} output elements", m.check.compared),
            false => format!("{} sampled output elements", m.check.compared),
        };
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
                "    scalar lowering (plain loops, no vector types), interleaved: median {scalar_ms:.3} ms; this program at {:.2}x its speed",
                scalar_ms / m.median_ms()
            );
        }
        if let Some((gflops, ratio)) = m.reference(&exe) {
            println!(
                "    reference GEMM (gemm crate) on the same inputs, interleaved: {gflops:.1} GFLOP/s; this program at {ratio:.2}x the reference"
            );
        }
    }
    Ok(())
}

/// A progress bar over a search's iterations (drawn only on a terminal).
fn progress(limits: &egraph::saturate::Limits, label: &str) -> ProgressBar {
    let bar = ProgressBar::new(limits.iterations as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} iterations {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}

/// Advances a progress bar by one iteration.
fn tick(bar: &ProgressBar, s: &egraph::saturate::IterationStats) {
    bar.set_position(s.iteration as u64);
    bar.set_message(format!("{} e-nodes, {} e-classes", s.enodes, s.eclasses));
}
