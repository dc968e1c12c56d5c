//! A studio session: one program and the guide built on it step by step. The guide is kept
//! as the text `sketchlog guide` reads, so what the page runs is what it saves.

use super::paths::Root;
use crate::egraph::neighbourhood::{self, Bounds};
use crate::egraph::saturate::{Cancel, IterationStats};
use crate::egraph::serialize::{self, Dump};
use crate::error::{Error, Result};
use crate::guide::{self, StepReport};
use crate::rise::{self, debruijn, print, term::Term};
use egraph_serialize::{ClassId, EGraph as Serialized};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Which e-graph to view.
#[derive(Clone, Debug)]
pub enum EGraphOf {
    /// Step `i`'s final e-graph (from 0).
    Step(usize),
    /// An e-graph exported as egglog's JSON, relative to the studio's directory.
    File(String),
}

/// A view of an e-graph, drawn.
#[derive(Serialize)]
pub struct EGraphView {
    pub svg: String,
    /// The e-class in the middle of the view.
    pub centre: String,
    /// The e-class of each e-node drawn, by the e-node's name in the picture.
    pub class_of: BTreeMap<String, String>,
    /// E-classes and e-nodes shown, and in the whole e-graph.
    pub shown: (usize, usize),
    pub total: (usize, usize),
}

/// What a step looks for, as a guide's `step` line writes it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum Target {
    /// A sketch of the session's sketch text, by name.
    Sketch(String),
    /// `FILE.rise:NAME`, the exact program to reach.
    Goal(String),
    /// `FILE.elevate:STRATEGY`, applied instead of a search.
    Strategy(String),
    /// The steps up to the next sketch step, found automatically.
    Auto,
}

/// A step's limits, as a guide's `limits` line writes them.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct StepLimits {
    pub iterations: u64,
    pub enodes: u64,
    pub time_s: u64,
    pub memory_mb: Option<u64>,
}

/// One step of the guide as written: what it looks for, with which rules, under which limits.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct StepSpec {
    pub target: Target,
    /// `FILE.rules` or `FILE.rules:SET`, relative to the studio's directory.
    pub rules: Vec<String>,
    pub limits: StepLimits,
    /// A guide's `filter` settings (`array-depth 6 ast-size 200 sizes-positive`), or empty.
    #[serde(default)]
    pub filter: String,
}

/// Where a step goes in the guide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// After the last step.
    End,
    /// In place of step `i`.
    Replace(usize),
    /// Before step `i` (an automatic step that fills the gap to it, say).
    Before(usize),
}

/// A term as the page shows it: printed, printed with every binder and primitive
/// annotated with its type, and its type.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    pub text: String,
    /// The type of each subterm printed in `text`: `(start, end, type)` in characters,
    /// outermost first.
    pub types: Vec<(usize, usize, String)>,
    pub typed: String,
    pub ty: String,
}

/// What one search (or strategy) of a step did.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub sketch: String,
    pub found: bool,
    pub stop: &'static str,
    pub iterations: usize,
    pub enodes: usize,
    pub eclasses: usize,
    pub rules_applied: usize,
    pub seconds: f64,
    pub peak_rss_mb: f64,
    /// When not found: which sub-sketches hold where (`check --why`).
    pub why: Option<crate::sketch::why::Explanation>,
    /// Elevate's rewrite steps and rule applications, for a strategy.
    pub strategy_steps: Option<(u64, u64)>,
    pub term: Option<Shown>,
}

/// A step run: its outcomes (an automatic step finds several) and its final e-graph.
struct Done {
    outcomes: Vec<Outcome>,
    /// The term the next step starts from, when the step found its target.
    term: Option<Rc<Term>>,
    /// The final e-graph in egglog's JSON, when the step searched.
    egraph: Option<PathBuf>,
}

/// The session's state, as the page shows it.
#[derive(Serialize)]
pub struct View {
    pub program: String,
    pub start: Shown,
    pub current: Shown,
    pub sketches: String,
    pub steps: Vec<StepView>,
    /// The guide as saved, relative to the studio's directory.
    pub guide: String,
    pub files: Files,
}

#[derive(Serialize)]
pub struct StepView {
    pub spec: StepSpec,
    /// `None` until it has run.
    pub outcomes: Option<Vec<Outcome>>,
    /// Whether its final e-graph can be viewed.
    pub egraph: bool,
}

