//! `sketchlog reproduce`: the requested tables as jobs ([`crate::cluster`]), run where the
//! store of finished jobs has no result with the same key, and the tables rewritten from
//! the store (atomically) as each job finishes, with a progress line per job.

use super::child::Caps;
use super::{codegen, matmul, table2};
use crate::cluster::job::{Job, Outcome, Task};
use crate::cluster::schedule::{self, Event};
use crate::cluster::store::Store;
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The tables `reproduce` knows, in the order they are listed.
pub const TABLES: [&str; 6] = ["table2", "table3", "table4", "table5", "fig16", "codegen"];

/// Settings of one `reproduce` run.
#[derive(Clone)]
pub struct Settings {
    pub tables: Vec<String>,
    pub dir: PathBuf,
    /// Table 2's rows' caps.
    pub table2: Caps,
    /// Table 2: only one substitution, one binding.
    pub substitution: Option<String>,
    pub binding: Option<String>,
    /// Caps of the unguided matmul rows.
    pub unguided: Caps,
    /// The matmul goals of Tables 3 to 5.
    pub goals: Vec<String>,
    /// The codegen table's matrix size.
    pub size: i64,
    /// Ignore the finished jobs on disk: run everything again.
    pub fresh: bool,
}

impl Settings {
    /// Every job the tables need, each once, in table order.
    pub fn jobs(&self) -> Result<Vec<Job>> {
        let mut jobs: Vec<Job> = vec![];
        let mut add = |task: Task, caps: Caps| -> Result<()> {
            if !jobs.iter().any(|j| j.task == task) {
                jobs.push(Job::new(task, caps)?);
            }
            Ok(())
        };
        let matmul = |goal: &str, unguided| Task::Matmul {
            goal: goal.to_string(),
            unguided,
        };
        let guided = matmul::GUIDED_CAPS;
        for table in &self.tables {
            match table.as_str() {
                "table2" => {
                    let (s, b) = (self.substitution.as_deref(), self.binding.as_deref());
                    for task in table2::tasks(s, b)? {
                        add(task, self.table2)?;
                    }
                }
                "table3" => {
                    for g in &self.goals {
                        add(matmul(g, true), self.unguided)?;
                    }
                }
                "table4" | "table5" => {
                    for g in &self.goals {
                        add(matmul(g, false), guided)?;
                    }
                }
                "fig16" => {
                    for g in matmul::FIG16_GOALS {
                        add(matmul(g, true), self.unguided)?;
                        add(matmul(g, false), guided)?;
                    }
                }
                "codegen" => add(Task::Codegen { size: self.size }, codegen::CAPS)?,
                other => {
                    return Err(Error::bad_input(format!(
                        "unknown table `{other}` (available: {})",
                        TABLES.join(", ")
                    )))
                }
            }
        }
        Ok(jobs)
    }

    /// Writes every requested table from the store's results for `jobs`.
    fn write_tables(&self, store: &Store, jobs: &[Job]) -> Result<()> {
        let outcomes: Vec<(&Task, &Outcome)> = jobs
            .iter()
            .filter_map(|j| store.outcome(j).map(|o| (&j.task, o)))
            .collect();
        let runs = |goal: &str, unguided: bool| {
            outcomes.iter().find_map(|(task, o)| match (task, o) {
                (
                    Task::Matmul {
                        goal: g,
                        unguided: u,
                    },
                    Outcome::Matmul(r),
                ) if g == goal && *u == unguided => Some(r),
                _ => None,
            })
        };
        let dir = &self.dir;
        for table in &self.tables {
            match table.as_str() {
                "table2" => {
                    let rows = outcomes.iter().filter_map(|(t, o)| match o {
                        Outcome::Table2(row) => Some((*t, row)),
                        _ => None,
                    });
                    let lines = table2::lines(rows);
                    matmul::write_csv(&dir.join("table2.csv"), &table2::COLUMNS, &lines)?
                }
                "table3" => matmul::table3(dir, &self.goals, self.unguided, &runs)?,
                "table4" => matmul::table4(dir, &self.goals, &runs)?,
                "table5" => matmul::table5(dir, &self.goals, &runs)?,
                "fig16" => matmul::fig16(dir, &runs)?,
                _ => {
                    let rows = outcomes.iter().find_map(|(_, o)| match o {
                        Outcome::Codegen(rows) => Some(rows.clone()),
                        _ => None,
                    });
                    let path = dir.join("codegen.csv");
                    matmul::write_csv(&path, &codegen::COLUMNS, &rows.unwrap_or_default())?
                }
            }
        }
        Ok(())
    }
}

