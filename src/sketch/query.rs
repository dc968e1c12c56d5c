//! A sketch as a query on the e-graph: one egglog relation per sub-sketch, filled by rules.
//!
//! `F(s..)` joins the constructor table with its children's relations, `contains(s)` is a
//! recursive rule over the children of every term constructor, `s1 or s2` is two rules, and
//! `s :: t` looks up the class type `ty` in a relation of the types matching `t` (types are
//! hash-consed: that relation grows only when a new type appears, while joining every new
//! tuple with the type's constructor tables cost 0.5 s per round at 70K e-nodes). The rules
//! form their own ruleset, saturated
//! after every rewrite iteration (a stratified schedule); egglog evaluates them
//! semi-naively, so each update only joins against what is new. "Found" is then a lookup:
//! is the root e-class in the relation of the whole sketch?

#[cfg(feature = "dataflow")]
use super::dataflow::Dataflow;
use super::eval::{Evaluator, Satisfying};
use super::{Op, Sketch};
use crate::egraph::encode::{nat_term, type_sexpr_with};
use crate::egraph::schema::{self, Arg, Con};
use crate::error::{Error, Result};
use crate::rise::nat::Nat;
use crate::rise::types::Type;
use egglog::{EGraph, Read, Value};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How the relations of a sketch query are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// From a scan of the e-graph after every iteration, in Rust ([`super::eval`]).
    #[default]
    Scan,
    /// By egglog, semi-naively: the printed rules saturated after every iteration.
    Egglog,
    /// By differential dataflow, fed each iteration's new and changed e-nodes
    /// (`sketch::dataflow`, with the `dataflow` feature).
    #[cfg(feature = "dataflow")]
    Dataflow,
}

/// A compiled sketch: its relations as an egglog program and as definitions for
/// [`super::eval`].
pub struct SketchQuery {
    engine: Engine,
    ruleset: String,
    /// The relation of the whole sketch; `None` when every term satisfies it (`?`).
    root: Option<usize>,
    /// The relations, each after those it reads: name and definition.
    pub(super) relations: Vec<(String, Def)>,
    /// The egglog program that declares the relations and rules.
    pub program: String,
    /// With [`Engine::Scan`]: the evaluator and the result of the last update.
    evaluator: Evaluator,
    satisfying: Option<Satisfying>,
    /// With `Engine::Dataflow`: the dataflow.
    #[cfg(feature = "dataflow")]
    dataflow: Option<Dataflow>,
}

/// What a relation holds, over e-classes: the classes of which some e-node is `op` with
/// children in `kids` (`None`: any class), the classes of which some term has a subterm in
/// a relation, either of two relations, or a relation's classes of a type matching `ty`.
#[derive(Clone, Debug)]
pub(super) enum Def {
    Node { op: Op, kids: Vec<Option<usize>> },
    Contains(usize),
    Or(usize, usize),
    Typed { inner: Option<usize>, ty: Type },
}

static INSTALLED: AtomicUsize = AtomicUsize::new(0);

impl SketchQuery {
    /// Compiles `sketch` to relations, evaluated by `engine` (with [`Engine::Egglog`], the
    /// relations and rules are added to the e-graph).
    pub fn install(eg: &mut EGraph, sketch: &Sketch, engine: Engine) -> Result<SketchQuery> {
        let mut query = SketchQuery::compile(sketch)?;
        query.engine = engine;
        match engine {
            Engine::Egglog => {
                crate::egraph::note_type_reads(eg, &query.program);
                eg.parse_and_run_program(None, &query.program)
                    .map_err(|e| Error::internal(format!("sketch query: {e}")))?;
            }
            #[cfg(feature = "dataflow")]
            Engine::Dataflow => query.dataflow = Some(Dataflow::new(&query.relations, query.root)?),
            Engine::Scan => {}
        }
        Ok(query)
    }

    /// The egglog program of a sketch (declarations, ruleset and rules), not yet installed.
    pub fn compile(sketch: &Sketch) -> Result<SketchQuery> {
        let id = INSTALLED.fetch_add(1, Ordering::Relaxed);
        let mut c = Compiler {
            memo: HashMap::new(),
            prefix: format!("sketch{id}"),
            ruleset: format!("sketch{id}"),
            relations: vec![],
            types: 0,
            program: format!("(ruleset sketch{id})\n"),
        };
        let root = c.relation(sketch)?;
        Ok(SketchQuery {
            engine: Engine::default(),
            ruleset: c.ruleset,
            root,
            relations: c.relations,
            program: c.program,
            evaluator: Evaluator::default(),
            satisfying: None,
            #[cfg(feature = "dataflow")]
            dataflow: None,
        })
    }

