//! `Program`: a Rise definition, parsed and typed.

use crate::errors::OrRaise;
use pyo3::prelude::*;
use sketchlog::rise::{self, debruijn, print, term::Term, LoadedDef};
use sketchlog::source::Source;
use std::rc::Rc;

/// A Rise program: one definition, elaborated to a typed term.
///
/// `Program.load("programs/mv.rise:mv")` reads a definition from a file;
/// `Program.parse(text)` from text (`def NAME = ...` lines). `str(p)` prints it as Rise.
#[pyclass(unsendable, module = "sketchlog")]
#[derive(Clone)]
pub struct Program {
    pub def: Rc<LoadedDef>,
}

impl Program {
    pub fn term(&self) -> &Rc<Term> {
        &self.def.term
    }

    /// The same program's name, sizes and binders with another term (one a search found).
    pub fn with_term(&self, term: Rc<Term>) -> Program {
        Program {
            def: Rc::new(LoadedDef {
                name: self.def.name.clone(),
                term,
                sizes: self.def.sizes.clone(),
                names: self.def.names.clone(),
            }),
        }
    }

    /// A program of `term` named `name`, its leading binders named `names`.
    pub fn from_term(name: &str, term: Rc<Term>, names: debruijn::Names) -> Program {
        let sizes = names.sizes.clone();
        Program {
            def: Rc::new(LoadedDef {
                name: name.to_string(),
                term,
                sizes,
                names,
            }),
        }
    }

    /// Reads `FILE.rise:NAME`.
    pub fn load_spec(spec: &str) -> PyResult<Program> {
        let def = rise::load_def_ref(spec, std::path::Path::new("")).or_raise()?;
        Ok(Program { def: Rc::new(def) })
    }

    pub fn printed(&self) -> String {
        let named =
            debruijn::to_named_as(&self.def.term, debruijn::Annotate::Leading, &self.def.names);
        print::print_expr(&named)
    }
}

#[pymethods]
impl Program {
    /// Parses Rise text with one or more `def NAME = ...` and elaborates the definition
    /// `name` (the only one when there is one). `source` names the text in errors.
    #[staticmethod]
    #[pyo3(signature = (text, name = None, source = "<string>"))]
    fn parse(text: &str, name: Option<&str>, source: &str) -> PyResult<Program> {
        let src = Source::new(source, text);
        let program = rise::parse::parse_program(&src).or_raise()?;
        let def = LoadedDef::of(&program, name, source).or_raise()?;
        Ok(Program { def: Rc::new(def) })
    }

    /// Reads `FILE.rise:NAME` (or `FILE.rise` with one definition).
    #[staticmethod]
    fn load(spec: &str) -> PyResult<Program> {
        Program::load_spec(spec)
    }

    /// The program's type, as Rise writes it.
    fn typecheck(&self) -> String {
        self.def.term.ty.to_string()
    }

    #[getter]
    fn name(&self) -> String {
        self.def.name.clone()
    }

    /// The size parameters (the leading `nfun`s), outermost first.
    #[getter]
    fn sizes(&self) -> Vec<String> {
        self.def.sizes.clone()
    }

    /// The number of nodes of the term.
    #[getter]
    fn size(&self) -> usize {
        self.def.term.size()
    }

    /// The line of a sketch file that exactly the program's beta-eta normal form satisfies
    /// (`sketch NAME = ...`, sizes by the program's names), to cut holes into.
    fn sketch_of(&self) -> PyResult<String> {
        sketchlog::sketch::of::declaration(&self.def).or_raise()
    }

    fn __str__(&self) -> String {
        self.printed()
    }

    fn __repr__(&self) -> String {
        format!("<Program {}: {}>", self.def.name, self.def.term.ty)
    }

    /// Runs the program in the Rise interpreter on float32 arrays at `sizes` (the program's
    /// sizes, outermost first; by default those at which it takes the inputs' shapes).
    #[pyo3(signature = (*inputs, sizes = None))]
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<numpy::PyReadonlyArrayDyn<'py, f32>>,
        sizes: Option<Vec<i64>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::kernel::interpret(py, self.term(), &inputs, sizes)
    }
}
