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
        span: e.span.clone(),
        ty: e.ty.clone(),
        ..Expr::new(kind)
    })
}

/// A body as a pipeline: the functions applied to the innermost argument, first applied
/// first, and that argument. `(g o f) x`, `g (f x)` and `(fun y => g (f y)) x` (how a program
/// reads a composition) are all `[f, g]` applied to `x`.
fn pipeline(body: &Expr) -> (Vec<Expr>, Expr) {
    let mut stages = vec![];
    let mut e = body;
    while let ExprKind::App(f, x) = &e.kind {
        stages.extend(composition(f).into_iter().rev());
        e = x;
    }
    stages.reverse();
    (stages, e.clone())
}

/// The functions a function composes, first applied first: those of `fun y => p` when `p`
/// is a pipeline applied to `y` alone, otherwise the function itself.
fn composition(f: &Expr) -> Vec<Expr> {
    if let ExprKind::Lam(y, None, body) = &f.kind {
        let (stages, input) = pipeline(body);
        let only_input = stages.iter().all(|s| s.free_uses(&|v| v == y).is_empty());
        if input.kind == ExprKind::Var(y.clone()) && only_input && !stages.is_empty() {
            return stages;
        }
    }
    vec![f.clone()]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_4d_reorder_peels_into_six_exchanges() {
        let program =
            crate::rise::load_program(std::path::Path::new("programs/shine/reorder.rise")).unwrap();
        let start = elaborate_def(&program, "reorder4d").unwrap();
        let (stages, _) = pipeline(body_of(&program.get("reorder4d-4321").unwrap().expr));
        assert_eq!(stages.len(), 13);
        let found = checkpoints(&program, "reorder4d-4321", &start.ty).unwrap();
        // They are the hand-written guide's goals (programs/shine/reorder4d-4321.guide).
        let written = [
            "reorder4d-1243",
            "reorder4d-s2",
            "reorder4d-s3",
            "reorder4d-s4",
        ];
        assert_eq!(found.len(), written.len() + 1);
        for (def, name) in found
            .iter()
            .zip(written.into_iter().chain(["reorder4d-s5"]))
        {
            let mut with = program.clone();
            with.defs.push(def.clone());
            let normal = |name: &str| {
                let t = elaborate_def(&with, name).unwrap();
                crate::egraph::saturate::normalise(&t, &Default::default())
                    .unwrap()
                    .0
            };
            assert_eq!(normal(&def.name), normal(name), "{}", def.name);
        }
    }
}
