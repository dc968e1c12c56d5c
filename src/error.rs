//! Source locations and user-facing errors, and the file reading and writing that reports them.
//!
//! Every error caused by bad input carries a [`Span`] into a named source so that it can be
//! reported as `file:line:column: message`. [`Error::exit_code`] maps error kinds to the
//! process exit codes the CLI promises: 2 for bad input, 1 for a failed check.

use std::fmt;
use std::sync::Arc;

/// A named piece of source text (a file, or a string given on the command line).
#[derive(Debug, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Source> {
        Arc::new(Source {
            name: name.into(),
            text: text.into(),
        })
    }

    /// 1-based line and column (in characters) of byte offset `at`.
    pub fn line_col(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.text.len());
        let before = &self.text[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

/// A byte range in a [`Source`].
#[derive(Clone, Debug)]
pub struct Span {
    pub source: Arc<Source>,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(source: &Arc<Source>, start: usize, end: usize) -> Span {
        Span {
            source: source.clone(),
            start,
            end,
        }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(&self, other: &Span) -> Span {
        Span::new(
            &self.source,
            self.start.min(other.start),
            self.end.max(other.end),
        )
    }

    /// The source text the span covers.
    pub fn text(&self) -> &str {
        &self.source.text[self.start..self.end.min(self.source.text.len())]
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, col) = self.source.line_col(self.start);
        write!(f, "{}:{}:{}", self.source.name, line, col)
    }
}

/// What went wrong, for choosing the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed or ill-typed input, a missing file, an unknown name.
    BadInput,
    /// A `check` that did not hold.
    CheckFailed,
}

/// A user-facing error: a message, with a location when there is one.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    /// `file:line:column` of the offending input, when known.
    pub location: Option<String>,
    pub message: String,
}

impl Error {
    pub fn at(span: &Span, message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: Some(span.to_string()),
            message: message.into(),
        }
    }

    pub fn bad_input(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: None,
            message: message.into(),
        }
    }

    /// Reading a file failed: reported with the file name and a position of 1:1.
    pub fn io(path: &std::path::Path, err: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: Some(format!("{}:1:1", path.display())),
            message: format!("cannot read file: {err}"),
        }
    }

    /// The same error, located at `span` unless it already has a location.
    pub fn or_at(mut self, span: &Span) -> Error {
        self.location.get_or_insert_with(|| span.to_string());
        self
    }

    /// A check (sketch search, validation) that did not hold: exit code 1.
    pub fn check_failed(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::CheckFailed,
            location: None,
            message: message.into(),
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::BadInput => 2,
            ErrorKind::CheckFailed => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: error: {}", self.message),
            None => write!(f, "error: {}", self.message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Reads a file into a [`Source`], or fails with a located error.
pub fn read_source(path: &std::path::Path) -> Result<Arc<Source>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(Source::new(path.display().to_string(), text))
}

/// Writes `contents` to `path` atomically (temporary file, then rename).
pub fn write_atomically(path: &std::path::Path, contents: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}