/// The files under the studio's directory the page offers.
#[derive(Clone, Serialize, Default)]
pub struct Files {
    /// Each rules file with its rule sets.
    pub rules: Vec<(String, Vec<String>)>,
    pub sketches: Vec<String>,
    pub programs: Vec<String>,
    pub strategies: Vec<String>,
}

pub struct Session {
    root: Root,
    program: String,
    start: rise::LoadedDef,
    sketches: String,
    steps: Vec<StepSpec>,
    done: Vec<Done>,
    /// Where the steps' e-graphs are written.
    egraphs: tempfile::TempDir,
    /// The picture last viewed, by file and modification time.
    viewed: Option<(PathBuf, std::time::SystemTime, Serialized)>,
    files: Files,
}

/// How long egglog's steps on a large e-graph may go on after Stop before the search gives
/// them up (egglog's rebuild then finishes on a thread of its own and frees the e-graph).
const GIVE_UP_AFTER_STOP: std::time::Duration = std::time::Duration::from_millis(200);

/// At most this many e-nodes of each constructor are kept of a step's final e-graph.
const KEPT_ENODES: usize = 10_000;

/// Where the guide being built is read from: files that exist only in the session
/// ([`crate::files::with_overlay`]).
const GUIDE: &str = "studio.guide";
const SKETCHES: &str = "studio.sketch";

impl Session {
    /// A session on `program` (`FILE.rise:NAME` under `root`).
    pub fn open(root: Root, program: &str) -> Result<Session> {
        root.existing(guide::file_of(program))?;
        let start = rise::load_def_ref(program, root.path())?;
        let egraphs = tempfile::tempdir().map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let files = root.files();
        Ok(Session {
            root,
            program: program.to_string(),
            start,
            sketches: String::new(),
            steps: vec![],
            done: vec![],
            egraphs,
            viewed: None,
            files,
        })
    }

