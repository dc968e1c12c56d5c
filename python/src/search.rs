//! Rules, sketches, guides and the searches over them: `check`, `simplify`, `guide`,
//! `guide_auto` and `rewrite`, each run with the GIL released.

use crate::errors::{to_py, OrRaise};
use crate::interrupt::{self, OnSigint};
use crate::program::Program;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use sketchlog::egraph::extract::Weighted;
use sketchlog::egraph::filter::Filter;
use sketchlog::egraph::saturate::{Cancel, IterationStats, Limits};
use sketchlog::egraph::serialize::Dump;
use sketchlog::error::Error;
use sketchlog::guide::{self, report, Cost, Step, StepReport};
use sketchlog::rise::syntax::RuleDecl;
use sketchlog::sketch::SketchDecl;
use sketchlog::source::Source;
use std::rc::Rc;
use std::time::Duration;

/// The sizes rules with sizes are instantiated with: the target's (`lanes`), a rules file's
/// defaults, and `params` over them (`{"lanes": 8}`).
fn params_of(params: Option<&Bound<'_, PyDict>>) -> PyResult<sketchlog::rules::Params> {
    let mut given = vec![];
    for (name, value) in params.into_iter().flat_map(|d| d.iter()) {
        given.push(format!("{}={}", name.str()?, value.str()?));
    }
    sketchlog::rules::Params::given(&given).map_err(|e| to_py(Error::bad_input(e)))
}

/// Rewrite rules: a whole `.rules` file, one of its rule sets, or one rule.
///
/// `Rules.load("rules/mm.rules:split")`; `Rules.parse(text, set=None)`. A rule with sizes
/// is named with them, `Rules.load("rules/kernel.rules:split-join<lanes>")`; `params` sets
/// named sizes (`{"lanes": 8}`; `lanes` is otherwise the machine's vector width,
/// `registers` its number of vector registers, and `line` the floats in a line of its
/// level-1 data cache).
#[pyclass(unsendable, module = "sketchlog")]
#[derive(Clone)]
pub struct Rules {
    pub rules: Vec<RuleDecl>,
    label: String,
}

#[pymethods]
impl Rules {
    /// Reads `FILE.rules[:SET]`.
    #[staticmethod]
    #[pyo3(signature = (spec, params = None))]
    fn load(spec: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Rules> {
        Ok(Rules {
            rules: sketchlog::rules::load_selection(spec, &params_of(params)?).or_raise()?,
            label: spec.to_string(),
        })
    }

    /// Parses rules written as in a `.rules` file; `set` picks one rule set (or rule).
    #[staticmethod]
    #[pyo3(signature = (text, set = None, source = "<string>", params = None))]
    fn parse(
        text: &str,
        set: Option<&str>,
        source: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Rules> {
        let file =
            sketchlog::rise::parse::parse_rule_file(&Source::new(source, text)).or_raise()?;
        Ok(Rules {
            rules: sketchlog::rules::select(&file, set, &params_of(params)?).or_raise()?,
            label: set.map_or(source.to_string(), |s| format!("{source}:{s}")),
        })
    }

    /// Rules that ship with the package: `algebra` (f32 arithmetic) or `elementary`
    /// (trigonometric, hyperbolic and exponential identities).
    #[staticmethod]
    fn builtin(name: &str) -> PyResult<Rules> {
        let text = match name {
            "algebra" => include_str!("../../rules/algebra.rules"),
            "elementary" => include_str!("../../rules/elementary.rules"),
            other => {
                return Err(to_py(Error::bad_input(format!(
                    "no built-in rules `{other}` (there are: algebra, elementary)"
                ))))
            }
        };
        Rules::parse(text, None, &format!("{name}.rules"), None)
    }

    /// The rules' names.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.rules.iter().map(|r| r.name.clone()).collect()
    }

    /// These rules and `other`'s.
    fn __add__(&self, other: &Rules) -> Rules {
        Rules {
            rules: self.rules.iter().chain(&other.rules).cloned().collect(),
            label: format!("{} + {}", self.label, other.label),
        }
    }

    fn __len__(&self) -> usize {
        self.rules.len()
    }

    fn __repr__(&self) -> String {
        format!("<Rules {}: {} rules>", self.label, self.rules.len())
    }
}

/// A sketch: a program pattern with holes, resolved against each program it is searched
/// from. `Sketch.load("programs/mv.sketch:split")`; `Sketch.parse(text, name=None)`.
#[pyclass(unsendable, module = "sketchlog")]
#[derive(Clone)]
pub struct Sketch {
    decl: SketchDecl,
}

#[pymethods]
impl Sketch {
    /// Reads `FILE.sketch:NAME`.
    #[staticmethod]
    fn load(spec: &str) -> PyResult<Sketch> {
        let decl = sketchlog::sketch::read(spec).or_raise()?;
        Ok(Sketch { decl })
    }

