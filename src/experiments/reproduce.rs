//! `sketchlog reproduce`: the requested tables as jobs ([`crate::cluster`]), run where the
//! store of finished jobs has no result with the same key, and the tables rewritten from
//! the store (atomically) as each job finishes, with a progress line per job.

use super::jobs::{Job, Outcome, Store, Work};
use super::{auto, codegen, elevate, harris, matmul, shine, steps, table2};
use crate::cluster::child::ProcessLimits;
use crate::cluster::Cluster;
use crate::codegen::target::Isa;
use crate::egraph::encoding::{Binding, Substitution};
use crate::error::Result;
use std::path::PathBuf;

/// The tables `reproduce` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Table {
    Table2,
    Table3,
    Table4,
    Table5,
    Fig16,
    Codegen,
    Harris,
    /// Every guide step's C beside its scalar lowering.
    Steps,
    Shine,
    Auto,
    /// Elevate's strategies, the guides and mixed versions of the matrix multiplication.
    Elevate,
}

impl Table {
    /// The table's name on the command line and in `machine.txt`.
    pub fn name(self) -> String {
        use clap::ValueEnum;
        let value = self.to_possible_value().expect("no table is skipped");
        value.get_name().to_string()
    }
}

/// Settings of one `reproduce` run.
#[derive(Clone)]
pub struct Settings {
    pub tables: Vec<Table>,
    pub dir: PathBuf,
    /// Table 2's rows' caps.
    pub table2: ProcessLimits,
    /// Table 2: only one substitution, one binding.
    pub substitution: Option<Substitution>,
    pub binding: Option<Binding>,
    /// ProcessLimits of the unguided matmul rows.
    pub unguided: ProcessLimits,
    /// The matmul goals of Tables 3 to 5.
    pub goals: Vec<String>,
    /// The codegen table's matrix size.
    pub size: i64,
    /// The instruction set of the C of the Harris and steps tables (and of Halide's).
    pub isa: Isa,
    /// Ignore the finished jobs on disk: run everything again.
    pub fresh: bool,
}

impl Settings {
    /// Every job the tables need, each once, in table order.
    pub fn jobs(&self) -> Result<Vec<Job>> {
        let mut jobs: Vec<Job> = vec![];
        let mut add = |task: Work, caps: ProcessLimits| -> Result<()> {
            if !jobs.iter().any(|j| j.task == task) {
                jobs.push(Job::new(task, caps)?);
            }
            Ok(())
        };
        let guided = |goal: &str| Work::Guided {
            goal: goal.to_string(),
        };
        // Unguided goals that grow the same e-graph share one search: gathered over the
        // tables first.
        let mut unguided: Vec<String> = vec![];
        for table in &self.tables {
            let goals: Vec<String> = match table {
                Table::Table3 => self.goals.clone(),
                Table::Fig16 => matmul::FIG16_GOALS.map(String::from).to_vec(),
                _ => continue,
            };
            for g in goals {
                if !unguided.contains(&g) {
                    unguided.push(g);
                }
            }
        }
        let groups = matmul::unguided_groups(&unguided)?;
        let group_of = |goal: &str| {
            let goals = groups.iter().find(|g| g.iter().any(|x| x == goal));
            let goals = goals.expect("every unguided goal is in a group").clone();
            Work::Unguided { goals }
        };
        for table in &self.tables {
            match table {
                Table::Table2 => {
                    for task in table2::tasks(self.substitution, self.binding) {
                        add(task, self.table2)?;
                    }
                }
                Table::Table3 => {
                    for g in &self.goals {
                        add(group_of(g), self.unguided)?;
                    }
                }
                Table::Table4 | Table::Table5 => {
                    for g in &self.goals {
                        add(guided(g), matmul::GUIDED_CAPS)?;
                    }
                }
                Table::Fig16 => {
                    for g in matmul::FIG16_GOALS {
                        add(group_of(g), self.unguided)?;
                        add(guided(g), matmul::GUIDED_CAPS)?;
                    }
                }
                Table::Codegen => add(Work::Codegen { size: self.size }, codegen::CAPS)?,
                Table::Harris => add(Work::Harris { isa: self.isa }, codegen::CAPS)?,
                Table::Steps => {
                    for guides in steps::groups()? {
                        add(
                            Work::Steps {
                                guides,
                                isa: self.isa,
                            },
                            codegen::CAPS,
                        )?;
                    }
                }
                Table::Auto => {
                    for t in auto::targets() {
                        for written in [false, true] {
                            let target = t.name.to_string();
                            add(Work::Auto { target, written }, auto::CAPS)?;
                        }
                    }
                }
                Table::Elevate => {
                    for (version, approach) in elevate::rows() {
                        let (version, approach) = (version.into(), approach.into());
                        add(Work::Elevate { version, approach }, elevate::CAPS)?;
                    }
                }
                Table::Shine => {
                    for t in &shine::TESTS {
                        let test = t.name.to_string();
                        add(Work::Shine { test }, shine::CAPS)?;
                    }
                }
            }
        }
        Ok(jobs)
    }

