//! Type inference and elaboration: named Rise -> typed De Bruijn [`Term`].
//!
//! Unification over types with metavariables; sizes are unified as canonical polynomials.
//! A size equation that has no solution yet (`?m * 32 = ?k`) is deferred and retried once
//! more is known; what is left at the end is an error. Every subterm gets a monotype, and
//! every error names the expected and the found type and where.

use super::nat::{Nat, NatAtom};
use super::primitives::{Fresh, Prim};
use super::syntax::{Expr, ExprKind, Program};
use super::term::{Node, Term};
use super::types::{fun, nat_fun, shift_nat, Rebuild, Type};
use crate::error::{Error, Result};
use crate::source::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// A term during inference: types may still hold metavariables; nat variables are named.
struct Pre {
    node: Node<Box<Pre>>,
    ty: Type,
    span: Span,
    /// For `NatLam`: the internal name of the bound size.
    binder: Option<String>,
}

#[derive(Default, Clone)]
struct Solver {
    metas: Vec<Option<Type>>,
    meta_is_data: Vec<bool>,
    nat_metas: Vec<Option<Nat>>,
    deferred: Vec<(Nat, Nat, Span)>,
    /// Once solving is over ([`Solver::freeze`]): each metavariable's resolved solution,
    /// so that resolving the types of a whole term costs the size of the result (a chain
    /// of n applications has n types of size up to n, each otherwise re-resolved).
    resolved: std::cell::RefCell<Option<HashMap<u32, Type>>>,
    /// The right-hand side of every `unify` has no metavariables (a rule's types matched
    /// against an e-graph's): a metavariable is bound to it as it is, without resolving or
    /// searching it for the metavariable (matched types are large).
    concrete_right: bool,
}

impl Fresh for Solver {
    fn data(&mut self) -> Type {
        self.metas.push(None);
        self.meta_is_data.push(true);
        Type::Meta(self.metas.len() as u32 - 1)
    }
    fn nat(&mut self) -> Nat {
        self.nat_metas.push(None);
        Nat::meta(self.nat_metas.len() as u32 - 1)
    }
}

impl Solver {
    fn any(&mut self) -> Type {
        let t = self.data();
        *self.meta_is_data.last_mut().unwrap() = false;
        t
    }

    fn zonk_nat(&self, n: &Nat) -> Nat {
        n.substitute(&mut |a| match a {
            NatAtom::Meta(i) => self.nat_metas[*i as usize]
                .as_ref()
                .map(|v| self.zonk_nat(v)),
            _ => None,
        })
    }

    fn zonk(&self, t: &Type) -> Type {
        self.zonk_at(t, 0)
    }

    /// No more metavariables will be solved: remember resolved solutions from now on.
    fn freeze(&self) {
        self.resolved.replace(Some(HashMap::new()));
    }

    /// The solution of metavariable `i` with its own metavariables resolved.
    fn resolved(&self, i: u32, v: &Type) -> Type {
        if self.concrete_right {
            // Bound to a matched type as it is: there is nothing in it to resolve.
            return v.clone();
        }
        if let Some(t) = self.resolved.borrow().as_ref().and_then(|m| m.get(&i)) {
            return t.clone();
        }
        let t = self.zonk_at(v, 0);
        if let Some(m) = self.resolved.borrow_mut().as_mut() {
            m.insert(i, t.clone());
        }
        t
    }

    /// Resolves metavariables in `t`, which sits under `depth` size binders. Solutions are
    /// found at depth 0, so their size indices are shifted past those binders (in
    /// elaboration sizes are named and the shift does nothing).
    fn zonk_at(&self, t: &Type, depth: u32) -> Type {
        self.zonk_changed(t, depth).unwrap_or_else(|| t.clone())
    }

