//! A job: one unit of work (an experiment's row, or a table of timed runs) that a worker runs
//! in a child process under caps, keyed by everything that determines its result. What a
//! job computes is its [`Task`], defined by whoever submits the jobs; the cluster knows
//! only this trait.

use super::child::ProcessLimits;
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::Duration;

/// What a job computes: plain data that travels between processes, and how to run it.
pub trait Task:
    Clone + Debug + Eq + Ord + Hash + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// What a run produces: kept in the store, and read back by later runs.
    type Outcome: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// How it reads in progress lines.
    fn label(&self) -> String;

    /// Whether its figures are timings that another job beside it would disturb (such jobs
    /// run alone, after the others).
    fn timed(&self) -> bool;

    /// The files its result depends on (part of its key).
    fn inputs(&self) -> Result<Vec<PathBuf>>;

    /// Runs it under `caps` (normally in a child process, [`super::child::run`]). A row
    /// stopped by a cap or failing in the child is an outcome that says so; an error is the
    /// parent's own (a child that could not be started).
    fn run(&self, caps: ProcessLimits) -> Result<Self::Outcome>;

    /// An outcome in a few words, for progress lines.
    fn summary(outcome: &Self::Outcome) -> String;
}

/// A task under caps, with its key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(bound = "T: Task")]
pub struct Job<T: Task> {
    pub task: T,
    pub memory_mb: u64,
    pub time_s: u64,
    /// A hash of what determines the result: the task, the caps, the contents of its input
    /// files, the build of sketchlog that runs it and the machine it runs on. A finished
    /// job with the same key need not run again.
    pub key: String,
}

impl<T: Task> Job<T> {
    /// `task` under `caps`, keyed by reading its input files now.
    pub fn new(task: T, caps: ProcessLimits) -> Result<Job<T>> {
        let mut hash = fnv::FnvHasher::default();
        let mut put = |bytes: &[u8]| {
            hash.write_usize(bytes.len());
            hash.write(bytes);
        };
        put(build_id()?.as_bytes());
        put(machine_id().as_bytes());
        let what = (&task, caps.memory_mb, caps.time.as_secs());
        put(&serde_json::to_vec(&what).expect("plain data"));
        for path in task.inputs()? {
            let bytes = std::fs::read(&path)
                .map_err(|e| Error::bad_input(format!("{}: cannot read: {e}", path.display())))?;
            put(path.to_string_lossy().as_bytes());
            put(&bytes);
        }
        Ok(Job {
            key: format!("{:016x}", hash.finish()),
            task,
            memory_mb: caps.memory_mb,
            time_s: caps.time.as_secs(),
        })
    }

    pub fn caps(&self) -> ProcessLimits {
        ProcessLimits {
            memory_mb: self.memory_mb,
            time: Duration::from_secs(self.time_s),
        }
    }

    pub fn run(&self) -> Result<T::Outcome> {
        self.task.run(self.caps())
    }
}

/// The build of sketchlog that is running: a hash of its executable, so that a rebuild
/// with any change of code, dependencies or flags gives other keys.
pub fn build_id() -> Result<String> {
    static ID: std::sync::OnceLock<std::result::Result<String, String>> =
        std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
        let bytes = std::fs::read(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
        let mut hash = fnv::FnvHasher::default();
        hash.write(&bytes);
        Ok(format!("{:016x}", hash.finish()))
    })
    .clone()
    .map_err(|e| Error::internal(format!("identifying this build: {e}")))
}

/// The machine: its processor (model name, family and model numbers, which tell apart
/// generations sold under one name), its core count and its host name, as one line.
pub fn machine_id() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
    };
    let model = field("model name").unwrap_or_else(|| "unknown processor".into());
    let generation = match (field("cpu family"), field("model")) {
        (Some(family), Some(number)) => format!(" (family {family}, model {number})"),
        _ => String::new(),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{model}{generation}, {cores} cores, host {}", host.trim())
}
