//! Guide files (`programs/*.guide`): one setting per line, `//` comments.
//!
//! ```text
//! program  matmul.rise:mm          the program and definition to optimise
//! sketches mm.sketch               where step sketches are defined
//! rules    ../rules/mm.rules       where rule sets are defined
//! param    lanes = native          a size that rules' parameters name (`rules::params`),
//!                                  before the `rules` lines that use it
//! limits   iterations 60 enodes 50000 time 30 memory 4000   (seconds, MB)
//! filter   array-depth 6 ast-size 200 sizes-positive   (ast-size-class L: shine's count)
//! cost     ast-size                (or: cost weights FILE)
//! normal-form cnf                  (or benf, the default: see egraph::normal)
//!
//! step split                       a step: satisfy sketch `split`
//!   rules  split                   with these rule sets of the rules file (`*`: all rules)
//! step reorder1
//!   rules  reorder
//!   limits time 10                 settings after a step override the defaults above it
//! step lanes
//!   rules  ../rules/mv.rules:lanes baseline   a set of another rules file, beside the file's
//! step auto                        steps found automatically towards the next step's sketch
//!   rules  split reorder           (`guide::auto`), each with one of these sets, a pair of
//! step lower1                      them, or all (default: every set of the rules file)
//! step strategy mm.elevate:baseline ;; DFNF   a step that rewrites with a strategy (the rest
//!                                  of the line) instead of searching
//! ```
//!
//! Paths are relative to the guide file.

use super::auto::Candidate;
use super::{Cost, Guide, Step};
use crate::egraph::extract::Weighted;
use crate::egraph::filter::{Filter, SizeScope};
use crate::egraph::normal::NormalForm;
use crate::egraph::saturate::Limits;
use crate::error::{Error, Result};
use crate::files::read_source;
use crate::limits;
use crate::rise::syntax::{RuleDecl, RuleFile};
use crate::rules::Params;
use crate::sketch::{SketchDecl, SketchFile};
use crate::source::{word_lines, Span, Word};
use std::path::{Path, PathBuf};

/// What a step searches for: a sketch of the guide's sketch file, or an exact goal; or
/// (`step auto`) steps found automatically towards the next step's sketch.
enum StepTarget {
    Sketch(Word),
    /// `FILE.rise:NAME`, relative to the guide.
    Goal(Word),
    Auto(Word),
    /// `FILE.elevate:STRATEGY`, relative to the guide.
    Strategy(Word),
}

/// Settings that a step takes from the defaults or sets itself.
#[derive(Clone)]
struct Settings {
    rules: Vec<RuleDecl>,
    /// The sets of the `rules` line, each apart: an automatic step's candidates.
    sets: Vec<Candidate>,
    cost: Cost,
    limits: Limits,
    filter: Filter,
    normal_form: NormalForm,
}

struct GuideParser {
    dir: PathBuf,
    program: Option<(
        String,
        std::rc::Rc<crate::rise::term::Term>,
        crate::rise::debruijn::Names,
    )>,
    sketches: Option<SketchFile>,
    rules: Option<(PathBuf, RuleFile)>,
    params: Params,
    defaults: Settings,
    steps: Vec<(StepTarget, Settings)>,
    /// Every file read so far, the guide's own first.
    inputs: Vec<PathBuf>,
}

/// The number after setting `after`, read and checked by `parse`.
fn number<T>(
    w: Option<&Word>,
    after: &Word,
    parse: impl Fn(&str) -> std::result::Result<T, String>,
) -> Result<T> {
    let w = w.ok_or_else(|| Error::at(&after.span, format!("`{}` needs a number", after.text)))?;
    parse(&w.text).map_err(|e| Error::at(&w.span, e))
}

/// The path of `file` (relative to the guide's `dir`), recorded among the guide's `inputs`.
fn input(dir: &Path, inputs: &mut Vec<PathBuf>, file: &str) -> PathBuf {
    let path = dir.join(file);
    if !inputs.contains(&path) {
        inputs.push(path.clone());
    }
    path
}

