//! sketchlog's errors as Python exceptions, with their locations as attributes.

use pyo3::prelude::*;

pyo3::create_exception!(
    sketchlog,
    Error,
    pyo3::exceptions::PyException,
    "An error of sketchlog. `file`, `line` and `column` say where the input is wrong (None when \
     the error has no position); `kind` is `bad-input`, `check-failed`, `limit` or `internal`."
);

pyo3::create_exception!(
    sketchlog,
    PerformanceWarning,
    pyo3::exceptions::PyUserWarning,
    "A remark of the code generator on what its C will cost that the program does not show \
     (accesses whose cache lines evict each other): issued by `codegen` and `compile`, once per \
     remark."
);

/// Issues each of the code generator's `remarks` as a [`PerformanceWarning`].
pub fn warn_remarks(py: Python<'_>, remarks: &[String]) -> PyResult<()> {
    let category = py.get_type::<PerformanceWarning>();
    for remark in remarks {
        let message = std::ffi::CString::new(remark.as_str())?;
        PyErr::warn(py, &category, &message, 1)?;
    }
    Ok(())
}

/// A Python exception for a sketchlog error: the message as the command line prints it
/// (with the source line and carets), and its location as attributes.
pub fn to_py(e: sketchlog::error::Error) -> PyErr {
    use sketchlog::error::ErrorKind;
    Python::attach(|py| {
        let err = Error::new_err(format!("{e:#}"));
        let (file, line, column) = split_location(e.location.as_deref());
        let kind = match e.kind {
            ErrorKind::BadInput => "bad-input",
            ErrorKind::CheckFailed => "check-failed",
            ErrorKind::Limit(_) => "limit",
            ErrorKind::Internal => "internal",
        };
        let value = err.value(py);
        let _ = value.setattr("file", file);
        let _ = value.setattr("line", line);
        let _ = value.setattr("column", column);
        let _ = value.setattr("kind", kind);
        let _ = value.setattr("message", e.message.as_str());
        err
    })
}

/// `file:line:column` (or `file`) as its parts.
fn split_location(location: Option<&str>) -> (Option<String>, Option<usize>, Option<usize>) {
    let Some(location) = location else {
        return (None, None, None);
    };
    let mut parts = location.rsplitn(3, ':');
    let (column, line, file) = (parts.next(), parts.next(), parts.next());
    match (
        file,
        line.and_then(|l| l.parse().ok()),
        column.and_then(|c| c.parse().ok()),
    ) {
        (Some(file), Some(line), Some(column)) => {
            (Some(file.to_string()), Some(line), Some(column))
        }
        _ => (Some(location.to_string()), None, None),
    }
}

/// A sketchlog result as a Python one.
pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for sketchlog::error::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
