//! Compiling named rules to an encoding (paper section 4.5): De Bruijn indices or names,
//! extraction-based or explicit substitution. The efficient encoding (De Bruijn,
//! extraction) is the one sketchlog searches with; the others exist for Table 2.
//!
//! The left-hand side becomes an egglog query over the schema's constructors. The
//! right-hand side is built by a semi-naive Rust rule: pattern variables are re-indexed on
//! their classes' representatives when they move between binders (`map-fusion`'s `f` goes
//! under a new lambda), `notin` conditions are checked on the free-variable analysis, and the
//! types of the new e-nodes come from unifying the rule's typed sides with the types of the
//! matched e-classes (a rule whose types do not fit a match does not fire).
//!
//! With names, binders on the left-hand side match any name (a query variable), a
//! right-hand side binder that shares a left-hand one's name reuses the matched name, and a
//! new binder is named after the matched e-class id (`y_42`); a pattern variable placed
//! under a binder whose name it may have free does not fire (it would be captured).

use crate::egraph::filter::Filter;
use crate::egraph::names::{class_number, Binding};
use crate::egraph::schema::Con;
use crate::egraph::subst::{union_if, Builder, SharedSnapshot, Snapshot};
use crate::error::{Error, Result, Span};
use crate::rise::infer::{type_rule, Matcher};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::syntax::{Expr, ExprKind, RuleDecl};
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use egglog::{EGraph, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A right-hand side template. Each typed node has a `slot` in the list of the RHS's types.
#[derive(Debug, Clone)]
enum Tmpl {
    /// Pattern variable `var`, under the RHS binders `ctx` (outermost first).
    Hole {
        var: usize,
        ctx: Vec<String>,
    },
    Bound(u32, usize),
    Node(Node<Box<Tmpl>>, usize),
    /// `vectorize f`: the vector version of the function `f`, built in Rust.
    Vectorize(Box<Tmpl>, usize),
}

/// How substitution is done: on representatives in Rust, or with `Sig`/`Phi` e-nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Substitution {
    Extraction,
    Explicit,
}

/// A lambda-calculus encoding: how substitution is done and how variables are bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoding {
    pub substitution: Substitution,
    pub binding: Binding,
}

impl Encoding {
    /// Extraction-based substitution with De Bruijn indices: the one searches use.
    pub const EFFICIENT: Encoding = Encoding {
        substitution: Substitution::Extraction,
        binding: Binding::DeBruijn,
    };
}

/// A rule compiled for an encoding.
#[derive(Debug)]
pub struct CompiledRule {
    pub name: String,
    /// With explicit substitution and De Bruijn indices, a pattern variable moved between
    /// binders becomes a `Phi`.
    encoding: Encoding,
    /// The egglog query (facts), binding `root`, the pattern variables and size variables.
    pub query: String,
    /// The left-hand side is one (typed) pattern variable: it is `root`.
    lone: bool,
    /// Callback variables: `root`, pattern variables `v0..`, size variables `n_<name>..`,
    /// then the query's type variables.
    vars: Vec<(String, &'static str)>,
    var_types: Vec<Type>,
    root_type: Type,
    /// The LHS binders around each pattern variable (outermost first).
    lhs_ctx: Vec<Vec<String>>,
    /// (pattern variable, free index in its LHS context) that must not be free.
    not_free: Vec<(usize, u32)>,
    /// With names: each LHS binder's name in the rule and the callback variable holding the
    /// matched name.
    lhs_binders: Vec<(String, usize)>,
    /// With names: the rule's names of the RHS binders, in pre-order.
    rhs_binders: Vec<String>,
    nat_vars: Vec<String>,
    rhs: Tmpl,
    /// The sizes of the RHS's size applications, in the pre-order `build` uses them.
    rhs_nats: Vec<Nat>,
    /// The type of each RHS slot, with the rule's metavariables.
    slot_types: Vec<Type>,
    /// Matched types (root, pattern variables) and sizes -> the RHS slots' type values, or
    /// `None` when the rule's types do not fit. Types are hash-consed, so this is exact.
    typings: std::sync::Mutex<HashMap<Vec<Value>, Option<Arc<Typing>>>>,
    /// New e-nodes whose types fail the filter are not built (the rewrite does not fire).
    filter: Filter,
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Annot(inner, _) => strip(inner),
        _ => e,
    }
}

