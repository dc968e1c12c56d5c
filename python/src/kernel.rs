//! Code generation from Python: the C of a program (`codegen`), a compiled kernel called on
//! NumPy arrays (`compile`), and the Rise interpreter on NumPy arrays.

use crate::errors::{to_py, OrRaise};
use crate::search::program_of;
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use sketchlog::codegen::run::{self, COptions};
use sketchlog::codegen::{self as cg, emit::Lowering, kernel};
use sketchlog::error::Error;
use sketchlog::rise::term::Term;
use std::rc::Rc;

fn lowering_of(name: &str) -> PyResult<Lowering> {
    match name {
        "vector" => Ok(Lowering::Vector),
        "scalar" => Ok(Lowering::Scalar),
        other => Err(to_py(Error::bad_input(format!(
            "lowering `{other}` is neither `vector` nor `scalar`"
        )))),
    }
}

/// The OpenMP C of a low-level program at `sizes` (outermost first; default: every size
/// 1024), after the last lowering (computing maps become sequential loops). The code
/// generator's remarks on it are issued as `PerformanceWarning`s.
#[pyfunction]
#[pyo3(signature = (program, sizes = None, *, lowering = "vector"))]
pub fn codegen(
    program: &Bound<'_, PyAny>,
    sizes: Option<Vec<i64>>,
    lowering: &str,
) -> PyResult<String> {
    let py = program.py();
    let program = program_of(program)?;
    let sizes = sizes.unwrap_or_else(|| cg::sizes_of(program.term(), 1024));
    let lowered = cg::sequential(program.term());
    let generated = cg::emit::lowered_c(
        "rise_program",
        &lowered,
        &sizes,
        lowering_of(lowering)?,
        cg::target::Target::native(),
    )
    .or_raise()?;
    crate::errors::warn_remarks(py, &generated.remarks)?;
    Ok(generated.c)
}

/// A program compiled to C at fixed sizes and loaded: call it on float32 arrays of its
/// input shapes to get its output.
#[pyclass(unsendable, module = "sketchlog")]
pub struct Kernel {
    kernel: kernel::Kernel,
    program: Rc<Term>,
    sizes: Vec<i64>,
    threads: usize,
    tolerance: f64,
}

/// Compiles `program` at `sizes` into a kernel run on `threads` OpenMP threads (0: OpenMP's
/// default). `flags` replace the C compiler's program flags (default `-march=native`). With
/// `validate`, the kernel is run once on random inputs and checked against the Rise
/// interpreter before it is returned. The code generator's remarks on its C are issued as
/// `PerformanceWarning`s.
#[pyfunction]
#[pyo3(signature = (program, sizes = None, *, threads = 1, flags = None, lowering = "vector",
                    validate = false, tolerance = 1e-3))]
#[allow(clippy::too_many_arguments)]
pub fn compile(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    sizes: Option<Vec<i64>>,
    threads: usize,
    flags: Option<Vec<String>>,
    lowering: &str,
    validate: bool,
    tolerance: f64,
) -> PyResult<Kernel> {
    let program = program_of(program)?;
    let sizes = sizes.unwrap_or_else(|| cg::sizes_of(program.term(), 1024));
    let mut opts = COptions {
        lowering: lowering_of(lowering)?,
        ..COptions::default()
    };
    if let Some(flags) = flags {
        opts.flags = flags;
    }
    let lowered = cg::sequential(program.term());
    let compiled = kernel::Kernel::compile(&lowered, &sizes, &opts).or_raise()?;
    crate::errors::warn_remarks(py, &compiled.remarks)?;
    let k = Kernel {
        kernel: compiled,
        program: program.term().clone(),
        sizes,
        threads,
        tolerance,
    };
    if validate {
        k.validate_random(py)?;
    }
    Ok(k)
}

impl Kernel {
    /// Runs the kernel and the interpreter on random inputs in [-1, 1): an error when they
    /// differ by more than the tolerance.
    fn validate_random(&self, py: Python<'_>) -> PyResult<()> {
        let counts: Vec<usize> = (self.kernel.shapes().0.iter())
            .map(|s| s.iter().product::<i64>() as usize)
            .collect();
        let inputs = run::checking_inputs(&counts);
        let slices: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let got = self.run(py, &slices)?;
        self.check_against_interpreter(&inputs, &got)
    }

    fn run(&self, py: Python<'_>, inputs: &[&[f32]]) -> PyResult<Vec<f32>> {
        let (kernel, threads) = (&self.kernel, self.threads);
        let mut out = vec![0.0f32; kernel.shapes().1.iter().product::<i64>() as usize];
        py.detach(|| kernel.call(inputs, &mut out, threads))
            .or_raise()?;
        Ok(out)
    }

    fn check_against_interpreter(&self, inputs: &[Vec<f32>], got: &[f32]) -> PyResult<()> {
        let expected = run::interpret(&self.program, &self.sizes, inputs).or_raise()?;
        let worst = max_relative_error(got, &expected);
        if worst.is_nan() || worst > self.tolerance {
            return Err(to_py(Error::check_failed(format!(
                "the kernel's output differs from the interpreter's: max relative error {worst:.2e} (tolerance {:.0e})",
                self.tolerance
            ))));
        }
        Ok(())
    }
}

