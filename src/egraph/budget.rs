//! The e-node cap inside an iteration.
//!
//! egglog's `step_rules` applies every match of an iteration at once, so an e-graph that
//! triples per iteration passes an e-node cap threefold before the driver sees it. Every
//! rewrite is a Rust rule reading the [`Snapshot`](super::subst::Snapshot), so the cap is
//! kept where the matches fire: each match asks the snapshot's [`Budget`] whether it may.
//! Far from the cap every match may. Once the cap is near (the last iteration's growth,
//! twice over, would pass it), [`Rewriter`] gives the budget two figures from the last
//! iteration: the share of matches to fire, the room left under the cap over the matches
//! this iteration is expected to have, times the new e-nodes a match added, spread evenly
//! over the matches in the order egglog finds them; and how many may fire at most, the room
//! over the new e-nodes per match. Whatever that estimate, every new e-node a fired match
//! inserts is counted (egglog mints a new e-node's class from a counter, so its class is
//! newer than every class of the snapshot), and once they fill the room no further match
//! fires. The rebuild keeps fewer e-nodes than were inserted (an e-node whose class is merged
//! can become a copy of another), so the room is counted in inserts through the share of the
//! last iteration's inserts that stayed (`Rewriter::inserts_room`): that holds the cap
//! within a few percent even when an iteration's matches add many more e-nodes each than the
//! last one's did. An iteration with a match left unfired is cut, and the search stops
//! there; one without is whole, as `step_rules` would have run it. (Unfired matches are
//! never fired later: the search ends.)
//!
//! The cap covers every rewrite of a search: the rules of every encoding, beta, eta and the
//! rules that push explicit substitutions through terms are all Rust rules. The budget also
//! counts, by rule, the fired matches that changed the e-graph ([`Budget::applied`]), which
//! is what egg reports as rules applied. The step stays egglog's own semi-naive `step_rules`
//! throughout, so a cut iteration costs the time and memory of a whole one's share (an
//! egglog scheduler would keep every match since the start of the search and a "not
//! subsumed" constraint per rule).

use super::saturate::Cancel;
use super::subst::SharedSnapshot;
use crate::error::Result;
use egglog::{EGraph, Value};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which of an iteration's matches fire: shared by the Rust rules through the snapshot.
#[derive(Debug)]
pub struct Budget {
    /// Whether the iteration is limited (else every match fires).
    limited: AtomicBool,
    /// Of the matches, the share that fires, in millionths.
    share: AtomicUsize,
    /// How many may fire at most.
    most: AtomicUsize,
    /// Matches seen, and of those fired, this iteration.
    seen: AtomicUsize,
    fired: AtomicUsize,
    /// Matches a naively evaluated rule had applied before, found again this iteration.
    repeated: AtomicUsize,
    /// New e-nodes the fired matches have inserted this iteration, and how many may be: no
    /// match fires once they reach it, whatever the share says.
    inserted: AtomicUsize,
    room: AtomicUsize,
    /// Fired matches that changed the e-graph this iteration, by rule, as egg counts rules
    /// applied ([`Budget::applied`]); and the iteration's unions so far.
    changes: Mutex<Changes>,
    /// The search's stop request: once it is made, no further match fires, so that the
    /// iteration under way ends soon after (its matching still runs to the end).
    cancel: std::sync::OnceLock<Cancel>,
    /// The search's memory limit in MB (`u64::MAX`: none), looked at every
    /// [`MEMORY_EVERY`] matches; once the process's resident memory reaches it, no further
    /// match fires this iteration.
    memory_mb: AtomicU64,
    over_memory: AtomicBool,
}

/// How many matches pass between two looks at the process's resident memory (reading
/// `/proc/self/status` takes some microseconds; a match, about as many).
const MEMORY_EVERY: usize = 1 << 12;

/// An iteration's unions, as parent links between classes, and the applications by rule
/// that changed the e-graph.
#[derive(Debug, Default)]
struct Changes {
    parent: FxHashMap<Value, Value>,
    by_rule: BTreeMap<Arc<str>, usize>,
}

impl Changes {
    /// The class `c` is one with, halving its path on the way.
    fn root(&mut self, mut c: Value) -> Value {
        while let Some(&p) = self.parent.get(&c) {
            match self.parent.get(&p) {
                Some(&grand) => {
                    self.parent.insert(c, grand);
                    c = grand;
                }
                None => return p,
            }
        }
        c
    }
}