    /// Brings the sketch's relations up to date; returns the work done: with egglog, the
    /// number of rule matches (semi-naive evaluation keeps it proportional to what is new);
    /// from a scan, the number of tuples of all relations; with a dataflow, the number of
    /// changes fed.
    pub fn update(&mut self, eg: &mut EGraph) -> Result<usize> {
        #[cfg(feature = "dataflow")]
        if let Some(dataflow) = &mut self.dataflow {
            return dataflow.update(eg, &self.relations);
        }
        if self.engine == Engine::Scan {
            let (satisfying, tuples) = self.evaluator.run(eg, &self.relations, self.root)?;
            self.satisfying = Some(satisfying);
            return Ok(tuples);
        }
        let mut matches = 0;
        loop {
            let report = eg
                .step_rules(&self.ruleset)
                .map_err(|e| Error::bad_input(format!("sketch query: {e}")))?;
            matches += report.num_matches_per_rule.values().sum::<usize>();
            if !report.updated {
                return Ok(matches);
            }
        }
    }

    /// Does some term of `class` satisfy the sketch? (After [`SketchQuery::update`].)
    pub fn holds(&self, eg: &EGraph, class: Value) -> bool {
        #[cfg(feature = "dataflow")]
        if let Some(dataflow) = &self.dataflow {
            return dataflow.holds(class);
        }
        if self.engine == Engine::Scan {
            return self.satisfying.as_ref().is_some_and(|s| s.holds(class));
        }
        match self.root {
            None => true,
            Some(r) => {
                let name = &self.relations[r].0;
                eg.read(|rs| rs.contains(name, (class,)).unwrap_or(false))
            }
        }
    }
}

struct Compiler {
    /// Equal sub-sketches share one relation.
    memo: HashMap<Sketch, Option<usize>>,
    prefix: String,
    ruleset: String,
    relations: Vec<(String, Def)>,
    /// Relations of types declared so far.
    types: usize,
    program: String,
}

impl Compiler {
    /// A new relation. Its name ends in a letter: egglog names its internal variables after
    /// a relation with a counter appended (`r`, `r1`, `r2`, ...), so a name ending in a digit
    /// (`s1` + `2`) could collide with another relation's (`s12`).
    fn fresh(&mut self, def: Def) -> (usize, String) {
        let r = format!(
            "{}-s{}-holds",
            self.prefix,
            self.relations.len() + self.types + 1
        );
        writeln!(self.program, "(relation {r} (Expr))").unwrap();
        self.relations.push((r.clone(), def));
        (self.relations.len() - 1, r)
    }

    /// A new relation over types, for a type sketch.
    fn fresh_types(&mut self) -> String {
        self.types += 1;
        let r = format!(
            "{}-s{}-holds",
            self.prefix,
            self.relations.len() + self.types
        );
        writeln!(self.program, "(relation {r} (Type))").unwrap();
        r
    }

    fn name(&self, r: usize) -> &str {
        &self.relations[r].0
    }

    /// A rule of the sketch's ruleset. Planned without tree decomposition (`:no-decomp`):
    /// these joins are small chains, and decomposition made single rounds explode (70 s at
    /// 223K e-nodes on the unguided blocking search, 1.7 s without).
    fn rule(&mut self, body: &str, head: &str) {
        writeln!(
            self.program,
            "(rule ({body}) (({head} e)) :ruleset {} :no-decomp)",
            self.ruleset
        )
        .unwrap();
    }

    /// The relation of the terms satisfying `s`; `None` for all terms.
    fn relation(&mut self, s: &Sketch) -> Result<Option<usize>> {
        if let Some(r) = self.memo.get(s) {
            return Ok(*r);
        }
        let r = self.new_relation(s)?;
        self.memo.insert(s.clone(), r);
        Ok(r)
    }

