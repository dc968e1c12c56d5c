//! The e-node cap inside an iteration.
//!
//! egglog's `step_rules` applies every match of an iteration at once, so an e-graph that
//! triples per iteration passes an e-node cap threefold before the driver sees it.
//! [`Rewriter`] keeps `step_rules` while the cap is far, and once it is near (the last
//! iteration's growth, twice over, would pass it) steps the ruleset through an egglog
//! [`Scheduler`]: it first counts the iteration's matches without firing any, then fires of
//! each rule's matches the share that fits, the room left under the cap over the matches
//! times the last iteration's new e-nodes per match. An iteration with more matches than
//! that is cut, and the search stops there with its e-graph near the cap; one with fewer is
//! whole, as `step_rules` would have run it. (Matches that did not fit are never fired
//! later: after the step's rebuild they may name merged classes, and firing them then made
//! ill-typed unions.)

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
/// The growth assumed before the first iteration.
const FIRST_GROWTH: f64 = 4.0;

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
            (0..fire).for_each(|i| matches.choose(i * n / fire));
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
    /// The scheduler, from the first step that used it on (its semi-naive queries must see
    /// every new match).
    scheduler: Option<SchedulerId>,
    /// E-nodes before the last step and the matches it applied.
    last: Option<(usize, usize)>,
    /// Matches fired by egglog's own steps, before the scheduler was needed.
    plain_matches: usize,
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
        let per_match = match self.last {
            Some((before, matches)) if matches > 0 => {
                enodes.saturating_sub(before) as f64 / matches as f64
            }
            _ => 1.0,
        };
        let growth = match self.last {
            Some((before, _)) if before > 0 => enodes as f64 / before as f64,
            _ => FIRST_GROWTH,
        };
        let near = enodes as f64 * growth * 2.0 >= cap as f64;
        if !near && self.scheduler.is_none() {
            // Far from the cap: egglog's own step (the scheduler's queries always skip
            // subsumed rows, which costs memory in proportion to the tables: see
            // [`super::rust_rule`]).
            let report = eg.step_rules(ruleset).map_err(super::engine)?;
            let step = Step {
                matches: report.num_matches_per_rule.values().sum(),
                updated: report.updated,
                capped: false,
            };
            self.plain_matches += step.matches;
            self.last = Some((enodes, step.matches));
            return Ok(step);
        }
        let b = self.budget.clone();
        let first = self.scheduler.is_none();
        let id = *self
            .scheduler
            .get_or_insert_with(|| eg.add_scheduler(Box::new(Capped(b.clone()))));
        // Near the cap, first count the iteration's matches: nothing fires, so nothing is
        // rebuilt and the matches stay valid for the second step, which fires them (or a
        // share). The scheduler's first step finds every match since the start, the ones
        // egglog's steps fired before included: those are not counted as new.
        let share = if near {
            b.counting.store(true, Relaxed);
            b.found.store(0, Relaxed);
            eg.step_rules_with_scheduler(id, ruleset)
                .map_err(super::engine)?;
            let mut found = b.found.load(Relaxed);
            if first {
                found = found.saturating_sub(self.plain_matches);
            }
            let room = cap.saturating_sub(enodes) as f64;
            let expected = found as f64 * per_match;
            if expected <= room {
                WHOLE
            } else {
                (room / expected * WHOLE as f64) as usize
            }
        } else {
            WHOLE
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
