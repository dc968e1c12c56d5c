//! The integration tests, one module a subject, built as one test binary: one link instead of
//! one a file, and one pool of test threads across all of them.

mod common;

mod auto_guides;
mod cluster;
mod codegen;
mod conformance;
mod docs;
mod egraph_roundtrip;
mod elementary;
mod encodings;
mod errors;
mod explain;
mod halide_chapter;
mod matmul;
mod module_layers;
mod reliability;
mod rise_frontend;
mod rule_soundness;
mod rules;
mod shine;
mod sketches;
mod strategies;
mod studio;
mod subsumption;
mod sweep;
mod user_programs;
