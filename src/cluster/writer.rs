//! The writer (process 0): records each finished job in the store, rewrites the result
//! files from it, and prints a progress line per job with an estimate of the time left.

use super::job::{Job, Task};
use super::schedule::Event;
use super::store::Store;
use crate::error::{Error, Result};

/// Rewrites the result files from the store's results for the run's jobs.
pub type Tables<T> = Box<dyn Fn(&Store<T>, &[Job<T>]) -> Result<()> + Send>;

pub struct Writer<T: Task> {
    jobs: Vec<Job<T>>,
    /// Each job's estimated seconds, and whether it is a measurement (the task's last wall
    /// time) rather than its time cap.
    estimates: Vec<(f64, bool)>,
    /// The jobs not finished when the run started, and not since.
    left: Vec<bool>,
    store: Store<T>,
    tables: Tables<T>,
    /// Jobs to run in the passes planned so far, and how many have finished.
    pending: usize,
    workers: usize,
    done: usize,
    /// What went wrong (a job not run, a file not written); the run fails with the first.
    pub failures: Vec<Error>,
}

impl<T: Task> Writer<T> {
    pub fn new(
        jobs: Vec<Job<T>>,
        estimates: Vec<(f64, bool)>,
        store: Store<T>,
        tables: Tables<T>,
    ) -> Writer<T> {
        let left = jobs.iter().map(|j| store.outcome(j).is_none()).collect();
        Writer {
            jobs,
            estimates,
            left,
            store,
            tables,
            pending: 0,
            workers: 1,
            done: 0,
            failures: vec![],
        }
    }

    pub fn on(&mut self, event: Event<T>) {
        match event {
            Event::Planned { pending, workers } => {
                self.pending += pending;
                self.workers = workers;
                if pending > 0 {
                    eprintln!("{pending} jobs to run on {}", super::n_workers(workers));
                }
            }
            Event::Finished(f) => {
                self.done += 1;
                self.finish(&f.job);
                let line = format!(
                    "[{}/{}] {}: {} ({:.1} s, {}){}",
                    self.done,
                    self.pending,
                    f.job.task.label(),
                    T::summary(&f.outcome),
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
                self.finish(&job);
                let label = job.task.label();
                eprintln!("{label}: not run: {error}");
                self.failures
                    .push(Error::bad_input(format!("{label}: {error}")));
            }
        }
    }

    fn finish(&mut self, job: &Job<T>) {
        if let Some(i) = self.jobs.iter().position(|j| j.key == job.key) {
            self.left[i] = false;
        }
    }

    /// The time left: the jobs left's estimates, timed jobs alone and the others spread over
    /// the workers, with what the time caps of jobs with no recorded time may add.
    fn eta(&self) -> String {
        let left: Vec<(f64, bool, bool)> = (0..self.jobs.len())
            .filter(|i| self.left[*i])
            .map(|i| {
                let (seconds, recorded) = self.estimates[i];
                (seconds, recorded, self.jobs[i].task.timed())
            })
            .collect();
        if left.is_empty() {
            return String::new();
        }
        match super::Left::of(&left, self.workers) {
            super::Left::Recorded(about) => format!("; ETA {about}"),
            super::Left::Capped(most) => format!("; ETA at most {most}"),
            super::Left::Both {
                about,
                most,
                unrecorded,
            } => format!("; ETA {about}, and at most {most} for {unrecorded} never timed"),
        }
    }
}
