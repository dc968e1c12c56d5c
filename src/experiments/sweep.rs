//! `sketchlog sweep FILE.sweep`: a guide over a grid of parameters. Templates (files ending
//! in `.in`) have `{NAME}` placeholders; each point of the grid instantiates them, sets the
//! sizes of its rules' parameters ([`crate::rules::params`]) of the same names, runs the
//! guide, and (with `codegen`) compiles, validates and times the program it finds. Every
//! point is a job of the cluster ([`crate::cluster`]); all points go to one CSV with the
//! parameters as columns, and the best point is printed.
//!
//! ```text
//! param    tile  16 32 64                 a parameter and its values (the grid is every combination)
//! param    width 8 16 32
//! template tiles.guide.in tiles.sketch.in ../rules/tiles.rules.in
//! guide    tiles.guide                    the guide each point runs (an instantiated template, or a file)
//! codegen  512                            time the found program at this size (optional)
//! ```
//!
//! Paths are relative to the sweep file. An instantiated template is read in place of the
//! file of its name without `.in` ([`crate::files::with_overlay`]), so templates and the files
//! they name keep their usual relative paths. A point whose guide fails (a sketch not found,
//! a limit, an error) is a row that says so.

use super::jobs::{Job, Outcome, Store, Work};
use super::Reason;
use crate::cluster::child::{self, End, ProcessLimits};
use crate::egraph::saturate::StopReason;
use crate::error::{Error, Result};
use crate::files::read_source;
use crate::source::{Source, Span};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A parsed sweep file.
pub struct Sweep {
    pub path: PathBuf,
    pub params: Vec<(String, Vec<String>)>,
    /// Template files (ending in `.in`), relative to the working directory.
    pub templates: Vec<PathBuf>,
    pub guide: PathBuf,
    /// The size at which to time the found program, if any.
    pub codegen: Option<i64>,
}

/// One point of the grid: a value for each parameter, in the sweep's order.
pub type Point = Vec<(String, String)>;

/// ProcessLimits of a point: its guide's limits stop the search; these guard the machine.
pub const CAPS: ProcessLimits = ProcessLimits {
    memory_mb: 8000,
    time: Duration::from_secs(1200),
};

