//! Driving equality saturation: one egglog iteration at a time, with sketchlog's limits.
//!
//! egglog 3.0 has no node limit, so the driver steps a ruleset (`EGraph::step_rules`),
//! refreshes the extraction snapshot between iterations, asks whether the goal is found,
//! and stops cleanly on a limit with a report of how far it got.

use super::budget::Rewriter;
use super::engine;
use super::subst::{SharedSnapshot, Snapshot};
use crate::egraph::schema::Con;
use crate::error::Result;
use egglog::EGraph;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When to give up.
#[derive(Clone, Debug)]
pub struct Limits {
    pub iterations: usize,
    pub enodes: usize,
    pub time: Duration,
    /// Resident memory of the process, in MB (`None`: no limit): looked at between
    /// iterations and every few thousand matches inside one, where reaching it stops further
    /// matches from firing.
    pub memory_mb: Option<u64>,
    /// Set from outside the search (another thread, a signal handler) to end it before its
    /// next iteration, as a limit would.
    pub cancel: Cancel,
    /// How long one of egglog's steps on a large e-graph (the rewrite, or the free-variable
    /// rules and views before it) may go on after a stop request before the search gives it
    /// up and returns at once, stopped, without its e-graph (`None`: it waits for the step,
    /// egglog's rebuild included). Given up, the e-graph is freed by the thread that was
    /// stepping it once egglog is done with it; the caller must not read `eg` again.
    pub give_up_after_stop: Option<Duration>,
}

/// A request to stop a running search, from outside it: an embedding's interrupt (Ctrl-C in
/// a Python interpreter) or a Stop button. Clones share the request.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Asks every search holding this (or a clone) to stop before its next iteration.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The request itself, for a signal handler to make: storing `true` in it is
    /// async-signal-safe, as [`Cancel::cancel`] is.
    pub fn request(&self) -> &std::sync::atomic::AtomicBool {
        &self.0
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            iterations: 50,
            enodes: 10_000_000,
            time: Duration::from_secs(240),
            memory_mb: None,
            cancel: Cancel::default(),
            give_up_after_stop: None,
        }
    }
}

/// Resident set size of this process in MB: current (`/proc/self/statm`) or peak (`VmHWM` in
/// `/proc/self/status`), Linux only (0 elsewhere).
pub fn resident_mb(peak: bool) -> f64 {
    if !peak {
        // SAFETY: sysconf only reads a system setting.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as f64;
        let pages = proc_file("/proc/self/statm")
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok());
        return pages.map_or(0.0, |p| p * page / 1048576.0);
    }
    proc_file("/proc/self/status")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// A small file of `/proc`, read in one go (its size is not known beforehand: reading it to