    /// Parses `sketch NAME = ...` declarations and keeps `name` (the only one when there
    /// is one).
    #[staticmethod]
    #[pyo3(signature = (text, name = None, source = "<string>"))]
    fn parse(text: &str, name: Option<&str>, source: &str) -> PyResult<Sketch> {
        Sketch::from_source(&Source::new(source, text), name)
    }

    #[getter]
    fn name(&self) -> String {
        self.decl.name.clone()
    }

    fn __repr__(&self) -> String {
        format!("<Sketch {}>", self.decl.name)
    }
}

impl Sketch {
    fn from_source(src: &std::sync::Arc<Source>, name: Option<&str>) -> PyResult<Sketch> {
        let file = sketchlog::sketch::parse::parse_sketch_file(src).or_raise()?;
        let decl = match name {
            Some(name) => file.get(name).or_raise()?.clone(),
            None if file.sketches.len() == 1 => file.sketches[0].clone(),
            None => {
                return Err(to_py(Error::bad_input(format!(
                    "{} declares {} sketches: name one",
                    src.name,
                    file.sketches.len()
                ))))
            }
        };
        Ok(Sketch { decl })
    }
}

/// The result of one search: whether it found its target, why it stopped, its size and
/// time, and the term it extracted. `str(result)` is the command line's summary.
#[pyclass(unsendable, module = "sketchlog")]
pub struct SearchResult {
    report: StepReport,
    program: Program,
    label: String,
    svg: Option<String>,
}

impl SearchResult {
    fn new(report: StepReport, program: &Program, label: String) -> SearchResult {
        SearchResult {
            report,
            program: program.clone(),
            label,
            svg: None,
        }
    }
}

#[pymethods]
impl SearchResult {
    #[getter]
    fn found(&self) -> bool {
        self.report.outcome.found()
    }

    /// Why the search stopped: `found`, `saturated`, `iteration-limit`, `node-limit`,
    /// `time-limit`, `memory-limit` or `interrupted`.
    #[getter]
    fn stop(&self) -> &'static str {
        self.report.outcome.stop.name()
    }

    #[getter]
    fn iterations(&self) -> usize {
        self.report.outcome.iterations.len()
    }

    #[getter]
    fn enodes(&self) -> usize {
        self.report.outcome.size().0
    }

    #[getter]
    fn eclasses(&self) -> usize {
        self.report.outcome.size().1
    }

    #[getter]
    fn rules_applied(&self) -> usize {
        self.report.outcome.rules_applied()
    }

    #[getter]
    fn seconds(&self) -> f64 {
        self.report.seconds
    }

    #[getter]
    fn peak_rss_mb(&self) -> f64 {
        self.report.peak_rss_mb
    }

    /// The extracted term, as a program (None when nothing was found).
    #[getter]
    fn term(&self) -> Option<Program> {
        let t = self.report.term.clone()?;
        Some(self.program.with_term(t))
    }

    /// Figures of every iteration, as dictionaries.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.report.outcome.iterations.iter();
        let dicts: PyResult<Vec<_>> = rows.map(|s| stats_dict(py, 0, s)).collect();
        PyList::new(py, dicts?)
    }

    /// When the sketch was not found (and `why=True` was asked): which sub-sketches hold
    /// where, the nearest misses and their terms.
    fn why(&self) -> Option<String> {
        self.report.why.as_ref().map(|w| w.text.clone())
    }

    /// When found (and `explain=True` was asked): the rewrite path from the program to the
    /// term, every rule applied, where, with the subterm before and after.
    fn explain(&self) -> Option<String> {
        let e = self.report.explanation.as_ref()?;
        Some(report::explanation(e, &self.program.def.names))
    }

    /// The final e-graph as SVG (when `egraph=True` was asked), the e-classes that satisfy
    /// the sketch in a colour of their own: how Jupyter shows the result.
    fn _repr_svg_(&self) -> Option<String> {
        self.svg.clone()
    }

    fn __str__(&self) -> String {
        report::summary(&self.label, &self.report, &self.program.def.names, None)
    }

    fn __repr__(&self) -> String {
        format!("<SearchResult {}>", self.__str__())
    }
}

