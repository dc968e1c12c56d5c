//! A program named for code generation or timing: `FILE.rise:NAME`, or `FILE.guide`, whose
//! last step finds it.

use super::Guide;
use crate::error::Result;
use crate::rise::term::Term;
use std::rc::Rc;

/// A named program, read (with every file it names) but not searched for yet: a
/// definition, or the guide that finds it.
pub enum Named {
    Def(Box<crate::rise::LoadedDef>),
    Guide(Box<Guide>),
}

/// Reads `FILE.rise:NAME`, or `FILE.guide` and the files it names (its rules instantiated
/// with `params`).
pub fn read_program(spec: &str, params: crate::rules::Params) -> Result<Named> {
    if spec.ends_with(".guide") {
        let g = super::parse::load_guide_with(std::path::Path::new(spec), params)?;
        return Ok(Named::Guide(Box::new(g)));
    }
    let def = crate::rise::load_def_ref(spec, std::path::Path::new("."))?;
    Ok(Named::Def(Box::new(def)))
}

impl Named {
    /// The names of the program's sizes (its leading `nfun`s), outermost first.
    pub fn size_names(&self) -> &[String] {
        match self {
            Named::Def(def) => &def.sizes,
            Named::Guide(g) => &g.names.sizes,
        }
    }

    /// The program: a definition's term, or the term a guide's last step finds (an error
    /// when a step does not find its sketch).
    pub fn term(self) -> Result<Rc<Term>> {
        Ok(self.term_and_meaning()?.0)
    }

    /// The program ([`Named::term`]) and what it must mean: a definition itself, or the
    /// program a guide starts from.
    pub fn term_and_meaning(self) -> Result<(Rc<Term>, Rc<Term>)> {
        match self {
            Named::Def(def) => Ok((def.term.clone(), def.term)),
            Named::Guide(g) => {
                let reports = super::run(&g, |_, _| {}, |_, _| {})?;
                super::check_found(&reports)?;
                let found = reports.last().and_then(|r| r.term.clone()).expect("found");
                Ok((found, g.start.clone()))
            }
        }
    }
}

/// The program `FILE.rise:NAME`, or the one `FILE.guide` finds (by running the guide).
pub fn load_program(spec: &str) -> Result<Rc<Term>> {
    read_program(spec, Default::default())?.term()
}
