//! sketchlog: sketch-guided equality saturation over the Rise array language, on egglog.
//!
//! Modules follow the pipeline: [`rise`] (language front end) -> [`egraph`] (Rise in egglog,
//! substitution, saturation, serialized e-graphs) -> [`rules`] (rule files compiled to
//! encodings) -> [`sketch`] (sketches as queries, sketch-satisfying extraction, `--why`) ->
//! [`guide`] (sketch-guided search) -> [`codegen`] (OpenMP C) -> [`experiments`] (the paper's
//! tables) -> [`runner`] (`sketchlog run`: egglog's command line with sketchlog's commands)
//! -> [`cli`]. Around them: [`error`] (located errors), [`limits`] (input limits), [`fuzz`].

pub mod cli;
pub mod codegen;
pub mod egraph;
pub mod error;
pub mod experiments;
pub mod fuzz;
pub mod guide;
pub mod limits;
pub mod rise;
pub mod rules;
pub mod runner;
pub mod sketch;