/// Where the pictures of searches' final e-graphs are drawn, when they are asked for: SVG
/// files in a temporary directory, one per step, read back into the results.
struct Pictures(Option<tempfile::TempDir>);

impl Pictures {
    fn new(wanted: bool) -> PyResult<Pictures> {
        let dir = match wanted {
            true => {
                Some(tempfile::tempdir().map_err(|e| to_py(Error::io(&std::env::temp_dir(), e)))?)
            }
            false => None,
        };
        Ok(Pictures(dir))
    }

    fn path(&self, step: usize) -> Option<std::path::PathBuf> {
        Some(self.0.as_ref()?.path().join(format!("step{step}.svg")))
    }

    /// The dump that draws step `step`'s e-graph, at most `max_enodes` e-nodes of each
    /// constructor.
    fn dump(&self, step: usize, max_enodes: usize) -> PyResult<Option<Dump>> {
        self.path(step)
            .map(|p| Dump::new(&p, max_enodes))
            .transpose()
            .or_raise()
    }

    /// Step `step`'s picture, if it was drawn.
    fn svg(&self, step: usize) -> PyResult<Option<String>> {
        match self.path(step) {
            Some(p) if p.exists() => Ok(Some(
                sketchlog::files::read_source(&p).or_raise()?.text.clone(),
            )),
            _ => Ok(None),
        }
    }
}

/// An iteration's figures as a dictionary.
fn stats_dict<'py>(
    py: Python<'py>,
    step: usize,
    s: &IterationStats,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("step", step)?;
    d.set_item("iteration", s.iteration)?;
    d.set_item("enodes", s.enodes)?;
    d.set_item("eclasses", s.eclasses)?;
    d.set_item("rules_applied", s.applied_by_rule.values().sum::<usize>())?;
    d.set_item("seconds", s.seconds())?;
    d.set_item("rss_mb", s.rss_mb)?;
    Ok(d)
}

/// Makes a value cross into a closure run with the GIL released.
struct OnThisThread<T>(T);

impl<T> OnThisThread<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

// SAFETY: `Python::detach` runs its closure on the calling thread, before it returns; the
// values wrapped (terms shared by `Rc`, held by `unsendable` classes) are reached from no
// other thread meanwhile, since `unsendable` classes refuse every other thread.
unsafe impl<T> Send for OnThisThread<T> {}

/// Runs `search` with the GIL released. After each iteration, `progress` (a callable taking
/// a dictionary of the iteration's figures) is called and pending signals are handled: an
/// exception from either stops the search before its next iteration through `cancel`, and
/// is raised once it has returned. SIGINT (Ctrl-C) stops the search within the iteration it
/// arrives in ([`OnSigint`]); Python's handler runs once the search has returned.
pub fn detached<T>(
    py: Python<'_>,
    cancel: &Cancel,
    progress: Option<Py<PyAny>>,
    search: impl FnOnce(&mut dyn FnMut(usize, &IterationStats)) -> sketchlog::error::Result<T>,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let mut on_iteration = |step: usize, s: &IterationStats| {
        if raised.is_some() {
            return;
        }
        Python::attach(|py| {
            let called = match &progress {
                Some(f) => stats_dict(py, step, s).and_then(|d| f.call1(py, (d,)).map(drop)),
                None => Ok(()),
            };
            if let Err(e) = called.and_then(|()| py.check_signals()) {
                raised = Some(e);
                cancel.cancel();
            }
        });
    };
    let work = OnThisThread((search, &mut on_iteration));
    let on_sigint = OnSigint::install();
    let result = py.detach(move || {
        let (search, on_iteration) = work.into_inner();
        OnThisThread(search(on_iteration))
    });
    drop(on_sigint);
    if let Some(e) = raised {
        return Err(e);
    }
    py.check_signals()?;
    result.0.or_raise()
}

/// `value` seconds, the keyword argument `name`: an error when it is not a number of seconds.
fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        to_py(Error::bad_input(format!(
            "{name} = {value} is not a number of seconds"
        )))
    })
}

/// Limits of a search, as keyword arguments give them, stopped early by `cancel`.
fn limits_of(
    (iterations, enodes): (usize, usize),
    time_s: f64,
    memory_mb: Option<u64>,
    cancel: &Cancel,
) -> PyResult<Limits> {
    Ok(Limits {
        iterations,
        enodes,
        time: seconds("time_s", time_s)?,
        memory_mb,
        cancel: cancel.clone(),
        give_up_after_stop: None,
    })
}

