//! `check`: one search from a program to a sketch or goal (or several), and the progress
//! and summaries every search from the command line prints.

use super::{at_argument, cost_of, explain_limits, DumpArgs, Outputs};
use crate::egraph;
use crate::error::{Error, Result};
use crate::guide::{self, report};
use crate::limits;
use crate::rise::{self, debruijn, print};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `sketchlog check`'s arguments.
#[derive(clap::Args)]
pub(super) struct CheckArgs {
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
    params: super::ParamArgs,
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

/// Limits and filters of a search, as flags.
#[derive(clap::Args)]
pub(super) struct LimitArgs {
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
    pub(super) normal_form: egraph::normal::NormalForm,
}

impl LimitArgs {
    pub(super) fn limits(&self) -> egraph::saturate::Limits {
        egraph::saturate::Limits {
            iterations: self.iterations,
            enodes: self.enodes,
            time: self.time_s,
            memory_mb: self.memory_mb,
            ..egraph::saturate::Limits::default()
        }
    }
    pub(super) fn filter(&self) -> egraph::filter::Filter {
        egraph::filter::Filter {
            array_depth: self.array_depth,
            sizes_positive: self.sizes_positive,
            ast_size: self.ast_size,
            ast_size_scope: self.ast_size_scope,
        }
    }
}

pub(super) fn check(args: &CheckArgs) -> Result<()> {
    let dump = args.dump.dump()?;
    let cost = cost_of(args.weights.as_deref())?;
    let line = crate::source::command_line();
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
            (&args.rules, &args.params.params()?),
            (cost.clone(), limits.limits(), limits.filter()),
            &|spec| Some(crate::source::argument_span(&line, spec)),
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
    g.steps[0].explain = args.explain.map(explain_limits);
    if args.show_query && args.goal.is_empty() {
        let query = crate::sketch::query::SketchQuery::compile(&g.steps[0].sketch.sketch)?;
        print!("{}", query.program);
    }
    run_steps(&g, args.stats.as_deref())
}

/// Every `--sketch` and `--goal` of `args`, for the program's sizes and type.
fn load_targets(
    args: &CheckArgs,
    step: &guide::Step,
    cost: guide::Cost,
) -> Result<Vec<guide::shared::Target>> {
    use guide::shared::Target;
    let def = at_argument(
        &args.program,
        rise::load_def_ref(&args.program, Path::new("")),
    )?;
    let mut targets = vec![];
    let params = args.params.params()?;
    for spec in &args.sketch {
        let sketch = at_argument(spec, crate::sketch::load_with(spec, &def.sizes, &params))?;
        targets.push(Target::Sketch(sketch, cost.clone()));
    }
    for spec in &args.goal {
        let program = (def.name.as_str(), &def.term.ty);
        let loaded = guide::load_goal(spec, Path::new(""), program, &step.limits);
        let term = at_argument(spec, loaded)?;
        let name = format!("goal {spec}");
        targets.push(Target::Goal { name, term });
    }
    Ok(targets)
}

/// `check` with several targets (`--sketch` and `--goal` given more than once): one search
/// from the program with the step of `g` (its own target aside) for all of them, each
/// reported as it is found; a failed check when one is not found.
fn check_many(args: &CheckArgs, g: guide::Guide, cost: guide::Cost) -> Result<()> {
    use guide::shared::search_each;
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
    let targets = load_targets(args, step, cost)?;
    let mut log = report::StatsLog::default();
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

/// Runs steps with progress bars (a line per iteration when stderr is not a terminal),
/// prints each step's summary, rewrites `--stats` as each iteration finishes (so a stopped
/// or killed search keeps every finished iteration); fails with exit code 1 when a step did
/// not find its sketch.
pub(super) fn run_steps(guide: &guide::Guide, stats: Option<&Path>) -> Result<()> {
    use std::io::IsTerminal;
    let mut log = report::StatsLog::default();
    if let Some(path) = stats {
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
                report::summary(
                    &report::step_label(guide, i),
                    r,
                    &guide.names,
                    super::term_width()
                )
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
