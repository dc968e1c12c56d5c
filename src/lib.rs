//! sketchlog: sketch-guided equality saturation over the Rise array language, on egglog.
//!
//! Modules follow the pipeline: [`rise`] (language front end) -> [`egraph`] (Rise in egglog,
//! substitution, saturation) -> [`rules`] (rule files compiled to encodings) ->
//! [`experiments`] (the paper's tables) -> [`runner`] (`.egg` programs with sketchlog's
//! commands) -> [`cli`].

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
