//! `reproduce elevate`: the matrix multiplication versions as Elevate's strategies
//! (`programs/mm.elevate`), as the paper's guides (`programs/*.guide`) and mixed (strategies
//! for the exact steps, a guided search for the loop order), on the same program, rules and
//! machine (`results/elevate.csv`). Each row runs in a child process of its own, so that its
//! peak memory is its own.

use super::input;
use crate::cluster::child::{self, ProcessLimits};
use crate::error::{Error, Result};
use crate::rules::Params;
use crate::strategy::{self, Ending};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub const COLUMNS: [&str; 11] = [
    "program",
    "version",
    "approach",
    "lines",
    "rewrite_steps",
    "rule_applications",
    "enodes",
    "time_s",
    "peak_rss_mb",
    "same_c_as_guide",
    "paper_steps",
];

/// Each row's caps.
pub const CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 8000,
    time: Duration::from_secs(900),
};

/// How a version is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Approach {
    /// A strategy of `programs/mm.elevate`.
    Strategy(&'static str),
    /// The version's guide, `programs/VERSION.guide`.
    Guide,
    /// A strategy of `programs/mm.elevate` that runs guided searches.
    Mixed(&'static str),
}

impl Approach {
    /// The approach as the table names it.
    fn name(self) -> &'static str {
        match self {
            Approach::Strategy(_) => "strategy",
            Approach::Guide => "guide",
            Approach::Mixed(_) => "mixed",
        }
    }
}

/// The versions of the paper's Table 4, each found by its guide and by its Elevate strategy
/// (its name in `mm.elevate`), and the figure the CACM paper (section 6.2) gives for it.
const VERSIONS: [(&str, &str, &str); 7] = [
    ("baseline", "baseline", "657"),
    ("blocking", "blocking", "about 40000"),
    ("vectorization", "vectorization", "about 40000"),
    ("loop-perm", "loopPerm", "about 40000"),
    ("array-packing", "arrayPacking", "about 63000"),
    ("cache-blocks", "cacheBlocks", "about 63000"),
    ("parallel", "par", "about 63000"),
];

/// The versions found mixed too: the version and its strategy in `mm.elevate`.
const MIXED: [(&str, &str); 1] = [("blocking", "blockingMixed")];

/// A row: a version, how it is found, and the paper's figure for the version.
struct Version {
    name: &'static str,
    approach: Approach,
    paper_steps: &'static str,
}

/// The rows, in order: each version by its guide, by its strategy, and mixed where it is.
fn versions() -> Vec<Version> {
    let mut rows = vec![];
    for (name, strategy, paper_steps) in VERSIONS {
        let mixed = MIXED.iter().filter(|(v, _)| *v == name);
        let approaches = [Approach::Guide, Approach::Strategy(strategy)]
            .into_iter()
            .chain(mixed.map(|(_, s)| Approach::Mixed(s)));
        rows.extend(approaches.map(|approach| Version {
            name,
            approach,
            paper_steps,
        }));
    }
    rows
}

/// The rows' keys, (version, approach), in order.
pub fn rows() -> Vec<(&'static str, &'static str)> {
    versions()
        .iter()
        .map(|v| (v.name, v.approach.name()))
        .collect()
}

fn version(name: &str, approach: &str) -> Result<Version> {
    (versions().into_iter())
        .find(|v| v.name == name && v.approach.name() == approach)
        .ok_or_else(|| Error::bad_input(format!("no elevate row `{name}` by {approach}")))
}

/// A row of `results/elevate.csv`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub version: String,
    pub approach: String,
    pub lines: usize,
    pub rewrite_steps: Option<u64>,
    pub rule_applications: Option<u64>,
    pub enodes: Option<usize>,
    pub time_s: Option<f64>,
    pub peak_rss_mb: f64,
    /// For a strategy or mixed row: whether its program's C is the guide's, byte for byte.
    pub same_c_as_guide: Option<bool>,
    pub paper_steps: String,
    /// Why the row has no result.
    pub error: Option<String>,
}

impl Row {
    /// Its cells, in the order of [`COLUMNS`].
    pub fn fields(&self) -> Vec<String> {
        let count = |x: Option<u64>| super::cell(x, |v| v.to_string());
        vec![
            "matmul".into(),
            self.version.clone(),
            self.approach.clone(),
            self.lines.to_string(),
            count(self.rewrite_steps),
            count(self.rule_applications),
            super::cell(self.enodes, |v| v.to_string()),
            match (&self.error, self.time_s) {
                (Some(e), _) => e.clone(),
                (None, t) => super::cell(t, |v| format!("{v:.3}")),
            },
            format!("{:.0}", self.peak_rss_mb),
            super::cell(self.same_c_as_guide, |v| v.to_string()),
            self.paper_steps.clone(),
        ]
    }
}

fn strategy_file() -> PathBuf {
    input("programs/mm.elevate")
}