impl Default for Budget {
    /// A budget that lets every match fire.
    fn default() -> Budget {
        Budget {
            limited: AtomicBool::new(false),
            share: AtomicUsize::new(WHOLE),
            most: AtomicUsize::new(usize::MAX),
            seen: AtomicUsize::new(0),
            fired: AtomicUsize::new(0),
            repeated: AtomicUsize::new(0),
            inserted: AtomicUsize::new(0),
            room: AtomicUsize::new(usize::MAX),
            changes: Mutex::default(),
            cancel: std::sync::OnceLock::new(),
            memory_mb: AtomicU64::new(u64::MAX),
            over_memory: AtomicBool::new(false),
        }
    }
}

const WHOLE: usize = 1_000_000;
/// The growth assumed before the first iteration.
const FIRST_GROWTH: f64 = 4.0;

impl Budget {
    /// Whether the next match may fire (called once per match, in the order egglog finds
    /// them; the k-th fires when the share's running total passes a whole number).
    pub fn admit(&self) -> bool {
        let k = self.seen.fetch_add(1, Relaxed);
        if k.is_multiple_of(MEMORY_EVERY) {
            let cap = self.memory_mb.load(Relaxed);
            if cap != u64::MAX && super::saturate::resident_mb(false) >= cap as f64 {
                self.over_memory.store(true, Relaxed);
            }
        }
        if self.inserted.load(Relaxed) >= self.room.load(Relaxed)
            || self.cancelled()
            || self.over_memory.load(Relaxed)
        {
            return false;
        }
        if self.limited.load(Relaxed) {
            let share = self.share.load(Relaxed);
            let due = (k + 1) * share / WHOLE > k * share / WHOLE;
            if !due || self.fired.load(Relaxed) >= self.most.load(Relaxed) {
                return false;
            }
        }
        self.fired.fetch_add(1, Relaxed);
        true
    }

    /// Whether the search was asked to stop: then no match fires.
    pub fn cancelled(&self) -> bool {
        self.cancel.get().is_some_and(Cancel::is_cancelled)
    }

    /// Counts a match a naively evaluated rule had applied before (it does not fire again).
    pub fn repeat(&self) {
        self.repeated.fetch_add(1, Relaxed);
    }

    /// Counts a new e-node a fired match inserts.
    pub fn insert(&self) {
        self.inserted.fetch_add(1, Relaxed);
    }

    /// Records that a fired match of `rule` unions its class with `rewritten`, counting it as
    /// applied if the two are not one class yet: not the same class at the snapshot, nor
    /// merged by an earlier union of this iteration. A new e-node's class is newer than every
    /// class, so a match that adds one always counts.
    pub fn applied(&self, rule: &Arc<str>, class: Value, rewritten: Value) {
        let mut changes = self.changes.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = (changes.root(class), changes.root(rewritten));
        if a != b {
            changes.parent.insert(a, b);
            *changes.by_rule.entry(rule.clone()).or_default() += 1;
        }
    }

    /// Starts an iteration with `room` e-nodes left under the cap, its matches limited as
    /// `limit` says (share in millionths, most to fire) or not at all, none firing once the
    /// process holds `memory_mb`.
    fn start(
        &self,
        room: usize,
        limit: Option<(usize, usize)>,
        cancel: &Cancel,
        memory_mb: Option<u64>,
    ) {
        // One budget serves one search, whose stop request is the same throughout.
        let _ = self.cancel.get_or_init(|| cancel.clone());
        self.memory_mb.store(memory_mb.unwrap_or(u64::MAX), Relaxed);
        self.over_memory.store(false, Relaxed);
        self.seen.store(0, Relaxed);
        self.fired.store(0, Relaxed);
        self.repeated.store(0, Relaxed);
        self.inserted.store(0, Relaxed);
        self.room.store(room, Relaxed);
        *self.changes.lock().unwrap_or_else(|e| e.into_inner()) = Changes::default();
        self.limited.store(limit.is_some(), Relaxed);
        if let Some((share, most)) = limit {
            self.share.store(share, Relaxed);
            self.most.store(most, Relaxed);
        }
    }

