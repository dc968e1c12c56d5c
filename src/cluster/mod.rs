//! Jobs on a timely dataflow, over worker threads and processes: each [`job::Job`] is a
//! [`job::Task`] under caps, keyed by what determines its result (its inputs, the build and
//! the machine); the [`schedule`] dataflow runs the jobs a [`store::Store`] of finished ones
//! does not hold, each in a child process under its caps ([`child`]), and hands results to
//! one writer as they finish. The tasks are defined by the caller (the experiments); the
//! cluster knows only the trait.
//!
//! One machine: `--workers N` threads. Several: timely's cluster convention, the same command
//! on every machine with a hostfile of `host:port` lines (one per process) and each machine's
//! own `--process I`; process 0 holds the store and writes the files.

pub mod child;
pub mod job;
pub mod schedule;
pub mod store;
pub mod writer;

use crate::error::{Error, Result};
use crate::files::read_source;
use crate::source::word_lines;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Runs `jobs` on `cluster` (by default this machine, with [`default_workers`] at the jobs'
/// largest memory cap), reusing the finished jobs of `dir`'s store unless `fresh` (then they
/// all run again, and the store keeps only its records of other tasks). `tables`
/// rewrites the result files from the store: at the start (reused results) and after every
/// finished job. A process other than 0 only runs the jobs it is given.
pub fn run_jobs<T: job::Task>(
    jobs: Vec<job::Job<T>>,
    dir: &Path,
    fresh: bool,
    cluster: Option<Cluster>,
    tables: impl Fn(&store::Store<T>, &[job::Job<T>]) -> Result<()> + Send + 'static,
) -> Result<()> {
    let cluster = cluster.unwrap_or_else(|| {
        let most = jobs.iter().map(|j| j.memory_mb).max().unwrap_or(1);
        Cluster::local(default_workers(most))
    });
    cluster.addresses()?;
    if !cluster.writes() {
        return schedule::run::<T, _>(&cluster, vec![], vec![], |_| {});
    }
    crate::files::check_writable_dir(dir)?;
    let path = dir.join(store::STORE_FILE);
    let mut store = store::Store::<T>::open(&path)?;
    // Estimates for dispatch: the task's last wall time (even if stale, or run again by
    // `--fresh`), else its time cap.
    let estimates: Vec<(f64, bool)> = jobs
        .iter()
        .map(|j| {
            let last = store.all().iter().find(|f| f.job.task == j.task);
            last.map_or((j.time_s as f64, false), |f| (f.seconds, true))
        })
        .collect();
    if fresh {
        // These jobs run again; what the store holds of other tasks (another table, a sweep)
        // stays in it.
        store.forget(|task| jobs.iter().any(|j| &j.task == task));
    }
    tables(&store, &jobs)?;
    let finished: Vec<String> = store.all().iter().map(|f| f.job.key.clone()).collect();
    eprintln!(
        "{}",
        plan(&jobs, &estimates, &finished, &path, cluster.workers)
    );
    let planned = jobs
        .iter()
        .cloned()
        .zip(estimates.iter().map(|e| e.0))
        .collect();
    let writer = writer::Writer::new(jobs, estimates, store, Box::new(tables));
    let writer = Arc::new(Mutex::new(writer));
    let w = writer.clone();
    schedule::run(&cluster, planned, finished, move |event| {
        w.lock().expect("not poisoned").on(event)
    })?;
    let writer = writer.lock().expect("not poisoned");
    match writer.failures.first() {
        None => Ok(()),
        Some(e) => Err(e.clone()),
    }
}

/// What a run will do, said before it starts: how many jobs it reuses (finished by this
/// build on this machine) and runs, and how long the runs should take by the recorded times
/// of their last runs (timed jobs run alone, the others spread over the workers).
fn plan<T: job::Task>(
    jobs: &[job::Job<T>],
    estimates: &[(f64, bool)],
    finished: &[String],
    store: &Path,
    workers: usize,
) -> String {
    let mut to_run = vec![];
    for (job, estimate) in jobs.iter().zip(estimates) {
        if !finished.contains(&job.key) {
            to_run.push((estimate.0, estimate.1, job.task.timed()));
        }
    }
    let reused = jobs.len() - to_run.len();
    let mut line = format!(
        "{} jobs: {reused} reused from {} (same build, same machine), {} to run",
        jobs.len(),
        store.display(),
        to_run.len()
    );
    if !to_run.is_empty() {
        line += &format!(
            " on {}: {}",
            n_workers(workers),
            time_left(&to_run, workers)
        );
    }
    line
}

/// How long jobs of these estimates (seconds, whether recorded, whether timed) take on
/// `workers`, timed jobs alone and the others spread: about so long by their last recorded
/// times, and at most so much more by the time caps of those with none recorded.
fn time_left(jobs: &[(f64, bool, bool)], workers: usize) -> String {
    match Left::of(jobs, workers) {
        Left::Recorded(about) => format!("about {about} by their last recorded times"),
        Left::Capped(most) => format!("at most {most} by their time caps (no time recorded)"),
        Left::Both {
            about,
            most,
            unrecorded,
        } => format!(
            "about {about} by their last recorded times, and at most {most} more for the {unrecorded} with no time recorded (their caps)"
        ),
    }
}

/// The time jobs take ([`time_left`]), as minutes and seconds: by the recorded times of
/// those with one, at most by the time caps of those without.
enum Left {
    /// Every job has a recorded time: about this long.
    Recorded(String),
    /// No job has one: at most this long.
    Capped(String),
    /// Some have: about `about`, and at most `most` more for the `unrecorded` without.
    Both {
        about: String,
        most: String,
        unrecorded: usize,
    },
}

impl Left {
    fn of(jobs: &[(f64, bool, bool)], workers: usize) -> Left {
        let wall = |recorded: bool| {
            let of = |timed: bool| jobs.iter().filter(move |j| j.1 == recorded && j.2 == timed);
            let shared: Vec<f64> = of(false).map(|j| j.0).collect();
            let secs = spread(&shared, workers) + of(true).map(|j| j.0).sum::<f64>();
            minutes(secs.round() as u64)
        };
        match jobs.iter().filter(|j| !j.1).count() {
            0 => Left::Recorded(wall(true)),
            n if n == jobs.len() => Left::Capped(wall(false)),
            unrecorded => Left::Both {
                about: wall(true),
                most: wall(false),
                unrecorded,
            },
        }
    }
}

/// The wall time of jobs of `seconds` each spread over `workers`: their sum over the
/// workers, and never less than the longest.
fn spread(seconds: &[f64], workers: usize) -> f64 {
    let longest = seconds.iter().copied().fold(0.0, f64::max);
    (seconds.iter().sum::<f64>() / workers.max(1) as f64).max(longest)
}

/// `n` workers, in words: `1 worker`, `2 workers`.
fn n_workers(n: usize) -> String {
    match n {
        1 => "1 worker".into(),
        n => format!("{n} workers"),
    }
}

/// `secs` as minutes and seconds: `3m05s`.
fn minutes(secs: u64) -> String {
    format!("{}m{:02}s", secs / 60, secs % 60)
}

/// Where jobs run.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// Worker threads in this process (each runs one child process at a time).
    pub workers: usize,
    /// `host:port` of every process, one per line; none for a single process.
    pub hostfile: Option<PathBuf>,
    /// This process's index in the hostfile.
    pub process: usize,
}

