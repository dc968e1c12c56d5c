//! Finished jobs on disk: `runs.jsonl` in the results directory, one JSON line per job (its
//! key, task, caps and outcome), rewritten atomically as each job finishes. The tables are
//! views of it; a rerun reads it and runs only the jobs whose key it does not hold.

use super::job::{Job, Task};
use crate::error::{Error, Result};
use crate::files::{read_source, write_atomically};
use crate::source::{lines_at, Span};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A job and what it produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "T: Task")]
pub struct Finished<T: Task> {
    pub job: Job<T>,
    pub outcome: T::Outcome,
    /// Which worker ran it (`process.worker`).
    pub worker: String,
    /// The wall-clock seconds it took, child start to exit.
    pub seconds: f64,
}

/// The store's file name in a results directory.
pub const STORE_FILE: &str = "runs.jsonl";

/// The finished jobs of a results directory: at most one per task, the latest.
pub struct Store<T: Task> {
    path: PathBuf,
    finished: Vec<Finished<T>>,
}

impl<T: Task> Store<T> {
    /// Reads `path` (an empty store when it does not exist); a line that is not a finished
    /// job is an error at its line and column. A keyed record this build cannot read (a
    /// task or outcome of another form) is stale: it is left out, said once on
    /// stderr, and its job runs again.
    pub fn open(path: &Path) -> Result<Store<T>> {
        let mut finished = vec![];
        let mut other_versions = 0;
        if path.exists() {
            let src = read_source(path)?;
            for (offset, line) in lines_at(&src.text) {
                if !line.trim().is_empty() {
                    match serde_json::from_str::<Finished<T>>(line) {
                        Ok(f) => finished.push(f),
                        Err(_) if is_keyed_record(line) => other_versions += 1,
                        Err(e) => {
                            let at = offset + line_offset(line, e.column());
                            let span = Span::new(&src, at, at);
                            return Err(Error::at(&span, format!("not a finished job: {e}")));
                        }
                    }
                }
            }
        }
        if other_versions > 0 {
            eprintln!(
                "{}: {other_versions} finished jobs in a form this build does not read left out (they run again)",
                path.display()
            );
        }
        Ok(Store {
            path: path.to_path_buf(),
            finished,
        })
    }

    /// Forgets the finished jobs of the tasks `which` selects (the file keeps them until the
    /// next record rewrites it).
    pub fn forget(&mut self, which: impl Fn(&T) -> bool) {
        self.finished.retain(|f| !which(&f.job.task));
    }

    pub fn all(&self) -> &[Finished<T>] {
        &self.finished
    }

    /// The outcome of `job` if a job with its key finished.
    pub fn outcome(&self, job: &Job<T>) -> Option<&T::Outcome> {
        self.finished
            .iter()
            .find(|f| f.job.key == job.key)
            .map(|f| &f.outcome)
    }

    /// Records `f`, replacing the task's earlier (stale) result, and rewrites the file.
    pub fn record(&mut self, f: Finished<T>) -> Result<()> {
        self.finished.retain(|old| old.job.task != f.job.task);
        self.finished.push(f);
        let mut text = String::new();
        for f in &self.finished {
            text += &serde_json::to_string(f).expect("plain data");
            text.push('\n');
        }
        write_atomically(&self.path, text.as_bytes())
    }
}

/// A JSON record with a job key and an outcome: written by some version of sketchlog.
fn is_keyed_record(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| {
        let task = &v["job"]["task"];
        v["job"]["key"].is_string()
            && (task.is_object() || task.is_string())
            && !v["outcome"].is_null()
    })
}

/// The byte offset in `line` of 1-based character column `column` (serde's).
fn line_offset(line: &str, column: usize) -> usize {
    line.char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i)
}
