//! The `sketchlog` Python package's native module: Rise programs, rules, sketches and
//! guides as Python values, the searches over them with the GIL released, code generation,
//! and kernels called on NumPy arrays. The pure-Python part (`python/sketchlog/`) adds the
//! `@kernel` decorator.

mod egg;
mod errors;
mod interrupt;
mod kernel;
mod program;
mod search;

use pyo3::prelude::*;

#[pymodule]
fn _sketchlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", m.py().get_type::<errors::Error>())?;
    m.add(
        "PerformanceWarning",
        m.py().get_type::<errors::PerformanceWarning>(),
    )?;
    m.add("ELEMENTARY_COST", search::ELEMENTARY_COST)?;
    m.add_class::<program::Program>()?;
    m.add_class::<search::Rules>()?;
    m.add_class::<search::Sketch>()?;
    m.add_class::<search::Guide>()?;
    m.add_class::<search::SearchResult>()?;
    m.add_class::<kernel::Kernel>()?;
    m.add_function(wrap_pyfunction!(search::check, m)?)?;
    m.add_function(wrap_pyfunction!(search::simplify, m)?)?;
    m.add_function(wrap_pyfunction!(search::run_guide, m)?)?;
    m.add_function(wrap_pyfunction!(search::guide_auto, m)?)?;
    m.add_function(wrap_pyfunction!(search::rewrite, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::codegen, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::compile, m)?)?;
    m.add_function(wrap_pyfunction!(egg::run_egg, m)?)?;
    Ok(())
}
