//! Checkpoints for an exact goal: the goal with its innermost conjugating stages peeled off.
//!
//! Many schedules are conjugations: a computation `c` wrapped in a layout change and its
//! inverse, `pre o c o post` (a transpose on each side reorders loops; `split` before and
//! `join` after tiles one). A goal written as a pipeline of stages applied to its input,
//! `(s1 o .. o sk o c o tk o .. o t1) x`, with `2j + 1` stages, is approached through the
//! goals that keep only its outermost pairs: `(s1 o c o t1) x`, then `(s1 o s2 o c o t2 o t1)
//! x`, and so on. Candidates that do not type as the start program are left out; one that
//! types but means something else is not found by its step, which the search then skips.
//!
//! For the Rise project's 4D reorder 4321 (six transposes on each side of the map nest) this
//! gives the six exchanges of neighbouring dimensions that a hand-written guide uses.

use crate::error::Result;
use crate::rise::infer::elaborate_def;
use crate::rise::syntax::{Def, Expr, ExprKind, Program};
use crate::rise::types::Type;

/// The checkpoints before goal `name` of `program`, from the start program's side: each a
/// definition named `{name}-outer{j}` with the goal's `j` outermost stage pairs.
pub fn checkpoints(program: &Program, name: &str, start: &Type) -> Result<Vec<Def>> {
    let Some(goal) = program.get(name) else {
        return Ok(vec![]);
    };
    let (stages, input) = pipeline(body_of(&goal.expr));
    if stages.len() < 3 || stages.len() % 2 == 0 {
        return Ok(vec![]);
    }
    let pairs = stages.len() / 2;
    let mut out = vec![];
    for j in 1..pairs {
        let kept: Vec<Expr> = stages[..j]
            .iter()
            .chain(&stages[pairs..=pairs])
            .chain(&stages[stages.len() - j..])
            .cloned()
            .collect();
        let body = composed_application(&kept, input.clone());
        let Some(expr) = under_binders(&goal.expr, &mut |_| Some(body.clone())) else {
            continue;
        };
        let def = Def {
            name: format!("{name}-outer{j}"),
            expr,
            span: goal.span.clone(),
        };
        let mut with = program.clone();
        with.defs.push(def.clone());
        if elaborate_def(&with, &def.name).is_ok_and(|t| t.ty == *start) {
            out.push(def);
        }
    }
    Ok(out)
}

/// The body of a definition under its leading binders and annotations.
fn body_of(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::NatLam(_, b) | ExprKind::DataLam(_, b) | ExprKind::Lam(_, _, b) => body_of(b),
        ExprKind::Annot(b, _) => body_of(b),
        _ => e,
    }
}

/// `e` with the body under its leading binders replaced by `f`'s result.
fn under_binders(e: &Expr, f: &mut dyn FnMut(&Expr) -> Option<Expr>) -> Option<Expr> {
    let kind = match &e.kind {
        ExprKind::NatLam(n, b) => ExprKind::NatLam(n.clone(), Box::new(under_binders(b, f)?)),
        ExprKind::DataLam(a, b) => ExprKind::DataLam(a.clone(), Box::new(under_binders(b, f)?)),
        ExprKind::Lam(x, t, b) => {
            ExprKind::Lam(x.clone(), t.clone(), Box::new(under_binders(b, f)?))
        }
        ExprKind::Annot(b, t) => ExprKind::Annot(Box::new(under_binders(b, f)?), t.clone()),
        _ => return f(e),
    };
    Some(Expr {
        kind,
        span: e.span.clone(),
    })
}

/// A body as a pipeline: the functions applied to the innermost argument, first applied
/// first (`(g o f) x` and `g (f x)` are both `[f, g]` applied to `x`), and that argument.
fn pipeline(body: &Expr) -> (Vec<Expr>, Expr) {
    let mut stages = vec![];
    let mut e = body;
    while let ExprKind::App(f, x) = &e.kind {
        let mut chain = vec![];
        f.composed(&mut chain);
        stages.extend(chain.into_iter().rev().cloned());
        e = x;
    }
    stages.reverse();
    (stages, e.clone())
}

/// `(sk o .. o s1) input` for stages `[s1, .., sk]`.
fn composed_application(stages: &[Expr], input: Expr) -> Expr {
    let chain = stages
        .iter()
        .cloned()
        .reduce(|f, g| Expr::new(ExprKind::Comp(Box::new(f), Box::new(g))));
    match chain {
        Some(c) => Expr::app(c, input),
        None => input,
    }
}