    /// Matches (seen, fired, repeated) since [`Budget::start`].
    pub(super) fn counts(&self) -> (usize, usize, usize) {
        let load = |n: &AtomicUsize| n.load(Relaxed);
        (load(&self.seen), load(&self.fired), load(&self.repeated))
    }
}

/// What a rewrite step did.
#[derive(Clone, Debug, Default)]
pub struct Step {
    /// Matches fired, whether or not they changed the e-graph.
    pub matches: usize,
    /// Of those, the ones that changed it, by rule ([`Budget::applied`]).
    pub applied: BTreeMap<Arc<str>, usize>,
    /// Whether the e-graph changed.
    pub updated: bool,
    /// Whether the step was cut at the cap with matches left.
    pub capped: bool,
    /// Whether the step was cut at the memory limit with matches left.
    pub over_memory: bool,
    /// Whether the step was stopped and given up ([`Rewriter::step`]).
    pub given_up: bool,
}

impl Step {
    fn given_up() -> Step {
        Step {
            given_up: true,
            ..Step::default()
        }
    }
}

/// Steps a ruleset, one iteration a call, keeping the e-node cap inside the iteration.
#[derive(Default)]
pub struct Rewriter {
    /// E-nodes before the last step, and the Rust rules' matches it fired; the same for the
    /// step before.
    last: Option<(usize, usize)>,
    before_last: Option<(usize, usize)>,
    /// The new e-nodes the last step's matches inserted, as the budget counted them.
    last_inserted: usize,
}

/// How much larger a share of an iteration's inserted e-nodes may stay after its rebuild
/// than stayed of the last iteration's (see [`Rewriter::inserts_room`]).
const KEPT_DRIFT: f64 = 2.0;

impl Rewriter {
    /// One iteration of `ruleset` on an e-graph of `enodes` e-nodes whose Rust rules read
    /// `snapshot`: every match fires if the expected matches, at the last iteration's new
    /// e-nodes per match, fit in `cap - enodes`; else an even share of them, and at most
    /// as many as fit.
    pub fn step(
        &mut self,
        eg: &mut EGraph,
        ruleset: &str,
        snapshot: &SharedSnapshot,
        enodes: usize,
        (cap, memory_mb, cancel): (usize, Option<u64>, &Cancel),
        give_up_after_stop: Option<Duration>,
    ) -> Result<Step> {
        let limit = self.limit(enodes, cap);
        let room = self.inserts_room(enodes, cap);
        snapshot
            .read()
            .unwrap()
            .budget
            .start(room, limit, cancel, memory_mb);
        if let Some(views) = super::views::views_of(eg, ruleset) {
            if super::give_up::step_rules(eg, &views, enodes, cancel, give_up_after_stop)?.is_none()
            {
                return Ok(Step::given_up());
            }
        }
        if cancel.is_cancelled() {
            // Stopped while the views were brought up to date: no rule runs.
            return Ok(Step::default());
        }
        let Some(report) =
            super::give_up::step_rules(eg, ruleset, enodes, cancel, give_up_after_stop)?
        else {
            return Ok(Step::given_up());
        };
        let budget = &snapshot.read().unwrap().budget;
        let (seen, fired, repeated) = budget.counts();
        self.last_inserted = budget.inserted.load(Relaxed);
        let applied = std::mem::take(
            &mut budget
                .changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .by_rule,
        );
        let found: usize = report.num_matches_per_rule.values().sum();
        self.before_last = self.last;
        self.last = Some((enodes, fired));
        Ok(Step {
            // egglog's count includes the matches the budget turned away and those found again.
            matches: found.saturating_sub(seen - fired + repeated),
            applied,
            updated: report.updated,
            capped: fired < seen,
            over_memory: budget.over_memory.load(Relaxed),
            given_up: false,
        })
    }

    /// How many new e-nodes the matches may insert. The rebuild keeps fewer of them than
    /// were inserted (an e-node whose class is merged can become a copy of another): of the
    /// last iteration's, a fifth to three quarters on the searches measured, and up to twice
    /// the last iteration's share in the next. The room under the cap over that share,
    /// doubled ([`KEPT_DRIFT`]) and at most one, is the inserts the iteration may make;
    /// before any iteration, every insert counts whole.
    fn inserts_room(&self, enodes: usize, cap: usize) -> usize {
        let room = cap.saturating_sub(enodes) as f64;
        let kept = match self.last {
            Some((before, _)) if self.last_inserted > 0 => {
                enodes.saturating_sub(before) as f64 / self.last_inserted as f64
            }
            _ => 1.0,
        };
        (room / (kept * KEPT_DRIFT).clamp(0.05, 1.0)) as usize
    }

