//! `run_egg`: egglog programs with sketchlog's commands, from text.

use crate::errors::OrRaise;
use pyo3::prelude::*;

/// Runs a `.egg` program (egglog's language with sketchlog's commands) in a fresh e-graph
/// and returns what its commands print, a string per line. `source` names the text in
/// errors.
#[pyfunction]
#[pyo3(signature = (text, *, source = "<string>"))]
pub fn run_egg(py: Python<'_>, text: &str, source: &str) -> PyResult<Vec<String>> {
    let mut out = vec![];
    let (text, source) = (text.to_string(), source.to_string());
    py.detach(|| sketchlog::runner::run_source(&source, &text, &mut out))
        .or_raise()?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect())
}
