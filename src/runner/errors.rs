//! Errors crossing the egglog boundary: egglog's errors become located sketchlog errors
//! ([`from_egglog`]), and sketchlog's errors travel back through egglog's command interface
//! with their kind intact ([`to_egglog`]).

use crate::error::{Error, ErrorKind};
use egglog::ast::Expr;

/// Converts an egglog error from running `file` into a located sketchlog error: the
/// position comes from the error's [`egglog::ast::Span`] where the variant carries one, else
/// from the span egglog prints first; a span without a file name is in `file`. A failed
/// `check` is a failed check (exit 1); egglog's refusal of how sketchlog called its API is
/// internal (exit 3); every other error is the input's (exit 2).
pub fn from_egglog(e: egglog::Error, file: &str) -> Error {
    let kind = match e {
        egglog::Error::CheckError(..) | egglog::Error::ExpectFail(_) => ErrorKind::CheckFailed,
        egglog::Error::ApiError(_) | egglog::Error::ProofsIncompatibleApi { .. } => {
            ErrorKind::Internal
        }
        _ => ErrorKind::BadInput,
    };
    let span_location = error_span(&e).and_then(|s| span_location(s, file));
    let message = e.to_string();
    // Our own commands report errors that already carry `file:line:col: error:`.
    let (kind, ours) = match message.strip_prefix("sketchlog-check: ") {
        Some(rest) => (ErrorKind::CheckFailed, Some(rest)),
        None => match message.strip_prefix("sketchlog-internal: ") {
            Some(rest) => (ErrorKind::Internal, Some(rest)),
            None => (kind, message.strip_prefix("sketchlog: ")),
        },
    };
    if let Some(rest) = ours {
        let (location, message) = match rest.split_once(": error: ") {
            Some((loc, msg)) => (Some(loc.to_string()), msg.to_string()),
            None => (
                None,
                rest.strip_prefix("error: ").unwrap_or(rest).to_string(),
            ),
        };
        return Error {
            kind,
            location: location.or_else(|| Some(file.to_string())),
            message,
            snippet: None,
            unread: false,
        };
    }
    // egglog prints spans as lines `In L:C-C of FILE: quoted source`; the location says it.
    let mut location = span_location;
    let mut rest = vec![];
    for line in message.lines() {
        match printed_span(line, file) {
            Some(loc) => {
                location.get_or_insert(loc);
            }
            None => rest.push(line.trim()),
        }
    }
    Error {
        kind,
        location: Some(location.unwrap_or_else(|| file.to_string())),
        message: rest.join(" ").trim().to_string(),
        snippet: None,
        unread: false,
    }
}

/// The span an egglog error carries directly, for the variants that have one.
fn error_span(e: &egglog::Error) -> Option<&egglog::ast::Span> {
    use egglog::Error as E;
    match e {
        E::ParseError(p) => Some(&p.0),
        E::CheckError(_, s)
        | E::NoSuchRuleset(_, s)
        | E::CombinedRulesetError(_, s)
        | E::Pop(s)
        | E::ExpectFail(s)
        | E::IoError(_, _, s)
        | E::SubsumeMergeError(_, s)
        | E::Shadowing(_, s, _)
        | E::CommandAlreadyExists(_, s)
        | E::RuleAlreadyExists(_, s)
        | E::UnsupportedInputType(_, s)
        | E::DesugarError(s, _) => Some(s),
        E::ProofError { span, .. } => Some(span),
        _ => None,
    }
}

/// `FILE:LINE:COLUMN` of an egglog span (in `file` when the span names none).
pub(super) fn span_location(span: &egglog::ast::Span, file: &str) -> Option<String> {
    let egglog::ast::Span::Egglog(s) = span else {
        return None;
    };
    let (line, col) = s.file.get_location(s.i);
    Some(format!(
        "{}:{line}:{col}",
        s.file.name.as_deref().unwrap_or(file)
    ))
}

/// Reads a span line egglog printed (`In 3:17-19 of F: ...` or `In 3:17-4:2: ...`).
fn printed_span(line: &str, file: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("In ")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '-'))
        .unwrap_or(rest.len());
    let (range, rest) = rest.split_at(end);
    let rest = rest.trim_start();
    let mut numbers = range.split(['-', ':']);
    let (l, c) = (numbers.next()?, numbers.next()?);
    let digits = |x: &str| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit());
    if !digits(l) || !digits(c) {
        return None;
    }
    let name = rest
        .strip_prefix("of ")
        .and_then(|r| r.split(": ").next())
        .unwrap_or(file);
    Some(format!("{name}:{l}:{c}"))
}

/// Wraps a sketchlog error for returning from an egglog command (its kind survives); an
/// error without a location, or a file that could not be read, is located at the command's
/// first argument.
pub(super) fn to_egglog(e: Error, args: &[Expr]) -> egglog::Error {
    let mut e = e.unlocated_if_unread();
    if e.location.is_none() {
        e.location = args
            .first()
            .and_then(|a| span_location(&a.span(), "<stdin>"));
    }
    let tag = match e.kind {
        ErrorKind::CheckFailed | ErrorKind::Limit(_) => "sketchlog-check",
        ErrorKind::BadInput => "sketchlog",
        ErrorKind::Internal => "sketchlog-internal",
    };
    egglog::Error::BackendError(format!("{tag}: {e}"))
}
