//! `rewrite`: a program rewritten by a strategy, with Elevate's counts.

use super::{at_argument, Outputs};
use crate::error::{Error, ErrorKind, Result};
use crate::limits;
use crate::rise::{self, debruijn, print};
use crate::strategy::{self, Ending, Order, Outcome, Settings};
use std::path::PathBuf;
use std::time::Duration;

/// `sketchlog rewrite`'s arguments.
#[derive(clap::Args)]
pub(super) struct RewriteArgs {
    /// `FILE.rise:NAME`.
    program: String,
    /// `FILE.elevate:STRATEGY`: a definition of the file, or any strategy written with its
    /// names (`'mm.elevate:baseline ; codegenNF'`).
    #[arg(long)]
    strategy: String,
    /// Which of an application's function and argument `one` visits first.
    #[arg(long, value_enum, default_value_t)]
    order: Order,
    /// Print every rule application with its position (child indices from the root).
    #[arg(long)]
    trace: bool,
    /// Stop after this many rewrite steps.
    #[arg(long, default_value_t = 100_000_000, value_parser = limits::steps)]
    max_steps: u64,
    /// Stop after this many seconds (guided searches included).
    #[arg(long, default_value = "60", value_parser = limits::parse_seconds)]
    time_s: Duration,
    /// Stop when the process's resident memory passes this many MB.
    #[arg(long, value_parser = limits::memory_mb)]
    memory_mb: Option<u64>,
    /// Write the result as a `.rise` definition of the program's name to this file.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Replace `--out` if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    params: super::ParamArgs,
}

impl RewriteArgs {
    pub(super) fn run(&self) -> Result<()> {
        let def = at_argument(
            &self.program,
            rise::load_def_ref(&self.program, "".as_ref()),
        )?;
        let (file, strategy) = at_argument(
            &self.strategy,
            strategy::load_spec(&self.strategy, &self.params.params()?),
        )?;
        if let Some(out) = &self.out {
            let mut outputs = Outputs::default();
            outputs.add(out, "--out");
            let mut reads = file.inputs.clone();
            reads.push(crate::guide::file_of(&self.program).into());
            outputs.check(&reads, self.force)?;
        }
        let settings = Settings {
            order: self.order,
            max_steps: self.max_steps,
            time: self.time_s,
            memory_mb: self.memory_mb,
            trace: self.trace,
            sizes: def.sizes.clone(),
            searcher: Some(std::rc::Rc::new(crate::guide::Searches::default())),
            ..Settings::default()
        };
        let outcome = strategy::run(&file, &strategy, &def.term, &settings)?;
        self.print_trace(&outcome);
        let summary = summary(&outcome);
        match &outcome.ending {
            Ending::Success(t) => {
                let named = debruijn::to_named_as(t, debruijn::Annotate::Leading, &def.names);
                let text = format!("def {} = {}\n", def.name, print::print_expr(&named));
                print!("{text}");
                println!("{summary}");
                if let Some(out) = &self.out {
                    crate::files::write_atomically(out, text.as_bytes())?;
                }
                Ok(())
            }
            Ending::Failure(f) => {
                println!("{summary}");
                Err(Error {
                    kind: ErrorKind::CheckFailed,
                    ..Error::at(&f.span, f.to_string())
                })
            }
            Ending::Stopped(limit) => {
                println!("{summary}");
                Err(Error {
                    kind: ErrorKind::Limit(limit),
                    ..Error::check_failed(format!("the {limit} limit stopped the strategy"))
                })
            }
        }
    }

    fn print_trace(&self, outcome: &Outcome) {
        for (i, a) in outcome.trace.iter().enumerate() {
            let term = debruijn::to_named(&a.result, debruijn::Annotate::Bare);
            println!(
                "{:>6} {} at [{}]: {}",
                i + 1,
                a.rule,
                strategy::position(&a.at),
                print::print_expr(&term)
            );
        }
    }
}

/// The counts, time and memory of a run, on one line.
fn summary(o: &Outcome) -> String {
    let searches = match o.counts.searches {
        0 => String::new(),
        n => format!(
            ", {n} guided searches (at most {} e-nodes)",
            o.counts.enodes
        ),
    };
    format!(
        "rewrite steps {}, rule applications {}{searches}, {:.3} s, peak memory {:.0} MB",
        o.counts.steps,
        o.counts.rules,
        o.seconds,
        crate::egraph::saturate::resident_mb(true)
    )
}
