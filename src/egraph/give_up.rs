//! Giving up a step of egglog's after a stop request. egglog cannot be asked to cut its
//! rebuild short: a step stopped at its next match still merges and rebuilds what it had
//! inserted, which takes seconds on an e-graph of millions of e-nodes. Where the caller allows
//! it ([`super::saturate::Limits::give_up_after_stop`]), a step on a large e-graph runs on a
//! thread of its own that holds the e-graph, and the search may return without waiting for it.

use super::saturate::Cancel;
use crate::error::{Error, Result};
use egglog::EGraph;
use std::time::{Duration, Instant};

/// The e-graph size from which an egglog step may be given up after a stop request: there,
/// egglog's rebuild of what the step inserted before the stop can take seconds.
const GIVE_UP_FROM: usize = 100_000;

/// One egglog step of `ruleset` on an e-graph of `enodes` e-nodes; `None` when it was given up
/// after a stop request (`give_up_after_stop`, from 100,000 e-nodes): `eg` is then
/// an empty stand-in, and the e-graph is freed once egglog is done with it.
pub fn step_rules(
    eg: &mut EGraph,
    ruleset: &str,
    enodes: usize,
    cancel: &Cancel,
    give_up_after_stop: Option<Duration>,
) -> Result<Option<egglog_reports::RunReport>> {
    let Some(grace) = give_up_after_stop.filter(|_| enodes >= GIVE_UP_FROM) else {
        return eg.step_rules(ruleset).map(Some).map_err(super::engine);
    };
    let ruleset = ruleset.to_string();
    let step = move |eg: &mut EGraph| eg.step_rules(&ruleset);
    match on_own_thread(eg, step, cancel, grace)? {
        Some(report) => report.map(Some).map_err(super::engine),
        None => Ok(None),
    }
}

/// `work` (one egglog step) on a thread of its own, which takes the e-graph while it runs
/// (`eg` holds an empty stand-in meanwhile): its result, with the e-graph back, when it ends;
/// or `None` when a stop request came and the work went on for `grace` after it. The thread
/// then keeps the e-graph and frees it when the work is done, and `eg` stays the stand-in.
fn on_own_thread<T: Send + 'static>(
    eg: &mut EGraph,
    work: impl FnOnce(&mut EGraph) -> T + Send + 'static,
    cancel: &Cancel,
    grace: Duration,
) -> Result<Option<T>> {
    let taken = std::mem::take(eg);
    let (done, result) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("rewrite".into())
        .stack_size(REWRITE_STACK)
        .spawn(move || {
            let mut eg = taken;
            let out = work(&mut eg);
            let _ = done.send((eg, out));
        })
        .map_err(|e| Error::internal(format!("a thread for the rewrite step: {e}")))?;
    let mut stopped: Option<Instant> = None;
    loop {
        match result.recv_timeout(Duration::from_millis(20)) {
            Ok((taken, out)) => {
                *eg = taken;
                return Ok(Some(out));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let since = cancel
                    .is_cancelled()
                    .then(|| *stopped.get_or_insert_with(Instant::now));
                if since.is_some_and(|t| t.elapsed() >= grace) {
                    return Ok(None);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::internal(
                    "the rewrite step's thread ended without its e-graph (it panicked)".to_string(),
                ))
            }
        }
    }
}

/// The rewrite thread's stack: room for deep terms, reserved, not committed.
const REWRITE_STACK: usize = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_step_is_given_up_and_an_unstopped_one_gives_the_egraph_back() {
        let declared = |eg: &mut EGraph| eg.parse_and_run_program(None, "(sort Kept)").is_ok();
        let mut eg = EGraph::default();
        let cancel = Cancel::default();
        let back = on_own_thread(&mut eg, declared, &cancel, Duration::ZERO).unwrap();
        assert_eq!(back, Some(true));
        // The sort declared on the thread is in the e-graph given back: declaring it again fails.
        assert!(!declared(&mut eg));
        cancel.cancel();
        let slow = |_: &mut EGraph| std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            on_own_thread(&mut eg, slow, &cancel, Duration::ZERO).unwrap(),
            None
        );
    }
}
