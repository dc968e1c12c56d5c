//! sketchlog's commands inside egglog programs, registered with [`EGraph::add_command`].
//! The Rise schema is added the first time one of them needs it, so plain egglog programs
//! see an untouched e-graph.
//!
//! | command | effect |
//! |---|---|
//! | `(rise-load $name "file.rise" "def")` | elaborate a definition, add it (with all types), bind `$name` |
//! | `(rise-extract e)` | print the smallest term of `e`'s e-class as named Rise |
//! | `(sketch-check "P.rise:NAME" "S.sketch:NAME" "R.rules:SET" ...)` | `sketchlog check`, default limits |
//! | `(guide "G.guide")` | `sketchlog guide` |
//!
//! Relative paths are read from the directory of the `.egg` file that names them.
//!
//! egglog's term encoding (`--term-encoding`, `--proofs`, `--proof-testing`) runs no
//! user-defined command; [`super::run`] says so, and why, at the command's position.

use super::errors::to_egglog;
use crate::egraph::{self, encode, extract};
use crate::error::{Error, Result};
use crate::guide;
use crate::rise::{self, debruijn, print, term::Term};
use egglog::ast::{Expr, Literal};
use egglog::{CommandOutput, EGraph, UserDefinedCommand};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// Prints a term as an egglog expression over the schema's constructors.
pub fn to_sexpr(t: &Term) -> String {
    use crate::egraph::schema::{Arg, Con};
    let (con, args) = Con::of(&t.node);
    let mut args: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Child(c) => to_sexpr(c),
            Arg::Nat(n) => nat_sexpr(n),
            base => base.literal().expect("a base payload"),
        })
        .collect();
    args.push(type_sexpr(&t.ty));
    con.apply(&args)
}

/// Prints a type as an egglog expression.
pub fn type_sexpr(t: &crate::rise::types::Type) -> String {
    encode::type_sexpr_with(t, &mut |n| Ok(nat_sexpr(n)), &mut || "(TMeta)".into())
        .expect("printing sizes does not fail")
}

fn nat_sexpr(n: &crate::rise::nat::Nat) -> String {
    encode::nat_term(n).map_or_else(|| "(NNum 0 1)".into(), |t| t.sexpr())
}

type CommandResult = std::result::Result<Vec<CommandOutput>, egglog::Error>;

/// What one of sketchlog's commands does.
type Run = fn(&mut EGraph, &[Expr]) -> CommandResult;

/// One of sketchlog's commands, as egglog calls it.
struct Command(Run);

impl UserDefinedCommand for Command {
    fn update(&self, eg: &mut EGraph, args: &[Expr]) -> CommandResult {
        (self.0)(eg, args)
    }
}

/// The names of sketchlog's commands, with what each does.
const COMMANDS: [(&str, Run); 4] = [
    ("rise-load", rise_load),
    ("rise-extract", rise_extract),
    ("sketch-check", sketch_check),
    ("guide", run_guide),
];

/// Whether `name` is one of sketchlog's commands.
pub fn is_sketchlog_command(name: &str) -> bool {
    COMMANDS.iter().any(|(n, _)| *n == name)
}