/// the end in growing pieces takes several calls).
fn proc_file(path: &str) -> Option<String> {
    use std::io::Read;
    let mut text = String::with_capacity(4096);
    std::fs::File::open(path)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Frees what the last part of an iteration left idle, so that the next part's peak does not
/// stack on the last one's leftovers: from [`LARGE_FROM`] e-nodes egglog's buffers kept for
/// reuse ([`release_egglog_pools`]), and without mimalloc (which hands freed pages back at once
/// in such iterations: [`purge_at_once`]) from `TRIM_FROM` e-nodes the C library's free pages. A
/// small e-graph's leftovers are small, and allocating the buffers afresh or walking the heap
/// would cost a small search much of its time.
fn release_free_memory(enodes: usize) {
    // Trimming empties egglog's pools too.
    #[cfg(not(feature = "cli"))]
    if enodes >= TRIM_FROM {
        return trim_heap();
    }
    if enodes >= LARGE_FROM {
        release_egglog_pools();
    }
}

/// Empties this thread's pools of egglog buffers: egglog keeps the buffers its joins and
/// rebuilds free (up to 32 MB of each kind a thread), for the next ones to reuse, and empties
/// them when a database is dropped, which is what this does. The buffers in use are not in a
/// pool; the next iteration allocates what it needs afresh.
fn release_egglog_pools() {
    drop(egglog_core_relations::Database::new());
}

/// Empties egglog's pools of buffers ([`release_egglog_pools`]), then hands the free pages of
/// the allocator in use back to the system: glibc's, and with the command line, mimalloc's
/// (which otherwise keeps them for a while for reuse).
pub(crate) fn trim_heap() {
    release_egglog_pools();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only reads and updates the allocator's own state.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(feature = "cli")]
    // SAFETY: mi_collect only reads and updates the allocator's own state.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// With the command line's allocator, mimalloc: whether it hands freed pages back to the
/// system at once (`on`: its purge delay at 0) or a while later, for reuse (its setting at
/// the first call: 10 ms unless `MIMALLOC_PURGE_DELAY` says otherwise). Searches turn it on
/// for the iterations of e-graphs of at least [`LARGE_FROM`] e-nodes.
fn purge_at_once(on: bool) {
    #[cfg(feature = "cli")]
    {
        use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};
        /// `mi_option_purge_delay` in mimalloc.h (v2), which the bindings do not name.
        const PURGE_DELAY: mi_option_t = 15;
        static DEFAULT: std::sync::OnceLock<std::ffi::c_long> = std::sync::OnceLock::new();
        // SAFETY: reading and setting an option only changes when the allocator purges.
        unsafe {
            let default = *DEFAULT.get_or_init(|| mi_option_get(PURGE_DELAY));
            mi_option_set(PURGE_DELAY, if on { 0 } else { default });
        }
    }
    #[cfg(not(feature = "cli"))]
    let _ = on;
}

/// The e-graph size from which a search frees memory as it goes, at some cost in time
/// ([`release_free_memory`], [`purge_at_once`]): some 2.5 MB of e-graph.
const LARGE_FROM: usize = 5_000;

/// The e-graph size from which [`release_free_memory`] trims the C library's heap (some 10 MB
/// of e-graph).
#[cfg(not(feature = "cli"))]
const TRIM_FROM: usize = 20_000;

/// Why a search, or the child process that ran it, stopped: the one vocabulary of the
/// search's outcome, the child processes' reports and the tables' `stop_reason` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    Found,
    Saturated,
    IterationLimit,
    NodeLimit,
    TimeLimit,
    MemoryLimit,
    /// Stopped by a [`Cancel`] request.
    Interrupted,
    /// The search failed: an error, or a child process that ended without its result.
    Error,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Found => "found",
            StopReason::Saturated => "saturated",
            StopReason::IterationLimit => "iteration-limit",
            StopReason::NodeLimit => "node-limit",
            StopReason::TimeLimit => "time-limit",
            StopReason::MemoryLimit => "memory-limit",
            StopReason::Interrupted => "interrupted",
            StopReason::Error => "error",
        }
    }
}

/// Figures after one iteration.
#[derive(Clone, Debug)]
pub struct IterationStats {
    pub iteration: usize,
    pub enodes: usize,
    pub eclasses: usize,
    /// Rules applied as egg counts them, by rule: fired matches that changed the e-graph.
    pub applied_by_rule: BTreeMap<Arc<str>, usize>,
    /// Matches fired, whether or not they changed the e-graph.
    pub matches: usize,
    /// The parts of the iteration and of its check, in seconds.
    pub parts: Parts,
    /// The work of the "found" check after the iteration (for a sketch, rule matches or
    /// tuples, by engine).
    pub check_work: usize,
    /// Resident memory of the process after the iteration and its check, in MB.
    pub rss_mb: f64,
}

impl IterationStats {
    /// Rules applied as egg counts them: fired matches that changed the e-graph.
    pub fn rules_applied(&self) -> usize {
        self.applied_by_rule.values().sum()
    }

    /// The whole iteration: free variables, snapshot, egglog's step and the new nodes' types.
    pub fn seconds(&self) -> f64 {
        let p = &self.parts;
        p.free + p.snapshot + p.rewrite + p.types
    }

    /// The "found" check after the iteration: filter and sketch query.
    pub fn check_seconds(&self) -> f64 {
        self.parts.filter + self.parts.sketch
    }

