//! sketchlog: sketch-guided equality saturation over the Rise array language, on egglog.
//!
//! Modules follow the pipeline: [`rise`] (language front end) -> [`egraph`] (Rise in egglog,
//! substitution, saturation, serialized e-graphs) -> [`rules`] (rule files compiled to
//! encodings) -> [`sketch`] (sketches as queries, sketch-satisfying extraction, `--why`) ->
//! [`guide`] (sketch-guided search, `--explain`) -> [`codegen`] (OpenMP C) ->
//! [`experiments`] (the paper's tables, sweeps) on [`cluster`] (rows as jobs on a timely
//! dataflow, kept and reused) -> [`runner`] (`sketchlog run`: egglog's command line with
//! sketchlog's commands) -> [`cli`]. Around them: [`source`] (named sources and locations),
//! [`error`] (located errors), [`files`] (reading and writing files, no output over an input),
//! [`limits`] (input limits), [`machine`] (the CPU's vectors and cache), [`fuzz`].
//!
//! # A search, from program to C
//!
//! A matrix-vector product, its rows blocked by 32 with the rules of `rules/mm.rules`:
//! load the program (named Rise, elaborated to a typed De Bruijn term), the rules (compiled
//! to egglog queries when the search installs them) and a sketch (compiled to relations),
//! then search until the sketch is satisfied and extract the cheapest term that satisfies it.
//!
//! ```
//! use sketchlog::egraph::{filter::Filter, saturate::Limits};
//! use sketchlog::guide::{self, Cost, Step};
//! use sketchlog::{rise, rules, sketch};
//! use std::path::Path;
//!
//! let mv = rise::load_def(Path::new("programs/mv.rise"), "mv")?;
//! // The sketch's sizes `m` and `k` are the program's leading `nfun m k`.
//! let sizes = ["m".to_string(), "k".to_string()];
//! let blocked = sketch::load("programs/mv.sketch:split", &sizes)?;
//! let split_rules = rules::load_selection("rules/mm.rules:split", &Default::default())?;
//! let limits = Limits { iterations: 10, ..Limits::default() };
//! let step = Step::new(blocked, split_rules, (Cost::AstSize, limits, Filter::default()));
//!
//! let report = guide::search(&mv, &step, |_iteration| {})?;
//! assert!(report.outcome.found());
//! let found = report.term.expect("extracted");
//! let named = rise::debruijn::to_named(&found, rise::debruijn::Annotate::Leading);
//! assert!(rise::print::print_expr(&named).contains("split<32>"));
//! # Ok::<(), sketchlog::error::Error>(())
//! ```
//!
//! The term found means what the program means (the [`rise::interp`] interpreter runs
//! both), and after the last lowering ([`codegen::sequential`]: computing maps become
//! sequential loops) it is C:
//!
//! ```
//! # use sketchlog::egraph::{filter::Filter, saturate::Limits};
//! # use sketchlog::guide::{self, Cost, Step};
//! # use sketchlog::{rise, rules, sketch};
//! # use std::path::Path;
//! # let mv = rise::load_def(Path::new("programs/mv.rise"), "mv")?;
//! # let sizes = ["m".to_string(), "k".to_string()];
//! # let blocked = sketch::load("programs/mv.sketch:split", &sizes)?;
//! # let split_rules = rules::load_selection("rules/mm.rules:split", &Default::default())?;
//! # let step = Step::new(blocked, split_rules, (Cost::AstSize, Limits::default(), Filter::default()));
//! # let found = guide::search(&mv, &step, |_| {})?.term.expect("extracted");
//! use rise::interp::{run, Value};
//! let (m, k) = (64, 16);
//! let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32).collect();
//! let v: Vec<f32> = (0..k).map(|i| (i % 3) as f32).collect();
//! let args = [Value::matrix(m, k, &a), Value::f32s(&v)];
//! let meaning = |t: &rise::term::Term| {
//!     run(t, &[m as i64, k as i64], &args).and_then(|r| r.flatten_f32()).unwrap()
//! };
//! assert_eq!(meaning(&found), meaning(&mv));
//!
//! let lowered = sketchlog::codegen::sequential(&found);
//! let c = sketchlog::codegen::emit::program_c("mv", &lowered, &[m as i64, k as i64])?;
//! assert!(c.c.contains("void mv("));
//! # Ok::<(), sketchlog::error::Error>(())
//! ```
//!
//! [`codegen::run`] compiles such C with a harness, runs it and checks it against the
//! interpreter; [`guide::run`] chains steps, each starting from the last one's term.

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod cluster;
pub mod codegen;
pub mod egraph;
pub mod error;
#[cfg(feature = "cli")]
pub mod experiments;
pub mod files;
#[cfg(feature = "cli")]
pub mod fuzz;
pub mod guide;
pub mod limits;
pub mod machine;
pub mod rise;
pub mod rules;
pub mod runner;
pub mod sketch;
pub mod source;
pub mod strategy;
#[cfg(feature = "cli")]
pub mod studio;