    /// [`Solver::zonk_at`], `None` where there is nothing to resolve: the parts without
    /// metavariables are shared, not copied (a rewrite rule's matched types are concrete and
    /// large).
    fn zonk_changed(&self, t: &Type, depth: u32) -> Option<Type> {
        struct Zonk<'s>(&'s Solver);
        impl Rebuild for Zonk<'_> {
            fn nat(&mut self, n: &Nat, depth: u32) -> Option<Nat> {
                let s = self.0;
                Some(n.substitute(&mut |a| {
                    match a {
                        NatAtom::Meta(i) => (s.nat_metas[*i as usize].as_ref())
                            .map(|v| shift_nat(&s.zonk_nat(v), 0, depth as i64)),
                        _ => None,
                    }
                }))
                .filter(|m| !m.same(n))
            }
            fn part(&mut self, t: &Type, depth: u32) -> Option<Type> {
                self.0.zonk_changed(t, depth)
            }
        }
        match t {
            Type::Meta(i) => (self.metas[*i as usize].as_ref())
                .map(|v| self.resolved(*i, v).shift_nats(depth as i64)),
            _ => t.rebuild(depth, &mut Zonk(self)),
        }
    }

    fn shallow(&self, t: &Type) -> Type {
        let mut t = t.clone();
        while let Type::Meta(i) = t {
            match &self.metas[i as usize] {
                Some(v) => t = v.clone(),
                None => break,
            }
        }
        t
    }

    fn bind(&mut self, i: u32, t: &Type) -> Result<(), ()> {
        if self.concrete_right {
            if self.meta_is_data[i as usize] && !t.is_data() {
                return Err(());
            }
            self.metas[i as usize] = Some(t.clone());
            return Ok(());
        }
        let t = self.zonk(t);
        if t == Type::Meta(i) {
            return Ok(());
        }
        let mut occurs = false;
        t.for_each_type(&mut |s| occurs |= *s == Type::Meta(i));
        if occurs {
            return Err(());
        }
        if self.meta_is_data[i as usize] {
            if !t.is_data() {
                return Err(());
            }
            if let Type::Meta(j) = t {
                self.meta_is_data[j as usize] = true;
            }
        }
        self.metas[i as usize] = Some(t);
        Ok(())
    }

    fn unify(&mut self, a: &Type, b: &Type, span: &Span) -> Result<(), ()> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (&a, &b) {
            (Type::Meta(i), _) => self.bind(*i, &b),
            (_, Type::Meta(j)) => self.bind(*j, &a),
            (Type::F32, Type::F32) | (Type::Int, Type::Int) | (Type::Bool, Type::Bool) => Ok(()),
            (Type::Data(x), Type::Data(y)) if x == y => Ok(()),
            (Type::Idx(n), Type::Idx(m)) => self.unify_nat(n, m, span),
            (Type::Arr(n, s), Type::Arr(m, t)) | (Type::Vector(s, n), Type::Vector(t, m)) => {
                self.unify(s, t, span)?;
                self.unify_nat(n, m, span)
            }
            (Type::Pair(a1, a2), Type::Pair(b1, b2)) | (Type::Fun(a1, a2), Type::Fun(b1, b2)) => {
                self.unify(a1, b1, span)?;
                self.unify(a2, b2, span)
            }
            (Type::NatFun(s), Type::NatFun(t)) => self.unify(s, t, span),
            _ => Err(()),
        }
    }

    fn unify_nat(&mut self, a: &Nat, b: &Nat, span: &Span) -> Result<(), ()> {
        // (Equality of the shared polynomials compares addresses first.)
        if a == b || self.bind_lone_nat(a, b) || self.bind_lone_nat(b, a) {
            return Ok(());
        }
        let d = self.zonk_nat(&a.sub(b));
        if d.is_zero() {
            Ok(())
        } else if let Some((id, v)) = d.solve() {
            self.nat_metas[id as usize] = Some(v);
            Ok(())
        } else if d.has_metas() {
            self.deferred.push((a.clone(), b.clone(), span.clone()));
            Ok(())
        } else {
            Err(())
        }
    }

    /// The common case without polynomial arithmetic: `a` is a lone metavariable, unbound
    /// and then bound to `b` (which has none), or already bound to `b`. False if not.
    fn bind_lone_nat(&mut self, a: &Nat, b: &Nat) -> bool {
        let Some(id) = a.as_meta() else {
            return false;
        };
        match &self.nat_metas[id as usize] {
            None if !b.has_metas() => {
                self.nat_metas[id as usize] = Some(b.clone());
                true
            }
            Some(v) => v == b,
            None => false,
        }
    }

    /// Retries deferred size equations until none makes progress.
    fn solve_deferred(&mut self) -> Result<()> {
        loop {
            let pending = std::mem::take(&mut self.deferred);
            let before = pending.len();
            for (a, b, span) in pending {
                if self.unify_nat(&a, &b, &span).is_err() {
                    return Err(Error::at(
                        &span,
                        format!(
                            "size mismatch: {} is not equal to {}",
                            self.zonk_nat(&a),
                            self.zonk_nat(&b)
                        ),
                    ));
                }
            }
            if self.deferred.is_empty() {
                return Ok(());
            }
            if self.deferred.len() >= before {
                let (a, b, span) = &self.deferred[0];
                return Err(Error::at(
                    span,
                    format!(
                        "cannot determine sizes from the equation {} = {}; add a type annotation",
                        self.zonk_nat(a),
                        self.zonk_nat(b)
                    ),
                ));
            }
        }
    }
}

