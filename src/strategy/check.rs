//! Checks a strategy file when it is read: every name it uses is a parameter, a built-in, a
//! definition or a rule, called with as many arguments as it takes.

use super::builtins::{self, Kind};
use super::parse::{Param, StrategyFile};
use super::{Call, Expr};
use crate::error::{Error, Result};

/// Checks `file`'s definitions; names it does not define are looked up in `prelude` (none:
/// `file` is the prelude).
pub fn check(file: &StrategyFile, prelude: Option<&StrategyFile>) -> Result<()> {
    for def in &file.defs {
        let params: Vec<&str> = (def.params.iter())
            .filter_map(|p| match p {
                Param::Name(n) => Some(&**n),
                Param::Num(_) => None,
            })
            .collect();
        let scope = Scope {
            file,
            prelude,
            params: &params,
        };
        scope.expr(&def.body)?;
    }
    Ok(())
}

/// Checks one strategy expression written outside a file (`--strategy`), seeing `file`'s
/// names and the prelude's.
pub fn check_expr(e: &Expr, file: &StrategyFile, prelude: &StrategyFile) -> Result<()> {
    let scope = Scope {
        file,
        prelude: Some(prelude),
        params: &[],
    };
    scope.expr(e)
}

struct Scope<'a> {
    file: &'a StrategyFile,
    prelude: Option<&'a StrategyFile>,
    params: &'a [&'a str],
}

impl Scope<'_> {
    fn expr(&self, e: &Expr) -> Result<()> {
        match e {
            Expr::Seq(a, b) | Expr::SeqNormal(a, b) | Expr::Choice(a, b) | Expr::Arith(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            Expr::At(a, t) => {
                self.expr(a)?;
                let Expr::Call(c) = &**t else {
                    return Err(Error::at(t.span(), "not a traversal"));
                };
                self.call(c, c.args.len() + 1)?;
                c.args.iter().try_for_each(|a| self.expr(a))
            }
            Expr::Call(c) => {
                self.call(c, c.args.len())?;
                match builtins::lookup(&c.name) {
                    Some(b) if !self.params.contains(&&*c.name) => {
                        for (a, kind) in c.args.iter().zip(b.args) {
                            self.arg(a, *kind)?;
                        }
                        Ok(())
                    }
                    _ => c.args.iter().try_for_each(|a| self.expr(a)),
                }
            }
            Expr::Num(..) | Expr::Str(..) => Ok(()),
        }
    }

    fn arg(&self, a: &Expr, kind: Kind) -> Result<()> {
        match (kind, a) {
            (Kind::Prim, Expr::Call(c)) if c.args.is_empty() => {
                match crate::rise::primitives::Prim::from_name(&c.name) {
                    Some(_) => Ok(()),
                    None => Err(Error::at(
                        &c.span,
                        format!("`{}` is not a Rise primitive", c.name),
                    )),
                }
            }
            (Kind::Prim, _) => Err(Error::at(a.span(), "expected a Rise primitive's name")),
            (Kind::File, Expr::Str(..)) => Ok(()),
            (Kind::File, Expr::Call(c)) if self.params.contains(&&*c.name) => Ok(()),
            (Kind::File, _) => Err(Error::at(a.span(), "expected a file name in quotes")),
            (Kind::Num | Kind::Strategy, _) => self.expr(a),
        }
    }

    /// `c`'s name called with `arity` arguments.
    fn call(&self, c: &Call, arity: usize) -> Result<()> {
        let name = &*c.name;
        if self.params.contains(&name) {
            return match arity {
                0 => Ok(()),
                _ => Err(Error::at(
                    &c.span,
                    format!("parameter `{name}` takes no arguments"),
                )),
            };
        }
        if let Some(b) = builtins::lookup(name) {
            return match b.args.len() == arity {
                true => Ok(()),
                false => Err(Error::at(
                    &c.span,
                    format!("`{name}` takes {} argument(s), given {arity}", b.args.len()),
                )),
            };
        }
        for file in std::iter::once(self.file).chain(self.prelude) {
            let clauses: Vec<usize> = file.clauses(name).map(|d| d.params.len()).collect();
            if !clauses.is_empty() {
                return match clauses.contains(&arity) {
                    true => Ok(()),
                    false => Err(Error::at(
                        &c.span,
                        format!("`{name}` takes {} argument(s), given {arity}", clauses[0]),
                    )),
                };
            }
            let instance = file.instance(name).map_err(|e| e.or_at(&c.span))?;
            if file.rules.iter().any(|r| r.name == name) || instance.is_some() {
                return match arity {
                    0 => Ok(()),
                    _ => Err(Error::at(
                        &c.span,
                        format!("rule `{name}` takes no arguments"),
                    )),
                };
            }
        }
        Err(Error::at(
            &c.span,
            format!("no strategy, definition or rule named `{name}`"),
        ))
    }
}