/// Runs the jobs of `settings` on `cluster`, reusing finished ones. In processes other than
/// 0, only runs the jobs it is given.
pub fn reproduce(settings: &Settings, cluster: Option<Cluster>) -> Result<()> {
    let jobs = settings.jobs()?;
    let cluster = cluster.unwrap_or_else(|| {
        let most = jobs.iter().map(|j| j.memory_mb).max().unwrap_or(1);
        Cluster::local(crate::cluster::default_workers(most))
    });
    cluster.addresses()?;
    if !cluster.writes() {
        return schedule::run(&cluster, vec![], vec![], |_| {});
    }
    crate::error::check_writable_dir(&settings.dir)?;
    let path = settings.dir.join(Store::FILE);
    let store = match settings.fresh {
        true => Store::empty(&path),
        false => Store::open(&path)?,
    };
    settings.write_tables(&store, &jobs)?;
    let finished: Vec<String> = store.all().iter().map(|f| f.job.key.clone()).collect();
    // Estimates for dispatch: the task's last wall time (even if stale), else its time cap.
    let planned: Vec<(Job, f64)> = jobs
        .iter()
        .map(|j| {
            let last = store.all().iter().find(|f| f.job.task == j.task);
            (j.clone(), last.map_or(j.time_s as f64, |f| f.seconds))
        })
        .collect();
    let writer = Arc::new(Mutex::new(Writer {
        settings: settings.clone(),
        jobs,
        store,
        started: Instant::now(),
        pending: 0,
        passes: 0,
        workers: 1,
        done: 0,
        failures: vec![],
    }));
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

/// The writer: records each finished job and rewrites the tables.
struct Writer {
    settings: Settings,
    jobs: Vec<Job>,
    store: Store,
    started: Instant,
    /// Jobs to run in the passes planned so far, and how many have finished.
    pending: usize,
    passes: usize,
    workers: usize,
    done: usize,
    failures: Vec<Error>,
}

impl Writer {
    fn on(&mut self, event: Event) {
        match event {
            Event::Planned { pending, workers } => {
                self.passes += 1;
                self.pending += pending;
                self.workers = workers;
                if self.passes == 2 {
                    let reused = self.jobs.len() - self.pending;
                    eprintln!(
                        "{} jobs: {reused} reused from {}, {} run",
                        self.jobs.len(),
                        self.settings.dir.join(Store::FILE).display(),
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
                    summary(&f.outcome),
                    f.seconds,
                    f.worker,
                    self.eta()
                );
                let written = self
                    .store
                    .record(f)
                    .and_then(|()| self.settings.write_tables(&self.store, &self.jobs));
                match written {
                    Ok(()) => eprintln!("{line}"),
                    Err(e) => self.failures.push(e),
                }
            }
            Event::Failed { job, error } => {
                self.done += 1;
                eprintln!("{}: not run: {error}", job.task.label());
                self.failures
                    .push(Error::bad_input(format!("{}: {error}", job.task.label())));
            }
        }
    }

    /// The remaining time at the mean job's pace so far.
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

/// A finished job's result in a few words.
fn summary(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Table2(row) => match row.found {
            true => "found".into(),
            false => format!("not found ({})", row.stop_reason),
        },
        Outcome::Matmul(run) => {
            let steps = run.steps.len();
            match run.steps.iter().all(|s| s.found) && steps > 0 && run.end.reason() == "finished" {
                true => format!("found ({steps} steps)"),
                false => format!("not found ({})", run.stop()),
            }
        }
        Outcome::Codegen(rows) => format!("{} rows", rows.len()),
    }
}
