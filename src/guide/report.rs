//! Reporting searches: per-step summaries, per-iteration CSV (`--stats`), progress bars.

use super::explain::{self, Explanation};
use super::StepReport;
use crate::egraph::saturate::IterationStats;
use crate::error::Result;
use crate::rise::{debruijn, print};
use std::path::Path;

/// A human-readable summary of a step, with the extracted term as named Rise: on one line,
/// or on lines of at most `width` characters where it can ([`print::print_wrapped`]).
pub fn summary(
    label: &str,
    step: &StepReport,
    names: &debruijn::Names,
    width: Option<usize>,
) -> String {
    let out = &step.outcome;
    let (enodes, eclasses) = out.size();
    let mut s = if let Some(counts) = &step.strategy {
        format!(
            "{label} `{}`: {}\n  rewrite steps {}, rule applications {}, time {:.3} s, peak RSS {:.1} MB",
            step.sketch,
            if out.found() { "rewritten" } else { "FAILED" },
            counts.steps,
            counts.rules,
            step.seconds,
            step.peak_rss_mb,
        )
    } else if out.found() && out.iterations.is_empty() {
        format!(
            "{label} `{}`: satisfied by the normalised input, no rewrite needed\n  time {:.3} s, peak RSS {:.1} MB",
            step.sketch, step.seconds, step.peak_rss_mb,
        )
    } else {
        format!(
            "{label} `{}`: {} after {} iterations (stop: {})\n  e-nodes {enodes}, e-classes {eclasses}, rules applied {}, time {:.3} s, peak RSS {:.1} MB",
            step.sketch,
            if out.found() { "found" } else { "NOT found" },
            out.iterations.len(),
            out.stop.name(),
            out.rules_applied(),
            step.seconds,
            step.peak_rss_mb,
        )
    };
    if step.pruned > 0 {
        s += &format!(", {} e-nodes pruned by the term-size filter", step.pruned);
    }
    if let Some(t) = &step.term {
        let named = debruijn::to_named_as(t, debruijn::Annotate::Leading, names);
        let form = if step.normalised || step.strategy.is_some() {
            ""
        } else {
            ", as extracted: its beta-eta normal form does not satisfy the sketch"
        };
        let printed = match width {
            Some(w) => print::print_wrapped(&named, w, 4),
            None => format!("    {}", print::print_expr(&named)),
        };
        s += &format!("\n  term (size {}{form}):\n{printed}", t.size());
    }
    s
}

/// A step's rewrite path ([`super::explain`]), one numbered rewrite after another, each with
/// the rule, the position in words and the subterm before and after.
pub fn explanation(e: &Explanation, names: &debruijn::Names) -> String {
    let (start, path) = match e {
        Explanation::NotFound { explored, limits } => {
            return format!(
                "  rewrite path: none found (rewrites of {explored} terms tried, paths of up to {} rewrites)\n",
                limits.depth
            )
        }
        Explanation::Path { start, rewrites } => (start, rewrites),
    };
    let mut s = format!(
        "  rewrite path ({} rewrites, each followed by beta-eta normalisation):\n",
        path.len()
    );
    let mut before = start;
    for (i, rw) in path.iter().enumerate() {
        let show = |t| print::print_expr(&debruijn::to_named_at(before, &rw.position, t, names));
        s += &format!(
            "    {}. {} at {}:\n         {}\n      => {}\n",
            i + 1,
            rw.rule,
            explain::position_in_words(before, &rw.position),
            show(&rw.before),
            show(&rw.after)
        );
        before = &rw.term;
    }
    if let Some(last) = path.last() {
        let named = debruijn::to_named_as(&last.term, debruijn::Annotate::Leading, names);
        s += &format!("    result: {}\n", print::print_expr(&named));
    }
    s
}

/// How a step is named in its summary: `check` for a one-step search, `step N` in a guide.
pub fn step_label(guide: &crate::guide::Guide, index: usize) -> String {
    if guide.steps.len() == 1 {
        "check".to_string()
    } else {
        format!("step {}", index + 1)
    }
}

/// One line per iteration, for logs (stderr that is not a terminal).
pub fn iteration_line(step: usize, s: &IterationStats) -> String {
    format!(
        "step {} iteration {}: {} e-nodes, {} e-classes, {} rules applied, {:.3} s (filter {:.3} s, sketch check {:.3} s), RSS {:.0} MB",
        step + 1,
        s.iteration,
        s.enodes,
        s.eclasses,
        s.rules_applied(),
        s.seconds(),
        s.parts.filter,
        s.parts.sketch,
        s.rss_mb
    )
}

/// Per-iteration figures of one or more steps, for `--stats FILE.csv`.
#[derive(Default)]
pub struct StatsLog {
    rows: Vec<(usize, IterationStats)>,
}

impl StatsLog {
    pub fn push(&mut self, step: usize, stats: &IterationStats) {
        self.rows.push((step, stats.clone()));
    }

    /// Writes the CSV atomically: step, iteration, e-nodes, e-classes, rules applied, time
    /// (snapshot and rewrite step), the sketch query's work (tuples matched) and time after
    /// the iteration, resident memory, the snapshot's share of the time, the e-nodes the
    /// iteration added, the whole iteration's time (with its check) per new e-node, the
    /// other parts' times (free variables, rewrite step, types, counting, filter) and
    /// resident bytes per e-node.
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut w = csv::Writer::from_writer(vec![]);
        let header = [
            "step",
            "iteration",
            "enodes",
            "eclasses",
            "rules_applied",
            "seconds",
            "sketch_work",
            "sketch_seconds",
            "rss_mb",
            "snapshot_seconds",
            "new_enodes",
            "us_per_new_enode",
            "free_seconds",
            "rewrite_seconds",
            "types_seconds",
            "count_seconds",
            "filter_seconds",
            "bytes_per_enode",
        ];
        let csv_err = |e: csv::Error| crate::error::Error::bad_input(format!("csv: {e}"));
        w.write_record(header).map_err(csv_err)?;
        let mut before = (usize::MAX, 0);
        for (step, s) in &self.rows {
            // E-nodes the iteration added (the first iteration of a step counts all).
            let previous = if before.0 == *step { before.1 } else { 0 };
            before = (*step, s.enodes);
            let new = s.enodes.saturating_sub(previous);
            w.write_record([
                (step + 1).to_string(),
                s.iteration.to_string(),
                s.enodes.to_string(),
                s.eclasses.to_string(),
                s.rules_applied().to_string(),
                format!("{:.6}", s.seconds()),
                s.check_work.to_string(),
                format!("{:.6}", s.parts.sketch),
                format!("{:.1}", s.rss_mb),
                format!("{:.6}", s.parts.snapshot),
                new.to_string(),
                format!("{:.2}", s.us_per_new_enode(new)),
                format!("{:.6}", s.parts.free),
                format!("{:.6}", s.parts.rewrite),
                format!("{:.6}", s.parts.types),
                format!("{:.6}", s.parts.count),
                format!("{:.6}", s.parts.filter),
                format!("{:.0}", s.bytes_per_enode()),
            ])
            .map_err(csv_err)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| crate::error::Error::bad_input(format!("csv: {e}")))?;
        crate::files::write_atomically(path, &bytes)
    }
}