struct Elaborator<'p> {
    program: Option<&'p Program>,
    /// Keep metavariables in the result (rule patterns) instead of reporting them.
    allow_metas: bool,
    solver: Solver,
    /// Value variables in scope, innermost last.
    env: Vec<(String, Type)>,
    /// Size variables in scope, innermost last: (surface name, internal name).
    nat_env: Vec<(String, String)>,
    next_nat: usize,
    /// A rule's `?name` holes (numbered by the parser): the metavariable each stands for.
    holes: HashMap<u32, Type>,
    nat_holes: HashMap<u32, Nat>,
    /// Nested `infer` calls open: the depth of the term being built, definitions inlined.
    depth: usize,
    /// Nodes built so far (inlining can double a term per definition).
    nodes: usize,
    /// The function type an unannotated lambda about to be inferred is expected to have
    /// (its parameter type then comes from it): see [`Elaborator::infer_spine`].
    lambda_hint: Option<Type>,
    /// The data types bound by enclosing `dfun`s: a rigid [`Type::Data`] for the outermost
    /// binders of the elaborated expression, a metavariable elsewhere (instantiated).
    data_env: Vec<(String, Type)>,
    /// Whether the expression about to be inferred is among the outermost `dfun`s.
    outermost: bool,
}

impl<'p> Elaborator<'p> {
    fn new(program: Option<&'p Program>, allow_metas: bool) -> Elaborator<'p> {
        Elaborator {
            program,
            allow_metas,
            solver: Solver::default(),
            env: vec![],
            nat_env: vec![],
            next_nat: 0,
            holes: HashMap::new(),
            nat_holes: HashMap::new(),
            depth: 0,
            nodes: 0,
            lambda_hint: None,
            data_env: vec![],
            outermost: true,
        }
    }
}

impl<'p> Elaborator<'p> {
    fn mismatch(&self, span: &Span, what: &str, expected: &Type, found: &Type) -> Error {
        Error::at(
            span,
            format!(
                "type mismatch {what}: expected {}, found {}",
                self.solver.zonk(expected),
                self.solver.zonk(found)
            ),
        )
    }

    /// Renames surface size variables to their internal names; unknown ones are errors.
    fn resolve_nat(&self, n: &Nat, span: &Span) -> Result<Nat> {
        let mut err = None;
        let out = n.substitute(&mut |a| match a {
            NatAtom::Var(v) => match self.nat_env.iter().rev().find(|(s, _)| s == v) {
                Some((_, internal)) => Some(Nat::var(internal)),
                None => {
                    err = Some(Error::at(span, format!("unknown size variable `{v}`")));
                    None
                }
            },
            _ => None,
        });
        err.map_or(Ok(out), Err)
    }

    /// Replaces a rule's holes by their metavariables (the same name, the same one).
    fn instantiate_holes(&mut self, t: &Type) -> Type {
        let t = t.map_nats(0, &mut |n, _| self.instantiate_nat_holes(n));
        self.instantiate_type_holes(&t)
    }

    /// A size with its holes (`?m`, in rules and type sketches) made metavariables, the same
    /// for the same hole wherever it is written.
    fn instantiate_nat_holes(&mut self, n: &Nat) -> Nat {
        let (solver, nat_holes) = (&mut self.solver, &mut self.nat_holes);
        n.substitute(&mut |a| match a {
            NatAtom::Meta(i) => Some(nat_holes.entry(*i).or_insert_with(|| solver.nat()).clone()),
            _ => None,
        })
    }

    fn instantiate_type_holes(&mut self, t: &Type) -> Type {
        use super::types::{arr, pair, vector};
        match t {
            Type::Meta(i) => match self.holes.get(i) {
                Some(m) => m.clone(),
                None => {
                    let m = self.solver.any();
                    self.holes.insert(*i, m.clone());
                    m
                }
            },
            Type::Arr(n, e) => arr(n.clone(), self.instantiate_type_holes(e)),
            Type::Vector(e, n) => vector(self.instantiate_type_holes(e), n.clone()),
            Type::Pair(a, b) => pair(
                self.instantiate_type_holes(a),
                self.instantiate_type_holes(b),
            ),
            Type::Fun(a, b) => fun(
                self.instantiate_type_holes(a),
                self.instantiate_type_holes(b),
            ),
            Type::NatFun(b) => nat_fun(self.instantiate_type_holes(b)),
            Type::F32 | Type::Int | Type::Bool | Type::Idx(_) | Type::Data(_) => t.clone(),
        }
    }

    fn resolve_type(&self, t: &Type, span: &Span) -> Result<Type> {
        let mut err = None;
        let out = t.map_nats(0, &mut |n, _| {
            self.resolve_nat(n, span).unwrap_or_else(|e| {
                err.get_or_insert(e);
                n.clone()
            })
        });
        err.map_or(Ok(out), Err)
            .and_then(|t| self.resolve_data(&t, span))
    }