    /// Writes every requested table from the store's results for `jobs`.
    fn write_tables(&self, store: &Store, jobs: &[Job]) -> Result<()> {
        let outcomes: Vec<(&Work, &Outcome)> = jobs
            .iter()
            .filter_map(|j| store.outcome(j).map(|o| (&j.task, o)))
            .collect();
        let runs = |goal: &str, unguided: bool| {
            outcomes.iter().find_map(|(_, o)| match (o, unguided) {
                (Outcome::Guided(r), false) if r.goal == goal => Some(r),
                (Outcome::Unguided(runs), true) => runs.iter().find(|r| r.goal == goal),
                _ => None,
            })
        };
        let dir = &self.dir;
        for table in &self.tables {
            match table {
                Table::Table2 => {
                    let rows = outcomes.iter().filter_map(|(t, o)| match o {
                        Outcome::Table2(row) => Some((*t, row)),
                        _ => None,
                    });
                    let lines = table2::lines(rows);
                    matmul::write_csv(&dir.join("table2.csv"), &table2::COLUMNS, &lines)?
                }
                Table::Table3 => matmul::table3(dir, &self.goals, self.unguided, &runs)?,
                Table::Table4 => matmul::table4(dir, &self.goals, &runs)?,
                Table::Table5 => matmul::table5(dir, &self.goals, &runs)?,
                Table::Fig16 => matmul::fig16(dir, &runs)?,
                Table::Shine => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Shine(rows) => rows.iter().map(|r| r.fields()).collect(),
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("shine.csv"), &shine::COLUMNS, &rows)?
                }
                Table::Auto => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Auto(row) => vec![row.fields()],
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("auto.csv"), &auto::COLUMNS, &rows)?
                }
                Table::Elevate => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Elevate(row) => vec![row.fields()],
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("elevate.csv"), &elevate::COLUMNS, &rows)?
                }
                Table::Steps => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Steps(rows) => rows.iter().map(|r| r.fields()).collect(),
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("steps.csv"), &steps::COLUMNS, &rows)?
                }
                Table::Harris => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Harris(rows) => rows.iter().map(|r| r.fields()).collect(),
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("harris.csv"), &harris::COLUMNS, &rows)?
                }
                Table::Codegen => {
                    let rows = cells(&outcomes, |o| match o {
                        Outcome::Codegen(rows) => rows.iter().map(|r| r.fields()).collect(),
                        _ => vec![],
                    });
                    matmul::write_csv(&dir.join("codegen.csv"), &codegen::COLUMNS, &rows)?
                }
            }
        }
        Ok(())
    }
}

/// The CSV rows that `rows_of` makes of each outcome, in the jobs' order.
fn cells(
    outcomes: &[(&Work, &Outcome)],
    rows_of: impl Fn(&Outcome) -> Vec<Vec<String>>,
) -> Vec<Vec<String>> {
    outcomes.iter().flat_map(|(_, o)| rows_of(o)).collect()
}

/// Runs the jobs of `settings` on `cluster`, reusing finished ones, and records in
/// `DIR/machine.txt` which machine and build made each table's rows.
pub fn reproduce(settings: &Settings, cluster: Option<Cluster>) -> Result<()> {
    let jobs = settings.jobs()?;
    let settings = settings.clone();
    let (dir, fresh) = (settings.dir.clone(), settings.fresh);
    // By the process that writes the tables, once, before their first rows.
    let recorded = std::sync::atomic::AtomicBool::new(false);
    crate::cluster::run_jobs(jobs, &dir, fresh, cluster, move |store, jobs| {
        if !recorded.swap(true, std::sync::atomic::Ordering::Relaxed) {
            record_machine(&settings.dir.join("machine.txt"), &settings)?;
        }
        settings.write_tables(store, jobs)
    })
}

/// Sets the line `TABLE: MACHINE; build BUILD` of each of the tables of `settings` in the file
/// at `path` (the Harris and steps tables' ending `; ISA code` when it is not the machine's
/// own), keeping the other tables' lines. The rows a run writes were all made by this build on this
/// machine (a row made elsewhere has another key, and runs again).
fn record_machine(path: &std::path::Path, settings: &Settings) -> Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let build = crate::cluster::job::build_id()?;
    let machine = crate::cluster::job::machine_id();
    let names: Vec<String> = settings.tables.iter().map(|t| t.name()).collect();
    let mut lines: Vec<String> = old
        .lines()
        .filter(|l| !names.iter().any(|t| l.starts_with(&format!("{t}: "))))
        .map(String::from)
        .collect();
    lines.extend(settings.tables.iter().map(|&table| {
        let made = format!("{}: {machine}; build {build}", table.name());
        match (table, settings.isa) {
            (Table::Harris | Table::Steps, isa) if isa != Isa::Native => {
                format!("{made}; {} code", isa.name())
            }
            _ => made,
        }
    }));
    lines.sort();
    crate::files::write_atomically(path, (lines.join("\n") + "\n").as_bytes())
}