struct LhsCompiler<'r> {
    /// Extra facts: each lambda's type split into parameter and result.
    facts: Vec<String>,
    /// The parameter-type variable of each enclosing lambda, innermost last.
    params: Vec<String>,
    /// With names, the query variable of each LHS binder's name (`bn<k>`) and the rule's
    /// name for it, in pre-order; `None` with De Bruijn indices.
    binders: Option<Vec<String>>,
    /// The binder variables of the enclosing lambdas, innermost last.
    binder_stack: Vec<String>,
    nvars: usize,
    nat_vars: &'r [String],
    lhs_ctx: Vec<Option<Vec<String>>>,
    type_vars: usize,
    span: &'r Span,
}

impl LhsCompiler<'_> {
    fn fresh_ty(&mut self) -> String {
        self.type_vars += 1;
        format!("ty{}", self.type_vars - 1)
    }

    fn nat(&self, n: &Nat) -> Result<String> {
        if n.as_const().is_some() {
            return Ok(crate::egraph::encode::nat_term(n)
                .expect("constant")
                .sexpr());
        }
        let mut terms = n.terms();
        if let (Some((m, c)), None) = (terms.next(), terms.next()) {
            if let ([NatAtom::Var(v)], true) = (m.as_slice(), c == crate::rise::nat::Ratio::int(1))
            {
                if self.nat_vars.contains(v) {
                    return Ok(format!("n_{v}"));
                }
            }
        }
        Err(Error::at(
            self.span,
            format!(
                "size pattern `{n}` is not supported: use a constant or a single size variable"
            ),
        ))
    }

    fn pattern(&mut self, e: &Expr, t: &Term, ctx: &mut Vec<String>) -> Result<String> {
        let e = strip(e);
        let depth = ctx.len() as u32;
        // Variables take no type variable of their own: a pattern variable stands for a
        // class, and a bound variable has its binder's parameter type.
        let ty = if matches!(t.node, Node::Var(_)) {
            String::new()
        } else {
            self.fresh_ty()
        };
        Ok(match (&e.kind, &t.node) {
            // A bound variable has its binder's parameter type: an e-class can also hold terms
            // from other contexts, where the same index is another variable.
            (_, Node::Var(i)) if *i < depth => {
                let param = &self.params[self.params.len() - 1 - *i as usize];
                match self.binders {
                    None => format!("(Var {i} {param})"),
                    Some(_) => {
                        let name = &self.binder_stack[self.binder_stack.len() - 1 - *i as usize];
                        format!("(NamedVar {name} {param})")
                    }
                }
            }
            (_, Node::Var(i)) => {
                let k = self.nvars - 1 - (*i - depth) as usize;
                match &self.lhs_ctx[k] {
                    None => self.lhs_ctx[k] = Some(ctx.clone()),
                    Some(c) if c == ctx => {}
                    Some(_) => {
                        return Err(Error::at(self.span, "a pattern variable used under different binders on the left-hand side is not supported"))
                    }
                }
                format!("v{k}")
            }
            (ExprKind::App(f, x), Node::App(tf, tx)) => {
                let f = self.pattern(f, tf, ctx)?;
                let x = self.pattern(x, tx, ctx)?;
                format!("(App {f} {x} {ty})")
            }
            (ExprKind::Lam(x, _, b), Node::Lam(tb)) => {
                let (param, result) = (self.fresh_ty(), self.fresh_ty());
                self.facts.push(format!("(= {ty} (TFun {param} {result}))"));
                self.params.push(param);
                ctx.push(x.clone());
                let binder = self.binders.as_mut().map(|names| {
                    names.push(x.clone());
                    format!("bn{}", names.len() - 1)
                });
                self.binder_stack.extend(binder.clone());
                let b = self.pattern(b, tb, ctx);
                ctx.pop();
                self.params.pop();
                match binder {
                    None => format!("(Lam {} {ty})", b?),
                    Some(name) => {
                        self.binder_stack.pop();
                        format!("(NamedLam {name} {} {ty})", b?)
                    }
                }
            }
            (ExprKind::NatApp(f, _), Node::NatApp(tf, n)) => {
                let f = self.pattern(f, tf, ctx)?;
                format!("(NatApp {f} {} {ty})", self.nat(n)?)
            }
            (ExprKind::NatLam(_, b), Node::NatLam(tb)) => {
                format!("(NatLam {} {ty})", self.pattern(b, tb, ctx)?)
            }
            (_, Node::Prim(Prim::Vectorize)) => {
                return Err(Error::at(
                    self.span,
                    "`vectorize` builds a right-hand side; it cannot be matched",
                ))
            }
            (_, Node::Prim(p)) => format!("(Prim \"{}\" {ty})", p.name()),
            (_, Node::F32(x)) => format!("(F32 {:?} {ty})", x.0 as f64),
            (_, Node::Int(i)) => format!("(Int {i} {ty})"),
            _ => {
                return Err(
                    Error::internal("rule and its typed form differ in shape").or_at(self.span)
                )
            }
        })
    }
}