    /// Replaces the data types named in an annotation by what their `dfun` binds them to;
    /// an unbound name is an error.
    fn resolve_data(&self, t: &Type, span: &Span) -> Result<Type> {
        use super::types::{arr, pair, vector};
        Ok(match t {
            Type::Data(name) => match self.data_env.iter().rev().find(|(a, _)| **a == **name) {
                Some((_, bound)) => bound.clone(),
                None => {
                    return Err(Error::at(
                        span,
                        format!("unknown data type `{name}`: bind it with `dfun {name} => ...`"),
                    ))
                }
            },
            Type::Arr(n, e) => arr(n.clone(), self.resolve_data(e, span)?),
            Type::Vector(e, n) => vector(self.resolve_data(e, span)?, n.clone()),
            Type::Pair(a, b) => pair(self.resolve_data(a, span)?, self.resolve_data(b, span)?),
            Type::Fun(a, b) => fun(self.resolve_data(a, span)?, self.resolve_data(b, span)?),
            Type::NatFun(b) => nat_fun(self.resolve_data(b, span)?),
            Type::F32 | Type::Int | Type::Bool | Type::Idx(_) | Type::Meta(_) => t.clone(),
        })
    }

    fn infer(&mut self, e: &Expr, fallback: &Span) -> Result<Pre> {
        if self.depth >= crate::limits::MAX_NESTING {
            let span = e.span.clone().unwrap_or_else(|| fallback.clone());
            return Err(crate::limits::too_deep(
                &span,
                "the program, with its definitions inlined,",
            ));
        }
        self.nodes += 1;
        if self.nodes > crate::limits::MAX_TERM_NODES {
            let span = e.span.clone().unwrap_or_else(|| fallback.clone());
            return Err(Error::at(
                &span,
                format!(
                    "the program, with its definitions inlined, has more than {} nodes (sketchlog's limit)",
                    crate::limits::MAX_TERM_NODES
                ),
            ));
        }
        self.depth += 1;
        let pre = self.infer_level(e, fallback);
        self.depth -= 1;
        pre
    }

    /// An application spine `h a1 .. an`: the head, then the arguments that are not
    /// unannotated lambdas, then the lambdas, each taking its parameter type from what the
    /// others fixed. So in `map (fun y => add y 1) xs`, where `xs` holds f32s, the mismatch is
    /// found at the int literal `1`, where it was written, rather than at `xs`.
    fn infer_spine(&mut self, e: &Expr, span: &Span) -> Result<Pre> {
        let mut args = vec![];
        let mut head = e;
        while let ExprKind::App(f, x) = &head.kind {
            args.push((&**x, head.span.clone().unwrap_or_else(|| span.clone())));
            head = f;
        }
        args.reverse();
        // The inner applications are nodes too (the outermost was counted by `infer`).
        self.nodes += args.len() - 1;
        let mut inferred: Vec<Option<Pre>> = args.iter().map(|_| None).collect();
        match self.function_let(head, &args, span)? {
            Some(Ok(bound)) => return Ok(bound),
            Some(Err(data)) => inferred[0] = Some(data),
            None => {}
        }
        let head = self.infer(head, span)?;
        // The parameter and result type at each argument.
        let (mut params, mut results) = (vec![], vec![]);
        let (mut fun_ty, mut fun_span) = (head.ty.clone(), head.span.clone());
        for (_, app_span) in &args {
            let (param, result) = match self.solver.shallow(&fun_ty) {
                Type::Fun(p, r) => ((*p).clone(), (*r).clone()),
                other => {
                    let (p, r) = (self.solver.any(), self.solver.any());
                    let want = fun(p.clone(), r.clone());
                    self.solver.unify(&other, &want, &fun_span).map_err(|_| {
                        Error::at(
                            &fun_span,
                            format!(
                                "expected a function, found an expression of type {}",
                                self.solver.zonk(&other)
                            ),
                        )
                    })?;
                    (p, r)
                }
            };
            params.push(param);
            results.push(result.clone());
            (fun_ty, fun_span) = (result, app_span.clone());
        }
        let lambda = |x: &Expr| matches!(x.kind, ExprKind::Lam(_, None, _));
        for lambdas in [false, true] {
            for (i, (x, _)) in args.iter().enumerate() {
                if lambda(x) != lambdas {
                    continue;
                }
                let arg = match inferred[i].take() {
                    Some(done) => done,
                    None => {
                        self.lambda_hint = lambdas.then(|| params[i].clone());
                        let arg = self.infer(x, span);
                        self.lambda_hint = None;
                        arg?
                    }
                };
                self.solver
                    .unify(&params[i], &arg.ty, &arg.span)
                    .map_err(|_| self.mismatch(&arg.span, "in argument", &params[i], &arg.ty))?;
                inferred[i] = Some(arg);
            }
        }
        let mut f = head;
        for ((arg, (_, app_span)), result) in inferred.into_iter().zip(&args).zip(results) {
            let x = arg.expect("every argument was inferred");
            f = Pre {
                node: Node::App(Box::new(f), Box::new(x)),
                ty: result,
                span: app_span.clone(),
                binder: None,
            };
        }
        Ok(f)
    }

