//! Limits on input, checked where the input is read: how deeply programs may nest, and the
//! ranges of numbers (times, sizes, caps, weights, counts).
//!
//! Every recursive pass (parsers, inference, printing, De Bruijn conversion, the
//! interpreter, encoding, extraction, sketch compilation, code generation) runs on the CLI's
//! large stack ([`STACK_BYTES`]), sized for these limits. Input
//! past them is a located error (exit code 2), never a stack overflow.

use crate::error::{Error, Result};
use crate::source::Span;
use std::time::Duration;

/// The stack a command runs on (on the main thread). Recursive passes over terms and egglog's
/// own parser and type checker recurse once per nesting level; with this stack they handle
/// the nesting limits below in debug builds too, and any `.egg` program egglog's own binary
/// (8 MB main-thread stack) handles. It is address space reserved, not memory used: pages
/// are touched only as deep as a program nests.
pub const STACK_BYTES: usize = 512 << 20;

/// How deeply a Rise expression, type, size, rule or sketch may nest: parentheses, `fun`,
/// `let` and application chains, array dimensions, and the elaborated term after
/// definitions are inlined. Real programs stay below 50.
pub const MAX_NESTING: usize = 1_000;

/// The most elements `makeArray<k>` takes (its type has `k` arrows).
pub const MAX_MAKE_ARRAY: i64 = 1_024;

/// The largest value of a rule's size parameter ([`crate::rules::params`]).
pub const MAX_PARAM: i64 = 1 << 20;

/// The highest degree of a size expression (`n*n*n` has degree 3) and its most terms once
/// multiplied out: products past them are refused where they are written, so that sizes
/// stay cheap to normalise. Real programs stay below degree 5.
pub const MAX_NAT_DEGREE: usize = 100;
pub const MAX_NAT_TERMS: usize = 1_000;

/// How many nodes a sketch may have once its abstractions are expanded (an abstraction that
/// calls another twice doubles it at every step). Real sketches have under a thousand.
pub const MAX_SKETCH_NODES: usize = 100_000;

/// How many nodes an elaborated program may have, its definitions inlined (each use of a
/// definition copies it, so a chain of definitions can double a program at every step).
pub const MAX_TERM_NODES: usize = 1_000_000;

/// How deeply the s-expressions of a `.egg` program may nest. egglog's own binary, on its
/// 8 MB main-thread stack, overflows at about 170,000 levels of `(let x (f (f ...)))` and
/// earlier for `(+ 1 (+ 1 ...))`; a release build of sketchlog handles everything up to this
/// limit on its larger stack, and rejects deeper programs before egglog sees them. Debug
/// builds (egglog unoptimised, about 8 KB of stack per level) stop at 50,000.
pub const MAX_EGG_NESTING: usize = if cfg!(debug_assertions) {
    50_000
} else {
    200_000
};

/// How deeply a `.egg` program run under egglog's term encoding (`--term-encoding`,
/// `--proofs`) may nest. egglog 3.0.0 checks whether each command can be encoded by walking,
/// at every subexpression, that subexpression's whole subtree
/// (`command_supports_proof_encoding`), so its time grows with the square of the nesting:
/// 3 s at 20,000 levels here, several minutes at the general limit.
pub const MAX_TERM_ENCODING_NESTING: usize = 10_000;

/// The longest time limit accepted: about 31 years, far beyond any search.
const MAX_SECONDS: f64 = 1e9;

/// The error for input nested past [`MAX_NESTING`].
pub fn too_deep(span: &Span, what: &str) -> Error {
    Error::at(
        span,
        format!("{what} nests more than {MAX_NESTING} levels deep (sketchlog's limit)"),
    )
}

/// Parses a time in seconds: a finite number, at least 0 and at most about 31 years.
pub fn parse_seconds(text: &str) -> std::result::Result<Duration, String> {
    let s: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !s.is_finite() || !(0.0..=MAX_SECONDS).contains(&s) {
        return Err(format!(
            "`{text}` seconds is out of range (0 to {MAX_SECONDS:e})"
        ));
    }
    Ok(Duration::from_secs_f64(s))
}