fn rhs_template(
    e: &Expr,
    t: &Term,
    nvars: usize,
    ctx: &mut Vec<String>,
    slots: &mut Vec<Type>,
) -> Tmpl {
    let e = strip(e);
    let depth = ctx.len() as u32;
    let mut slot = |ty: &Type| {
        slots.push(ty.clone());
        slots.len() - 1
    };
    match (&e.kind, &t.node) {
        (_, Node::Var(i)) if *i < depth => Tmpl::Bound(*i, slot(&t.ty)),
        (_, Node::Var(i)) => Tmpl::Hole {
            var: nvars - 1 - (*i - depth) as usize,
            ctx: ctx.clone(),
        },
        (ExprKind::Lam(x, _, b), Node::Lam(tb)) => {
            let s = slot(&t.ty);
            ctx.push(x.clone());
            let b = rhs_template(b, tb, nvars, ctx, slots);
            ctx.pop();
            Tmpl::Node(Node::Lam(Box::new(b)), s)
        }
        (ExprKind::App(_, x), Node::App(tf, tx)) if tf.node == Node::Prim(Prim::Vectorize) => {
            let s = slot(&t.ty);
            Tmpl::Vectorize(Box::new(rhs_template(x, tx, nvars, ctx, slots)), s)
        }
        (ExprKind::App(f, x), Node::App(tf, tx)) => {
            let s = slot(&t.ty);
            let f = rhs_template(f, tf, nvars, ctx, slots);
            let x = rhs_template(x, tx, nvars, ctx, slots);
            Tmpl::Node(Node::App(Box::new(f), Box::new(x)), s)
        }
        (ExprKind::NatApp(f, _), Node::NatApp(tf, n)) => {
            let s = slot(&t.ty);
            Tmpl::Node(
                Node::NatApp(Box::new(rhs_template(f, tf, nvars, ctx, slots)), n.clone()),
                s,
            )
        }
        (ExprKind::NatLam(_, b), Node::NatLam(tb)) => {
            let s = slot(&t.ty);
            Tmpl::Node(
                Node::NatLam(Box::new(rhs_template(b, tb, nvars, ctx, slots))),
                s,
            )
        }
        (_, n) => Tmpl::Node(n.map(|_| unreachable!("leaf")), slot(&t.ty)),
    }
}

/// The encoding's own rules (beta, eta, substitution), as egglog text for the plain egglog
/// rules and as comments for the Rust ones, for `sketchlog rules`.
pub fn substitution_rules(encoding: Encoding) -> String {
    use crate::egraph::{explicit, names};
    let rust = |rules: &[(&str, &str)]| {
        rules
            .iter()
            .map(|(name, query)| format!(";; {name} (Rust): {query}\n"))
            .collect::<String>()
    };
    let eta_db = (
        "eta",
        "(= e (Lam (App f (Var 0 vt) at) (TFun vt at))), 0 not free in f",
    );
    let eta_names = (
        "eta-names",
        "(= e (NamedLam x (App f (NamedVar x vt) at) (TFun vt at))), x not free in f",
    );
    match (encoding.substitution, encoding.binding) {
        (Substitution::Extraction, Binding::DeBruijn) => {
            rust(&[("beta-extract", "(= e (App (Lam body lt) arg at))"), eta_db])
        }
        (Substitution::Extraction, Binding::Names) => rust(&[
            (
                "beta-extract-names",
                "(= e (App (NamedLam x body lt) arg at))",
            ),
            eta_names,
        ]),
        (Substitution::Explicit, Binding::DeBruijn) => {
            explicit::STRUCTURAL.replace("RS", "rw")
                + &rust(&[
                    (
                        "sig-var-const",
                        "(= e (Sig i a x t)), a's representative a variable or constant",
                    ),
                    (
                        "phi-var-const",
                        "(= e (Phi d k a t)), a's representative a variable or constant",
                    ),
                    eta_db,
                ])
        }
        (Substitution::Explicit, Binding::Names) => {
            names::LET_RULES.replace("RS", "rw")
                + &rust(&[
                    (
                        "let-lam-other",
                        "(= e (Let v a (NamedLam w body (TFun p r)) t)) (!= v w)",
                    ),
                    eta_names,
                ])
        }
    }
}

