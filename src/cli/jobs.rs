//! `reproduce` and `sweep`: the paper's tables and parameter grids, as jobs on this machine
//! or a cluster.

use super::limits;
use crate::cluster::child::ProcessLimits;
use crate::egraph::encoding::{Binding, Substitution};
use crate::error::{Error, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Where jobs run and where their results go (`reproduce`, `sweep`).
#[derive(Args, Clone, Debug)]
pub(super) struct JobArgs {
    /// Directory of the result files and of the finished jobs (`runs.jsonl`).
    #[arg(long, default_value = "results")]
    dir: PathBuf,
    /// Run every job asked for again, ignoring their finished results on disk (the store
    /// keeps those of other tasks).
    #[arg(long)]
    fresh: bool,
    /// Worker threads in this process, each running one job at a time (default: as many
    /// as the cores and the available memory at the largest memory cap allow; timed jobs
    /// always run alone). At most 4 per core of this host, and 256.
    #[arg(long, value_parser = limits::workers)]
    workers: Option<usize>,
    /// Several processes (machines): a file of `host:port` lines, one per process, the
    /// same on every machine; start the same command on each with its `--process`.
    #[arg(long)]
    hostfile: Option<PathBuf>,
    /// This process's index in the hostfile (process 0 writes the files).
    #[arg(long, default_value_t = 0, requires = "hostfile", value_parser = limits::process)]
    process: usize,
}

impl JobArgs {
    /// `sketchlog sweep FILE`: the sweep's points as jobs.
    pub(super) fn sweep(&self, file: &std::path::Path) -> Result<()> {
        crate::experiments::sweep::sweep(file, &self.dir, self.fresh, self.cluster())
    }

    /// The cluster asked for; `None` for this machine with the default workers.
    pub(super) fn cluster(&self) -> Option<crate::cluster::Cluster> {
        match (self.workers, &self.hostfile) {
            (None, None) => None,
            (workers, hostfile) => Some(crate::cluster::Cluster {
                workers: workers.unwrap_or(1),
                hostfile: hostfile.clone(),
                process: self.process,
            }),
        }
    }
}

/// `sketchlog reproduce`'s arguments.
#[derive(Args)]
pub(super) struct ReproduceArgs {
    /// Which tables (several in one run share their searches: fig16 reuses the rows of
    /// table3 and table4).
    #[arg(required = true, value_enum)]
    tables: Vec<crate::experiments::reproduce::Table>,
    #[command(flatten)]
    jobs: JobArgs,
    /// Memory cap per row, in MB (table2: 2000 as in the paper; unguided rows of table3
    /// and fig16: 3000, or 60000 with `--paper-caps`).
    #[arg(long, value_parser = limits::memory_mb)]
    memory_mb: Option<u64>,
    /// Time limit per row, in seconds (table2: 240; unguided rows: 200, or 7200 with
    /// `--paper-caps`).
    #[arg(long, value_parser = limits::whole_seconds)]
    time_s: Option<u64>,
    /// The paper's caps for the unguided rows (60 GB, 2 hours each): a run for several
    /// machines (`--hostfile`), hours long.
    #[arg(long)]
    paper_caps: bool,
    /// table2: only the rows of one substitution encoding.
    #[arg(long, value_enum)]
    substitution: Option<Substitution>,
    /// table2: only the rows of one binding encoding.
    #[arg(long, value_enum)]
    binding: Option<Binding>,
    /// table3/4/5: only these goals (comma-separated; default all seven).
    #[arg(long, value_delimiter = ',')]
    goals: Vec<String>,
    /// codegen: the matrices' size (m = n = k); the 2D programs (matrix-vector, binomial
    /// filters) run at 4 times it in each dimension.
    #[arg(long, default_value_t = 1024, value_parser = limits::positive_size)]
    size: i64,
    /// harris, steps: the instructions of the generated C and of Halide's (the rules' sizes
    /// `lanes` and `registers` too), this machine's or an older set it also runs: `avx2`
    /// times AVX2 code on an AVX-512 machine. Use another `--dir` for its rows.
    #[arg(long, value_enum, default_value_t = crate::codegen::target::Isa::Native)]
    isa: crate::codegen::target::Isa,
}

impl ReproduceArgs {
    /// Reproduces the tables asked for, each row a job under its caps.
    pub(super) fn run(self) -> Result<()> {
        use crate::experiments::matmul::{PAPER_UNGUIDED_CAPS, UNGUIDED_CAPS};
        self.isa
            .check_runs_here()
            .map_err(|why| Error::bad_input(format!("--isa {}: {why}", self.isa.name())))?;
        let caps = |default: ProcessLimits| ProcessLimits {
            memory_mb: self.memory_mb.unwrap_or(default.memory_mb),
            time: self.time_s.map_or(default.time, Duration::from_secs),
        };
        let settings = crate::experiments::reproduce::Settings {
            tables: self.tables.clone(),
            dir: self.jobs.dir.clone(),
            table2: caps(crate::experiments::table2::CAPS),
            substitution: self.substitution,
            binding: self.binding,
            unguided: caps(match self.paper_caps {
                true => PAPER_UNGUIDED_CAPS,
                false => UNGUIDED_CAPS,
            }),
            goals: match self.goals.is_empty() {
                true => crate::experiments::matmul::GOALS.map(String::from).to_vec(),
                false => self.goals.clone(),
            },
            size: self.size,
            isa: self.isa,
            fresh: self.jobs.fresh,
        };
        crate::experiments::reproduce::reproduce(&settings, self.jobs.cluster())
    }
}
