//! User-facing errors (named sources and locations are [`crate::source`], reading and writing
//! files [`crate::files`]).
//!
//! Every error caused by bad input carries a [`Span`] into a named source so that it can be
//! reported as `file:line:column: message`; a file that cannot be written is reported as
//! `file: error: ...`, and one that cannot be read is moved by [`Error::or_at`] to where it is
//! named. [`Error::exit_code`] maps error kinds to the
//! process exit codes the CLI promises: 2 for bad input, 1 for a failed check or a search
//! stopped by a limit, 3 for an internal error.

use crate::source::Span;
use std::fmt;

/// What went wrong, for choosing the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed or ill-typed input, a missing file, an unknown name.
    BadInput,
    /// A `check` that did not hold.
    CheckFailed,
    /// A search stopped by a limit (named: `time-limit`, `node-limit`, ...) before it found
    /// what it looked for.
    Limit(&'static str),
    /// A bug in sketchlog (or egglog): not the input's fault.
    Internal,
}

/// A user-facing error: a message, with a location when there is one.
#[derive(Clone, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    /// `file:line:column` of the offending input, when known.
    pub location: Option<String>,
    pub message: String,
    /// The offending source line with carets under the input ([`Span::snippet`]), shown by
    /// the alternate form of `Display`.
    pub snippet: Option<String>,
    /// A file that could not be read, named only by its path: [`Error::or_at`] moves it to
    /// the line (or argument) that names the file.
    pub unread: bool,
}

impl Error {
    pub fn at(span: &Span, message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: Some(span.to_string()),
            message: message.into(),
            snippet: Some(span.snippet()),
            unread: false,
        }
    }

    pub fn bad_input(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: None,
            message: message.into(),
            snippet: None,
            unread: false,
        }
    }

    /// Reading a file failed: reported with the file's name and no position.
    pub fn io(path: &std::path::Path, err: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: Some(path.display().to_string()),
            message: format!("cannot read: {err}"),
            snippet: None,
            unread: true,
        }
    }

    /// Writing `path` failed (named as the user gave it, not a temporary file).
    pub fn write(path: &std::path::Path, err: impl fmt::Display) -> Error {
        Error {
            kind: ErrorKind::BadInput,
            location: Some(path.display().to_string()),
            message: format!("cannot write: {err}"),
            snippet: None,
            unread: false,
        }
    }

    /// A bug, not bad input: exit code 3.
    pub fn internal(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Internal,
            location: None,
            message: format!("internal: {}", message.into()),
            snippet: None,
            unread: false,
        }
    }

    /// The same error, located at `span` unless it already has a location; a file that
    /// could not be read is reported where `span` names it.
    pub fn or_at(self, span: &Span) -> Error {
        let mut e = self.unlocated_if_unread();
        if e.location.is_none() {
            e.location = Some(span.to_string());
            e.snippet = Some(span.snippet());
        }
        e
    }

    /// A file that could not be read, with its name moved from the location into the
    /// message, for the caller to locate where the file is named; any other error as it is.
    pub fn unlocated_if_unread(mut self) -> Error {
        if self.unread {
            let file = self.location.take().unwrap_or_default();
            let reason = self.message.strip_prefix("cannot read: ").unwrap_or("");
            self.message = format!("cannot read `{file}`: {reason}");
            self.unread = false;
        }
        self
    }

    /// A check (sketch search, validation) that did not hold: exit code 1.
    pub fn check_failed(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::CheckFailed,
            location: None,
            message: message.into(),
            snippet: None,
            unread: false,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::BadInput => 2,
            ErrorKind::CheckFailed | ErrorKind::Limit(_) => 1,
            ErrorKind::Internal => 3,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: error: {}", self.message)?,
            None => write!(f, "error: {}", self.message)?,
        }
        // The alternate form (`{:#}`, what the command line prints) adds the source line; the
        // plain form stays one line (for table rows and summaries).
        match &self.snippet {
            Some(snippet) if f.alternate() => write!(f, "\n{snippet}"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names for an error message: `a, b, c`, or `none`.
pub fn listing(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The message of a caught panic (a `String` or `&str` payload), or nothing.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    #[test]
    fn a_located_error_shows_its_line_with_carets_under_the_input() {
        let src = Source::new("f.rise", "def a = 1\ndef x = map f +\n");
        let plus = src.text.find('+').unwrap();
        let e = Error::at(&Span::new(&src, plus, plus + 1), "unexpected `+`");
        assert_eq!(e.to_string(), "f.rise:2:15: error: unexpected `+`");
        let shown = format!("{e:#}");
        assert_eq!(
            shown,
            "f.rise:2:15: error: unexpected `+`\n  def x = map f +\n                ^"
        );
        let long = format!("{} oops {}", "a".repeat(200), "b".repeat(200));
        let src = Source::new("g", long.clone());
        let at = long.find("oops").unwrap();
        let snippet = Span::new(&src, at, at + 4).snippet();
        let (line, carets) = snippet.split_once('\n').unwrap();
        assert!(line.len() < 150 && line.starts_with("  ...") && line.ends_with("..."));
        assert_eq!(&line[carets.find('^').unwrap()..][..4], "oops");
    }
}