/// Compiles one rule (type-checking it) for the efficient encoding.
pub fn compile(rule: &RuleDecl) -> Result<CompiledRule> {
    compile_for(rule, Encoding::EFFICIENT)
}

/// Compiles one rule for the given encoding.
pub fn compile_for(rule: &RuleDecl, encoding: Encoding) -> Result<CompiledRule> {
    let (vars, nat_vars) = super::pattern_vars(&rule.lhs);
    let typing = type_rule(&rule.lhs, &rule.rhs, &vars, &nat_vars)?;
    let mut lc = LhsCompiler {
        facts: vec![],
        params: vec![],
        nvars: vars.len(),
        nat_vars: &nat_vars,
        lhs_ctx: vec![None; vars.len()],
        type_vars: 0,
        span: &rule.span,
        binders: (encoding.binding == Binding::Names).then(Vec::new),
        binder_stack: vec![],
    };
    let pattern = lc.pattern(&rule.lhs, &typing.lhs, &mut vec![])?;
    // A lone pattern variable (`(e : ?n.f32) => ...`) matches every class of its type: the
    // query is on the class's type, and the variable is the matched class itself.
    let lone = !pattern.starts_with('(');
    let mut type_query_vars = vec![];
    let query = if lone {
        if !matches!(rule.lhs.kind, ExprKind::Annot(..)) {
            return Err(Error::at(
                &rule.span,
                "a lone pattern variable on the left-hand side needs a type: `(e : ?n.f32)`",
            ));
        }
        let mut fresh = |sort: &'static str| {
            type_query_vars.push((format!("q{}", type_query_vars.len()), sort));
            type_query_vars.last().unwrap().0.clone()
        };
        let mut nat_holes = vec![];
        let ty = crate::egraph::encode::type_sexpr_with(
            &typing.lhs.ty,
            &mut |n| {
                Ok(match crate::egraph::encode::nat_term(n) {
                    Some(t) if n.as_const().is_some() => t.sexpr(),
                    _ => {
                        nat_holes.push(());
                        format!("qn{}", nat_holes.len() - 1)
                    }
                })
            },
            &mut || fresh("Type"),
        )?;
        type_query_vars.extend((0..nat_holes.len()).map(|i| (format!("qn{i}"), "Nat")));
        format!("(= (ty root) {ty})")
    } else {
        std::iter::once(format!("(= root {pattern})"))
            .chain(lc.facts.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let lhs_ctx: Vec<Vec<String>> = lc
        .lhs_ctx
        .iter()
        .map(|c| c.clone().unwrap_or_default())
        .collect();
    let mut slot_types = vec![];
    let rhs = rhs_template(
        &rule.rhs,
        &typing.rhs,
        vars.len(),
        &mut vec![],
        &mut slot_types,
    );

    let mut not_free = vec![];
    for (binder, var) in &rule.not_free {
        let k = vars.iter().position(|v| v == var).ok_or_else(|| {
            Error::at(
                &rule.span,
                format!("`{var}` in `where` is not a pattern variable"),
            )
        })?;
        let pos = lhs_ctx[k]
            .iter()
            .rposition(|b| b == binder)
            .ok_or_else(|| {
                Error::at(
                    &rule.span,
                    format!("`{binder}` is not a binder around `{var}` on the left-hand side"),
                )
            })?;
        not_free.push((k, (lhs_ctx[k].len() - 1 - pos) as u32));
    }
    // Every binder a pattern variable may use on the left must exist around it on the right.
    check_holes(&rhs, &vars, &lhs_ctx, &rule.not_free, &rule.span)?;

    let mut cb_vars = vec![("root".to_string(), "Expr")];
    if !lone {
        cb_vars.extend((0..vars.len()).map(|k| (format!("v{k}"), "Expr")));
    }
    cb_vars.extend(nat_vars.iter().map(|n| (format!("n_{n}"), "Nat")));
    cb_vars.extend((0..lc.type_vars).map(|i| (format!("ty{i}"), "Type")));
    cb_vars.extend(type_query_vars);
    let lhs_binders: Vec<(String, usize)> = lc
        .binders
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(k, name)| {
            cb_vars.push((format!("bn{k}"), "String"));
            (name, cb_vars.len() - 1)
        })
        .collect();
    let mut rhs_binders = vec![];
    if encoding.binding == Binding::Names {
        pre_order_binders(&rule.rhs, &mut rhs_binders);
        let shared = |x: &String| lhs_binders.iter().filter(|(n, _)| n == x).count() > 1;
        if let Some(x) = rhs_binders.iter().find(|x| shared(x)) {
            return Err(Error::at(
                &rule.span,
                format!("with names, a right-hand side binder `{x}` must name one left-hand side binder, not several"),
            ));
        }
    }
    Ok(CompiledRule {
        name: rule.name.clone(),
        encoding,
        lone,
        query,
        vars: cb_vars,
        var_types: typing.var_types,
        root_type: typing.lhs.ty.clone(),
        lhs_ctx,
        not_free,
        lhs_binders,
        rhs_binders,
        nat_vars,
        rhs_nats: {
            let mut nats = vec![];
            pre_order_nats(&rhs, &mut nats);
            nats.into_iter().cloned().collect()
        },
        rhs,
        slot_types,
        typings: Default::default(),
        filter: Filter::default(),
    })
}