/// The directory relative paths in a command are read from: that of the `.egg` file the
/// command is written in (the working directory in the REPL), as a guide's paths are read
/// from the guide's directory.
fn base_dir(args: &[Expr]) -> PathBuf {
    let Some(egglog::ast::Span::Egglog(span)) = args.first().map(|a| a.span()) else {
        return PathBuf::new();
    };
    let file = span.file.name.as_deref().map(Path::new);
    file.and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A file argument (`FILE`, or `FILE:NAME`) read from `base` when it is relative.
fn in_dir(base: &Path, spec: &str) -> String {
    if Path::new(spec).is_absolute() {
        return spec.to_string();
    }
    base.join(spec).to_string_lossy().into_owned()
}

fn text_output(text: String) -> CommandResult {
    Ok(vec![CommandOutput::UserDefined(Arc::new(text))])
}

/// `(rise-load $name "file.rise" "definition")`.
fn rise_load(eg: &mut EGraph, args: &[Expr]) -> CommandResult {
    let Some(Expr::Var(_, name)) = args.first() else {
        return Err(to_egglog(
            Error::bad_input("usage: (rise-load $name \"file.rise\" \"definition\")"),
            args,
        ));
    };
    let file = in_dir(&base_dir(args), &string_arg(args, 1, "rise-load")?);
    let def = string_arg(args, 2, "rise-load")?;
    let term = rise::load_def(Path::new(&file), &def).map_err(|e| to_egglog(e, args))?;
    egraph::ensure_schema(eg).map_err(|e| to_egglog(e, args))?;
    encode::load_term(eg, &term).map_err(|e| to_egglog(e, args))?;
    eg.parse_and_run_program(None, &format!("(let {name} {})", to_sexpr(&term)))?;
    Ok(vec![])
}

/// `(rise-extract expr)`.
fn rise_extract(eg: &mut EGraph, args: &[Expr]) -> CommandResult {
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
    text_output(format!("{}\n", print::print_expr(&named)))
}

fn string_args(args: &[Expr], cmd: &str) -> std::result::Result<Vec<String>, egglog::Error> {
    (0..args.len()).map(|i| string_arg(args, i, cmd)).collect()
}

/// Runs a guide and returns its step summaries; a step that does not find its sketch is a
/// failed check. Its limits hold between iterations (the command line's `run` of files also
/// stops a search inside an iteration, by ending the process).
fn run_guide_text(g: &guide::Guide) -> Result<String> {
    let mut text = String::new();
    let reports = guide::run(
        g,
        |_, _| {},
        |i, r| {
            text += &guide::report::summary(&guide::report::step_label(g, i), r, &g.names, None);
            text.push('\n');
        },
    )?;
    guide::check_found(&reports)?;
    Ok(text)
}

/// `(sketch-check "FILE.rise:NAME" "FILE.sketch:NAME" "FILE.rules:SET" ...)`.
fn sketch_check(_: &mut EGraph, args: &[Expr]) -> CommandResult {
    let usage =
        "usage: (sketch-check \"FILE.rise:NAME\" \"FILE.sketch:NAME\" \"FILE.rules[:SET]\" ...)";
    let base = base_dir(args);
    let a: Vec<String> = (string_args(args, "sketch-check")?.iter())
        .map(|spec| in_dir(&base, spec))
        .collect();
    let [program, sketch, rules @ ..] = a.as_slice() else {
        return Err(to_egglog(Error::bad_input(usage), args));
    };
    if rules.is_empty() {
        return Err(to_egglog(Error::bad_input(usage), args));
    }
    let target = guide::Target::Sketch(sketch);
    let g = guide::Guide::check(
        program,
        target,
        (rules, &Default::default()),
        guide::Step::defaults(),
        &|_| None,
    )
    .map_err(|e| to_egglog(e, args))?;
    text_output(run_guide_text(&g).map_err(|e| to_egglog(e, args))?)
}

/// `(guide "FILE.guide")`.
fn run_guide(_: &mut EGraph, args: &[Expr]) -> CommandResult {
    let a = string_args(args, "guide")?;
    let [file] = a.as_slice() else {
        return Err(to_egglog(
            Error::bad_input("usage: (guide \"FILE.guide\")"),
            args,
        ));
    };
    let file = in_dir(&base_dir(args), file);
    let g = guide::parse::load_guide(Path::new(&file)).map_err(|e| to_egglog(e, args))?;
    text_output(run_guide_text(&g).map_err(|e| to_egglog(e, args))?)
}

/// An e-graph with sketchlog's commands registered (and no schema yet).
pub fn sketchlog_egraph() -> EGraph {
    with_commands(EGraph::default())
}

/// Registers sketchlog's commands in `eg`.
pub fn with_commands(mut eg: EGraph) -> EGraph {
    for (name, run) in COMMANDS {
        eg.add_command(name.into(), Arc::new(Command(run)))
            .expect("a fresh e-graph has none of sketchlog's commands");
    }
    eg
}
