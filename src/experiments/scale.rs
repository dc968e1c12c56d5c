//! `sketchlog bench scale`: how the engine's per-iteration work grows with the e-graph.
//!
//! Runs Table 3's unguided blocking search (the split and reorder rules, the goal sketch
//! `reorder1`, the guide's filters) until it is found or reaches N e-nodes, and prints per
//! iteration the rewrite step's time, the check's (filter and sketch query) and its share of
//! the rewrite step, microseconds per new e-node and resident bytes per e-node.

use super::matmul::{guide_of, unguided_step};
use crate::cluster::child::ProcessLimits;
use crate::egraph::saturate::IterationStats;
use crate::error::Result;
use crate::sketch::query::Engine;
use std::time::Duration;

/// Runs the benchmark: stops once the e-graph has `enodes` e-nodes, at `time`, or when found.
pub fn run(enodes: usize, time: Duration, engine: Engine) -> Result<()> {
    let g = guide_of("blocking")?;
    // No memory cap: the benchmark measures memory.
    let mut step = unguided_step(&g, ProcessLimits { memory_mb: 0, time });
    step.limits.enodes = enodes;
    step.limits.memory_mb = None;
    step.sketch_engine = engine;
    println!(
        "iteration,enodes,new_enodes,rewrite_s,filter_s,sketch_s,check_pct_of_rewrite,us_per_new_enode,rss_mb,bytes_per_enode"
    );
    let mut before = 0;
    let report = crate::guide::search(&g.start, &step, |s: &IterationStats| {
        let new = s.enodes.saturating_sub(before);
        before = s.enodes;
        println!(
            "{},{},{new},{:.3},{:.3},{:.3},{:.1},{:.1},{:.0},{:.0}",
            s.iteration,
            s.enodes,
            s.parts.rewrite,
            s.parts.filter,
            s.parts.sketch,
            100.0 * s.check_seconds() / s.parts.rewrite.max(1e-9),
            s.us_per_new_enode(new),
            s.rss_mb,
            s.bytes_per_enode(),
        );
    })?;
    eprintln!(
        "unguided blocking ({engine:?} sketch engine): {} after {} iterations, {:.1} s, peak RSS {:.0} MB",
        report.outcome.stop.name(),
        report.outcome.iterations.len(),
        report.seconds,
        report.peak_rss_mb
    );
    Ok(())
}