fn check_holes(
    t: &Tmpl,
    vars: &[String],
    lhs_ctx: &[Vec<String>],
    not_free: &[(String, String)],
    span: &Span,
) -> Result<()> {
    match t {
        Tmpl::Hole { var, ctx } => {
            for b in &lhs_ctx[*var] {
                let declared = not_free.iter().any(|(x, v)| x == b && *v == vars[*var]);
                if !ctx.contains(b) && !declared {
                    return Err(Error::at(span, format!(
                        "pattern variable `{}` may use `{b}`, which the right-hand side does not bind around it; add `where {b} notin {}`",
                        vars[*var], vars[*var]
                    )));
                }
            }
            Ok(())
        }
        Tmpl::Bound(..) => Ok(()),
        Tmpl::Vectorize(f, _) => check_holes(f, vars, lhs_ctx, not_free, span),
        Tmpl::Node(n, _) => n
            .children()
            .iter()
            .try_for_each(|c| check_holes(c, vars, lhs_ctx, not_free, span)),
    }
}

/// What the RHS needs from one typing of a match (cached by the matched types and sizes).
#[derive(Debug)]
struct Typing {
    /// The type of each RHS slot, as an e-graph value, with the width of its first vector
    /// type (what `vectorize` needs; decoded types are large).
    slots: Vec<(Value, Option<Nat>)>,
    /// The size of each RHS size application, in pre-order, as e-graph values.
    nats: Vec<Value>,
}

/// What building a right-hand side needs from a match.
struct Match<'m> {
    values: &'m [Value],
    typing: Arc<Typing>,
    /// The next of `typing.nats` to use.
    next_nat: std::cell::Cell<usize>,
    /// With names: the next of the rule's `rhs_binders`, and the (rule name, name value) of
    /// the RHS binders around the node being built, innermost last.
    next_binder: std::cell::Cell<usize>,
    binders: std::cell::RefCell<Vec<(String, Value)>>,
}

impl Match<'_> {
    fn next(counter: &std::cell::Cell<usize>) -> usize {
        counter.replace(counter.get() + 1)
    }
}

impl CompiledRule {
    fn with_nats(&self, t: &Type, nats: &[Nat]) -> Type {
        if self.nat_vars.is_empty() {
            return t.clone();
        }
        t.map_nats(0, &mut |n, _| self.subst_nats(n, nats))
    }

    fn subst_nats(&self, n: &Nat, nats: &[Nat]) -> Nat {
        n.substitute(&mut |a| match a {
            NatAtom::Var(v) => self
                .nat_vars
                .iter()
                .position(|x| x == v)
                .map(|i| nats[i].clone()),
            _ => None,
        })
    }