    /// `let x = v in b` (parsed as `let v (fun x => b)`) where `v` is a function: the
    /// primitive `let` binds data only (it marks what code generation may store), so a
    /// function is bound as `(fun x => b) v`, a redex that normalisation inlines. `Ok`: the
    /// function's binding; `Err`: `v` is data, inferred (for the primitive); `None`: not a
    /// `let`, or one in a rule (whose patterns mean the primitive, node for node).
    fn function_let(
        &mut self,
        head: &Expr,
        args: &[(&Expr, Span)],
        span: &Span,
    ) -> Result<Option<std::result::Result<Pre, Pre>>> {
        let ExprKind::Var(name) = &head.kind else {
            return Ok(None);
        };
        let bound = self.env.iter().any(|(n, _)| n == name);
        let [(value, _), (
            lam @ Expr {
                kind: ExprKind::Lam(_, None, _),
                ..
            },
            app_span,
        )] = args
        else {
            return Ok(None);
        };
        if name != "let" || bound || self.allow_metas {
            return Ok(None);
        }
        let value = self.infer(value, span)?;
        if !matches!(
            self.solver.shallow(&value.ty),
            Type::Fun(..) | Type::NatFun(_)
        ) {
            return Ok(Some(Err(value)));
        }
        let result = self.solver.any();
        self.lambda_hint = Some(fun(value.ty.clone(), result.clone()));
        let body = self.infer(lam, span);
        self.lambda_hint = None;
        let body = body?;
        let _ = self
            .solver
            .unify(&body.ty, &fun(value.ty.clone(), result.clone()), app_span);
        Ok(Some(Ok(Pre {
            node: Node::App(Box::new(body), Box::new(value)),
            ty: result,
            span: app_span.clone(),
            binder: None,
        })))
    }