#[pymethods]
impl Kernel {
    /// Runs the kernel on float32 arrays of its input shapes (C-contiguous); returns a new
    /// array of its output shape. With `validate`, the output is checked against the Rise
    /// interpreter's on the same inputs.
    #[pyo3(signature = (*inputs, validate = false))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<PyReadonlyArrayDyn<'py, f32>>,
        validate: bool,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let (shapes, out_shape) = self.kernel.shapes();
        if inputs.len() != shapes.len() {
            return Err(to_py(Error::bad_input(format!(
                "{} arrays for a kernel of {} inputs",
                inputs.len(),
                shapes.len()
            ))));
        }
        let mut slices = vec![];
        for (i, (a, shape)) in inputs.iter().zip(shapes).enumerate() {
            let given: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
            if given != *shape {
                return Err(to_py(Error::bad_input(format!(
                    "input {i} has shape {given:?}, the kernel takes {shape:?}"
                ))));
            }
            slices.push(
                a.as_slice().map_err(|_| {
                    to_py(Error::bad_input(format!("input {i} is not C-contiguous")))
                })?,
            );
        }
        // NumPy's own allocation (on huge pages when large, as NumPy advises them), written
        // once by the kernel: not a zeroed buffer faulted in page by page.
        let dims: Vec<usize> = out_shape.iter().map(|&d| d as usize).collect();
        // SAFETY: every element is written by the kernel before the array is returned.
        let out = unsafe { PyArrayDyn::<f32>::new(py, dims, false) };
        {
            let mut writable = out.readwrite();
            let target = writable
                .as_slice_mut()
                .map_err(|_| to_py(Error::internal("a new array is not contiguous")))?;
            let (kernel, threads) = (&self.kernel, self.threads);
            py.detach(|| kernel.call(&slices, target, threads))
                .or_raise()?;
            if validate {
                let owned: Vec<Vec<f32>> = slices.iter().map(|s| s.to_vec()).collect();
                self.check_against_interpreter(&owned, target)?;
            }
        }
        Ok(out)
    }

    /// The shapes of its inputs.
    #[getter]
    fn input_shapes(&self) -> Vec<Vec<i64>> {
        self.kernel.shapes().0.to_vec()
    }

    /// The shape of its output.
    #[getter]
    fn output_shape(&self) -> Vec<i64> {
        self.kernel.shapes().1.to_vec()
    }

    /// The C it runs.
    #[getter]
    fn c(&self) -> String {
        self.kernel.c.clone()
    }

    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    #[setter]
    fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    fn __repr__(&self) -> String {
        format!(
            "<Kernel sizes {:?}, {} thread(s)>",
            self.sizes, self.threads
        )
    }
}

/// The largest relative error of `got` against `expected` (absolute near zero).
fn max_relative_error(got: &[f32], expected: &[f32]) -> f64 {
    if got.len() != expected.len() {
        return f64::NAN;
    }
    got.iter().zip(expected).fold(0.0, |worst: f64, (&g, &e)| {
        let (g, e) = (g as f64, e as f64);
        let err = if g.is_nan() && e.is_nan() || g == e {
            0.0
        } else {
            (g - e).abs() / e.abs().max(1.0)
        };
        if err.is_nan() {
            f64::NAN
        } else {
            worst.max(err)
        }
    })
}

/// The sizes at which `program` takes arrays of `shapes`: each size tried among the
/// arrays' dimensions.
fn infer_sizes(program: &Rc<Term>, shapes: &[Vec<i64>]) -> PyResult<Vec<i64>> {
    let count = cg::sizes_of(program, 0).len();
    let mut dims: Vec<i64> = shapes.iter().flatten().copied().collect();
    dims.sort_unstable();
    dims.dedup();
    let mut sizes = vec![0; count];
    let tries = dims.len().pow(count as u32);
    for t in 0..tries.min(100_000) {
        let mut rest = t;
        for s in sizes.iter_mut() {
            *s = dims[rest % dims.len()];
            rest /= dims.len();
        }
        if let Ok((expected, _)) = cg::emit::buffer_shapes(program, &sizes) {
            if expected == shapes {
                return Ok(sizes);
            }
        }
    }
    Err(to_py(Error::bad_input(format!(
        "no sizes of the program take arrays of shapes {shapes:?}: give `sizes=`"
    ))))
}

/// [`Program::interpret`]: the interpreter on NumPy arrays.
pub fn interpret<'py>(
    py: Python<'py>,
    program: &Rc<Term>,
    inputs: &[PyReadonlyArrayDyn<'py, f32>],
    sizes: Option<Vec<i64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let shapes: Vec<Vec<i64>> = inputs
        .iter()
        .map(|a| a.shape().iter().map(|&d| d as i64).collect())
        .collect();
    let sizes = match sizes {
        Some(s) => s,
        None => infer_sizes(program, &shapes)?,
    };
    let (expected, out_shape) = cg::emit::buffer_shapes(program, &sizes).or_raise()?;
    if expected != shapes {
        return Err(to_py(Error::bad_input(format!(
            "arrays of shapes {shapes:?} for a program taking {expected:?} at sizes {sizes:?}"
        ))));
    }
    let owned: Vec<Vec<f32>> = inputs
        .iter()
        .map(|a| a.as_array().iter().copied().collect())
        .collect();
    let out = run::interpret(program, &sizes, &owned).or_raise()?;
    let dims: Vec<usize> = out_shape.iter().map(|&d| d as usize).collect();
    Ok(numpy::PyArray1::from_vec(py, out).reshape(dims)?.into_any())
}