    /// Unifies the rule's types with the matched ones and returns the RHS slots' types.
    fn type_rhs(
        &self,
        b: &mut Builder,
        snap: &Snapshot,
        values: &[Value],
        nats: &[Nat],
    ) -> Option<Arc<Typing>> {
        let mut m = Matcher::default();
        for (k, t) in self.var_types.iter().enumerate() {
            let actual = snap.class_type(values[1 + k])?;
            if !m.unify(&self.with_nats(t, nats), actual) {
                return None;
            }
        }
        let root_ty = snap.class_type(values[0])?;
        if !m.unify(&self.with_nats(&self.root_type, nats), root_ty) || !m.solve() {
            return None;
        }
        let slots = self
            .slot_types
            .iter()
            .map(|t| {
                let t = m.resolve(&self.with_nats(t, nats));
                if t.has_metas() || !self.filter.admits(&t) {
                    return None;
                }
                Some((b.type_value(&t)?, vector_width(&t).cloned()))
            })
            .collect::<Option<_>>()?;
        let nats = self
            .rhs_nats
            .iter()
            .map(|n| b.nat_value(&self.subst_nats(n, nats)))
            .collect::<Option<_>>()?;
        Some(Arc::new(Typing { slots, nats }))
    }

    /// Fires on one match: checks types and conditions, builds the RHS.
    fn apply(&self, b: &mut Builder, snap: &Snapshot, values: &[Value]) -> Option<Value> {
        for (k, j) in &self.not_free {
            let free = match self.encoding.binding {
                Binding::DeBruijn => snap.may_be_free(values[1 + k], *j),
                Binding::Names => {
                    let lhs = &self.lhs_ctx[*k];
                    let binder = &lhs[lhs.len() - 1 - *j as usize];
                    snap.may_have_free_name(values[1 + k], self.lhs_binder(binder, values)?)
                }
            };
            if free {
                return None;
            }
        }
        let nvars = self.var_types.len();
        let nat_values = &values[1 + nvars..1 + nvars + self.nat_vars.len()];
        let mut key: Vec<Value> = (0..=nvars)
            .map(|k| snap.class_type_value(values[k]))
            .collect::<Option<_>>()?;
        key.extend_from_slice(nat_values);
        let mut typings = self.typings.lock().unwrap();
        let typing = match typings.get(&key) {
            Some(t) => t.clone()?,
            None => {
                let nats: Vec<Nat> = nat_values
                    .iter()
                    .map(|v| snap.nat(*v).cloned())
                    .collect::<Option<_>>()?;
                let t = self.type_rhs(b, snap, values, &nats);
                typings.insert(key, t.clone());
                t?
            }
        };
        drop(typings);
        let m = Match {
            values,
            typing,
            next_nat: Default::default(),
            next_binder: Default::default(),
            binders: Default::default(),
        };
        self.build(&self.rhs, b, &m)
    }

    /// The matched name of the LHS binder the rule calls `x`.
    fn lhs_binder(&self, x: &str, values: &[Value]) -> Option<Value> {
        let (_, k) = self.lhs_binders.iter().find(|(n, _)| n == x)?;
        Some(values[*k])
    }

    /// With names, a pattern variable's class used as it is: it must not have free the name
    /// of an RHS binder around it that was not around it on the left (it would be captured).
    fn named_hole(&self, class: Value, var: usize, snap: &Snapshot, m: &Match) -> Option<Value> {
        let lhs = &self.lhs_ctx[var];
        let captures = m
            .binders
            .borrow()
            .iter()
            .any(|(x, v)| !lhs.contains(x) && snap.may_have_free_name(class, *v));
        (!captures).then_some(class)
    }

    /// The name value of the next RHS binder: the matched name of the LHS binder of the same
    /// name, or a name derived from the matched root class.
    fn rhs_binder(&self, b: &mut Builder, m: &Match) -> Value {
        let x = &self.rhs_binders[Match::next(&m.next_binder)];
        self.lhs_binder(x, m.values)
            .unwrap_or_else(|| b.base(format!("{x}_{}", class_number(m.values[0]))))
    }