    /// The iteration with its check, per e-node of the `new` it added, in microseconds.
    pub fn us_per_new_enode(&self, new: usize) -> f64 {
        (self.seconds() + self.check_seconds()) * 1e6 / new.max(1) as f64
    }

    /// Resident bytes per e-node after the iteration.
    pub fn bytes_per_enode(&self) -> f64 {
        self.rss_mb * 1048576.0 / self.enodes.max(1) as f64
    }
}

/// Where an iteration's time went, in seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Parts {
    /// Bringing the free-variable relation (`rise-free`) up to date.
    pub free: f64,
    /// Representatives and free-variable sets of every class ([`Snapshot::take`]).
    pub snapshot: f64,
    /// egglog's step of the rewrite rules.
    pub rewrite: f64,
    /// Giving the new e-nodes' classes their type (`rise-types`), when a rule or query reads it.
    pub types: f64,
    /// Counting e-nodes and e-classes.
    pub count: f64,
    /// The check: the search filters (term-size pruning), then the sketch query.
    pub filter: f64,
    pub sketch: f64,
}

/// The answer of a "found" check, how much work it took and how long its filter ran.
#[derive(Clone, Copy, Debug, Default)]
pub struct Check {
    pub found: bool,
    pub work: usize,
    pub filter_seconds: f64,
}

impl From<bool> for Check {
    fn from(found: bool) -> Check {
        Check {
            found,
            ..Check::default()
        }
    }
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub stop: StopReason,
    pub iterations: Vec<IterationStats>,
    /// Time spent in egglog's iterations and snapshots (not in `found` checks).
    pub saturation: Duration,
    /// Stopped on request and given up ([`Limits::give_up_after_stop`]): the e-graph is no
    /// longer the search's.
    pub given_up: bool,
}

impl Outcome {
    pub fn found(&self) -> bool {
        self.stop == StopReason::Found
    }
    pub fn rules_applied(&self) -> usize {
        self.iterations.iter().map(|i| i.rules_applied()).sum()
    }
    pub fn matches(&self) -> usize {
        self.iterations.iter().map(|i| i.matches).sum()
    }
    /// (e-nodes, e-classes) at the end.
    pub fn size(&self) -> (usize, usize) {
        self.iterations
            .last()
            .map_or((0, 0), |i| (i.enodes, i.eclasses))
    }
}

/// (e-nodes, e-classes) of Rise terms.
pub fn expr_size(eg: &EGraph) -> Result<(usize, usize)> {
    let mut nodes = 0;
    let mut classes = rustc_hash::FxHashSet::default();
    for c in Con::ALL {
        eg.constructor_enodes(c.name(), |e| {
            nodes += 1;
            classes.insert(e.eclass);
        })
        .map_err(engine)?;
    }
    Ok((nodes, classes.len()))
}

/// Seconds since the last lap.
struct Clock(Instant);

impl Default for Clock {
    fn default() -> Clock {
        Clock(Instant::now())
    }
}

impl Clock {
    fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let seconds = (now - self.0).as_secs_f64();
        self.0 = now;
        seconds
    }
}

/// How far the running search has got, for [`start_watchdog`].
struct Progress {
    limits: Limits,
    started: Instant,
    last: Option<IterationStats>,
}

static PROGRESS: std::sync::Mutex<Option<Progress>> = std::sync::Mutex::new(None);

fn publish(update: impl FnOnce(&mut Option<Progress>)) {
    update(&mut PROGRESS.lock().unwrap_or_else(|e| e.into_inner()));
}

