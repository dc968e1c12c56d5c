//! The Rise functional array language: syntax, sizes, types, elaboration to typed
//! De Bruijn terms, printing, and a reference interpreter.
//!
//! Pipeline: `parse` (text -> named [`syntax::Expr`]) -> `infer` (-> typed [`term::Term`])
//! -> e-graph; and back with `debruijn::to_named` and `print`.

pub mod debruijn;
pub mod infer;
pub mod interp;
pub mod lambda;
pub mod nat;
pub mod parse;
pub mod primitives;
pub mod print;
pub mod rows;
pub mod syntax;
pub mod term;
pub mod types;

use crate::error::Result;
use crate::files::read_source;
use std::path::Path;
use std::rc::Rc;

/// A closed expression written in Rise, parsed and typed (for unit tests).
#[cfg(test)]
pub(crate) fn typed_term(text: &str) -> Rc<term::Term> {
    let e = parse::parse_expr(&crate::source::Source::new("<test>", text)).unwrap();
    infer::elaborate(None, &e).unwrap()
}

/// Reads and parses a `.rise` file.
pub fn load_program(path: &Path) -> Result<syntax::Program> {
    parse::parse_program(&read_source(path)?)
}

/// Reads a `.rise` file and elaborates one of its definitions.
pub fn load_def(path: &Path, name: &str) -> Result<Rc<term::Term>> {
    infer::elaborate_def(&load_program(path)?, name)
}

/// A definition named by `FILE.rise:NAME`.
pub struct LoadedDef {
    pub name: String,
    pub term: Rc<term::Term>,
    /// Its size parameters: the leading `nfun` binders, outermost first.
    pub sizes: Vec<String>,
    /// The names of its leading binders, for printing what it becomes.
    pub names: debruijn::Names,
}

/// Loads `FILE.rise:NAME` (or `FILE.rise` when it has one definition), with `FILE` relative
/// to `dir`.
pub fn load_def_ref(spec: &str, dir: &Path) -> Result<LoadedDef> {
    let (file, name) = match spec.rsplit_once(':') {
        Some((f, n)) if f.ends_with(".rise") => (f, Some(n)),
        _ => (spec, None),
    };
    LoadedDef::of(&load_program(&dir.join(file))?, name, file)
}

impl LoadedDef {
    /// Definition `name` of a parsed program (`file`, as errors name it), or its only one.
    pub fn of(program: &syntax::Program, name: Option<&str>, file: &str) -> Result<LoadedDef> {
        let name = match name {
            Some(n) => n.to_string(),
            None if program.defs.len() == 1 => program.defs[0].name.clone(),
            None => {
                let names: Vec<&str> = program.defs.iter().map(|d| d.name.as_str()).collect();
                return Err(crate::error::Error::bad_input(format!(
                    "{file} has several definitions ({}); name one as {file}:NAME",
                    names.join(", ")
                )));
            }
        };
        let term = infer::elaborate_def(program, &name)?;
        let sizes = program.get(&name).map_or(vec![], |d| d.expr.size_params());
        let names = program
            .get(&name)
            .map_or_else(Default::default, |d| d.expr.leading_names());
        Ok(LoadedDef {
            name,
            term,
            sizes,
            names,
        })
    }
}