    fn build(&self, t: &Tmpl, b: &mut Builder, m: &Match) -> Option<Value> {
        match t {
            Tmpl::Hole { var, ctx } => {
                let class = m.values[1 + var];
                if self.encoding.binding == Binding::Names {
                    return self.named_hole(class, *var, b.snap(), m);
                }
                let lhs = &self.lhs_ctx[*var];
                if lhs == ctx {
                    return Some(class);
                }
                let map = |j: u32| -> Option<u32> {
                    let j = j as usize;
                    if j < lhs.len() {
                        let name = &lhs[lhs.len() - 1 - j];
                        ctx.iter()
                            .rposition(|c| c == name)
                            .map(|p| (ctx.len() - 1 - p) as u32)
                    } else {
                        Some((j - lhs.len() + ctx.len()) as u32)
                    }
                };
                match self.encoding.substitution {
                    Substitution::Extraction => b.reindex(class, 0, &map, &mut Default::default()),
                    Substitution::Explicit => {
                        let (d, k) = as_shift(&map, lhs.len())?;
                        if d == 0 {
                            return Some(class);
                        }
                        let (dv, kv) = (b.base(d), b.base(k as i64));
                        let ty = b.snap().class_type_value(class)?;
                        Some(b.add(Con::Phi, vec![dv, kv, class], ty))
                    }
                }
            }
            Tmpl::Bound(i, slot) => {
                let ty = m.typing.slots[*slot].0;
                match self.encoding.binding {
                    Binding::DeBruijn => Some(b.var(*i, ty)),
                    Binding::Names => {
                        let binders = m.binders.borrow();
                        let name = binders[binders.len() - 1 - *i as usize].1;
                        Some(b.add(Con::NamedVar, vec![name], ty))
                    }
                }
            }
            Tmpl::Vectorize(f, slot) => {
                let f = self.build(f, b, m)?;
                b.vectorize(f, m.typing.slots[*slot].1.as_ref()?)
            }
            Tmpl::Node(n, slot) => {
                let (name, inputs) = match n {
                    Node::App(f, x) => (Con::App, vec![self.build(f, b, m)?, self.build(x, b, m)?]),
                    Node::Lam(body) if self.encoding.binding == Binding::Names => {
                        let x = self.rhs_binders[m.next_binder.get()].clone();
                        let name = self.rhs_binder(b, m);
                        m.binders.borrow_mut().push((x, name));
                        let body = self.build(body, b, m);
                        m.binders.borrow_mut().pop();
                        (Con::NamedLam, vec![name, body?])
                    }
                    Node::Lam(body) => (Con::Lam, vec![self.build(body, b, m)?]),
                    Node::NatLam(body) => (Con::NatLam, vec![self.build(body, b, m)?]),
                    Node::NatApp(f, _) => {
                        // Sizes are used in pre-order: this one before those inside `f`.
                        let n = m.typing.nats[Match::next(&m.next_nat)];
                        (Con::NatApp, vec![self.build(f, b, m)?, n])
                    }
                    Node::Prim(p) => (Con::Prim, vec![b.base(p.name())]),
                    Node::F32(x) => (Con::F32, vec![b.base(x.0 as f64)]),
                    Node::Int(i) => (Con::Int, vec![b.base(*i)]),
                    Node::Var(_) => unreachable!("variables are holes or bound"),
                };
                Some(b.add(name, inputs, m.typing.slots[*slot].0))
            }
        }
    }
}

/// The sizes of the template's size applications, in pre-order.
fn pre_order_nats<'t>(t: &'t Tmpl, out: &mut Vec<&'t Nat>) {
    match t {
        Tmpl::Node(node, _) => {
            if let Node::NatApp(_, n) = node {
                out.push(n);
            }
            node.children().iter().for_each(|c| pre_order_nats(c, out));
        }
        Tmpl::Vectorize(f, _) => pre_order_nats(f, out),
        Tmpl::Hole { .. } | Tmpl::Bound(..) => {}
    }
}

/// The binder names of a right-hand side's lambdas, in pre-order.
fn pre_order_binders(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Lam(x, _, b) => {
            out.push(x.clone());
            pre_order_binders(b, out);
        }
        ExprKind::App(f, x) => {
            pre_order_binders(f, out);
            pre_order_binders(x, out);
        }
        ExprKind::NatLam(_, b) | ExprKind::Annot(b, _) | ExprKind::NatApp(b, _) => {
            pre_order_binders(b, out)
        }
        ExprKind::Var(_) | ExprKind::F32(_) | ExprKind::Int(_) => {}
    }
}