/// Makes time and memory limits hold inside an iteration too: egglog cannot be interrupted
/// within one iteration, which can take minutes at scale, so a thread watches the running
/// search and, once it is past its time limit (by 5% of it, at most 2 s) or its memory
/// limit, reports how far it got (the last finished iteration; `--stats` files are already
/// written) and calls `on_stop`, which ends the process (the command line exits with code
/// 1, as a search stopped by a limit does; a child process first reports the stop to its
/// parent). For a process that is one search.
pub fn start_watchdog(on_stop: fn(StopReason) -> !) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(10));
        let guard = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(p) = guard.as_ref() else { continue };
        let grace = (p.limits.time / 20).min(Duration::from_secs(2));
        let stop = if p.started.elapsed() > p.limits.time.saturating_add(grace) {
            StopReason::TimeLimit
        } else if p
            .limits
            .memory_mb
            .is_some_and(|cap| resident_mb(false) >= cap as f64)
        {
            StopReason::MemoryLimit
        } else {
            continue;
        };
        let got = p.last.as_ref().map_or_else(
            || "before its first iteration finished".to_string(),
            |s| {
                format!(
                    "after {} finished iterations ({} e-nodes, {} e-classes)",
                    s.iteration, s.enodes, s.eclasses
                )
            },
        );
        eprintln!(
            "stopped inside an iteration by the {} ({:.1} s, {:.0} MB resident): not found, {got}",
            stop.name(),
            p.started.elapsed().as_secs_f64(),
            resident_mb(false)
        );
        on_stop(stop);
    });
}

/// Runs `ruleset` until `found` holds, nothing changes, or a limit is hit. `found` runs before
/// the first iteration and after each one (a sketch query brings its relations up to date).
pub fn saturate(
    eg: &mut EGraph,
    ruleset: &str,
    snapshot: &SharedSnapshot,
    limits: &Limits,
    mut found: impl FnMut(&mut EGraph) -> Result<Check>,
    mut on_iteration: impl FnMut(&IterationStats),
) -> Result<Outcome> {
    let start = Instant::now();
    // A search inside another one's check (normalising a found term) leaves the outer one
    // watched: the outer search's limits cover it.
    let mut outermost = false;
    publish(|p| {
        if p.is_none() {
            outermost = true;
            *p = Some(Progress {
                limits: limits.clone(),
                started: start,
                last: None,
            })
        }
    });
    let outcome = saturate_loop(
        eg,
        ruleset,
        snapshot,
        limits,
        start,
        &mut found,
        &mut on_iteration,
    );
    if outermost {
        publish(|p| *p = None);
    }
    outcome
}

