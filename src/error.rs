//! Source locations and user-facing errors (reading and writing files is [`crate::files`]).
//!
//! Every error caused by bad input carries a [`Span`] into a named source so that it can be
//! reported as `file:line:column: message`; a file that cannot be written is reported as
//! `file: error: ...`, and one that cannot be read is moved by [`Error::or_at`] to where it is
//! named. [`Error::exit_code`] maps error kinds to the
//! process exit codes the CLI promises: 2 for bad input, 1 for a failed check or a search
//! stopped by a limit, 3 for an internal error.

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

    /// The line the span starts on, with carets under the span (a window of it if the line
    /// is long): what an error shows below its message.
    pub fn snippet(&self) -> String {
        const WINDOW: usize = 60;
        let text = &self.source.text;
        let start = self.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line: Vec<char> = text[line_start..line_end]
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect();
        let col = text[line_start..start].chars().count();
        let width = text[start..self.end.clamp(start, line_end)].chars().count();
        let from = col.saturating_sub(WINDOW);
        let to = line.len().min(col + width.max(1) + WINDOW);
        let (before, after) = (
            if from > 0 { "..." } else { "" },
            if to < line.len() { "..." } else { "" },
        );
        let shown: String = line[from..to.max(from)].iter().collect();
        let carets = "^".repeat(width.clamp(1, to.saturating_sub(col).max(1)));
        let indent = " ".repeat(before.len() + col - from);
        format!("  {before}{shown}{after}\n  {indent}{carets}")
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

/// The command line as a [`Source`], so that an error in an argument (an unknown name, a
/// file that does not parse as `FILE:NAME`) is located at the argument.
pub fn command_line() -> Arc<Source> {
    let args: Vec<String> = std::env::args().collect();
    Source::new("command line", args.join(" "))
}

/// The span of the first command-line argument equal to `value` (or ending in it, as in
/// `--sketch=VALUE`, or a flag `value` given as `--flag=VALUE`); the whole line when it is
/// not there.
pub fn argument_span(line: &Arc<Source>, value: &str) -> Span {
    let mut at = 0;
    for arg in line.text.split(' ') {
        if arg == value || arg.ends_with(&format!("={value}")) {
            let start = at + arg.len() - value.len();
            return Span::new(line, start, start + value.len());
        }
        if value.starts_with("--") && arg.starts_with(&format!("{value}=")) {
            return Span::new(line, at, at + value.len());
        }
        at += arg.len() + 1;
    }
    Span::new(line, 0, line.text.len())
}

/// A word of a line-oriented file (guides, sweeps, cost weights, hostfiles), with its span.
#[derive(Clone, Debug)]
pub struct Word {
    pub text: String,
    pub span: Span,
}

/// The lexer of every line-oriented format: for each line that holds words, the span of its
/// code (first word to last) and its words, each located. Text from `comment` to the end of
/// a line is a comment.
pub fn word_lines<'a>(
    src: &'a Arc<Source>,
    comment: &'a str,
) -> impl Iterator<Item = (Span, Vec<Word>)> + 'a {
    lines_at(&src.text).filter_map(move |(offset, line)| {
        let code = line.split(comment).next().unwrap_or("");
        let words: Vec<Word> = code
            .split_whitespace()
            .map(|w| {
                let start = offset + (w.as_ptr() as usize - line.as_ptr() as usize);
                Word {
                    text: w.to_string(),
                    span: Span::new(src, start, start + w.len()),
                }
            })
            .collect();
        let span = words.first()?.span.to(&words.last()?.span);
        Some((span, words))
    })
}

/// Each line of `text`, its newline kept, with the byte offset where it starts.
pub fn lines_at(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |offset, line| {
        let at = *offset;
        *offset += line.len();
        Some((at, line))
    })
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
