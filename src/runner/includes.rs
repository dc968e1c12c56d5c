//! The include graph of a `.egg` program, checked before egglog runs it: egglog expands
//! `(include "FILE")` by running the file in place, so a file that includes itself, directly
//! or through others, recursed until the stack overflowed. A cycle is a located error at the
//! include that closes it.

use crate::error::{Error, Result};
use crate::files::read_source;
use crate::source::{Source, Span};
use std::path::PathBuf;
use std::sync::Arc;

/// The files `src` includes: each path as written (egglog reads it relative to the working
/// directory) with the span of its string. Comments (`;` to the end of a line) and other
/// strings are skipped.
fn includes(src: &Arc<Source>) -> Vec<(String, Span)> {
    let text = src.text.as_bytes();
    let (mut found, mut i) = (vec![], 0);
    let mut after_include = false;
    while i < text.len() {
        match text[i] {
            b';' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(text.len());
                if after_include {
                    let path =
                        src.text[start + 1..end.saturating_sub(1).max(start + 1)].to_string();
                    found.push((path, Span::new(src, start, end)));
                }
                after_include = false;
            }
            b'(' => {
                let rest = &src.text[i + 1..];
                let word = rest.trim_start();
                after_include = word.starts_with("include")
                    && word["include".len()..].starts_with(|c: char| c.is_whitespace());
                if after_include {
                    i += rest.len() - word.len() + "include".len();
                }
            }
            c if !c.is_ascii_whitespace() => after_include = false,
            _ => {}
        }
        i += 1;
    }
    found
}

/// Checks that the includes of `src` (and theirs) form no cycle: `stack` holds the files
/// being included around it, `src` last.
pub fn check(src: &Arc<Source>) -> Result<()> {
    let own = PathBuf::from(&src.name).canonicalize().ok();
    check_within(src, &mut own.into_iter().collect())
}

fn check_within(src: &Arc<Source>, stack: &mut Vec<PathBuf>) -> Result<()> {
    for (path, span) in includes(src) {
        let Ok(canonical) = PathBuf::from(&path).canonicalize() else {
            continue; // egglog reports a file it cannot read
        };
        if stack.contains(&canonical) {
            return Err(Error::at(
                &span,
                format!("`{path}` is already being included here: an include cycle"),
            ));
        }
        if stack.len() >= crate::limits::MAX_NESTING {
            return Err(crate::limits::too_deep(&span, "the chain of includes"));
        }
        let Ok(included) = read_source(&canonical) else {
            continue;
        };
        stack.push(canonical);
        check_within(&included, stack)?;
        stack.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_are_found_outside_comments_and_other_strings() {
        let src = Source::new(
            "t.egg",
            "; (include \"no.egg\")\n(include \"a.egg\")\n(let s \"(include \\\"b.egg\\\")\")\n(  include   \"c d.egg\")",
        );
        let found: Vec<String> = includes(&src).into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, ["a.egg", "c d.egg"]);
    }
}