/// Parses a whole number of at least `min`.
pub fn parse_at_least<T>(text: &str, min: T) -> std::result::Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let n: T = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number"))?;
    if n < min {
        return Err(format!("`{text}` is below the minimum, {min}"));
    }
    Ok(n)
}

/// A clap value parser for the term-size filter's bound: from 1 to [`MAX_TERM_NODES`] (a
/// bound past the largest term sketchlog reads filters nothing, and the filter keeps a
/// bucket per size up to it).
pub fn ast_size(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 1usize)?, MAX_TERM_NODES, text)
}

/// The most threads a command takes (OpenMP's for `bench-c`, egglog's for `run -j`): far
/// past any machine's cores, and short of what the operating system refuses to start.
pub const MAX_THREADS: usize = 1024;

/// The most timed runs or rounds `bench-c` takes (each allocates its times, and each run
/// takes at least the program's time).
pub const MAX_RUNS: usize = 100_000;

/// A clap value parser for a thread count: from 1 to [`MAX_THREADS`].
pub fn threads(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 1usize)?, MAX_THREADS, text)
}

/// A clap value parser for egglog's thread count: 0 (every core) to [`MAX_THREADS`].
pub fn threads_or_all(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 0usize)?, MAX_THREADS, text)
}

/// The most job workers one process runs per core of its host: each runs one child process
/// at a time, and more than a few per core only queue for the cores.
pub const WORKERS_PER_CORE: usize = 4;

/// The most job workers one process runs, whatever its host (timely starts a thread for
/// each, and each reserves a child's memory cap).
pub const MAX_WORKERS: usize = 256;

/// A clap value parser for `--workers`: from 1 to [`WORKERS_PER_CORE`] times this host's
/// cores, and at most [`MAX_WORKERS`].
pub fn workers(text: &str) -> std::result::Result<usize, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = (cores * WORKERS_PER_CORE).min(MAX_WORKERS);
    at_most(parse_at_least(text, 1usize)?, max, text)
        .map_err(|e| format!("{e} ({WORKERS_PER_CORE} per core on this host, {cores} cores)"))
}

/// A clap value parser for a count of runs or rounds: from 1 to [`MAX_RUNS`].
pub fn runs(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 1usize)?, MAX_RUNS, text)
}

fn at_most<T: PartialOrd + std::fmt::Display>(
    n: T,
    max: T,
    text: &str,
) -> std::result::Result<T, String> {
    match n <= max {
        true => Ok(n),
        false => Err(format!("`{text}` is above the maximum, {max}")),
    }
}

/// A clap value parser for a size of at least 1.
/// One of a program's sizes on the command line: `N`, or `NAME=N` for the size the program
/// names `NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeArg {
    pub name: Option<String>,
    pub value: i64,
}

/// A [`SizeArg`]: its value a [`positive_size`].
pub fn size_arg(text: &str) -> std::result::Result<SizeArg, String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
            Ok(SizeArg {
                name: Some(name.to_string()),
                value: positive_size(value)?,
            })
        }
        Some(_) => Err(format!("`{text}` names no size: write NAME=N")),
        None => Ok(SizeArg {
            name: None,
            value: positive_size(text)?,
        }),
    }
}