/// Reads a sweep file; errors are located where written.
pub fn load(path: &Path) -> Result<Sweep> {
    let src = read_source(path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut sweep = Sweep {
        path: path.to_path_buf(),
        params: vec![],
        templates: vec![],
        guide: PathBuf::new(),
        codegen: None,
    };
    for (_, words) in crate::source::word_lines(&src, "//") {
        let ws: Vec<(Span, &str)> = words.iter().map(|w| (w.span.clone(), &*w.text)).collect();
        let Some(((key_span, key), args)) = ws.split_first() else {
            continue;
        };
        let err = |m: String| Err(Error::at(key_span, m));
        match *key {
            "param" => {
                let Some(((name_span, name), values)) = args.split_first() else {
                    return err("expected `param NAME VALUE..`".into());
                };
                let ident = name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
                if !ident || sweep.params.iter().any(|(p, _)| p == name) {
                    let why = if ident { "a second" } else { "not a" };
                    return Err(Error::at(
                        name_span,
                        format!("{why} parameter name `{name}`"),
                    ));
                }
                if values.is_empty() {
                    return Err(Error::at(name_span, format!("`{name}` has no values")));
                }
                let values = values.iter().map(|(_, v)| v.to_string()).collect();
                sweep.params.push((name.to_string(), values));
            }
            "template" if !args.is_empty() => {
                for (span, file) in args {
                    if !file.ends_with(".in") {
                        return Err(Error::at(span, "a template's name ends in `.in`"));
                    }
                    let path = dir.join(file);
                    read_source(&path).map_err(|e| e.or_at(span))?;
                    sweep.templates.push(path);
                }
            }
            "guide" if args.len() == 1 => sweep.guide = dir.join(args[0].1),
            "codegen" if args.len() == 1 => {
                let size = crate::limits::positive_size(args[0].1)
                    .map_err(|e| Error::at(&args[0].0, e))?;
                sweep.codegen = Some(size);
            }
            "template" | "guide" | "codegen" => {
                return err(format!("wrong number of arguments to `{key}`"))
            }
            other => {
                return err(format!(
                    "unknown setting `{other}` (param, template, guide, codegen)"
                ))
            }
        }
    }
    if sweep.guide.as_os_str().is_empty() {
        let whole = Span::new(&src, 0, 0);
        return Err(Error::at(&whole, "the sweep names no `guide FILE.guide`"));
    }
    Ok(sweep)
}

impl Sweep {
    /// Every combination of the parameters' values, the last parameter varying fastest.
    pub fn points(&self) -> Vec<Point> {
        let mut points: Vec<Point> = vec![vec![]];
        for (name, values) in &self.params {
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut p = p.clone();
                        p.push((name.clone(), v.clone()));
                        p
                    })
                })
                .collect();
        }
        points
    }

    /// The templates instantiated at `point`, each with the file it stands in for.
    pub fn instantiated(&self, point: &Point) -> Result<Vec<(PathBuf, String)>> {
        let mut texts = vec![];
        for template in &self.templates {
            let src = read_source(template)?;
            let text = substitute(&src, point, &self.params)?;
            texts.push((template.with_extension(""), text));
        }
        Ok(texts)
    }

    /// The guide at `point`: its templates instantiated stand in for their files, and its
    /// rules' sizes of the parameters' names are the point's (`param rows 8 16 32` sweeps
    /// `strips-planes<rows, 4>` without a template).
    pub fn guide_at(&self, point: &Point) -> Result<crate::guide::Guide> {
        let texts = self.instantiated(point)?;
        let mut params = crate::rules::Params::default();
        for (name, value) in point {
            // A value that is not a size is the templates' alone.
            let _ = params.give(name, value);
        }
        crate::files::with_overlay(texts, || {
            crate::guide::parse::load_guide_with(&self.guide, params)
        })
    }

    /// The files a point's result depends on: the sweep, its templates, and every file the
    /// instantiated guide reads.
    pub fn inputs(&self, point: &Point) -> Result<Vec<PathBuf>> {
        let mut files = vec![self.path.clone()];
        files.extend(self.templates.iter().cloned());
        // A point that does not instantiate or load fails in its child, as a row.
        let instantiated: Vec<PathBuf> = self
            .templates
            .iter()
            .map(|t| crate::files::normalise_path(&t.with_extension("")))
            .collect();
        let Ok(guide) = self.guide_at(point) else {
            return Ok(files);
        };
        files.extend(
            guide
                .inputs
                .into_iter()
                .filter(|f| !instantiated.contains(&crate::files::normalise_path(f))),
        );
        Ok(files)
    }
}

/// `src` with every `{NAME}` replaced by the point's value; an unknown name is an error
/// where it is written.
fn substitute(
    src: &Arc<Source>,
    point: &Point,
    params: &[(String, Vec<String>)],
) -> Result<String> {
    let text = &src.text;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(open) = text[at..].find('{').map(|i| at + i) {
        out.push_str(&text[at..open]);
        let close = text[open..].find('}').map(|i| open + i);
        let end = close.map_or(open + 1, |c| c + 1);
        let inside = close.map_or("", |c| &text[open + 1..c]);
        let value = placeholder(inside, point).map_err(|why| {
            let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
            let why = format!("{why} (the sweep's parameters: {})", names.join(", "));
            Error::at(&Span::new(src, open, end), why)
        })?;
        out.push_str(&value);
        at = close.expect("found") + 1;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The value of a placeholder's text at `point`: a parameter `NAME`, or `A/B`, `A*B`, `A+B`,
/// `A-B` of parameters and whole numbers (a division must be exact).
fn placeholder(text: &str, point: &Point) -> std::result::Result<String, String> {
    let value = |name: &str| -> std::result::Result<String, String> {
        let name = name.trim();
        match point.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None if name.parse::<i64>().is_ok() => Ok(name.to_string()),
            None => Err(format!("unknown parameter `{name}`")),
        }
    };
    let Some(at) = text.find(['/', '*', '+', '-']) else {
        return value(text);
    };
    let number = |side: &str| -> std::result::Result<i64, String> {
        let v = value(side)?;
        v.parse()
            .map_err(|_| format!("`{v}` is not a whole number"))
    };
    let (a, b) = (number(&text[..at])?, number(&text[at + 1..])?);
    let result = match &text[at..at + 1] {
        "/" if b != 0 && a % b == 0 => Some(a / b),
        "/" => None,
        "*" => a.checked_mul(b),
        "+" => a.checked_add(b),
        _ => a.checked_sub(b),
    };
    result
        .map(|r| r.to_string())
        .ok_or_else(|| format!("`{text}` is not a whole number here ({a} and {b})"))
}

/// How a point went.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PointRow {
    pub found: bool,
    /// Steps whose sketch was found, of the guide's.
    pub steps_found: usize,
    pub steps: usize,
    pub search_s: f64,
    pub max_enodes: usize,
    pub program_size: Option<usize>,
    /// The found program's C: GFLOP/s (median) and its ratio to the reference GEMM.
    pub gflops: Option<f64>,
    pub ratio_vs_reference: Option<f64>,
    /// Why it stopped: found, the limit that stopped it, or an error.
    pub stop: StopReason,
    /// Where: the sketch whose step was stopped, or the error.
    pub at: Option<String>,
}