    pub fn view(&self) -> View {
        let steps = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, spec)| StepView {
                spec: spec.clone(),
                outcomes: self.done.get(i).map(|d| d.outcomes.clone()),
                egraph: self.done.get(i).is_some_and(|d| d.egraph.is_some()),
            })
            .collect();
        View {
            program: self.program.clone(),
            start: self.show(&self.start.term),
            current: self.show(&self.current()),
            sketches: self.sketches.clone(),
            steps,
            guide: self.guide_text(Path::new(""), SKETCHES),
            files: self.files.clone(),
        }
    }

    /// The program before any step: what every step's term must mean.
    pub fn start(&self) -> Rc<Term> {
        self.start.term.clone()
    }

    /// The term the last step that ran found (the program before any step).
    pub fn current(&self) -> Rc<Term> {
        self.done
            .iter()
            .rev()
            .find_map(|d| d.term.clone())
            .unwrap_or_else(|| self.start.term.clone())
    }

    fn show(&self, t: &Rc<Term>) -> Shown {
        let named = |annotate| debruijn::to_named_as(t, annotate, &self.start.names);
        let (text, types) = print::print_with_types(&named(debruijn::Annotate::Leading));
        Shown {
            text,
            types,
            typed: print::print_expr(&named(debruijn::Annotate::All)),
            ty: t.ty.to_string(),
        }
    }

    /// Sets the sketch text. Steps that ran with other sketches run again.
    pub fn set_sketches(&mut self, text: &str, cancel: &Cancel, on: &mut Progress) -> Result<()> {
        if text == self.sketches {
            return Ok(());
        }
        let before = std::mem::replace(&mut self.sketches, text.to_string());
        if self.steps.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.load() {
            self.sketches = before;
            return Err(e);
        }
        self.done.clear();
        self.run_pending(cancel, on)
    }

    /// Puts `spec` where `place` says and runs it and the steps after it.
    pub fn put_step(
        &mut self,
        place: Place,
        spec: StepSpec,
        cancel: &Cancel,
        on: &mut Progress,
    ) -> Result<()> {
        let index = match place {
            Place::End => self.steps.len(),
            Place::Replace(i) | Place::Before(i) => i,
        };
        if index >= self.steps.len() && place != Place::End {
            return Err(Error::bad_input(format!(
                "there is no step {} (the guide has {})",
                index + 1,
                self.steps.len()
            )));
        }
        if place == Place::End && self.done.last().is_some_and(|d| d.term.is_none()) {
            return Err(Error::bad_input(format!(
                "step {} did not find its target: edit or remove it before adding another",
                self.done.len()
            )));
        }
        for spec in &spec.rules {
            self.root.existing(guide::file_of(spec))?;
        }
        let before = self.steps.clone();
        match place {
            Place::End => self.steps.push(spec),
            Place::Replace(i) => self.steps[i] = spec,
            Place::Before(i) => self.steps.insert(i, spec),
        }
        // A step that does not load (an unknown sketch or rule set) changes nothing.
        if let Err(e) = self.load() {
            self.steps = before;
            return Err(e);
        }
        self.done.truncate(index);
        self.run_pending(cancel, on)
    }

    /// Removes step `index`; the steps after it run again.
    pub fn remove_step(&mut self, index: usize, cancel: &Cancel, on: &mut Progress) -> Result<()> {
        if index >= self.steps.len() {
            return Err(Error::bad_input(format!("there is no step {}", index + 1)));
        }
        self.steps.remove(index);
        self.done.truncate(index);
        self.run_pending(cancel, on)
    }

    /// Runs the steps that have not run, in order, until one does not find its target.
    fn run_pending(&mut self, cancel: &Cancel, on: &mut Progress) -> Result<()> {
        if self.steps.is_empty() {
            return Ok(());
        }
        let mut g = self.load()?;
        for step in &mut g.steps {
            step.limits.cancel = cancel.clone();
            step.limits.give_up_after_stop = Some(GIVE_UP_AFTER_STOP);
            step.why = true;
        }
        while self.done.len() < self.steps.len() {
            if self.done.last().is_some_and(|d| d.term.is_none()) {
                break;
            }
            let i = self.done.len();
            let egraph = self.egraphs.path().join(format!("{i}.json"));
            let _ = std::fs::remove_file(&egraph);
            g.steps[i].dump = Some(Dump::new(&egraph, KEPT_ENODES)?);
            let term = self.current();
            let reports = guide::run_step(&g, i, &term, |s| on(i, s))?;
            let next = match reports.last() {
                Some(r) => r.term.clone(),
                // An automatic step that needed no step.
                None => Some(term),
            };
            self.done.push(Done {
                outcomes: reports.iter().map(|r| self.outcome(r)).collect(),
                term: next,
                egraph: Some(egraph).filter(|p| p.exists()),
            });
        }
        Ok(())
    }

    fn outcome(&self, r: &StepReport) -> Outcome {
        let (enodes, eclasses) = r.outcome.size();
        Outcome {
            sketch: r.sketch.clone(),
            found: r.term.is_some(),
            stop: r.outcome.stop.name(),
            iterations: r.outcome.iterations.len(),
            enodes,
            eclasses,
            rules_applied: r.outcome.rules_applied(),
            seconds: r.seconds,
            peak_rss_mb: r.peak_rss_mb,
            why: r.why.clone(),
            strategy_steps: r.strategy.as_ref().map(|c| (c.steps, c.rules)),
            term: r.term.as_ref().map(|t| self.show(t)),
        }
    }

    /// The guide of the session's steps, read as `sketchlog guide` reads it.
    fn load(&self) -> Result<guide::Guide> {
        let guide_path = self.root.path().join(GUIDE);
        let texts = vec![
            (guide_path.clone(), self.guide_text(Path::new(""), SKETCHES)),
            (self.root.path().join(SKETCHES), self.sketches.clone()),
        ];
        crate::files::with_overlay(texts, || guide::parse::load_guide(&guide_path))
    }

    /// The guide's text for a guide file in `dir` (relative to the studio's directory) whose
    /// sketches are in `sketch_file` beside it.
    fn guide_text(&self, dir: &Path, sketch_file: &str) -> String {
        let up = "../".repeat(dir.components().count());
        let rel = |spec: &str| format!("{up}{spec}");
        let mut text = format!(
            "// Built step by step in `sketchlog studio`.\nprogram  {}\n",
            rel(&self.program)
        );
        if self.steps.iter().any(|s| s.target == Target::Auto)
            || self
                .steps
                .iter()
                .any(|s| matches!(s.target, Target::Sketch(_)))
        {
            text += &format!("sketches {sketch_file}\n");
        }
        for spec in &self.steps {
            text += &match &spec.target {
                Target::Sketch(name) => format!("\nstep {name}\n"),
                Target::Goal(goal) => format!("\nstep goal {}\n", rel(goal)),
                Target::Strategy(s) => format!("\nstep strategy {}\n", rel(s)),
                Target::Auto => "\nstep auto\n".to_string(),
            };
            if !spec.rules.is_empty() {
                let rules: Vec<String> = spec.rules.iter().map(|r| rel(r)).collect();
                text += &format!("  rules {}\n", rules.join(" "));
            }
            let l = &spec.limits;
            text += &format!(
                "  limits iterations {} enodes {} time {}",
                l.iterations, l.enodes, l.time_s
            );
            if let Some(mb) = l.memory_mb {
                text += &format!(" memory {mb}");
            }
            text += "\n";
            if !spec.filter.trim().is_empty() {
                text += &format!("  filter {}\n", spec.filter.trim());
            }
        }
        text
    }

    /// Writes the guide to `path` (`.guide`, relative to the studio's directory) and its
    /// sketches beside it (`.sketch`, same stem), each atomically. An existing file is
    /// replaced only with `overwrite`; otherwise the error names the files that exist.
    pub fn save(&self, path: &str, overwrite: bool) -> Result<Vec<String>> {
        if !path.ends_with(".guide") {
            return Err(Error::bad_input(format!(
                "`{path}`: a guide's name ends in .guide"
            )));
        }
        if self.steps.is_empty() {
            return Err(Error::bad_input(
                "the guide has no step to save".to_string(),
            ));
        }
        let guide_path = self.root.writable(path)?;
        let sketch_name = format!(
            "{}.sketch",
            guide_path.file_stem().unwrap_or_default().to_string_lossy()
        );
        let sketch_path = guide_path.with_file_name(&sketch_name);
        let existing: Vec<String> = [&guide_path, &sketch_path]
            .iter()
            .filter(|p| p.exists())
            .map(|p| self.root.relative(p))
            .collect();
        if !existing.is_empty() && !overwrite {
            return Err(Error::bad_input(format!(
                "{} already exist{}: save again to replace",
                existing.join(" and "),
                if existing.len() == 1 { "s" } else { "" }
            )));
        }
        let dir = Path::new(path).parent().unwrap_or(Path::new(""));
        let text = self.guide_text(dir, &sketch_name);
        crate::files::write_atomically(&sketch_path, self.sketches.as_bytes())?;
        crate::files::write_atomically(&guide_path, text.as_bytes())?;
        Ok(vec![
            self.root.relative(&guide_path),
            self.root.relative(&sketch_path),
        ])
    }

    /// A view of an e-graph around `class` (by default, the program's e-class), drawn.
    pub fn egraph(
        &mut self,
        of: &EGraphOf,
        class: Option<&str>,
        bounds: Bounds,
    ) -> Result<EGraphView> {
        let (file, name) = match of {
            EGraphOf::Step(step) => {
                let file = self.done.get(*step).and_then(|d| d.egraph.clone());
                let file = file.ok_or_else(|| {
                    Error::bad_input(format!("step {} has no e-graph to show", step + 1))
                })?;
                (file, format!("step {}", step + 1))
            }
            EGraphOf::File(path) => (self.root.existing(path)?, path.clone()),
        };
        let modified = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .map_err(|e| Error::io(&file, e))?;
        if !matches!(&self.viewed, Some((f, m, _)) if *f == file && *m == modified) {
            let graph = Serialized::from_json_file(&file).map_err(|e| {
                Error::bad_input(format!("{name}: not an e-graph in egglog's JSON: {e}"))
            })?;
            self.viewed = Some((file.clone(), modified, serialize::picture_of(&graph)));
        }
        let picture = &self.viewed.as_ref().expect("just read").2;
        let centre = class.map(ClassId::from);
        let view = neighbourhood::around(picture, centre.as_ref(), bounds).ok_or_else(|| {
            Error::bad_input(match class {
                Some(c) => format!("{name} has no e-class `{c}`"),
                None => format!("{name} has no e-nodes"),
            })
        })?;
        let out = tempfile::NamedTempFile::new().map_err(|e| Error::io(&file, e))?;
        view.graph.to_svg_file(out.path()).map_err(|e| {
            Error::bad_input(format!(
                "drawing the e-graph needs Graphviz's `dot` on the PATH: {e}"
            ))
        })?;
        Ok(EGraphView {
            svg: crate::files::read_source(out.path())?.text.clone(),
            centre: view.centre.to_string(),
            class_of: (view.class_of.iter())
                .map(|(n, c)| (n.to_string(), c.to_string()))
                .collect(),
            shown: view.shown,
            total: view.total,
        })
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// The size names of the program, outermost first.
    pub fn size_names(&self) -> &[String] {
        &self.start.sizes
    }
}

/// Called with a step's index and each of its iterations.
pub type Progress<'a> = dyn FnMut(usize, &IterationStats) + 'a;
