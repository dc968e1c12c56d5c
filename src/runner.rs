//! Running `.egg` programs: egglog, plus sketchlog's commands.
//!
//! A program written for egglog's own command-line tool runs here with the same printed
//! output and the same success or failure. sketchlog's commands are registered with
//! [`EGraph::add_command`]; the Rise schema is added the first time one of them needs it,
//! so plain egglog programs see an untouched e-graph.
//!
//! | command | effect |
//! |---|---|
//! | `(rise-load $name "file.rise" "def")` | elaborate a definition, add it (with all types), bind `$name` |
//! | `(rise-extract e)` | print the smallest term of `e`'s e-class as named Rise |
//! | `(sketch-check "P.rise:NAME" "S.sketch:NAME" "R.rules:SET" ...)` | `sketchlog check`, default limits |
//! | `(guide "G.guide")` | `sketchlog guide` |

use crate::egraph::{self, encode, extract};
use crate::error::{Error, ErrorKind, Result};
use crate::guide;
use crate::rise::{self, debruijn, print, term::Term};
use egglog::ast::{Expr, Literal};
use egglog::{CommandOutput, EGraph, UserDefinedCommand};
use std::path::Path;
use std::sync::Arc;

/// Converts an egglog error from running `file` into a located sketchlog error: the
/// position comes from the error's [`egglog::ast::Span`] where the variant carries one, else
/// from the span egglog prints first; a span without a file name is in `file`.
pub fn from_egglog(e: egglog::Error, file: &str) -> Error {
    let kind = match e {
        egglog::Error::CheckError(..) | egglog::Error::ExpectFail(_) => ErrorKind::CheckFailed,
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
fn span_location(span: &egglog::ast::Span, file: &str) -> Option<String> {
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
/// error without a location is located at the command's first argument.
fn to_egglog(mut e: Error, args: &[Expr]) -> egglog::Error {
    if e.location.is_none() {
        e.location = args
            .first()
            .and_then(|a| span_location(&a.span(), "<input>"));
    }
    let tag = match e.kind {
        ErrorKind::CheckFailed => "sketchlog-check",
        ErrorKind::BadInput => "sketchlog",
        ErrorKind::Internal => "sketchlog-internal",
    };
    egglog::Error::BackendError(format!("{tag}: {e}"))
}

fn string_arg(args: &[Expr], i: usize, cmd: &str) -> std::result::Result<String, egglog::Error> {
    match args.get(i) {
        Some(Expr::Lit(_, Literal::String(s))) => Ok(s.clone()),
        Some(other) => Err(to_egglog(
            Error::bad_input(format!("`{cmd}` expects a string as argument {}", i + 1)),
            std::slice::from_ref(other),
        )),
        None => Err(to_egglog(
            Error::bad_input(format!("`{cmd}` expects at least {} arguments", i + 1)),
            args,
        )),
    }
}

/// Adds the Rise schema unless the e-graph already has it.
fn ensure_schema(eg: &mut EGraph) -> Result<()> {
    if eg.get_sort_by_name("Expr").is_none() {
        egraph::add_schema(eg)?;
    }
    Ok(())
}

/// Prints a term as an egglog expression over the schema's constructors.
pub fn to_sexpr(t: &Term) -> String {
    use crate::rise::term::Node;
    let ty = type_sexpr(&t.ty);
    match &t.node {
        Node::Var(i) => format!("(Var {i} {ty})"),
        Node::Prim(p) => format!("(Prim \"{}\" {ty})", p.name()),
        Node::F32(x) => format!("(F32 {:?} {ty})", x.0 as f64),
        Node::Int(i) => format!("(Int {i} {ty})"),
        Node::App(f, x) => format!("(App {} {} {ty})", to_sexpr(f), to_sexpr(x)),
        Node::Lam(b) => format!("(Lam {} {ty})", to_sexpr(b)),
        Node::NatLam(b) => format!("(NatLam {} {ty})", to_sexpr(b)),
        Node::NatApp(f, n) => format!("(NatApp {} {} {ty})", to_sexpr(f), nat_sexpr(n)),
    }
}

/// Prints a type as an egglog expression.
pub fn type_sexpr(t: &crate::rise::types::Type) -> String {
    encode::type_sexpr_with(t, &mut |n| Ok(nat_sexpr(n)), &mut || "(TMeta)".into())
        .expect("printing sizes does not fail")
}

fn nat_sexpr(n: &crate::rise::nat::Nat) -> String {
    encode::nat_term(n).map_or_else(|| "(NNum 0 1)".into(), |t| t.sexpr())
}

struct RiseLoad;

impl UserDefinedCommand for RiseLoad {
    fn update(
        &self,
        eg: &mut EGraph,
        args: &[Expr],
    ) -> std::result::Result<Vec<CommandOutput>, egglog::Error> {
        let name = match args.first() {
            Some(Expr::Var(_, v)) => v.clone(),
            _ => {
                return Err(to_egglog(
                    Error::bad_input("usage: (rise-load $name \"file.rise\" \"definition\")"),
                    args,
                ))
            }
        };
        let file = string_arg(args, 1, "rise-load")?;
        let def = string_arg(args, 2, "rise-load")?;
        let term = rise::load_def(Path::new(&file), &def).map_err(|e| to_egglog(e, args))?;
        ensure_schema(eg).map_err(|e| to_egglog(e, args))?;
        encode::load_term(eg, &term).map_err(|e| to_egglog(e, args))?;
        eg.parse_and_run_program(None, &format!("(let {name} {})", to_sexpr(&term)))?;
        Ok(vec![])
    }
}

struct RiseExtract;

impl UserDefinedCommand for RiseExtract {
    fn update(
        &self,
        eg: &mut EGraph,
        args: &[Expr],
    ) -> std::result::Result<Vec<CommandOutput>, egglog::Error> {
        let [e] = args else {
            return Err(to_egglog(
                Error::bad_input("usage: (rise-extract expr)"),
                args,
            ));
        };
        let (_, value) = eg.eval_expr(e)?;
        let graph = extract::ExprGraph::read(eg).map_err(|e| to_egglog(e, args))?;
        let term = extract::Extractor::new(&graph, &extract::AstSize)
            .extract(value)
            .map_err(|e| to_egglog(e, args))?;
        let named = debruijn::to_named(&term, debruijn::Annotate::Leading);
        let text = format!("{}\n", print::print_expr(&named));
        Ok(vec![CommandOutput::UserDefined(Arc::new(text))])
    }
}

fn string_args(args: &[Expr], cmd: &str) -> std::result::Result<Vec<String>, egglog::Error> {
    (0..args.len()).map(|i| string_arg(args, i, cmd)).collect()
}

/// Runs a guide and returns its step summaries; a step that does not find its sketch is a
/// failed check.
fn run_guide_text(g: &guide::Guide) -> Result<String> {
    let mut text = String::new();
    let reports = guide::run(
        g,
        |_, _| {},
        |i, r| {
            text += &guide::report::summary(i, r);
            text.push('\n');
        },
    )?;
    guide::check_found(&reports)?;
    Ok(text)
}

/// `(sketch-check "FILE.rise:NAME" "FILE.sketch:NAME" "FILE.rules:SET" ...)`.
struct SketchCheck;

impl UserDefinedCommand for SketchCheck {
    fn update(
        &self,
        _: &mut EGraph,
        args: &[Expr],
    ) -> std::result::Result<Vec<CommandOutput>, egglog::Error> {
        let usage = "usage: (sketch-check \"FILE.rise:NAME\" \"FILE.sketch:NAME\" \"FILE.rules[:SET]\" ...)";
        let a = string_args(args, "sketch-check")?;
        let [program, sketch, rules @ ..] = a.as_slice() else {
            return Err(to_egglog(Error::bad_input(usage), args));
        };
        if rules.is_empty() {
            return Err(to_egglog(Error::bad_input(usage), args));
        }
        let g = guide::Guide::check(program, sketch, rules, guide::Step::defaults(), &|_| None)
            .map_err(|e| to_egglog(e, args))?;
        let text = run_guide_text(&g).map_err(|e| to_egglog(e, args))?;
        Ok(vec![CommandOutput::UserDefined(Arc::new(text))])
    }
}

/// `(guide "FILE.guide")`.
struct RunGuide;

impl UserDefinedCommand for RunGuide {
    fn update(
        &self,
        _: &mut EGraph,
        args: &[Expr],
    ) -> std::result::Result<Vec<CommandOutput>, egglog::Error> {
        let a = string_args(args, "guide")?;
        let [file] = a.as_slice() else {
            return Err(to_egglog(
                Error::bad_input("usage: (guide \"FILE.guide\")"),
                args,
            ));
        };
        let g = guide::parse::load_guide(Path::new(file)).map_err(|e| to_egglog(e, args))?;
        let text = run_guide_text(&g).map_err(|e| to_egglog(e, args))?;
        Ok(vec![CommandOutput::UserDefined(Arc::new(text))])
    }
}

/// An e-graph with sketchlog's commands registered (and no schema yet).
pub fn sketchlog_egraph() -> EGraph {
    let mut eg = EGraph::default();
    eg.add_command("rise-load".into(), Arc::new(RiseLoad))
        .expect("fresh e-graph");
    eg.add_command("rise-extract".into(), Arc::new(RiseExtract))
        .expect("fresh e-graph");
    eg.add_command("sketch-check".into(), Arc::new(SketchCheck))
        .expect("fresh e-graph");
    eg.add_command("guide".into(), Arc::new(RunGuide))
        .expect("fresh e-graph");
    eg
}

/// Runs `.egg` files in one e-graph, like egglog's CLI: each file's outputs are printed
/// when it succeeds; the first failure stops the run.
pub fn run_files(
    files: &[std::path::PathBuf],
    fact_directory: Option<&Path>,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let mut eg = sketchlog_egraph();
    eg.fact_directory = fact_directory.map(Path::to_path_buf);
    for f in files {
        let src = crate::error::read_source(f)?;
        crate::limits::check_egg_nesting(&src)?;
        let outputs = eg
            .parse_and_run_program(Some(src.name.clone()), &src.text)
            .map_err(|e| from_egglog(e, &src.name))?;
        for o in outputs {
            write!(out, "{o}").map_err(|e| Error::bad_input(format!("writing output: {e}")))?;
        }
    }
    Ok(())
}