    fn infer_level(&mut self, e: &Expr, fallback: &Span) -> Result<Pre> {
        let span = e.span.clone().unwrap_or_else(|| fallback.clone());
        let pre = |node, ty, span: &Span| Pre {
            node,
            ty,
            span: span.clone(),
            binder: None,
        };
        let outermost = std::mem::replace(&mut self.outermost, false);
        Ok(match &e.kind {
            ExprKind::DataLam(a, body) => {
                let bound = match outermost {
                    true => Type::Data(a.as_str().into()),
                    false => self.solver.data(),
                };
                self.data_env.push((a.clone(), bound));
                self.outermost = outermost;
                let b = self.infer(body, &span);
                self.data_env.pop();
                b?
            }
            ExprKind::Var(x) => {
                if let Some(pos) = self.env.iter().rposition(|(n, _)| n == x) {
                    let idx = (self.env.len() - 1 - pos) as u32;
                    pre(Node::Var(idx), self.env[pos].1.clone(), &span)
                } else if let Some(def) = self.program.and_then(|p| p.get(x)) {
                    // An earlier definition: inline it (it is closed).
                    let env = std::mem::take(&mut self.env);
                    let nat_env = std::mem::take(&mut self.nat_env);
                    let data_env = std::mem::take(&mut self.data_env);
                    let r = self.infer(&def.expr, &def.span);
                    self.env = env;
                    self.nat_env = nat_env;
                    self.data_env = data_env;
                    r?
                } else if let Some(p) = Prim::from_name(x) {
                    let ty = p.instantiate(&mut self.solver);
                    pre(Node::Prim(p), ty, &span)
                } else {
                    return Err(Error::at(
                        &span,
                        format!(
                            "unknown identifier `{x}`: not a variable, definition or primitive"
                        ),
                    ));
                }
            }
            ExprKind::F32(x) => pre(Node::F32(*x), Type::F32, &span),
            ExprKind::Int(i) => pre(Node::Int(*i), Type::Int, &span),
            ExprKind::Lam(x, ann, body) => {
                let a = match ann {
                    Some(t) => {
                        let t = self.resolve_type(t, &span)?;
                        self.instantiate_holes(&t)
                    }
                    None => match self.lambda_hint.take().map(|h| self.solver.shallow(&h)) {
                        Some(Type::Fun(param, _)) => (*param).clone(),
                        _ => self.solver.any(),
                    },
                };
                self.env.push((x.clone(), a.clone()));
                let b = self.infer(body, &span);
                self.env.pop();
                let b = b?;
                let ty = fun(a, b.ty.clone());
                pre(Node::Lam(Box::new(b)), ty, &span)
            }
            ExprKind::App(..) => self.infer_spine(e, &span)?,
            ExprKind::Comp(f, g) => {
                let f = self.infer(f, &span)?;
                let g = self.infer(g, &span)?;
                let (a, b, c) = (self.solver.any(), self.solver.any(), self.solver.any());
                for (part, want, what) in [
                    (
                        &f,
                        fun(a.clone(), b.clone()),
                        "as the first function of a composition",
                    ),
                    (
                        &g,
                        fun(b, c.clone()),
                        "as the second function of a composition",
                    ),
                ] {
                    self.solver
                        .unify(&want, &part.ty, &part.span)
                        .map_err(|_| self.mismatch(&part.span, what, &want, &part.ty))?;
                }
                pre(Node::Comp(Box::new(f), Box::new(g)), fun(a, c), &span)
            }
            ExprKind::NatLam(n, body) => {
                let taken = |c: &str| self.nat_env.iter().any(|(_, i)| i == c);
                let mut internal = n.clone();
                while taken(&internal) {
                    self.next_nat += 1;
                    internal = format!("{n}{}", self.next_nat);
                }
                self.nat_env.push((n.clone(), internal.clone()));
                self.outermost = outermost;
                let b = self.infer(body, &span);
                self.nat_env.pop();
                let b = b?;
                let ty = nat_fun(self.solver.zonk(&b.ty).close(&internal));
                Pre {
                    node: Node::NatLam(Box::new(b)),
                    ty,
                    span,
                    binder: Some(internal),
                }
            }
            ExprKind::NatApp(f, n) => {
                let n = self.resolve_nat(n, &span)?;
                let n = self.instantiate_nat_holes(&n);
                let f = match self.make_array(f, &n, &span)? {
                    Some(f) => f,
                    None => self.infer(f, &span)?,
                };
                let body = match self.solver.shallow(&f.ty) {
                    Type::NatFun(body) => Type::clone(&body),
                    other => {
                        return Err(Error::at(
                            &f.span,
                            format!(
                                "expected a size-dependent function (taking `<n>`), found an expression of type {}",
                                self.solver.zonk(&other)
                            ),
                        ))
                    }
                };
                let ty = Type::instantiate(&body, &n);
                pre(Node::NatApp(Box::new(f), n), ty, &span)
            }
            ExprKind::Annot(inner, t) => {
                let t = self.resolve_type(t, &span)?;
                let t = self.instantiate_holes(&t);
                self.outermost = outermost;
                let inner = self.infer(inner, &span)?;
                self.solver
                    .unify(&t, &inner.ty, &inner.span)
                    .map_err(|_| self.mismatch(&inner.span, "in annotation", &t, &inner.ty))?;
                inner
            }
        })
    }

    /// `makeArray<k>` (the primitive, not a variable of that name), typed for its size `k`, a
    /// constant.
    fn make_array(&mut self, f: &Expr, k: &Nat, span: &Span) -> Result<Option<Pre>> {
        let ExprKind::Var(x) = &f.kind else {
            return Ok(None);
        };
        let shadowed =
            self.env.iter().any(|(n, _)| n == x) || self.program.and_then(|p| p.get(x)).is_some();
        if x != Prim::MakeArray.name() || shadowed {
            return Ok(None);
        }
        let k = k
            .as_const()
            .filter(|c| c.den == 1 && (1..=crate::limits::MAX_MAKE_ARRAY).contains(&c.num))
            .ok_or_else(|| {
                let most = crate::limits::MAX_MAKE_ARRAY;
                Error::at(
                    span,
                    format!("makeArray takes a constant size from 1 to {most}, not `{k}`"),
                )
            })?;
        let ty = Prim::make_array(k.num as usize, &mut self.solver);
        let span = f.span.clone().unwrap_or_else(|| span.clone());
        Ok(Some(Pre {
            node: Node::Prim(Prim::MakeArray),
            ty,
            span,
            binder: None,
        }))
    }

