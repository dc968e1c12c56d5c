//! The e-node cap inside an iteration.
//!
//! egglog's `step_rules` applies every match of an iteration at once, so an e-graph that
//! triples per iteration passes an e-node cap threefold before the driver sees it.
//! [`Rewriter`] steps the ruleset through an egglog [`Scheduler`] instead, which lets only a
//! budget of matches fire: the room left under the cap divided by the new e-nodes per match
//! of the last iteration (with a margin). An iteration with more matches than that is cut,
//! and the search stops there with its e-graph near the cap; one with fewer is whole, as
//! `step_rules` would have run it. Measured on the unguided blocking search to 223K
//! e-nodes, stepping through the scheduler costs about as much time as `step_rules` and
//! less memory. (Matches that did not fit are never fired later: after the step's rebuild
//! they may name merged classes, and firing them then made ill-typed unions.)

use crate::error::Result;
use egglog::scheduler::{Matches, Scheduler, SchedulerId};
use egglog::EGraph;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// What a rewrite step did.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Matches applied.
    pub matches: usize,
    /// Whether the e-graph changed.
    pub updated: bool,
    /// Whether the step was cut at the cap with matches left.
    pub capped: bool,
}

/// Shared between the driver and the scheduler egglog owns.
#[derive(Default)]
struct Budget {
    /// Whether this step only counts the matches (none fires: they wait in egglog's
    /// worklist for the next step).
    counting: AtomicBool,
    /// Matches counted.
    found: AtomicUsize,
    /// Of each rule's matches, the share that fires, in millionths.
    share: AtomicUsize,
    /// Whether a rule had matches that did not fire.
    cut: AtomicBool,
}

const WHOLE: usize = 1_000_000;

/// Counts the matches, or fires a share of each rule's, spread evenly over them.
#[derive(Clone)]
struct Capped(Arc<Budget>);

impl Scheduler for Capped {
    fn filter_matches(&mut self, _rule: &str, _ruleset: &str, matches: &mut Matches) -> bool {
        let b = &self.0;
        let n = matches.match_size();
        let share = b.share.load(Relaxed);
        if b.counting.load(Relaxed) {
            b.found.fetch_add(n, Relaxed);
        } else if share >= WHOLE {
            matches.choose_all();
        } else {
            let fire = n * share / WHOLE;
            (0..fire).for_each(|i| matches.choose(i * n / fire.max(1)));
            if fire < n {
                b.cut.store(true, Relaxed);
            }
        }
        true
    }
}

/// Steps a ruleset, one iteration a call, keeping the e-node cap inside the iteration.
#[derive(Default)]
pub struct Rewriter {
    budget: Arc<Budget>,
    /// The scheduler (added on the first step).
    scheduler: Option<SchedulerId>,
    /// E-nodes before the last step and the matches it applied.
    last: Option<(usize, usize)>,
}

impl Rewriter {
    /// One iteration of `ruleset` on an e-graph of `enodes` e-nodes: every match fires if
    /// the matches, at the last iteration's new e-nodes per match, fit in `cap - enodes`;
    /// else the share of each rule's matches that fits. (The last iteration's figure is
    /// this call's `enodes` less the last call's, over its matches: one new e-node a match
    /// before the first.)
    pub fn step(
        &mut self,
        eg: &mut EGraph,
        ruleset: &str,
        enodes: usize,
        cap: usize,
    ) -> Result<Step> {
        let b = self.budget.clone();
        let id = *self
            .scheduler
            .get_or_insert_with(|| eg.add_scheduler(Box::new(Capped(b.clone()))));
        // First count the iteration's matches: nothing fires, so nothing is rebuilt and the
        // matches stay valid for the second step, which fires them (or a share).
        b.counting.store(true, Relaxed);
        b.found.store(0, Relaxed);
        eg.step_rules_with_scheduler(id, ruleset)
            .map_err(super::engine)?;
        let per_match = match self.last {
            Some((before, matches)) if matches > 0 => {
                enodes.saturating_sub(before) as f64 / matches as f64
            }
            _ => 1.0,
        };
        let room = cap.saturating_sub(enodes) as f64;
        let expected = b.found.load(Relaxed) as f64 * per_match;
        let share = if expected <= room {
            WHOLE
        } else {
            (room / expected * WHOLE as f64) as usize
        };
        b.counting.store(false, Relaxed);
        b.share.store(share, Relaxed);
        b.cut.store(false, Relaxed);
        let report = eg
            .step_rules_with_scheduler(id, ruleset)
            .map_err(super::engine)?;
        let step = Step {
            matches: report.num_matches_per_rule.values().sum(),
            updated: report.updated,
            capped: b.cut.load(Relaxed),
        };
        self.last = Some((enodes, step.matches));
        Ok(step)
    }
}