    /// `None` far from the cap; near it, (share in millionths, most matches to fire).
    fn limit(&self, enodes: usize, cap: usize) -> Option<(usize, usize)> {
        let growth = match self.last {
            Some((before, _)) if before > 0 => enodes as f64 / before as f64,
            _ => FIRST_GROWTH,
        };
        if (enodes as f64) * growth * 2.0 < cap as f64 {
            return None;
        }
        let room = cap.saturating_sub(enodes) as f64;
        let Some((before, matches)) = self.last.filter(|(_, m)| *m > 0) else {
            // No iteration yet to learn from: one new e-node a match, as many as fit.
            return Some((WHOLE, room as usize));
        };
        let per_match = (enodes.saturating_sub(before) as f64 / matches as f64).max(1e-3);
        // This iteration's matches, expected to grow as the last iteration's did.
        let match_growth = match self.before_last {
            Some((_, m)) if m > 0 => matches as f64 / m as f64,
            _ => growth,
        };
        let expected = matches as f64 * match_growth * per_match;
        let share = if expected <= room {
            WHOLE
        } else {
            (room / expected * WHOLE as f64) as usize
        };
        Some((share, (room / per_match) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(b: &Budget, matches: usize) -> Vec<usize> {
        (0..matches).filter(|_| b.admit()).collect()
    }

    #[test]
    fn once_the_search_is_stopped_no_match_fires() {
        let (b, cancel) = (Budget::default(), Cancel::default());
        b.start(usize::MAX, None, &cancel, None);
        assert_eq!(admitted(&b, 5).len(), 5);
        cancel.cancel();
        assert!(admitted(&b, 5).is_empty());
    }

    /// A memory limit the process already holds turns away every match from the first look
    /// at memory on; a limit far above it, none.
    #[test]
    fn past_the_memory_limit_no_match_fires() {
        let b = Budget::default();
        b.start(usize::MAX, None, &Cancel::default(), Some(1));
        assert!(admitted(&b, 5).is_empty());
        assert!(b.over_memory.load(Relaxed));
        b.start(usize::MAX, None, &Cancel::default(), Some(1 << 40));
        assert_eq!(admitted(&b, MEMORY_EVERY + 5).len(), MEMORY_EVERY + 5);
        assert!(!b.over_memory.load(Relaxed));
    }

    #[test]
    fn far_from_the_cap_every_match_fires() {
        let b = Budget::default();
        b.start(usize::MAX, None, &Cancel::default(), None);
        assert_eq!(admitted(&b, 50).len(), 50);
        assert_eq!(b.counts(), (50, 50, 0));
    }

    #[test]
    fn a_share_is_spread_evenly_and_stops_at_the_most() {
        let b = Budget::default();
        b.start(usize::MAX, Some((WHOLE / 4, 10)), &Cancel::default(), None);
        // Every fourth match, until ten have fired.
        let fired = admitted(&b, 100);
        assert_eq!(fired, (0..10).map(|i| 4 * i + 3).collect::<Vec<_>>());
        assert_eq!(b.counts(), (100, 10, 0));
    }

    #[test]
    fn the_limit_follows_the_last_iterations_growth() {
        // 1,000 e-nodes, doubled by the last iteration's 250 matches (2 new e-nodes each),
        // which doubled the matches of the one before. Far under a cap of 100,000:
        let r = Rewriter {
            last: Some((500, 250)),
            before_last: Some((100, 125)),
            last_inserted: 4_000,
        };
        assert_eq!(r.limit(1_000, 100_000), None);
        // Near under 1,500: 500 matches (1,000 e-nodes) expected, room for 500 e-nodes: half
        // the matches fire, 250 at most.
        assert_eq!(r.limit(1_000, 1_500), Some((WHOLE / 2, 250)));
        // An eighth of the last iteration's 4,000 inserted e-nodes stayed: the room of 500
        // e-nodes is 2,000 inserts, at twice that share.
        assert_eq!(r.inserts_room(1_000, 1_500), 2_000);
    }
}