impl GuideParser {
    fn setting(&mut self, ws: &[Word], in_step: bool) -> Result<()> {
        let key = &ws[0];
        let args = &ws[1..];
        let settings = match self.steps.last_mut() {
            Some((_, s)) if in_step => s,
            _ => &mut self.defaults,
        };
        match key.text.as_str() {
            "limits" => {
                let mut it = args.iter();
                while let Some(w) = it.next() {
                    let l = &mut settings.limits;
                    match w.text.as_str() {
                        "iterations" => l.iterations = number(it.next(), w, limits::iterations)?,
                        "enodes" => l.enodes = number(it.next(), w, limits::enodes)?,
                        "time" => l.time = number(it.next(), w, limits::parse_seconds)?,
                        "memory" => l.memory_mb = Some(number(it.next(), w, limits::memory_mb)?),
                        _ => return Err(Error::at(&w.span, format!("unknown limit `{}` (iterations, enodes, time, memory)", w.text))),
                    }
                }
            }
            "filter" => {
                let mut it = args.iter();
                while let Some(w) = it.next() {
                    let f = &mut settings.filter;
                    match w.text.as_str() {
                        "array-depth" => f.array_depth = Some(number(it.next(), w, limits::depth)?),
                        "ast-size" | "ast-size-class" => {
                            f.ast_size = Some(number(it.next(), w, limits::ast_size)?);
                            f.ast_size_scope = match w.text.as_str() {
                                "ast-size" => SizeScope::Enode,
                                _ => SizeScope::Class,
                            };
                        }
                        "sizes-positive" => f.sizes_positive = true,
                        _ => return Err(Error::at(&w.span, format!("unknown filter `{}` (array-depth, ast-size, ast-size-class, sizes-positive)", w.text))),
                    }
                }
            }
            "cost" => {
                settings.cost = match args {
                    [w] if w.text == "ast-size" => Cost::AstSize,
                    [w, file] if w.text == "weights" => {
                        let path = input(&self.dir, &mut self.inputs, &file.text);
                        Cost::Weighted(Weighted::load(&path).map_err(|e| e.or_at(&file.span))?)
                    }
                    _ => return Err(Error::at(&key.span, "expected `cost ast-size` or `cost weights FILE`")),
                }
            }
            "normal-form" => {
                settings.normal_form = match args {
                    [w] if w.text == "benf" => NormalForm::Benf,
                    [w] if w.text == "cnf" => NormalForm::Cnf,
                    _ => return Err(Error::at(&key.span, "expected `normal-form benf` or `normal-form cnf`")),
                }
            }
            "rules" => {
                let header = self.rules.clone();
                let mut rules: Vec<RuleDecl> = vec![];
                settings.sets.clear();
                for w in args {
                    let (from, set) = match w.text.split_once(".rules:") {
                        Some((other, set)) => {
                            (input(&self.dir, &mut self.inputs, &format!("{other}.rules")), Some(set))
                        }
                        None if w.text.ends_with(".rules") => (input(&self.dir, &mut self.inputs, &w.text), None),
                        None => {
                            let Some((path, _)) = &header else {
                                return Err(Error::at(&key.span, "name the rules file first (`rules FILE.rules` before the steps), or write `FILE.rules:SET`"));
                            };
                            (path.clone(), (w.text != "*").then_some(w.text.as_str()))
                        }
                    };
                    let params = &self.params;
                    let chosen = match &header {
                        Some((path, file)) if *path == from => crate::rules::select(file, set, params),
                        _ => crate::rules::load_rule_file(&from)
                            .and_then(|other| crate::rules::select(&other, set, params)),
                    }
                    .map_err(|e| e.or_at(&w.span))?;
                    settings.sets.push(Candidate::of(from, set, chosen.clone()));
                    for r in chosen {
                        // A rule of another file that a ruleset names.
                        let read = PathBuf::from(&r.span.source.name);
                        if !self.inputs.contains(&read) {
                            self.inputs.push(read);
                        }
                        if !rules.iter().any(|x| x.name == r.name) {
                            rules.push(r);
                        }
                    }
                }
                settings.rules = rules;
            }
            other => {
                return Err(Error::at(
                    &key.span,
                    format!("unknown setting `{other}` (program, sketches, param, rules, limits, filter, cost, normal-form, step)"),
                ))
            }
        }
        Ok(())
    }