/// The width of the first vector type in `t` (the type of a `vectorize` result).
fn vector_width(t: &Type) -> Option<&Nat> {
    match t {
        Type::Vector(_, n) => Some(n),
        Type::Arr(_, e) => vector_width(e),
        Type::Pair(a, b) | Type::Fun(a, b) => vector_width(a).or_else(|| vector_width(b)),
        _ => None,
    }
}

/// Writes a re-indexing of a pattern variable's free variables (`map`, over a context of
/// `bound` binders) as a shift `phi(d, k)`: indices below `k` stay (or are unused), those from
/// `k` on move by `d`. `None` if it is not a shift.
fn as_shift(map: &dyn Fn(u32) -> Option<u32>, bound: usize) -> Option<(i64, u32)> {
    let d = map(bound as u32)? as i64 - bound as i64;
    (0..=bound as u32).find_map(|k| {
        let fits = (0..bound as u32).all(|j| match map(j) {
            None => true,
            Some(m) if j < k => m == j,
            Some(m) => m as i64 == j as i64 + d,
        });
        fits.then_some((d, k))
    })
}

/// Adds compiled rules to `ruleset` as Rust rules reading `snapshot`; their new e-nodes
/// must pass `filter`'s type conditions.
pub fn add_rules(
    eg: &mut EGraph,
    ruleset: &str,
    rules: Vec<CompiledRule>,
    snapshot: &SharedSnapshot,
    filter: &Filter,
) -> Result<()> {
    use crate::egraph::rust_rule::rust_rule;
    use egglog::prelude::*;
    let _ = add_ruleset(eg, ruleset);
    for mut rule in rules {
        rule.filter = filter.clone();
        let sorts: Vec<(String, egglog::ArcSort)> = rule
            .vars
            .iter()
            .map(|(n, s)| (n.clone(), crate::egraph::sort(eg, s)))
            .collect();
        let vars: Vec<(&str, egglog::ArcSort)> =
            sorts.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
        let facts = parse_facts(eg, &rule.query)?;
        let rule = Arc::new(rule);
        let snap = snapshot.clone();
        let r = rule.clone();
        // A callback's `None` would abort the run: a match that does not fit returns `Some`.
        rust_rule(
            eg,
            &rule.name,
            ruleset,
            &vars,
            facts,
            move |mut ws, values| {
                let snap = snap.read().unwrap();
                let mut b = Builder::new(&snap, &mut ws);
                let rhs = if r.lone {
                    r.apply(&mut b, &snap, &[values[0], values[0]])
                } else {
                    r.apply(&mut b, &snap, values)
                };
                union_if(&mut ws, values[0], rhs)
            },
        )
        .map_err(|e| Error::bad_input(format!("rule {}: {e}", rule.name)))?;
    }
    Ok(())
}

/// Parses egglog facts text into the AST `rust_rule` takes.
pub(crate) fn parse_facts(
    eg: &mut EGraph,
    text: &str,
) -> Result<egglog::ast::Facts<String, String>> {
    let cmds = eg
        .parse_program(None, &format!("(rule ({text}) ())"))
        .map_err(|e| Error::internal(format!("compiled query does not parse: {e}")))?;
    match cmds.into_iter().next() {
        Some(egglog::ast::Command::Rule { rule, .. }) => Ok(egglog::ast::Facts(rule.body)),
        _ => Err(Error::internal("compiled query is not a rule")),
    }
}

/// Compiles and adds rules; a rule that does not type-check is an error at its location.
pub fn install(
    eg: &mut EGraph,
    ruleset: &str,
    rules: &[RuleDecl],
    snapshot: &SharedSnapshot,
) -> Result<()> {
    install_for(
        eg,
        ruleset,
        rules,
        snapshot,
        Encoding::EFFICIENT,
        &Filter::default(),
    )
}

/// [`install`] for the given encoding.
pub fn install_for(
    eg: &mut EGraph,
    ruleset: &str,
    rules: &[RuleDecl],
    snapshot: &SharedSnapshot,
    encoding: Encoding,
    filter: &Filter,
) -> Result<()> {
    let compiled = rules
        .iter()
        .map(|r| compile_for(r, encoding))
        .collect::<Result<Vec<_>>>()?;
    add_rules(eg, ruleset, compiled, snapshot, filter)
}
