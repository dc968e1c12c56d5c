//! `guide`: runs a guide file; `guide-auto`: finds one for a program from its final sketch
//! or goal and writes it.

use super::check::{run_steps, LimitArgs};
use super::{at_argument, cost_of, explain_limits, DumpArgs, Outputs};
use crate::error::{Error, Result};
use crate::guide::{self, report};
use crate::{limits, rise};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `sketchlog guide`'s arguments.
#[derive(Args)]
pub(super) struct GuideArgs {
    /// The guide file.
    file: PathBuf,
    /// Per-iteration figures of every step to this CSV file.
    #[arg(long)]
    stats: Option<PathBuf>,
    /// Print each step's rewrite path: every rule applied, where, and the subterm before
    /// and after; `--explain=N` lets the path search expand N terms (default 500).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "500",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    explain: Option<u32>,
    #[command(flatten)]
    params: super::ParamArgs,
    #[command(flatten)]
    dump: DumpArgs,
}

impl GuideArgs {
    /// Runs the guide file, its outputs checked against what it reads before it starts.
    pub(super) fn run(self) -> Result<()> {
        let GuideArgs {
            file,
            stats,
            explain,
            params,
            dump,
        } = self;
        let dump = dump.dump()?;
        let params = params.params()?;
        let (g, reads) = crate::files::recording(|| guide::parse::load_guide_with(&file, params));
        let mut g = g?;
        let mut outputs = Outputs::default();
        if let Some(path) = &stats {
            outputs.add(path, &path.display().to_string());
        }
        for (i, step) in g.steps.iter_mut().enumerate() {
            step.dump = dump.as_ref().map(|d| d.for_step(i));
            step.explain = explain.map(explain_limits);
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

/// `guide-auto`: the program, what to find a guide for, and how each step searches.
#[derive(clap::Args)]
pub(super) struct AutoArgs {
    /// The program, `FILE.rise:NAME`.
    program: String,
    /// `FILE.sketch:NAME`: the final sketch.
    #[arg(long, conflicts_with = "goal", required_unless_present = "goal")]
    sketch: Option<String>,
    /// `FILE.rise:NAME`: the exact goal.
    #[arg(long)]
    goal: Option<String>,
    /// `FILE.rules[:SET]`, repeatable: a file's rule sets (or the set named) are the
    /// candidates for each step; a folder: every `.rules` file in it.
    #[arg(long, required = true)]
    rules: Vec<String>,
    #[command(flatten)]
    params: super::ParamArgs,
    /// Extract with weights from a cost file (default: AST size).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Write the guide here (`FOUND.guide`), its checkpoints beside it
    /// (`FOUND.checkpoints.sketch` or `FOUND.checkpoints.rise`). None of them may be a file the
    /// command reads, nor, without `--force`, a file that exists.
    #[arg(short, long)]
    output: PathBuf,
    /// Replace the files `-o` names if they exist.
    #[arg(long)]
    force: bool,
    /// The whole search's time in seconds (default 600): no trial runs past it (each trial's
    /// own limit is `--time-s`).
    #[arg(long, value_parser = limits::parse_seconds)]
    total_time: Option<Duration>,
    /// Each step's limits and filters, as for `check`; `--enodes` is the largest cap.
    #[command(flatten)]
    limits: LimitArgs,
}

impl AutoArgs {
    /// The `-o` argument as the command line has it (where a refused output is located).
    fn output_arg(&self) -> String {
        self.output.display().to_string()
    }

    /// Finds the guide and writes it.
    pub(super) fn run(self) -> Result<()> {
        auto_guide(&self.program, &self)
    }
}

/// What `guide-auto` searches with, every file it reads loaded; then the files it will
/// write checked against them.
type Loaded = (
    guide::Cost,
    rise::LoadedDef,
    Vec<guide::auto::Checkpoint>,
    Vec<guide::auto::Candidate>,
);

fn load_checked(
    program: &str,
    target: guide::Target,
    args: &AutoArgs,
    rules: &[String],
) -> Result<Loaded> {
    use guide::auto;
    let spec = match target {
        guide::Target::Sketch(s) | guide::Target::Goal(s) => s,
    };
    let (loaded, reads) = crate::files::recording(|| -> Result<_> {
        let cost = cost_of(args.weights.as_deref())?;
        let def = at_argument(program, rise::load_def_ref(program, Path::new("")))?;
        let limits = args.limits.limits();
        let params = args.params.params()?;
        let checkpoints = at_argument(spec, auto::checkpoints(target, &def, &limits, &params))?;
        let mut candidates = vec![];
        for spec in rules {
            candidates.extend(at_argument(spec, auto::candidates(spec, &params))?);
        }
        Ok((cost, def, checkpoints, candidates))
    });
    let loaded = loaded?;
    let out = args.output.as_path();
    let (sketch_file, rise_file) = auto::write::checkpoint_files(out);
    let named_by = args.output_arg();
    let mut outputs = Outputs::default();
    outputs.add(out, &named_by);
    match target {
        guide::Target::Sketch(_) => outputs.add(sketch_file, &named_by),
        guide::Target::Goal(_) => outputs.add(rise_file, &named_by),
    }
    outputs.check(&reads, args.force)?;
    Ok(loaded)
}

/// Prints what the automatic search reports as it goes.
fn print_event(
    e: &guide::auto::Event,
    checkpoints: &[guide::auto::Checkpoint],
    names: &crate::rise::debruijn::Names,
) {
    use guide::auto::Event;
    match e {
        Event::Found(f) => {
            let sets: Vec<String> = f.candidate.sets.iter().map(|s| s.label()).collect();
            println!(
                "{}\n  rules {}; found in {} trials, {:.2} s",
                report::summary(
                    &format!("step {}", f.checkpoint + 1),
                    &f.report,
                    names,
                    super::term_width()
                ),
                sets.join(" "),
                f.trials,
                f.seconds
            );
        }
        Event::Satisfied(i) => println!(
            "step {} `{}`: satisfied by the term so far, no step needed",
            i + 1,
            checkpoints[*i].name
        ),
        Event::OutOfReach(i, missing) => println!(
            "step {} `{}`: out of reach of every rule set, none of which makes `{}` (not searched): skipped",
            i + 1,
            checkpoints[*i].name,
            missing.join("`, `")
        ),
        Event::Skipped(i, trials, seconds) => println!(
            "step {} `{}`: not reached by any rule set within the caps ({trials} trials, {seconds:.2} s): skipped",
            i + 1,
            checkpoints[*i].name
        ),
    }
}

/// `guide-auto`: finds the steps, printing each as it is found, and writes the guide;
/// exit 1 (nothing written) when the target is not reached. The files it will write are
/// checked before the search against every file it reads, and are never an existing file
/// unless `--force`.
fn auto_guide(program: &str, args: &AutoArgs) -> Result<()> {
    use guide::auto;
    let target = match (&args.sketch, &args.goal) {
        (Some(s), _) => guide::Target::Sketch(s),
        (None, Some(g)) => guide::Target::Goal(g),
        (None, None) => unreachable!("clap requires --sketch or --goal"),
    };
    let rules = at_argument("--rules", auto::rule_specs(&args.rules))?;
    let first_rules = rules.first().expect("clap requires --rules");
    let out = args.output.as_path();
    let spec = match target {
        guide::Target::Sketch(s) | guide::Target::Goal(s) => s,
    };
    let (cost, def, checkpoints, candidates) = load_checked(program, target, args, &rules)?;
    let settings = auto::Settings {
        cost,
        limits: args.limits.limits(),
        filter: args.limits.filter(),
        normal_form: args.limits.normal_form,
        total: args.total_time.unwrap_or(guide::auto::TOTAL_TIME),
    };
    let names: Vec<&str> = checkpoints.iter().map(|c| c.name.as_str()).collect();
    println!(
        "guide-auto: {} checkpoints ({}), {} rule sets, at most {} s in all",
        checkpoints.len(),
        names.join(", "),
        candidates.len(),
        settings.total.as_secs_f64()
    );
    let t0 = std::time::Instant::now();
    let mut out_of_reach = None;
    let (steps, missed) = auto::find(&def.term, &checkpoints, &candidates, &settings, |e| {
        if let auto::Event::OutOfReach(i, missing) = &e {
            out_of_reach = (*i + 1 == checkpoints.len()).then(|| missing.join("`, `"));
        }
        print_event(&e, &checkpoints, &def.names)
    })?;
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(stop) = missed {
        let why = match (out_of_reach, t0.elapsed() >= settings.total) {
            (Some(missing), _) => format!("no rule set makes `{missing}`"),
            (None, true) => format!(
                "the total time, {} s, ran out",
                settings.total.as_secs_f64()
            ),
            (None, false) => format!("its last trial: {stop}"),
        };
        return Err(Error::check_failed(format!(
            "`{spec}` not reached ({why}): {} of {} checkpoints found before it, {seconds:.2} s",
            steps.len(),
            checkpoints.len() - 1
        )));
    }
    let rules_file = Path::new(crate::rules::split_spec(first_rules).0);
    let line = crate::source::command_line();
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