    /// Resolves metavariables and turns named sizes into De Bruijn indices.
    fn finish(&self, p: &Pre, nats: &mut Vec<String>) -> Result<Rc<Term>> {
        let mut ty = self.solver.zonk(&p.ty);
        if let Some(b) = &p.binder {
            nats.push(b.clone());
        }
        let node = match &p.node {
            Node::NatLam(b) => {
                let body = self.finish(b, nats)?;
                ty = nat_fun(self.solver.zonk(&b.ty).close(nats.last().unwrap()));
                Node::NatLam(body)
            }
            node => {
                let mut err = None;
                let node = node.map(|c| {
                    self.finish(c, nats).unwrap_or_else(|e| {
                        err.get_or_insert(e);
                        Term::new(Node::Int(0), Type::Int)
                    })
                });
                if let Some(e) = err {
                    return Err(e);
                }
                node
            }
        };
        if p.binder.is_some() {
            nats.pop();
        }
        if ty.has_metas() && !self.allow_metas {
            return Err(Error::at(
                &p.span,
                format!("cannot infer a complete type for this expression (got {ty}); add a type annotation"),
            ));
        }
        let node = match node {
            Node::NatApp(f, n) => {
                Node::NatApp(f, names_to_indices(&self.solver.zonk_nat(&n), 0, nats))
            }
            n => n,
        };
        let ty = ty.map_nats(0, &mut |n, depth| names_to_indices(n, depth, nats));
        Ok(Term::at(node, ty, Some(p.span.clone())))
    }
}

/// Replaces internal nat names by De Bruijn indices, given the binders in scope (innermost last).
fn names_to_indices(n: &Nat, depth: u32, nats: &[String]) -> Nat {
    n.substitute(&mut |a| match a {
        NatAtom::Var(v) => nats
            .iter()
            .rposition(|x| x == v)
            .map(|pos| Nat::index(depth + (nats.len() - 1 - pos) as u32)),
        _ => None,
    })
}

fn elaborate_with(program: Option<&Program>, e: &Expr, fallback: &Span) -> Result<Rc<Term>> {
    let mut el = Elaborator::new(program, false);
    let pre = el.infer(e, fallback)?;
    el.solver.solve_deferred()?;
    el.solver.freeze();
    el.finish(&pre, &mut vec![])
}

/// Elaborates a closed expression (which may use the definitions of `program`).
pub fn elaborate(program: Option<&Program>, e: &Expr) -> Result<Rc<Term>> {
    let fallback = e
        .span
        .clone()
        .unwrap_or_else(|| Span::new(&crate::source::Source::new("<generated>", ""), 0, 0));
    elaborate_with(program, e, &fallback)
}

/// The definition `name`, or an error listing the definitions there are.
fn get_def<'p>(program: &'p Program, name: &str) -> Result<&'p crate::rise::syntax::Def> {
    program.get(name).ok_or_else(|| {
        let names: Vec<&str> = program.defs.iter().map(|d| d.name.as_str()).collect();
        Error::bad_input(format!(
            "no definition named `{name}` (the file has: {})",
            crate::error::listing(&names)
        ))
    })
}

/// Elaborates the definition `name` of `program`.
pub fn elaborate_def(program: &Program, name: &str) -> Result<Rc<Term>> {
    let def = get_def(program, name)?;
    elaborate_with(Some(program), &def.expr, &def.span)
}

/// The type of definition `name`, printed with the definition's own size-variable names.
/// A helper definition whose type stays generic (it is inlined where used, like `dot`)
/// prints with its unsolved parts as `?t` and `?n` variables.
pub fn def_type(program: &Program, name: &str) -> Result<String> {
    let def = get_def(program, name)?;
    let mut hints = vec![];
    let mut e = &def.expr;
    loop {
        match &e.kind {
            ExprKind::NatLam(n, b) => {
                hints.push(n.clone());
                e = b;
            }
            ExprKind::Annot(b, _) | ExprKind::DataLam(_, b) => e = b,
            _ => break,
        }
    }
    match elaborate_def(program, name) {
        Ok(t) => {
            // The data types it is generic in, as shine writes them: `(dt: data) -> ...`.
            let mut data: Vec<std::sync::Arc<str>> = vec![];
            t.ty.for_each_type(&mut |ty| match ty {
                Type::Data(a) if !data.contains(a) => data.push(a.clone()),
                _ => {}
            });
            let binders: String = data.iter().map(|a| format!("({a}: data) -> ")).collect();
            Ok(binders + &t.ty.show_hinted(&[], &hints))
        }
        Err(err) if err.message.starts_with("cannot infer a complete type") => {
            let mut el = Elaborator::new(Some(program), false);
            let pre = el.infer(&def.expr, &def.span)?;
            let _ = el.solver.solve_deferred();
            Ok(format!(
                "{} (generic; inlined where used)",
                el.solver.zonk(&pre.ty)
            ))
        }
        Err(err) => Err(err),
    }
}

/// The typed sides of a rewrite rule. Pattern variables are the outermost variables
/// (pattern variable `k` of `n` is De Bruijn index `depth + n - 1 - k` at a node under
/// `depth` binders); size pattern variables stay named. Types keep metavariables, which a
/// match binds.
pub struct RuleTyping {
    pub lhs: Rc<Term>,
    pub rhs: Rc<Term>,
    /// The type of each pattern variable.
    pub var_types: Vec<Type>,
}

