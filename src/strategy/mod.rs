//! Rewriting strategies over Rise terms, with the semantics of Elevate (Hagedorn et al.,
//! ICFP 2020): a strategy takes a term and either succeeds with a rewritten term or fails.
//!
//! Strategies are data ([`Expr`]): they are read from `.elevate` files ([`parse`]), printed,
//! and run by [`eval`] on one term at a time, counting every success (Elevate's rewrite
//! steps) and every rule application. Combinators, traversals and predicates are built in
//! ([`builtins`]); the normal forms and Rise traversals that Elevate defines with them are
//! defined the same way, in the strategy language itself, in a prelude every file sees.
//! Named rules of `.rules` files are strategies that rewrite at the root or fail; a guided
//! search (`saturate`, `search`, run by a [`Searcher`]) is one too, so sketches and
//! strategies compose both ways.
//!
//! ```text
//! rules "../rules/mm.rules"
//! def baseline = DFNF ; (fuse-reduce-map @ topDown)
//! def mapNest(0) = id
//! def mapNest(d) = fmap(mapNest(d - 1))
//! ```

pub mod builtins;
mod check;
mod combinators;
pub mod eval;
mod memory;
pub mod parse;
mod prelude;
mod searcher;
mod settings;
#[cfg(test)]
mod tests;
mod traverse;

use crate::error::Result;
use crate::source::{Source, Span};
use std::fmt;
use std::path::Path;
use std::rc::Rc;

pub use eval::run;
pub use parse::{load, StrategyFile};
pub use searcher::{Found, SearchCall, Searcher};
pub use settings::{position, Applied, Counts, Ending, Failure, Order, Outcome, Settings};

/// The strategy `FILE.elevate:STRATEGY`: the file (its rules' sizes from `params`), and
/// `STRATEGY` (a definition's name, or any strategy written with the file's names) parsed and
/// checked.
pub fn load_spec(spec: &str, params: &crate::rules::Params) -> Result<(StrategyFile, Rc<Expr>)> {
    let (path, text) = match spec.split_once(".elevate:") {
        Some((file, text)) => (format!("{file}.elevate"), text),
        None => {
            return Err(crate::error::Error::bad_input(format!(
                "`{spec}` names no strategy: write FILE.elevate:NAME"
            )))
        }
    };
    let file = load(Path::new(&path), params)?;
    let expr = strategy_in(&file, &Source::new(spec, text))?;
    Ok((file, expr))
}

/// A strategy written with `file`'s names (and the prelude's), parsed and checked.
pub fn strategy_in(file: &StrategyFile, src: &std::sync::Arc<Source>) -> Result<Rc<Expr>> {
    let expr = parse::parse_expr(src)?;
    check::check_expr(&expr, file, &*prelude::prelude()?)?;
    Ok(expr)
}

/// A strategy expression: what a definition's body and a call's arguments are.
#[derive(Clone, Debug)]
pub enum Expr {
    /// `s ; t`: `s`, then `t` on its result; fails if either does.
    Seq(Rc<Expr>, Rc<Expr>),
    /// `s ;; t`: `s`, the data-flow normal form, then `t`.
    SeqNormal(Rc<Expr>, Rc<Expr>),
    /// `s <+ t`: `s`, or where it fails, `t` on the same term.
    Choice(Rc<Expr>, Rc<Expr>),
    /// `s @ t`: the traversal `t` (a call missing its last argument) given `s`.
    At(Rc<Expr>, Rc<Expr>),
    /// A combinator, definition, rule, predicate or parameter, with its arguments.
    Call(Call),
    /// A size or count.
    Num(i64, Span),
    /// `a - b`, `a + b` or `a * b` on numbers.
    Arith(char, Rc<Expr>, Rc<Expr>),
    /// A file reference (`"mm.sketch:split"`), relative to the strategy file.
    Str(Rc<str>, Span),
}

/// A named strategy applied to arguments.
#[derive(Clone, Debug)]
pub struct Call {
    pub name: Rc<str>,
    pub args: Vec<Rc<Expr>>,
    pub span: Span,
}

impl Expr {
    /// Where the expression was written (its first call's position for operators).
    pub fn span(&self) -> &Span {
        match self {
            Expr::Seq(a, _)
            | Expr::SeqNormal(a, _)
            | Expr::Choice(a, _)
            | Expr::At(a, _)
            | Expr::Arith(_, a, _) => a.span(),
            Expr::Call(c) => &c.span,
            Expr::Num(_, s) | Expr::Str(_, s) => s,
        }
    }

    /// Binding strength when printed: `<+` binds loosest, then `;` and `;;`, then `@`.
    fn precedence(&self) -> u8 {
        match self {
            Expr::Choice(..) => 0,
            Expr::Seq(..) | Expr::SeqNormal(..) => 1,
            Expr::At(..) => 2,
            Expr::Arith(..) => 3,
            _ => 4,
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |f: &mut fmt::Formatter<'_>, e: &Expr, min: u8| {
            if e.precedence() < min {
                write!(f, "({e})")
            } else {
                write!(f, "{e}")
            }
        };
        let infix = |f: &mut fmt::Formatter<'_>, a: &Expr, op: &str, b: &Expr, p: u8| {
            side(f, a, p)?;
            write!(f, " {op} ")?;
            side(f, b, p + 1)
        };
        match self {
            Expr::Seq(a, b) => infix(f, a, ";", b, 1),
            Expr::SeqNormal(a, b) => infix(f, a, ";;", b, 1),
            Expr::Choice(a, b) => infix(f, a, "<+", b, 0),
            Expr::At(a, b) => infix(f, a, "@", b, 2),
            Expr::Arith(op, a, b) => infix(f, a, &op.to_string(), b, 3),
            Expr::Call(c) => {
                f.write_str(&c.name)?;
                if !c.args.is_empty() {
                    f.write_str("(")?;
                    for (i, a) in c.args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            Expr::Num(n, _) => write!(f, "{n}"),
            Expr::Str(s, _) => write!(f, "{s:?}"),
        }
    }
}
