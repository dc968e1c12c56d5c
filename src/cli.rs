//! The `sketchlog` command line.
//!
//! Exit codes: 0 success, 1 a `check` that failed, 2 bad input (syntax, types, unknown
//! names, missing files), 3 an internal error. Errors print as `file:line:column: error: ...`.

use crate::egraph::{self, encode, extract};
use crate::error::{Error, Result};
use crate::rise::{self, debruijn, infer, print};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

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
    /// Run egglog programs (`.egg`) with sketchlog's commands registered.
    Run {
        /// Files to run, in order, in one e-graph.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Directory for files read by `input` and written by `output`.
        #[arg(short = 'F', long)]
        fact_directory: Option<PathBuf>,
    },
    /// Print the inferred type of every definition in a `.rise` file.
    Typecheck {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Reproduce a table of the paper as CSV in `results/`.
    Reproduce {
        /// Which table: `table2`.
        table: String,
        /// Output file (default `results/<table>.csv`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Memory cap per row, in MB (the paper used 2 GB).
        #[arg(long, default_value_t = 2000)]
        memory_mb: u64,
        /// Time limit per row, in seconds.
        #[arg(long, default_value_t = 240)]
        time_s: u64,
        /// Only the rows of one substitution encoding (`explicit` or `extraction`).
        #[arg(long)]
        substitution: Option<String>,
    },
    /// Benchmark the efficient encoding on Table 2's goals: medians of several runs.
    Bench {
        /// Which benchmark: `table2`.
        table: String,
        /// Runs per goal.
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// One row of Table 2 (run by `reproduce table2` in a child process).
    #[command(hide = true)]
    Table2Row {
        goal: String,
        #[arg(long, default_value = "extraction")]
        substitution: String,
        #[arg(long, default_value_t = 240)]
        time_s: u64,
    },
    /// Print the compiled egglog form of rules: `FILE.rules[:SET]`.
    Rules { rules: String },
    /// Load a definition into an e-graph and extract it back: `FILE.rise:NAME`.
    Show {
        /// `FILE.rise:NAME` (NAME may be omitted when the file has one definition).
        program: String,
    },
}

/// Splits `FILE:NAME` (or just `FILE`) and elaborates the definition.
pub fn load_program_ref(spec: &str) -> Result<(PathBuf, String, std::rc::Rc<rise::term::Term>)> {
    let (file, name) = match spec.rsplit_once(':') {
        Some((f, n)) if f.ends_with(".rise") => (f, Some(n)),
        _ => (spec, None),
    };
    let path = PathBuf::from(file);
    let program = rise::load_program(&path)?;
    let name = match name {
        Some(n) => n.to_string(),
        None if program.defs.len() == 1 => program.defs[0].name.clone(),
        None => {
            return Err(Error::bad_input(format!(
                "{file} has several definitions ({}); name one as {file}:NAME",
                program
                    .defs
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let term = infer::elaborate_def(&program, &name)?;
    Ok((path, name, term))
}

fn typecheck(path: &Path) -> Result<()> {
    let program = rise::load_program(path)?;
    for def in &program.defs {
        println!("{} : {}", def.name, infer::def_type(&program, &def.name)?);
    }
    Ok(())
}

fn show(spec: &str) -> Result<()> {
    let (_, name, term) = load_program_ref(spec)?;
    let mut eg = egraph::rise_egraph()?;
    let root = encode::load_term(&mut eg, &term)?;
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
        print::print_expr(&debruijn::to_named(&back, debruijn::Annotate::Leading))
    );
    Ok(())
}

fn print_rules(spec: &str) -> Result<()> {
    let (file, set) = match spec.rsplit_once(':') {
        Some((f, s)) if f.ends_with(".rules") => (f, Some(s)),
        _ => (spec, None),
    };
    let rules = crate::rules::select(&crate::rules::load_rule_file(Path::new(file))?, set)?;
    for r in &rules {
        let c = crate::rules::debruijn::compile(r)?;
        println!(
            ";; {} (De Bruijn, extraction-based; right-hand side built in Rust)",
            c.name
        );
        println!("(rule ({}) (({}-rhs root ...)))", c.query, c.name);
    }
    Ok(())
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run {
            files,
            fact_directory,
        } => {
            let mut stdout = std::io::stdout().lock();
            crate::runner::run_files(&files, fact_directory.as_deref(), &mut stdout)
        }
        Command::Typecheck { files } => files.iter().try_for_each(|f| typecheck(f)),
        Command::Show { program } => show(&program),
        Command::Reproduce {
            table,
            out,
            memory_mb,
            time_s,
            substitution,
        } => match table.as_str() {
            "table2" => {
                crate::experiments::table2::reproduce(&crate::experiments::table2::Table2Config {
                    substitution,
                    memory_mb,
                    time: std::time::Duration::from_secs(time_s),
                    out: out.unwrap_or_else(|| PathBuf::from("results/table2.csv")),
                })
            }
            other => Err(Error::bad_input(format!(
                "unknown table `{other}` (available: table2)"
            ))),
        },
        Command::Bench { table, runs } => match table.as_str() {
            "table2" => crate::experiments::table2::bench(
                &crate::experiments::table2::Table2Config {
                    substitution: None,
                    memory_mb: 2000,
                    time: std::time::Duration::from_secs(240),
                    out: PathBuf::new(),
                },
                runs,
            ),
            other => Err(Error::bad_input(format!(
                "unknown benchmark `{other}` (available: table2)"
            ))),
        },
        Command::Table2Row {
            goal,
            substitution,
            time_s,
        } => crate::experiments::table2::row_main(
            &goal,
            &substitution,
            std::time::Duration::from_secs(time_s),
        ),
        Command::Rules { rules } => print_rules(&rules),
    }
}

/// Runs the CLI and returns the process exit code. Never panics to the user: an internal
/// panic is reported as an error with exit code 3.
pub fn main() -> i32 {
    let cli = Cli::parse();
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(move || dispatch(cli)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            eprintln!("{e}");
            e.exit_code()
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            eprintln!("error: internal error: {msg}");
            3
        }
    }
}