/// Rules given as `Rules` objects or `FILE.rules[:SET]` strings.
fn rules_of(rules: &Bound<'_, PyAny>) -> PyResult<Vec<RuleDecl>> {
    let one = |r: &Bound<'_, PyAny>| -> PyResult<Vec<RuleDecl>> {
        match r.extract::<PyRef<Rules>>() {
            Ok(r) => Ok(r.rules.clone()),
            Err(_) => Ok(Rules::load(&r.extract::<String>()?, None)?.rules),
        }
    };
    match rules.cast::<PyList>() {
        Ok(list) => list
            .iter()
            .map(|r| one(&r))
            .collect::<PyResult<Vec<_>>>()
            .map(|v| v.concat()),
        Err(_) => one(rules),
    }
}

/// A program given as a `Program` or a `FILE.rise:NAME` string.
pub fn program_of(p: &Bound<'_, PyAny>) -> PyResult<Program> {
    match p.extract::<PyRef<Program>>() {
        Ok(p) => Ok(p.clone()),
        Err(_) => Program::load_spec(&p.extract::<String>()?),
    }
}

/// The costs `@kernel` extracts with: elementary functions as several operations.
pub const ELEMENTARY_COST: &str = include_str!("../../rules/elementary.cost");

/// A cost model: AST size (None), or the weights of a cost file's text.
fn cost_of(weights: Option<&str>) -> PyResult<Cost> {
    Ok(match weights {
        None => Cost::AstSize,
        Some(text) => Cost::Weighted(Weighted::parse(&Source::new("<weights>", text)).or_raise()?),
    })
}

/// Searches from `program` with `rules` until the program's e-class satisfies `sketch`
/// (a `Sketch` or `FILE.sketch:NAME`) or holds `goal` (a `Program` or `FILE.rise:NAME`,
/// compared in beta-eta normal form), or a limit stops it. A limit is not an error: the
/// result says `found = False` and why it stopped. `weights` is the text of a cost file
/// (default: AST size); `why` analyses a miss, `explain` finds the rewrite path of a hit;
/// `egraph` keeps a picture of the final e-graph (at most `max_enodes` e-nodes of each
/// constructor; rendering needs Graphviz's `dot`).
#[pyfunction]
#[pyo3(signature = (program, rules, sketch = None, goal = None, *, iterations = 30, enodes = 1_000_000,
                    time_s = 60.0, memory_mb = None, weights = None, why = false, explain = false,
                    egraph = false, max_enodes = 200, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn check(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    rules: &Bound<'_, PyAny>,
    sketch: Option<&Bound<'_, PyAny>>,
    goal: Option<&Bound<'_, PyAny>>,
    iterations: usize,
    enodes: usize,
    time_s: f64,
    memory_mb: Option<u64>,
    weights: Option<&str>,
    why: bool,
    explain: bool,
    egraph: bool,
    max_enodes: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<SearchResult> {
    let program = program_of(program)?;
    let cancel = interrupt::request();
    let limits = limits_of((iterations, enodes), time_s, memory_mb, &cancel)?;
    let (decl, goal_term) = match (sketch, goal) {
        (Some(s), None) => {
            let s = match s.extract::<PyRef<Sketch>>() {
                Ok(s) => s.clone(),
                Err(_) => Sketch::load(&s.extract::<String>()?)?,
            };
            (s.decl.resolve(&program.def.sizes).or_raise()?, None)
        }
        (None, Some(g)) => {
            let g = program_of(g)?;
            let of = (program.def.name.as_str(), &program.term().ty);
            let normal = guide::goal_in_normal_form(&g.def, of, &limits).or_raise()?;
            (
                SketchDecl::any(&format!("goal {}", g.def.name)),
                Some(normal),
            )
        }
        _ => {
            return Err(to_py(Error::bad_input(
                "give one target: `sketch=` or `goal=`",
            )))
        }
    };
    let mut step = Step::new(
        decl,
        rules_of(rules)?,
        (cost_of(weights)?, limits, Filter::default()),
    );
    step.goal = goal_term;
    step.why = why;
    step.explain = explain.then(Default::default);
    let pictures = Pictures::new(egraph)?;
    step.dump = pictures.dump(0, max_enodes)?;
    let label = format!("check {}", step.sketch.name);
    let start = program.term().clone();
    let names = program.def.names.clone();
    let report = detached(py, &cancel, progress, |on| {
        guide::search_named(&start, &step, &names, |s| on(0, s))
    })?;
    let mut result = SearchResult::new(report, &program, label);
    result.svg = pictures.svg(0)?;
    Ok(result)
}

/// Equality saturation without a target: grows the e-graph of `program` with `rules`
/// until nothing changes or a limit stops it, then extracts the cheapest term by `weights`
/// (the text of a cost file; default: AST size). The result's `term` is always there.
#[pyfunction]
#[pyo3(signature = (program, rules, *, iterations = 10, enodes = 100_000, time_s = 10.0,
                    memory_mb = None, weights = None, progress = None))]