    fn new_relation(&mut self, s: &Sketch) -> Result<Option<usize>> {
        Ok(match s {
            Sketch::Any => None,
            Sketch::Node(op, kids) => {
                let kids = kids
                    .iter()
                    .map(|k| self.relation(k))
                    .collect::<Result<Vec<_>>>()?;
                let node = match op {
                    Op::App => Con::App.pattern(""),
                    Op::Lam => Con::Lam.pattern(""),
                    Op::NatLam => Con::NatLam.pattern(""),
                    Op::NatApp(n) => Con::NatApp.pattern(&nat_pattern(n, &Cell::new(0))?),
                    Op::Var(None) => Con::Var.pattern("i"),
                    Op::Var(Some(i)) => Con::Var.pattern(&literal(Arg::Index(*i))),
                    Op::Prim(p) => Con::Prim.pattern(&literal(Arg::Prim(p.name()))),
                    Op::F32(x) => Con::F32.pattern(&literal(Arg::F32(x.0 as f64))),
                    Op::Int(i) => Con::Int.pattern(&literal(Arg::Int(*i))),
                };
                let mut body = format!("(= e {node})");
                for (i, k) in kids.iter().enumerate() {
                    if let Some(k) = k {
                        write!(body, " ({} c{i})", self.name(*k)).unwrap();
                    }
                }
                let (r, name) = self.fresh(Def::Node {
                    op: op.clone(),
                    kids,
                });
                self.rule(&body, &name);
                Some(r)
            }
            Sketch::Contains(inner) => {
                let Some(inner) = self.relation(inner)? else {
                    return Ok(None);
                };
                let body = format!("({} e)", self.name(inner));
                let (r, name) = self.fresh(Def::Contains(inner));
                self.rule(&body, &name);
                // One rule per term child of each constructor (`c0`, `c1`, ...).
                for con in schema::rise() {
                    let node = con.pattern("n");
                    for k in 0..con.children().count() {
                        self.rule(&format!("(= e {node}) ({name} c{k})"), &name);
                    }
                }
                Some(r)
            }
            Sketch::Or(a, b) => {
                let (Some(a), Some(b)) = (self.relation(a)?, self.relation(b)?) else {
                    return Ok(None);
                };
                if a == b {
                    return Ok(Some(a));
                }
                let bodies = [a, b].map(|x| format!("({} e)", self.name(x)));
                let (r, name) = self.fresh(Def::Or(a, b));
                for body in bodies {
                    self.rule(&body, &name);
                }
                Some(r)
            }
            Sketch::Typed(inner, t) => {
                let inner = self.relation(inner)?;
                // The types matching `t` form a relation of their own: types are
                // hash-consed and few, so it grows only when a new type appears, and the
                // sketch's rule is two lookups per new tuple of the inner relation.
                let types = self.fresh_types();
                let pattern = type_pattern(t, &Cell::new(0))?;
                writeln!(
                    self.program,
                    "(rule ((= t {pattern})) (({types} t)) :ruleset {} :no-decomp)",
                    self.ruleset
                )
                .unwrap();
                let mut body = String::new();
                if let Some(inner) = inner {
                    write!(body, "({} e) ", self.name(inner)).unwrap();
                }
                write!(body, "(= (ty e) et) ({types} et)").unwrap();
                let (r, name) = self.fresh(Def::Typed {
                    inner,
                    ty: t.clone(),
                });
                self.rule(&body, &name);
                Some(r)
            }
        })
    }
}

/// A fresh query variable for a hole; `holes` counts the holes of one rule.
fn hole(prefix: &str, holes: &Cell<usize>) -> String {
    holes.set(holes.get() + 1);
    format!("{prefix}{}", holes.get())
}

fn nat_pattern(n: &Nat, holes: &Cell<usize>) -> Result<String> {
    if n.as_meta().is_some() {
        return Ok(hole("hn", holes));
    }
    nat_term(n).map(|t| t.sexpr()).ok_or_else(|| {
        Error::bad_input(format!(
            "sketch size `{n}` is neither a hole nor a size of the program"
        ))
    })
}

/// An egglog pattern for a type sketch: holes become fresh query variables.
fn type_pattern(t: &Type, holes: &Cell<usize>) -> Result<String> {
    type_sexpr_with(t, &mut |n| nat_pattern(n, holes), &mut || hole("ht", holes))
}

/// A sketch's literal as the schema prints it.
fn literal(payload: Arg<'_, ()>) -> String {
    payload.literal().expect("a base payload")
}