    fn header(&mut self, ws: &[Word]) -> Result<bool> {
        let key = &ws[0];
        let one = || match ws {
            [_, w] => Ok(w),
            _ => Err(Error::at(
                &key.span,
                format!("`{}` takes one argument", key.text),
            )),
        };
        match key.text.as_str() {
            "program" => {
                let w = one()?;
                let def =
                    crate::rise::load_def_ref(&w.text, &self.dir).map_err(|e| e.or_at(&w.span))?;
                input(&self.dir, &mut self.inputs, super::file_of(&w.text));
                self.program = Some((w.text.to_string(), def.term, def.names));
            }
            "sketches" => {
                let w = one()?;
                let path = input(&self.dir, &mut self.inputs, &w.text);
                let src = read_source(&path).map_err(|e| e.or_at(&w.span))?;
                self.sketches = Some(crate::sketch::parse::parse_sketch_file(&src)?);
            }
            "param" => {
                let (name, value) = match ws {
                    [_, name, eq, value] if eq.text == "=" => (name, value),
                    _ => return Err(Error::at(&key.span, "expected `param NAME = VALUE`")),
                };
                if !self.steps.is_empty() {
                    return Err(Error::at(&key.span, "a `param` comes before the steps"));
                }
                self.params
                    .set(&name.text, &value.text)
                    .map_err(|e| Error::at(&value.span, e))?;
            }
            "rules"
                if self.rules.is_none()
                    && self.steps.is_empty()
                    && ws.len() == 2
                    && ws[1].text.ends_with(".rules") =>
            {
                let w = one()?;
                let path = input(&self.dir, &mut self.inputs, &w.text);
                let file = crate::rules::load_rule_file(&path).map_err(|e| e.or_at(&w.span))?;
                self.rules = Some((path.clone(), file));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Reads a guide file and everything it names, its sizes the target's ([`Params::default`])
/// where it sets none.
pub fn load_guide(path: &Path) -> Result<Guide> {
    load_guide_with(path, Params::default())
}

/// [`load_guide`] with sizes `params`, of which those [`Params::given`] override the guide's.
pub fn load_guide_with(path: &Path, params: Params) -> Result<Guide> {
    let src = read_source(path)?;
    let mut p = GuideParser {
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        program: None,
        sketches: None,
        rules: None,
        params,
        defaults: Settings {
            rules: vec![],
            sets: vec![],
            cost: Cost::AstSize,
            limits: Limits::default(),
            filter: Filter::default(),
            normal_form: NormalForm::default(),
        },
        steps: vec![],
        inputs: vec![path.to_path_buf()],
    };
    for (_, ws) in word_lines(&src, "//") {
        let key = &ws[0];
        if key.text == "step" {
            let target =
                match &ws[1..] {
                    [auto] if auto.text == "auto" => StepTarget::Auto(auto.clone()),
                    [name] => StepTarget::Sketch(name.clone()),
                    [goal, spec] if goal.text == "goal" => StepTarget::Goal(spec.clone()),
                    // The rest of the line: a strategy may have spaces.
                    [kind, first, ..] if kind.text == "strategy" => {
                        let last = ws.last().expect("one word at least");
                        let text = ws[2..].iter().map(|w| w.text.as_str()).collect::<Vec<_>>();
                        StepTarget::Strategy(Word {
                            text: text.join(" "),
                            span: first.span.to(&last.span),
                        })
                    }
                    _ => return Err(Error::at(
                        &key.span,
                        "expected `step SKETCH_NAME`, `step goal FILE.rise:NAME`, `step strategy FILE.elevate:NAME` or `step auto`",
                    )),
                };
            let settings = p.defaults.clone();
            p.steps.push((target, settings));
            continue;
        }
        if !p.header(&ws)? {
            let in_step = !p.steps.is_empty();
            p.setting(&ws, in_step)?;
        }
    }
    let whole = Span::new(&src, 0, 0);
    let (program, start, names) = p
        .program
        .ok_or_else(|| Error::at(&whole, "the guide names no `program FILE.rise:NAME`"))?;
    if p.steps.is_empty() {
        return Err(Error::at(&whole, "the guide has no `step`"));
    }
    let mut steps: Vec<Step> = vec![];
    for (target, s) in p.steps.into_iter().rev() {
        let settings = (s.cost, s.limits, s.filter);
        let step = match target {
            StepTarget::Sketch(name) => {
                let Some(sketches) = &p.sketches else {
                    return Err(Error::at(
                        &name.span,
                        "a sketch step needs the guide's `sketches FILE.sketch`",
                    ));
                };
                let sketch = sketches
                    .get(&name.text)
                    .map_err(|e| e.or_at(&name.span))?
                    .clone()
                    .with_params(&names.sizes, &p.params)
                    .resolve(&names.sizes)?;
                Step::new(sketch, s.rules, settings)
            }
            StepTarget::Goal(spec) => {
                let of = (program.as_str(), &start.ty);
                let goal = super::load_goal(&spec.text, &p.dir, of, &settings.1)
                    .map_err(|e| e.or_at(&spec.span))?;
                input(&p.dir, &mut p.inputs, super::file_of(&spec.text));
                let target = SketchDecl::any(&format!("goal {}", spec.text));
                let mut step = Step::new(target, s.rules, settings);
                step.goal = Some(goal);
                step
            }
            StepTarget::Strategy(spec) => {
                let path = p.dir.join(&spec.text);
                let spec_text = path.to_string_lossy().to_string();
                let (file, strategy) = crate::strategy::load_spec(&spec_text, &p.params)
                    .map_err(|e| e.or_at(&spec.span))?;
                for f in &file.inputs {
                    if !p.inputs.contains(f) {
                        p.inputs.push(f.clone());
                    }
                }
                let target = SketchDecl::any(&format!("strategy {}", spec.text));
                let mut step = Step::new(target, s.rules, settings);
                step.rewrite = Some(super::Rewrite {
                    file: std::rc::Rc::new(file),
                    strategy,
                });
                step
            }
            StepTarget::Auto(word) => {
                let next = steps
                    .last()
                    .filter(|n| n.goal.is_none() && n.auto.is_none() && n.rewrite.is_none());
                let Some(next) = next else {
                    return Err(Error::at(
                        &word.span,
                        "`step auto` finds steps towards the next step's sketch: write a sketch step after it",
                    ));
                };
                let candidates = match (s.sets.is_empty(), &p.rules) {
                    (false, _) => s.sets,
                    (true, Some((path, file))) => (file.rulesets.iter())
                        .map(|set| {
                            let chosen = crate::rules::select(file, Some(&set.name), &p.params)?;
                            Ok(Candidate::of(path.clone(), Some(&set.name), chosen))
                        })
                        .collect::<Result<_>>()?,
                    (true, None) => {
                        return Err(Error::at(
                            &word.span,
                            "`step auto` chooses among rule sets: name the rules file first",
                        ))
                    }
                };
                let mut step = Step::new(next.sketch.clone(), vec![], settings);
                step.auto = Some(candidates);
                step
            }
        };
        steps.push(Step {
            normal_form: s.normal_form,
            ..step
        });
    }
    steps.reverse();
    Ok(Guide {
        program,
        start,
        names,
        steps,
        inputs: p.inputs,
        params: p.params,
    })
}