#[allow(clippy::too_many_arguments)]
pub fn simplify(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    rules: &Bound<'_, PyAny>,
    iterations: usize,
    enodes: usize,
    time_s: f64,
    memory_mb: Option<u64>,
    weights: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> PyResult<SearchResult> {
    let program = program_of(program)?;
    let cancel = interrupt::request();
    let limits = limits_of((iterations, enodes), time_s, memory_mb, &cancel)?;
    let step = Step::new(
        SketchDecl::any("cheapest"),
        rules_of(rules)?,
        (cost_of(weights)?, limits, Filter::default()),
    );
    let start = program.term().clone();
    let report = detached(py, &cancel, progress, |on| {
        guide::simplify(&start, &step, |s| on(0, s))
    })?;
    Ok(SearchResult::new(report, &program, "simplify".into()))
}

/// A guide (`.guide`): a program and a sequence of sketch-guided steps.
#[pyclass(unsendable, module = "sketchlog")]
pub struct Guide {
    guide: guide::Guide,
}

#[pymethods]
impl Guide {
    /// Reads a `.guide` file and every file it names; `params` sets named sizes over the
    /// guide's `param` lines (`{"lanes": 8}`).
    #[staticmethod]
    #[pyo3(signature = (path, params = None))]
    fn load(path: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Guide> {
        let params = params_of(params)?;
        let guide = guide::parse::load_guide_with(std::path::Path::new(path), params).or_raise()?;
        Ok(Guide { guide })
    }

    /// The program it starts from.
    #[getter]
    fn program(&self) -> Program {
        Program::from_term(
            &self.guide.program,
            self.guide.start.clone(),
            self.guide.names.clone(),
        )
    }

    /// Its steps' sketch names.
    #[getter]
    fn steps(&self) -> Vec<String> {
        self.guide
            .steps
            .iter()
            .map(|s| s.sketch.name.clone())
            .collect()
    }

    /// Runs the steps in order, each from the last one's term, until one does not find its
    /// sketch: a result per step run. `egraph` keeps a picture of each step's final e-graph,
    /// as `check` does.
    #[pyo3(signature = (*, egraph = false, max_enodes = 200, progress = None))]
    fn run(
        &self,
        py: Python<'_>,
        egraph: bool,
        max_enodes: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<SearchResult>> {
        let cancel = interrupt::request();
        let pictures = Pictures::new(egraph)?;
        let mut g = self.guide.clone();
        for (i, step) in g.steps.iter_mut().enumerate() {
            step.limits.cancel = cancel.clone();
            step.dump = pictures.dump(i, max_enodes)?.or(step.dump.take());
        }
        let reports = detached(py, &cancel, progress, |on| guide::run(&g, on, |_, _| {}))?;
        let program = self.program();
        let mut results = vec![];
        for (i, r) in reports.into_iter().enumerate() {
            let mut result = SearchResult::new(r, &program, report::step_label(&g, i));
            result.svg = pictures.svg(i)?;
            results.push(result);
        }
        Ok(results)
    }

    fn __repr__(&self) -> String {
        format!(
            "<Guide {}: {} steps>",
            self.guide.program,
            self.guide.steps.len()
        )
    }
}

/// Runs a guide (a `Guide` or the path of a `.guide` file): a result per step run.
#[pyfunction(name = "guide")]
#[pyo3(signature = (guide, *, egraph = false, max_enodes = 200, progress = None))]
pub fn run_guide(
    py: Python<'_>,
    guide: &Bound<'_, PyAny>,
    egraph: bool,
    max_enodes: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<SearchResult>> {
    match guide.extract::<PyRef<Guide>>() {
        Ok(g) => g.run(py, egraph, max_enodes, progress),
        Err(_) => {
            Guide::load(&guide.extract::<String>()?, None)?.run(py, egraph, max_enodes, progress)
        }
    }
}

/// Finds a guide automatically: from `program` (`FILE.rise:NAME`) to the final `sketch`
/// (`FILE.sketch:NAME`) or `goal` (`FILE.rise:NAME`), through checkpoints derived from the
/// target, each step's rules chosen among `rules` (`FILE.rules[:SET]` strings, or folders of
/// `.rules` files); `params` sets named sizes (`{"lanes": 8}`) for the rules and the sketch.
/// A result per step found; an error when the target is not reached within `total_s`
/// seconds.
#[pyfunction]
#[pyo3(signature = (program, rules, sketch = None, goal = None, *, iterations = 30, enodes = 1_000_000,
                    time_s = 60.0, memory_mb = None, total_s = 600.0, params = None))]
#[allow(clippy::too_many_arguments)]
pub fn guide_auto(
    py: Python<'_>,
    program: &str,
    rules: Vec<String>,
    sketch: Option<&str>,
    goal: Option<&str>,
    iterations: usize,
    enodes: usize,
    time_s: f64,
    memory_mb: Option<u64>,
    total_s: f64,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<SearchResult>> {
    use guide::auto;
    let target = match (sketch, goal) {
        (Some(s), None) => guide::Target::Sketch(s),
        (None, Some(g)) => guide::Target::Goal(g),
        _ => {
            return Err(to_py(Error::bad_input(
                "give one target: `sketch=` or `goal=`",
            )))
        }
    };
    let cancel = interrupt::request();
    let limits = limits_of((iterations, enodes), time_s, memory_mb, &cancel)?;
    let def = sketchlog::rise::load_def_ref(program, std::path::Path::new("")).or_raise()?;
    let params = params_of(params)?;
    let checkpoints = auto::checkpoints(target, &def, &limits, &params).or_raise()?;
    let mut candidates = vec![];
    for spec in &auto::rule_specs(&rules).or_raise()? {
        candidates.extend(auto::candidates(spec, &params).or_raise()?);
    }
    let total = seconds("total_s", total_s)?;
    let settings = auto::Settings {
        cost: Cost::AstSize,
        limits,
        filter: Filter::default(),
        normal_form: Default::default(),
        total,
    };
    let start = def.term.clone();
    let (steps, missed) = detached(py, &cancel, None, |_| {
        auto::find(&start, &checkpoints, &candidates, &settings, |_| {})
    })?;
    if let Some(stop) = missed {
        return Err(to_py(Error::check_failed(format!(
            "the target is not reached ({stop}): {} of {} checkpoints found before it",
            steps.len(),
            checkpoints.len() - 1
        ))));
    }
    let program = Program { def: Rc::new(def) };
    Ok(steps
        .into_iter()
        .map(|f| {
            let label = format!(
                "step {} `{}`",
                f.checkpoint + 1,
                checkpoints[f.checkpoint].name
            );
            SearchResult::new(f.report, &program, label)
        })
        .collect())
}

/// Rewrites `program` with a strategy (`FILE.elevate:STRATEGY`): the term it gives, or an
/// error saying where the strategy failed.
#[pyfunction]
#[pyo3(signature = (program, strategy, *, max_steps = 1_000_000, time_s = 60.0))]
pub fn rewrite(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    strategy: &str,
    max_steps: u64,
    time_s: f64,
) -> PyResult<Program> {
    use sketchlog::strategy::{Ending, Settings};
    let program = program_of(program)?;
    let (file, expr) =
        sketchlog::strategy::load_spec(strategy, &sketchlog::rules::Params::default())
            .or_raise()?;
    let time = seconds("time_s", time_s)?;
    let settings = Settings {
        time,
        max_steps,
        sizes: program.def.sizes.clone(),
        searcher: Some(Rc::new(guide::Searches::default())),
        ..Settings::default()
    };
    let start = program.term().clone();
    let run = detached(py, &interrupt::request(), None, |_| {
        sketchlog::strategy::run(&file, &expr, &start, &settings)
    })?;
    match run.ending {
        Ending::Success(t) => Ok(program.with_term(t)),
        Ending::Failure(f) => Err(to_py(Error::check_failed(format!("{}: {f}", f.span)))),
        Ending::Stopped(limit) => Err(to_py(Error::check_failed(format!(
            "the {limit} limit stopped the strategy"
        )))),
    }
}