impl Cluster {
    /// One process with `workers` threads.
    pub fn local(workers: usize) -> Cluster {
        Cluster {
            workers,
            hostfile: None,
            process: 0,
        }
    }

    /// Whether this process writes the results (process 0).
    pub fn writes(&self) -> bool {
        self.process == 0
    }

    /// The hostfile's addresses, checked: a located error for a line that is not
    /// `host:port`, and for a process index beyond them.
    pub fn addresses(&self) -> Result<Vec<String>> {
        let Some(path) = &self.hostfile else {
            return Ok(vec![]);
        };
        let src = read_source(path)?;
        let mut addresses = vec![];
        for (span, words) in word_lines(&src, "#") {
            let text = &src.text[span.start..span.end];
            let port_ok = matches!(words.as_slice(), [w] if w.text
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok()));
            if !port_ok {
                return Err(Error::at(
                    &span,
                    format!("expected `host:port`, found `{text}`"),
                ));
            }
            addresses.push(text.to_string());
        }
        if self.process >= addresses.len() {
            return Err(Error::bad_input(format!(
                "--process {} but {} lists {} processes (0 to {})",
                self.process,
                path.display(),
                addresses.len(),
                addresses.len().saturating_sub(1)
            )));
        }
        Ok(addresses)
    }

    fn timely_config(&self) -> Result<timely::Config> {
        use timely::CommunicationConfig;
        let addresses = self.addresses()?;
        let communication = if addresses.is_empty() {
            CommunicationConfig::Process(self.workers.max(1))
        } else {
            CommunicationConfig::Cluster {
                threads: self.workers.max(1),
                process: self.process,
                addresses,
                report: false,
                zerocopy: false,
            }
        };
        Ok(timely::Config {
            communication,
            worker: timely::WorkerConfig::default(),
        })
    }
}

/// The default number of workers on this machine: as many as its cores and its available
/// memory allow, at `memory_mb` for each job (at least one).
pub fn default_workers(memory_mb: u64) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let available_mb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(u64::MAX, |kb| kb / 1024);
    let by_memory = (available_mb / memory_mb.max(1)).max(1);
    cores.min(by_memory as usize).max(1)
}

#[cfg(test)]
mod tests {
    use super::{n_workers, time_left};

    #[test]
    fn one_worker_is_said_in_the_singular() {
        assert_eq!(n_workers(1), "1 worker");
        assert_eq!(n_workers(2), "2 workers");
    }

    #[test]
    fn the_time_left_says_what_the_recorded_times_give_and_what_the_caps_may_add() {
        // (seconds, recorded, timed): two shared jobs over two workers, a timed one alone.
        let recorded = [
            (60.0, true, false),
            (60.0, true, false),
            (100.0, true, true),
        ];
        assert_eq!(
            time_left(&recorded, 2),
            "about 2m40s by their last recorded times"
        );
        let mut some = recorded.to_vec();
        some.push((3600.0, false, true));
        let said = time_left(&some, 2);
        assert!(
            said.starts_with("about 2m40s by their last recorded times, "),
            "{said}"
        );
        assert!(
            said.contains("at most 60m00s more for the 1 with no time"),
            "{said}"
        );
        assert_eq!(
            time_left(&some[3..], 2),
            "at most 60m00s by their time caps (no time recorded)"
        );
    }
}