/// The files a row depends on.
pub fn inputs(name: &str, approach: &str) -> Result<Vec<PathBuf>> {
    let v = version(name, approach)?;
    let mut files = vec![input("programs/matmul.rise")];
    match v.approach {
        Approach::Guide => files.extend(super::steps::inputs(name)?),
        Approach::Strategy(_) | Approach::Mixed(_) => {
            files.extend(strategy::load(&strategy_file(), &Params::default())?.inputs);
            // The guide whose C the row is compared with (and searches with).
            files.extend(super::steps::inputs(name)?);
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// The child process of a row: reports it.
pub fn row_main(name: &str, approach: &str) -> Result<()> {
    let v = version(name, approach)?;
    let row = match v.approach {
        Approach::Guide => guide_row(&v, name)?,
        Approach::Strategy(s) | Approach::Mixed(s) => strategy_row(&v, s)?,
    };
    child::report(&row);
    Ok(())
}

fn empty(v: &Version) -> Row {
    Row {
        version: v.name.into(),
        approach: v.approach.name().into(),
        paper_steps: v.paper_steps.into(),
        ..Row::default()
    }
}

fn guide_row(v: &Version, guide: &str) -> Result<Row> {
    let path = super::steps::guide_file(guide);
    let g = crate::guide::parse::load_guide(&path)?;
    let t0 = Instant::now();
    let reports = crate::guide::run(&g, |_, _| {}, |_, _| {})?;
    let time = t0.elapsed().as_secs_f64();
    let found = reports.iter().all(|r| r.outcome.found());
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let code = text.lines().map(str::trim);
    Ok(Row {
        lines: code
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .count(),
        rule_applications: Some(
            reports
                .iter()
                .map(|r| r.outcome.rules_applied() as u64)
                .sum(),
        ),
        enodes: Some(reports.iter().map(|r| r.outcome.size().0).sum()),
        time_s: Some(time),
        peak_rss_mb: crate::egraph::saturate::resident_mb(true),
        error: (!found).then(|| "not found".into()),
        ..empty(v)
    })
}

fn strategy_row(v: &Version, name: &str) -> Result<Row> {
    let (file, s) = strategy::load_spec(
        &format!("{}:{name}", strategy_file().display()),
        &Params::default(),
    )?;
    let mm = crate::rise::load_def_ref(
        &input("programs/matmul.rise").to_string_lossy(),
        "".as_ref(),
    )?;
    let settings = strategy::Settings {
        sizes: mm.sizes.clone(),
        searcher: Some(std::rc::Rc::new(crate::guide::Searches::default())),
        ..strategy::Settings::default()
    };
    let outcome = strategy::run(&file, &s, &mm.term, &settings)?;
    // Before the guide the program is compared with runs.
    let peak_rss_mb = crate::egraph::saturate::resident_mb(true);
    let (error, same_c) = match &outcome.ending {
        Ending::Success(t) => (None, Some(same_c_as_guide(t, v.name)?)),
        Ending::Failure(f) => (Some(format!("failed: {}", f.strategy)), None),
        Ending::Stopped(limit) => (Some(format!("{limit} limit")), None),
    };
    Ok(Row {
        lines: file.lines_of(&s),
        rewrite_steps: Some(outcome.counts.steps),
        rule_applications: Some(outcome.counts.rules),
        enodes: (outcome.counts.searches > 0).then_some(outcome.counts.enodes),
        time_s: Some(outcome.seconds),
        peak_rss_mb,
        same_c_as_guide: same_c,
        error,
        ..empty(v)
    })
}

/// Whether the C of `program` (lowered) is the C of the program the version's guide finds,
/// at 1024 in every size.
fn same_c_as_guide(program: &std::rc::Rc<crate::rise::term::Term>, version: &str) -> Result<bool> {
    let g = crate::guide::parse::load_guide(&super::steps::guide_file(version))?;
    let reports = crate::guide::run(&g, |_, _| {}, |_, _| {})?;
    let Some(found) = reports.last().and_then(|r| r.term.clone()) else {
        return Ok(false);
    };
    let program = crate::egraph::saturate::normalise(program, &Default::default())?.0;
    let c = |t: &std::rc::Rc<crate::rise::term::Term>| {
        let sizes = crate::codegen::sizes_of(t, 1024);
        crate::codegen::emit::program_c("mm", &crate::codegen::sequential(t), &sizes).map(|g| g.c)
    };
    Ok(c(&program)? == c(&found)?)
}

/// Runs [`row_main`] in a child process under `caps`; its row (the cap that stopped it, if
/// one did).
pub fn run_child(name: &str, approach: &str, caps: ProcessLimits) -> Result<Row> {
    let work = super::jobs::Work::Elevate {
        version: name.into(),
        approach: approach.into(),
    };
    let run = child::run(&super::jobs::child_args(work, caps), caps)?;
    if let Some(row) = child::reports::<Row>(&run.stdout).last() {
        return Ok(row);
    }
    let v = version(name, approach)?;
    Ok(Row {
        peak_rss_mb: run.peak_rss_mb.unwrap_or(f64::NAN),
        error: Some(match run.end {
            crate::cluster::child::End::Stopped(cap) => format!("{cap:?} cap"),
            _ => "error".into(),
        }),
        ..empty(&v)
    })
}