fn saturate_loop(
    eg: &mut EGraph,
    ruleset: &str,
    snapshot: &SharedSnapshot,
    limits: &Limits,
    start: Instant,
    found: &mut impl FnMut(&mut EGraph) -> Result<Check>,
    on_iteration: &mut impl FnMut(&IterationStats),
) -> Result<Outcome> {
    let mut saturation = Duration::ZERO;
    let mut given_up = false;
    let mut iterations: Vec<IterationStats> = vec![];
    let mut rewriter = Rewriter::default();
    // Fixed for the search: which constructors the e-graph has, and whether anything reads `ty`.
    let rise_only = super::rise_only(eg);
    let types_read = super::types_read(eg);
    if types_read {
        // Classes added by an earlier search on this e-graph that nothing asked types of.
        eg.step_rules("rise-types").map_err(engine)?;
    }
    let mut check = found(eg)?;
    let stop = loop {
        if check.found {
            break StopReason::Found;
        }
        if iterations.len() >= limits.iterations {
            break StopReason::IterationLimit;
        }
        if start.elapsed() >= limits.time {
            break StopReason::TimeLimit;
        }
        if limits.cancel.is_cancelled() {
            break StopReason::Interrupted;
        }
        let mut clock = Clock::default();
        purge_at_once(iterations.last().is_some_and(|s| s.enodes >= LARGE_FROM));
        // Bring the free-variable relations up to date (De Bruijn Rise alone: the snapshot
        // computes free variables itself), then snapshot representatives.
        if !rise_only {
            let size = iterations.last().map_or(0, |s| s.enodes);
            let give_up = limits.give_up_after_stop;
            loop {
                match super::give_up::step_rules(eg, "rise-free", size, &limits.cancel, give_up)? {
                    Some(report) if report.updated => {}
                    Some(_) => break,
                    None => {
                        given_up = true;
                        break;
                    }
                }
            }
            if given_up {
                break StopReason::Interrupted;
            }
        }
        let free = clock.lap();
        {
            let mut snap = snapshot.write().unwrap();
            let previous = std::mem::take(&mut *snap);
            match Snapshot::take(eg, previous, rise_only, &limits.cancel)? {
                Some(taken) => *snap = taken,
                None => break StopReason::Interrupted,
            }
        }
        let snapshot_time = clock.lap();
        let before = match iterations.last() {
            Some(s) => s.enodes,
            None => expr_size(eg)?.0,
        };
        let cap = (limits.enodes, limits.memory_mb, &limits.cancel);
        let step = rewriter.step(
            eg,
            ruleset,
            snapshot,
            before,
            cap,
            limits.give_up_after_stop,
        )?;
        if step.given_up {
            // `eg` is an empty stand-in now: nothing more is read of it.
            given_up = true;
            break StopReason::Interrupted;
        }
        snapshot.write().unwrap().forget_classes();
        release_free_memory(before);
        let rewrite = clock.lap();
        // Stopped on request: the search ends after this iteration, unchecked.
        let stopped = limits.cancel.is_cancelled();
        // New e-nodes carry their type; give their classes `ty` when something reads it (a
        // class that would get two types stops the run with an illegal-merge error; else the
        // next snapshot stops it).
        if types_read && !stopped {
            eg.step_rules("rise-types").map_err(engine)?;
        }
        let types = clock.lap();
        let (enodes, eclasses) = expr_size(eg)?;
        let count = clock.lap();
        check = if stopped {
            Check::default()
        } else {
            found(eg)?
        };
        // The filter's and the query's freed memory (its time is counted with the check's).
        release_free_memory(enodes);
        let check_seconds = clock.lap();
        let stats = IterationStats {
            iteration: iterations.len() + 1,
            enodes,
            eclasses,
            applied_by_rule: step.applied,
            matches: step.matches,
            parts: Parts {
                free,
                snapshot: snapshot_time,
                rewrite,
                types,
                count,
                filter: check.filter_seconds,
                sketch: check_seconds - check.filter_seconds,
            },
            check_work: check.work,
            rss_mb: resident_mb(false),
        };
        saturation += Duration::from_secs_f64(stats.seconds());
        on_iteration(&stats);
        publish(|p| match p {
            Some(p) if p.started == start => p.last = Some(stats.clone()),
            _ => {}
        });
        iterations.push(stats);
        if check.found {
            break StopReason::Found;
        }
        // A stop request during the iteration turned its remaining matches away.
        if stopped {
            break StopReason::Interrupted;
        }
        if !step.updated {
            break StopReason::Saturated;
        }
        let over_memory = (limits.memory_mb).is_some_and(|cap| resident_mb(false) >= cap as f64);
        if step.over_memory || over_memory {
            break StopReason::MemoryLimit;
        }
        if step.capped || enodes >= limits.enodes {
            break StopReason::NodeLimit;
        }
    };
    purge_at_once(false);
    Ok(Outcome {
        stop,
        iterations,
        saturation,
        given_up,
    })
}

pub use super::normal::normalise;

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared search normalises each term it finds inside its check: that nested search
    /// must not end the watch over the outer one (its time and memory limits).
    #[test]
    fn a_search_inside_a_check_leaves_the_outer_search_watched() {
        let t = crate::rise::typed_term("fun (y: f32) => (fun (x: f32) => x) y");
        let mut eg = super::super::rise_egraph().unwrap();
        let limits = Limits::default();
        let mut watched_after_inner = None;
        saturate(
            &mut eg,
            "unused",
            &SharedSnapshot::default(),
            &limits,
            |_| {
                normalise(&t, &limits)?;
                let p = PROGRESS.lock().unwrap();
                watched_after_inner = Some(p.as_ref().map(|p| p.limits.iterations));
                Ok(Check::from(true))
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(watched_after_inner, Some(Some(limits.iterations)));
        assert!(PROGRESS.lock().unwrap().is_none());
    }
}