/// The program's sizes, outermost first, from `given`: all by position, or all by name
/// among `names` (the program's size names, outermost first), every one given once.
pub fn resolve_sizes(given: &[SizeArg], names: &[String]) -> std::result::Result<Vec<i64>, String> {
    if given.iter().all(|s| s.name.is_none()) {
        return Ok(given.iter().map(|s| s.value).collect());
    }
    if given.iter().any(|s| s.name.is_none()) {
        return Err("give every size by name (`h=2560,w=1536`) or none".into());
    }
    let listing = || crate::error::listing(&names.iter().map(String::as_str).collect::<Vec<_>>());
    if let Some(s) = given
        .iter()
        .find(|s| !names.contains(s.name.as_ref().unwrap()))
    {
        let name = s.name.as_deref().unwrap_or_default();
        return Err(format!(
            "the program has no size `{name}` (it has: {})",
            listing()
        ));
    }
    names
        .iter()
        .map(|n| {
            let mut of = given.iter().filter(|s| s.name.as_ref() == Some(n));
            match (of.next(), of.next()) {
                (Some(s), None) => Ok(s.value),
                (None, _) => Err(format!(
                    "no value for the size `{n}` (the program has: {})",
                    listing()
                )),
                (Some(_), Some(_)) => Err(format!("the size `{n}` is given twice")),
            }
        })
        .collect()
}

pub fn positive_size(text: &str) -> std::result::Result<i64, String> {
    let n = parse_at_least(text, 1i64)?;
    if n > MAX_BUFFER_FLOATS {
        return Err(format!(
            "`{text}` is above the maximum, {MAX_BUFFER_FLOATS} (the largest buffer, in floats)"
        ));
    }
    Ok(n)
}

/// The most floats one array of generated C may hold (16 GiB): its inputs, output and
/// buffers are refused past it, before anything is allocated.
pub const MAX_BUFFER_FLOATS: i64 = 1 << 32;

/// A clap value parser for a relative error tolerance: a finite number from 0 to 1.
pub fn tolerance(text: &str) -> std::result::Result<f64, String> {
    let x: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("`{text}` is out of range (0 to 1)"));
    }
    Ok(x)
}

/// The largest memory cap, in MB (a petabyte).
pub const MAX_MEMORY_MB: u64 = 1 << 30;

/// A clap value parser for a memory cap in MB: from 1 to [`MAX_MEMORY_MB`].
pub fn memory_mb(text: &str) -> std::result::Result<u64, String> {
    let mb = parse_at_least(text, 1u64)?;
    match mb <= MAX_MEMORY_MB {
        true => Ok(mb),
        false => Err(format!("`{text}` is above the maximum, {MAX_MEMORY_MB}")),
    }
}

/// The most iterations a search takes.
pub const MAX_ITERATIONS: usize = 1_000_000;

/// The largest e-node cap: ten billion, past any machine's memory (an e-node takes about 100
/// bytes).
pub const MAX_ENODES: usize = 10_000_000_000;

/// The most processes of a cluster (a hostfile's lines).
pub const MAX_PROCESSES: usize = 65_536;

/// The most of anything serialized per function (`run --max-functions`, ...).
pub const MAX_SERIALIZED: usize = 1_000_000;

/// A clap value parser for an iteration count: from 0 to [`MAX_ITERATIONS`].
pub fn iterations(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 0usize)?, MAX_ITERATIONS, text)
}

/// A clap value parser for a strategy's rewrite steps: from 1 to [`MAX_STEPS`].
pub fn steps(text: &str) -> std::result::Result<u64, String> {
    at_most(parse_at_least(text, 1u64)?, MAX_STEPS, text)
}

/// The most rewrite steps a strategy may be given.
pub const MAX_STEPS: u64 = 1_000_000_000_000;

/// A clap value parser for an e-node cap: from 1 to [`MAX_ENODES`].
pub fn enodes(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 1usize)?, MAX_ENODES, text)
}

/// A clap value parser for an array nesting depth: from 0 to [`MAX_NESTING`].
pub fn depth(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 0usize)?, MAX_NESTING, text)
}

/// A clap value parser for a process index: from 0 to [`MAX_PROCESSES`] - 1.
pub fn process(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 0usize)?, MAX_PROCESSES - 1, text)
}

/// A clap value parser for how much of an e-graph is serialized: from 0 to
/// [`MAX_SERIALIZED`].
pub fn serialized(text: &str) -> std::result::Result<usize, String> {
    at_most(parse_at_least(text, 0usize)?, MAX_SERIALIZED, text)
}

