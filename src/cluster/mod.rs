//! Experiments as jobs on a timely dataflow, over worker threads and processes: every row of
//! `reproduce` is a [`job::Job`], keyed by what determines it; the [`schedule`] dataflow runs
//! the jobs a [`store::Store`] of finished ones does not hold, each in a child process under
//! its caps, and hands results to one writer as they finish.
//!
//! One machine: `--workers N` threads. Several: timely's cluster convention, the same command
//! on every machine with a hostfile of `host:port` lines (one per process) and each machine's
//! own `--process I`; process 0 holds the store and writes the files.

pub mod job;
pub mod schedule;
pub mod store;

use crate::error::{read_source, Error, Result, Span};
use std::path::PathBuf;

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
        let mut offset = 0;
        for line in src.text.split_inclusive('\n') {
            let text = line.trim();
            let start = offset + line.find(text).unwrap_or(0);
            offset += line.len();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let port_ok = text
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if !port_ok {
                let span = Span::new(&src, start, start + text.len());
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
