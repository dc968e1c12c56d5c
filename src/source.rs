//! Named sources and locations in them: a file's text or the command line ([`Source`]), byte
//! ranges that print as `file:line:column` with the line and carets under it ([`Span`]), the
//! command line as a source ([`command_line`], [`argument_span`]), and the one lexer of the
//! line-oriented formats (guides, sweeps, cost weights, hostfiles: [`word_lines`]).

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
