//! The Rise functional array language: syntax, sizes, types, elaboration to typed
//! De Bruijn terms, printing, and a reference interpreter.
//!
//! Pipeline: `parse` (text -> named [`syntax::Expr`]) -> `infer` (-> typed [`term::Term`])
//! -> e-graph; and back with `debruijn::to_named` and `print`.

pub mod debruijn;
pub mod infer;
pub mod interp;
pub mod nat;
pub mod parse;
pub mod primitives;
pub mod print;
pub mod syntax;
pub mod term;
pub mod types;

use crate::error::{read_source, Result};
use std::path::Path;
use std::rc::Rc;

/// Reads and parses a `.rise` file.
pub fn load_program(path: &Path) -> Result<syntax::Program> {
    parse::parse_program(&read_source(path)?)
}

/// Reads a `.rise` file and elaborates one of its definitions.
pub fn load_def(path: &Path, name: &str) -> Result<Rc<term::Term>> {
    infer::elaborate_def(&load_program(path)?, name)
}