pub const COLUMNS: [&str; 9] = [
    "found",
    "steps_found",
    "steps",
    "search_s",
    "max_enodes",
    "program_size",
    "gflops",
    "ratio_vs_reference",
    "stop",
];

impl PointRow {
    fn fields(&self) -> Vec<String> {
        vec![
            self.found.to_string(),
            self.steps_found.to_string(),
            self.steps.to_string(),
            format!("{:.3}", self.search_s),
            self.max_enodes.to_string(),
            super::cell(self.program_size, |n| n.to_string()),
            super::cell(self.gflops, |g| format!("{g:.1}")),
            super::cell(self.ratio_vs_reference, |r| format!("{r:.2}")),
            match (&self.at, self.stop) {
                (None, stop) => stop.to_string(),
                (Some(why), StopReason::Error) => format!("error: {why}"),
                (Some(sketch), stop) => format!("{sketch}: {stop}"),
            },
        ]
    }

    fn failed(stop: StopReason, at: Option<String>) -> PointRow {
        PointRow {
            found: false,
            steps_found: 0,
            steps: 0,
            search_s: 0.0,
            max_enodes: 0,
            program_size: None,
            gflops: None,
            ratio_vs_reference: None,
            stop,
            at,
        }
    }
}

/// The point as a label: `NAME=VALUE,..`.
pub fn point_arg(point: &Point) -> String {
    let pairs: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
    pairs.join(",")
}

/// Checks that `point` gives a value for each of `sweep`'s parameters, in order.
fn check_point(sweep: &Sweep, point: &Point) -> Result<()> {
    let names: Vec<&String> = point.iter().map(|(n, _)| n).collect();
    let wanted: Vec<&String> = sweep.params.iter().map(|(n, _)| n).collect();
    if names != wanted {
        let wanted: Vec<&str> = wanted.iter().map(|n| n.as_str()).collect();
        return Err(Error::bad_input(format!(
            "point `{}`: expected a value for each of {}",
            point_arg(point),
            wanted.join(", ")
        )));
    }
    Ok(())
}

/// The child process of a point: instantiates, runs the guide, times the C; reports a row.
pub fn point_main(sweep: &Path, point: &Point) -> Result<()> {
    let sweep = load(sweep)?;
    check_point(&sweep, point)?;
    let guide = sweep.guide_at(point)?;
    let reports = crate::guide::run(&guide, |_, _| {}, |_, _| {})?;
    let steps_found = reports.iter().filter(|r| r.outcome.found()).count();
    let found = steps_found == guide.steps.len();
    let last = reports.last().expect("a guide has steps");
    let mut row = PointRow {
        found,
        steps_found,
        steps: guide.steps.len(),
        search_s: reports.iter().map(|r| r.seconds).sum(),
        max_enodes: reports
            .iter()
            .map(|r| r.outcome.size().0)
            .max()
            .unwrap_or(0),
        program_size: None,
        gflops: None,
        ratio_vs_reference: None,
        stop: last.outcome.stop,
        at: (!found).then(|| last.sketch.clone()),
    };
    if let (true, Some(size)) = (found, sweep.codegen) {
        let term = last.term.clone().expect("found");
        row.program_size = Some(term.operator_count());
        let program = crate::codegen::sequential(&term);
        let sizes = crate::codegen::sizes_of(&program, size);
        let opts = crate::codegen::run::COptions {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ..Default::default()
        };
        let exe = crate::codegen::run::compile(&program, &sizes, &opts)?;
        // What the program the guide starts from means.
        let expected = crate::codegen::run::Expected::of(&exe, &guide.start)?;
        let m = crate::codegen::measure::measure(
            &exe,
            None,
            &expected,
            &opts,
            crate::codegen::measure::Rounds::exactly(3),
        )?;
        row.gflops = Some(m.gflops);
        row.ratio_vs_reference = m.reference(&exe).map(|(_, ratio)| ratio);
    }
    child::report(&row);
    Ok(())
}