/// Types both sides of a rule with shared metavariables, requiring equal types.
pub fn type_rule(
    lhs: &Expr,
    rhs: &Expr,
    vars: &[String],
    nat_vars: &[String],
) -> Result<RuleTyping> {
    let fallback = lhs.span.clone().expect("parsed rule");
    let mut el = Elaborator {
        nat_env: nat_vars.iter().map(|n| (n.clone(), n.clone())).collect(),
        ..Elaborator::new(None, true)
    };
    for v in vars {
        let t = el.solver.any();
        el.env.push((v.clone(), t));
    }
    let l = el.infer(lhs, &fallback)?;
    let r = el.infer(rhs, &fallback)?;
    el.solver
        .unify(&l.ty, &r.ty, &r.span)
        .map_err(|_| el.mismatch(&r.span, "between the sides of the rule", &l.ty, &r.ty))?;
    el.solver.solve_deferred()?;
    el.solver.freeze();
    let var_types = el.env.iter().map(|(_, t)| el.solver.zonk(t)).collect();
    Ok(RuleTyping {
        lhs: el.finish(&l, &mut vec![])?,
        rhs: el.finish(&r, &mut vec![])?,
        var_types,
    })
}

/// A metavariable of a pattern type: of a type or of a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Meta {
    Type(u32),
    Nat(u32),
}

/// The metavariables of `t`, each once.
pub fn metas_of(t: &Type) -> Vec<Meta> {
    let mut out = vec![];
    t.for_each_type(&mut |s| {
        if let Type::Meta(i) = s {
            out.push(Meta::Type(*i));
        }
    });
    t.for_each_nat(&mut |n| out.extend(n.metas().map(Meta::Nat)));
    out.sort();
    out.dedup();
    out
}

/// How many type and size metavariables some patterns number (one more than the largest of
/// each): what a [`Matcher`] for them makes room for.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetaRoom {
    types: usize,
    sizes: usize,
}

impl MetaRoom {
    /// The room for the metavariables of `types` and `sizes`.
    pub fn of<'t>(
        types: impl IntoIterator<Item = &'t Type>,
        sizes: impl IntoIterator<Item = &'t Nat>,
    ) -> MetaRoom {
        let size_metas = sizes.into_iter().flat_map(|n| n.metas().map(Meta::Nat));
        let metas = types.into_iter().flat_map(metas_of).chain(size_metas);
        let mut room = MetaRoom::default();
        for meta in metas {
            match meta {
                Meta::Type(i) => room.types = room.types.max(i as usize + 1),
                Meta::Nat(i) => room.sizes = room.sizes.max(i as usize + 1),
            }
        }
        room
    }
}

/// Unification for matching a rule's types against the types of matched e-classes.
#[derive(Clone)]
pub struct Matcher {
    solver: Solver,
}

impl Matcher {
    /// A matcher for patterns whose metavariables are numbered below `room`'s counts.
    pub fn with_room(room: MetaRoom) -> Matcher {
        let solver = Solver {
            metas: vec![None; room.types],
            meta_is_data: vec![false; room.types],
            nat_metas: vec![None; room.sizes],
            concrete_right: true,
            ..Solver::default()
        };
        Matcher { solver }
    }

    /// Unifies a pattern type (with metavariables) with a concrete type.
    ///
    /// # Panics
    /// If `pattern` has a metavariable that the patterns this matcher was made for have not.
    pub fn unify(&mut self, pattern: &Type, actual: &Type) -> bool {
        let span = Span::new(&crate::source::Source::new("<match>", ""), 0, 0);
        self.solver.unify(pattern, actual, &span).is_ok()
    }

    /// Is `meta` solved (after [`Matcher::solve`]): a type metavariable bound, a size
    /// metavariable resolved to a size without metavariables?
    pub fn resolves(&self, meta: Meta) -> bool {
        match meta {
            Meta::Type(i) => self.solver.metas[i as usize].is_some(),
            Meta::Nat(i) => match &self.solver.nat_metas[i as usize] {
                None => false,
                Some(n) => !n.has_metas() || !self.solver.zonk_nat(n).has_metas(),
            },
        }
    }

    /// Solves what is left; false if some size equation has no solution. The bindings are
    /// final from here on (no more `unify`); a type metavariable's solution, a matched type, is
    /// taken as it is.
    pub fn solve(&mut self) -> bool {
        self.solver.solve_deferred().is_ok()
    }

    /// The pattern type with the bindings applied.
    pub fn resolve(&self, t: &Type) -> Type {
        self.solver.zonk(t)
    }

    /// A pattern size with the bindings applied (a size hole bound by a matched type).
    pub fn resolve_nat(&self, n: &Nat) -> Nat {
        self.solver.zonk_nat(n)
    }
}