/// A clap value parser for a whole number of seconds: from 0 to about 31 years.
pub fn whole_seconds(text: &str) -> std::result::Result<u64, String> {
    parse_seconds(text)?;
    text.parse()
        .map_err(|_| format!("`{text}` is not a whole number of seconds"))
}

/// The brackets and backslashes of a `.egg` program outside strings and comments (skipped as
/// egglog's lexer skips them), as (byte offset, byte); the opening quote of a string left
/// open at the end comes as `"`.
fn egg_marks(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let at = i;
            i += 1;
            match bytes[at] {
                b'"' => {
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    if i >= bytes.len() {
                        return Some((at, b'"'));
                    }
                    i += 1;
                }
                b';' => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                b @ (b'(' | b'[' | b')' | b']' | b'\\') => return Some((at, b)),
                _ => {}
            }
        }
        None
    })
}

/// The nesting depth of the s-expressions of a `.egg` program; an error at the first
/// parenthesis past `max` levels ([`MAX_EGG_NESTING`], or [`MAX_TERM_ENCODING_NESTING`]
/// under egglog's term encoding).
pub fn check_egg_nesting(src: &std::sync::Arc<crate::source::Source>, max: usize) -> Result<()> {
    let mut depth = 0usize;
    for (i, b) in egg_marks(&src.text) {
        match b {
            b'(' | b'[' => {
                depth += 1;
                if depth > max {
                    return Err(Error::at(
                        &Span::new(src, i, i + 1),
                        format!(
                            "the program nests more than {max} levels deep (sketchlog's limit)"
                        ),
                    ));
                }
            }
            b')' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Whether a REPL's input so far is whole commands: no string left open and no bracket
/// left unclosed (a surplus closing bracket counts as whole, for egglog to report).
pub fn egg_input_complete(text: &str) -> bool {
    let mut depth = 0i64;
    for (_, b) in egg_marks(text) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'"' => return false,
            _ => {}
        }
    }
    depth <= 0
}

/// The byte offset of the first backslash of a `.egg` program outside its strings and
/// comments (in a name: egglog reads `p\` as a name, but cannot read such a name back from the
/// text its term encoding prints).
pub fn egg_backslash(text: &str) -> Option<usize> {
    egg_marks(text).find(|&(_, b)| b == b'\\').map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_must_be_finite_and_in_range() {
        for bad in ["-1", "inf", "NaN", "1e400", "99999999999999999999", "x", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_seconds("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_seconds("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn repl_input_is_complete_when_brackets_close_outside_strings_and_comments() {
        assert!(egg_input_complete("(check (= 1 1))\n"));
        assert!(egg_input_complete(""));
        assert!(!egg_input_complete("(datatype Math\n  (Num i64)"));
        assert!(!egg_input_complete("(extract \"(\n"));
        assert!(egg_input_complete("(extract \"(\\\")\")"));
        assert!(!egg_input_complete("(extract 1 ; )\n"));
        assert!(egg_input_complete("(extract 1))"));
    }

    #[test]
    fn counts_have_a_minimum_and_a_maximum() {
        assert!(enodes("0").is_err());
        assert!(enodes("-3").is_err());
        assert_eq!(enodes("3"), Ok(3));
        assert_eq!(enodes(&MAX_ENODES.to_string()), Ok(MAX_ENODES));
        assert!(enodes(&(MAX_ENODES + 1).to_string()).is_err());
        assert!(iterations(&(MAX_ITERATIONS + 1).to_string()).is_err());
        assert!(depth("1001").is_err());
        assert!(memory_mb(&(MAX_MEMORY_MB + 1).to_string()).is_err());
        assert_eq!(whole_seconds("7"), Ok(7));
        assert!(whole_seconds("1e10").is_err() && whole_seconds("0.5").is_err());
        assert!(serialized("1000001").is_err());
        assert!(process("65536").is_err());
    }
}