/// Runs a point in a child process under `caps`; a child that failed is a row that says why.
pub fn run_child(sweep: &Path, point: &Point, caps: ProcessLimits) -> Result<PointRow> {
    let work = super::jobs::Work::SweepPoint {
        sweep: sweep.to_path_buf(),
        point: point.clone(),
        timed: false,
    };
    let run = child::run(&super::jobs::child_args(work, caps), caps)?;
    Ok(match child::reports::<PointRow>(&run.stdout).last() {
        Some(row) => row,
        None => match run.end {
            End::Failed(why) => PointRow::failed(StopReason::Error, Some(why)),
            end => PointRow::failed(end.reason(), None),
        },
    })
}

/// `sketchlog sweep FILE.sweep`: every point as a job; the rows in `DIR/NAME.csv` (the sweep
/// file's name), rewritten as points finish; the best point printed at the end.
pub fn sweep(
    path: &Path,
    dir: &Path,
    fresh: bool,
    cluster: Option<crate::cluster::Cluster>,
) -> Result<()> {
    let sweep = load(path)?;
    let caps = CAPS;
    let mut jobs = vec![];
    for point in sweep.points() {
        let task = Work::SweepPoint {
            sweep: sweep.path.clone(),
            point,
            timed: sweep.codegen.is_some(),
        };
        jobs.push(Job::new(task, caps)?);
    }
    let name = path
        .file_stem()
        .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    let out = dir.join(format!("{name}.csv"));
    let params: Vec<String> = sweep.params.iter().map(|(n, _)| n.clone()).collect();
    let csv = out.clone();
    let header = params.clone();
    let all = jobs.clone();
    let writes = cluster.as_ref().is_none_or(|c| c.writes());
    crate::cluster::run_jobs(jobs, dir, fresh, cluster, move |store, jobs| {
        let header: Vec<&str> = header.iter().map(String::as_str).chain(COLUMNS).collect();
        super::matmul::write_csv(&csv, &header, &lines(store, jobs))
    })?;
    if !writes {
        return Ok(());
    }
    let store = Store::open(&dir.join(crate::cluster::store::STORE_FILE))?;
    let rows = all
        .iter()
        .filter_map(|j| match (&j.task, store.outcome(j)) {
            (Work::SweepPoint { point, .. }, Some(Outcome::SweepPoint(row))) if row.found => {
                Some((point, row))
            }
            _ => None,
        });
    let best = match sweep.codegen {
        Some(_) => rows.max_by(|a, b| {
            a.1.gflops
                .unwrap_or(0.0)
                .total_cmp(&b.1.gflops.unwrap_or(0.0))
        }),
        None => rows.min_by(|a, b| a.1.search_s.total_cmp(&b.1.search_s)),
    };
    match best {
        Some((point, row)) => {
            let how = match (row.gflops, row.ratio_vs_reference) {
                (Some(g), Some(r)) => format!("{g:.1} GFLOP/s, {r:.2}x the reference GEMM"),
                (Some(g), None) => format!("{g:.1} GFLOP/s"),
                _ => format!("found in {:.3} s", row.search_s),
            };
            println!("best point: {}: {how}", point_arg(point));
        }
        None => println!("no point was found"),
    }
    println!("rows: {}", out.display());
    Ok(())
}

fn lines(store: &Store, jobs: &[Job]) -> Vec<Vec<String>> {
    jobs.iter()
        .filter_map(|j| match (&j.task, store.outcome(j)) {
            (Work::SweepPoint { point, .. }, Some(Outcome::SweepPoint(row))) => Some(
                point
                    .iter()
                    .map(|(_, v)| v.clone())
                    .chain(row.fields())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}
