//! The writer (process 0): records each finished job in the store, rewrites the result
//! files from it, and prints a progress line per job with an estimate of the time left.

use super::job::Job;
use super::schedule::Event;
use super::store::Store;
use crate::error::{Error, Result};
use std::time::Instant;

/// Rewrites the result files from the store's results for the run's jobs.
pub type Tables = Box<dyn Fn(&Store, &[Job]) -> Result<()> + Send>;

pub struct Writer {
    jobs: Vec<Job>,
    store: Store,
    tables: Tables,
    started: Instant,
    /// Jobs to run in the passes planned so far, and how many have finished.
    pending: usize,
    passes: usize,
    workers: usize,
    done: usize,
    /// What went wrong (a job not run, a file not written); the run fails with the first.
    pub failures: Vec<Error>,
}

impl Writer {
    pub fn new(jobs: Vec<Job>, store: Store, tables: Tables) -> Writer {
        Writer {
            jobs,
            store,
            tables,
            started: Instant::now(),
            pending: 0,
            passes: 0,
            workers: 1,
            done: 0,
            failures: vec![],
        }
    }

    pub fn on(&mut self, event: Event) {
        match event {
            Event::Planned { pending, workers } => {
                self.passes += 1;
                self.pending += pending;
                self.workers = workers;
                if self.passes == 2 {
                    eprintln!(
                        "{} jobs: {} reused from {}, {} run",
                        self.jobs.len(),
                        self.jobs.len() - self.pending,
                        self.store.path().display(),
                        self.pending,
                    );
                } else if pending > 0 {
                    eprintln!("{pending} jobs to run on {workers} workers");
                }
            }
            Event::Finished(f) => {
                self.done += 1;
                let line = format!(
                    "[{}/{}] {}: {} ({:.1} s, {}){}",
                    self.done,
                    self.pending,
                    f.job.task.label(),
                    f.outcome.summary(),
                    f.seconds,
                    f.worker,
                    self.eta()
                );
                let written = self
                    .store
                    .record(f)
                    .and_then(|()| (self.tables)(&self.store, &self.jobs));
                match written {
                    Ok(()) => eprintln!("{line}"),
                    Err(e) => self.failures.push(e),
                }
            }
            Event::Failed { job, error } => {
                self.done += 1;
                let label = job.task.label();
                eprintln!("{label}: not run: {error}");
                self.failures
                    .push(Error::bad_input(format!("{label}: {error}")));
            }
        }
    }

    /// The time left at the mean job's pace so far.
    fn eta(&self) -> String {
        let left = self.pending.saturating_sub(self.done);
        if left == 0 {
            return String::new();
        }
        let mean = self.started.elapsed().as_secs_f64() / self.done.max(1) as f64;
        let secs = (mean * left as f64 / self.workers.max(1) as f64).round() as u64;
        format!("; ETA {}m{:02}s", secs / 60, secs % 60)
    }
}
