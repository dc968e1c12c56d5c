//! Compiling named rules to an encoding (paper section 4.5): De Bruijn indices or names,
//! extraction-based or explicit substitution. The efficient encoding (De Bruijn,
//! extraction) is the one sketchlog searches with; the others exist for Table 2.
//!
//! The left-hand side becomes an egglog query over the schema's constructors; the
//! right-hand side a template ([`CompiledRule`]) that a semi-naive Rust rule builds on each
//! match (`rhs`): pattern variables are re-indexed on their classes' representatives when they
//! move between binders (`map-fusion`'s `f` goes under a new lambda), `notin` conditions are
//! checked on the free-variable analysis, and the types of the new e-nodes come from unifying
//! the rule's typed sides with the types of the matched e-classes (a rule whose types do not
//! fit a match does not fire).
//!
//! With names, binders on the left-hand side match any name (a query variable), a
//! right-hand side binder that shares a left-hand one's name reuses the matched name, and a
//! new binder is named after the matched e-class id (`y_42`); a pattern variable placed
//! under a binder whose name it may have free does not fire (it would be captured).

use super::backend::{self, Backend};
use super::rhs::Typing;
use crate::egraph::encoding::{Binding, Encoding};
use crate::egraph::filter::Filter;
use crate::egraph::schema::{Arg, Con};
use crate::egraph::views::View;
use crate::error::{Error, Result};
use crate::rise::infer::{metas_of, type_rule, Meta, MetaRoom};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::syntax::{Expr, ExprKind, RuleDecl};
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use crate::source::Span;
use egglog::Value;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// A right-hand side template. Each typed node has a `slot` in the list of the RHS's types.
#[derive(Debug, Clone)]
pub(super) enum Tmpl {
    /// Pattern variable `var`, under the RHS binders `ctx` (outermost first).
    Hole {
        var: usize,
        ctx: Vec<String>,
    },
    Bound(u32, usize),
    Node(Node<Box<Tmpl>>, usize),
    /// A function of what `f` matched, built in Rust: `vectorize f` (its vector version) or
    /// `generalize f` (made size-polymorphic and applied to its sizes).
    Built(Prim, Box<Tmpl>, usize),
}

/// A typed node of a right-hand side: its type with the rule's metavariables, its size if it
/// is a size application and its binder's name (in the rule) if it is a lambda.
#[derive(Debug, Clone)]
pub(super) struct Slot {
    pub ty: Type,
    /// The metavariables of `ty`: the slot's type is known when all are resolved.
    pub metas: Vec<Meta>,
    pub nat: Option<Nat>,
    pub binder: Option<String>,
}

/// A rule compiled for an encoding.
#[derive(Debug)]
pub struct CompiledRule {
    pub name: String,
    /// The encoding's part of the right-hand side.
    pub(super) backend: &'static dyn Backend,
    /// The egglog query (facts), binding `root`, the pattern variables and size variables.
    pub query: String,
    /// The left-hand side is one (typed) pattern variable: it is `root`.
    pub(super) lone: bool,
    /// Callback variables: `root`, pattern variables `v0..`, size variables `n_<name>..`
    /// (and with names, the left-hand side's binders). The query's type variables are not
    /// among them: the right-hand side reads the matched classes' types from the snapshot, and
    /// egglog's planner binds a variable that one atom holds and the action does not use only
    /// where it must (a type variable made a join stage of its own).
    pub(super) vars: Vec<(String, &'static str)>,
    pub(super) var_types: Vec<Type>,
    pub(super) root_type: Type,
    /// The LHS binders around each pattern variable (outermost first).
    pub(super) lhs_ctx: Vec<Vec<String>>,
    /// (pattern variable, free index in its LHS context) that must not be free.
    pub(super) not_free: Vec<(usize, u32)>,
    /// Pattern variables that must match row stencils.
    pub(super) stencils: Vec<usize>,
    /// With names: each LHS binder's name in the rule and the callback variable holding the
    /// matched name.
    pub(super) lhs_binders: Vec<(String, usize)>,
    pub(super) nat_vars: Vec<String>,
    pub(super) rhs: Tmpl,
    /// What each RHS node needs besides its children, by slot.
    pub(super) slots: Vec<Slot>,
    /// How many metavariables the rule's types number: a typing's matcher makes room for them.
    pub(super) meta_room: MetaRoom,
    /// Matched types (root, pattern variables) and sizes -> the RHS slots' type values, or
    /// `None` when the rule's types do not fit. Types are hash-consed, so this is exact.
    pub(super) typings: std::sync::Mutex<HashMap<Vec<Value>, Option<Arc<Typing>>>>,
    /// New e-nodes whose types fail the filter are not built (the rewrite does not fire).
    pub(super) filter: Filter,
    /// The views the query reads (declared with the rule).
    pub(super) views: Vec<View>,
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Annot(inner, _) => strip(inner),
        _ => e,
    }
}

/// The fewest arguments a spine needs to become a view: a primitive applied to one argument
/// is an `App` atom over the small `Prim` table, and its view would save only that join.
const VIEW_ARITY: usize = 2;

/// The fewest spines a query must join to read views: one spine alone would only move its
/// join into the view's rule and keep a relation as large as its matches.
const VIEW_SPINES: usize = 2;

struct LhsCompiler<'r> {
    /// Extra facts: the type of each lambda whose variable the pattern uses, split into
    /// parameter and result (the variable's type is then the parameter's: an e-class can
    /// hold terms from other contexts, where the index is another variable).
    facts: Vec<String>,
    /// The parameter-type variable of each enclosing lambda, and whether the pattern uses
    /// its variable, innermost last.
    params: Vec<(String, bool)>,
    /// With names, the query variable of each LHS binder's name (`bn<k>`) and the rule's
    /// name for it, in pre-order; `None` with De Bruijn indices.
    binders: Option<Vec<String>>,
    /// The binder variables of the enclosing lambdas, innermost last.
    binder_stack: Vec<String>,
    nvars: usize,
    nat_vars: &'r [String],
    lhs_ctx: Vec<Option<Vec<String>>>,
    type_vars: usize,
    /// Whether spines become views, and the views the query reads.
    use_views: bool,
    views: Vec<View>,
    /// Whether the pattern being compiled is the whole left-hand side (a view there binds
    /// `root` itself).
    top: bool,
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

    /// An application spine headed by a primitive, `p a1 .. ak`, as one view atom
    /// ([`crate::egraph::views`]); its class is the returned variable.
    fn view(&mut self, e: &Expr, t: &Term, ctx: &mut Vec<String>) -> Option<Result<String>> {
        if !self.use_views {
            return None;
        }
        let mut args = vec![];
        let (mut e, mut t) = (e, t);
        while let (ExprKind::App(f, x), Node::App(tf, tx)) = (&strip(e).kind, &t.node) {
            args.push((x, tx));
            (e, t) = (f, tf);
        }
        let prim = match t.node {
            Node::Prim(p) if p != Prim::Vectorize && args.len() >= VIEW_ARITY => p,
            _ => return None,
        };
        let out = match std::mem::take(&mut self.top) {
            true => "root".to_string(),
            false => format!("w{}", self.views.len()),
        };
        let view = View {
            prim,
            arity: args.len(),
        };
        self.views.push(view);
        let args = args
            .into_iter()
            .rev()
            .map(|(x, tx)| self.pattern(x, tx, ctx));
        Some(args.collect::<Result<Vec<_>>>().map(|args| {
            self.facts.push(view.atom(&out, &args));
            out
        }))
    }

    fn pattern(&mut self, e: &Expr, t: &Term, ctx: &mut Vec<String>) -> Result<String> {
        if let Some(view) = self.view(e, t, ctx) {
            return view;
        }
        self.top = false;
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
                let k = self.params.len() - 1 - *i as usize;
                self.params[k].1 = true;
                let param = &self.params[k].0;
                match self.binders {
                    None => Con::Var.apply(&[&i.to_string(), param]),
                    Some(_) => {
                        let name = &self.binder_stack[self.binder_stack.len() - 1 - *i as usize];
                        Con::NamedVar.apply(&[name, param])
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
            (ExprKind::Lam(x, _, b), Node::Lam(tb)) => {
                let (param, result) = (self.fresh_ty(), self.fresh_ty());
                let fact = self.facts.len();
                self.facts.push(format!("(= {ty} (TFun {param} {result}))"));
                self.params.push((param, false));
                ctx.push(x.clone());
                let binder = self.binders.as_mut().map(|names| {
                    names.push(x.clone());
                    format!("bn{}", names.len() - 1)
                });
                self.binder_stack.extend(binder.clone());
                let b = self.pattern(b, tb, ctx);
                ctx.pop();
                // A lambda whose variable the pattern does not use needs no type split: one
                // atom and one join fewer (the facts of lambdas inside it, later in the list,
                // are settled already).
                if self.params.pop().is_some_and(|(_, used)| !used) {
                    self.facts.remove(fact);
                }
                match binder {
                    None => Con::Lam.apply(&[b?, ty]),
                    Some(name) => {
                        self.binder_stack.pop();
                        Con::NamedLam.apply(&[name, b?, ty])
                    }
                }
            }
            (_, Node::Prim(p @ (Prim::Vectorize | Prim::Generalize))) => {
                return Err(Error::at(
                    self.span,
                    format!(
                        "`{}` builds a right-hand side; it cannot be matched",
                        p.name()
                    ),
                ))
            }
            (kind, node) => {
                let shape = || Error::internal("rule and its typed form differ in shape");
                let mut kids = match kind {
                    ExprKind::App(f, x) | ExprKind::Comp(f, x) => vec![f, x],
                    ExprKind::NatApp(f, _) | ExprKind::NatLam(_, f) => vec![f],
                    _ => vec![],
                }
                .into_iter();
                let (con, args) = Con::of(node);
                let mut fields = vec![];
                for arg in args {
                    fields.push(match arg {
                        Arg::Child(t) => {
                            let e = kids
                                .next()
                                .ok_or_else(shape)
                                .map_err(|e| e.or_at(self.span))?;
                            self.pattern(e, t, ctx)?
                        }
                        Arg::Nat(n) => self.nat(n)?,
                        base => base.literal().expect("a base payload"),
                    });
                }
                if kids.next().is_some()
                    || (con == Con::NatLam) != matches!(kind, ExprKind::NatLam(..))
                {
                    return Err(shape().or_at(self.span));
                }
                fields.push(ty);
                con.apply(&fields)
            }
        })
    }
}

fn rhs_template(
    e: &Expr,
    t: &Term,
    nvars: usize,
    ctx: &mut Vec<String>,
    slots: &mut Vec<Slot>,
) -> Tmpl {
    let e = strip(e);
    let depth = ctx.len() as u32;
    let mut slot = |ty: &Type| {
        slots.push(Slot {
            ty: ty.clone(),
            metas: metas_of(ty),
            nat: None,
            binder: None,
        });
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
            slots[s].binder = Some(x.clone());
            ctx.push(x.clone());
            let b = rhs_template(b, tb, nvars, ctx, slots);
            ctx.pop();
            Tmpl::Node(Node::Lam(Box::new(b)), s)
        }
        (ExprKind::App(_, x), Node::App(tf, tx))
            if matches!(tf.node, Node::Prim(Prim::Vectorize | Prim::Generalize)) =>
        {
            let Node::Prim(p) = tf.node else {
                unreachable!("matched above")
            };
            let s = slot(&t.ty);
            Tmpl::Built(p, Box::new(rhs_template(x, tx, nvars, ctx, slots)), s)
        }
        (ExprKind::App(f, x), Node::App(tf, tx)) => {
            let s = slot(&t.ty);
            let f = rhs_template(f, tf, nvars, ctx, slots);
            let x = rhs_template(x, tx, nvars, ctx, slots);
            Tmpl::Node(Node::App(Box::new(f), Box::new(x)), s)
        }
        (ExprKind::Comp(f, g), Node::Comp(tf, tg)) => {
            let s = slot(&t.ty);
            let f = rhs_template(f, tf, nvars, ctx, slots);
            let g = rhs_template(g, tg, nvars, ctx, slots);
            Tmpl::Node(Node::Comp(Box::new(f), Box::new(g)), s)
        }
        (ExprKind::NatApp(f, _), Node::NatApp(tf, n)) => {
            let s = slot(&t.ty);
            slots[s].nat = Some(n.clone());
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

/// Compiles one rule (type-checking it) for the efficient encoding.
pub fn compile(rule: &RuleDecl) -> Result<CompiledRule> {
    compile_for(rule, Encoding::EFFICIENT)
}

/// Compiles one rule for the given encoding.
pub fn compile_for(rule: &RuleDecl, encoding: Encoding) -> Result<CompiledRule> {
    compile_typed(rule, encoding).map(|(compiled, _)| compiled)
}

/// [`compile_for`], with the typed left-hand side: pattern variable `k` of `n` is index
/// `depth + n - 1 - k` under `depth` binders.
pub(super) fn compile_typed(
    rule: &RuleDecl,
    encoding: Encoding,
) -> Result<(CompiledRule, std::rc::Rc<Term>)> {
    let (vars, nat_vars) = super::pattern_vars(&rule.lhs);
    let typing = type_rule(&rule.lhs, &rule.rhs, &vars, &nat_vars)?;
    let compile_lhs = |use_views: bool| {
        let mut lc = LhsCompiler {
            facts: vec![],
            params: vec![],
            nvars: vars.len(),
            nat_vars: &nat_vars,
            lhs_ctx: vec![None; vars.len()],
            type_vars: 0,
            use_views,
            views: vec![],
            top: true,
            span: &rule.span,
            binders: (encoding.binding == Binding::Names).then(Vec::new),
            binder_stack: vec![],
        };
        lc.pattern(&rule.lhs, &typing.lhs, &mut vec![])
            .map(|pattern| (lc, pattern))
    };
    let (mut lc, pattern) = match compile_lhs(true)? {
        (lc, _) if lc.views.len() < VIEW_SPINES => compile_lhs(false)?,
        compiled => compiled,
    };
    // A lone pattern variable (`(e : ?n.f32) => ...`) matches every class of its type: the
    // query is on the class's type, and the variable is the matched class itself. (A variable
    // at the top of the left-hand side, under no binder, is a pattern variable.)
    let lone = matches!(typing.lhs.node, Node::Var(_));
    let query = if lone {
        if !matches!(rule.lhs.kind, ExprKind::Annot(..)) {
            return Err(Error::at(
                &rule.span,
                "a lone pattern variable on the left-hand side needs a type: `(e : ?n.f32)`",
            ));
        }
        let (mut types, mut nats) = (0, 0);
        let ty = crate::egraph::encode::type_sexpr_with(
            &typing.lhs.ty,
            &mut |n| {
                Ok(match crate::egraph::encode::nat_term(n) {
                    Some(t) if n.as_const().is_some() => t.sexpr(),
                    _ => {
                        nats += 1;
                        format!("qn{}", nats - 1)
                    }
                })
            },
            &mut || {
                types += 1;
                format!("q{}", types - 1)
            },
        )?;
        format!("(= (ty root) {ty})")
    } else {
        // A view at the top binds `root` itself.
        (pattern != "root")
            .then(|| format!("(= root {pattern})"))
            .into_iter()
            .chain(lc.facts.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let views = std::mem::take(&mut lc.views);
    let lhs_ctx: Vec<Vec<String>> = lc
        .lhs_ctx
        .iter()
        .map(|c| c.clone().unwrap_or_default())
        .collect();
    let mut slots = vec![];
    let rhs = rhs_template(&rule.rhs, &typing.rhs, vars.len(), &mut vec![], &mut slots);

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
    let stencils = (rule.stencils.iter())
        .map(|var| {
            vars.iter().position(|v| v == var).ok_or_else(|| {
                Error::at(
                    &rule.span,
                    format!("`{var}` in `where` is not a pattern variable"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // Every binder a pattern variable may use on the left must exist around it on the right.
    check_holes(&rhs, &vars, &lhs_ctx, &rule.not_free, &rule.span)?;

    let mut cb_vars = vec![("root".to_string(), "Expr")];
    if !lone {
        cb_vars.extend((0..vars.len()).map(|k| (format!("v{k}"), "Expr")));
    }
    cb_vars.extend(nat_vars.iter().map(|n| (format!("n_{n}"), "Nat")));
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
    if encoding.binding == Binding::Names {
        let shared = |x: &String| lhs_binders.iter().filter(|(n, _)| n == x).count() > 1;
        if let Some(x) = slots
            .iter()
            .filter_map(|s| s.binder.as_ref())
            .find(|x| shared(x))
        {
            return Err(Error::at(
                &rule.span,
                format!("with names, a right-hand side binder `{x}` must name one left-hand side binder, not several"),
            ));
        }
    }
    let root_type = typing.lhs.ty.clone();
    let meta_room = MetaRoom::of(
        (typing.var_types.iter())
            .chain([&root_type])
            .chain(slots.iter().map(|s| &s.ty)),
        slots.iter().filter_map(|s| s.nat.as_ref()),
    );
    let compiled = CompiledRule {
        name: rule.name.clone(),
        backend: backend::for_encoding(encoding),
        lone,
        query,
        vars: cb_vars,
        var_types: typing.var_types,
        root_type,
        lhs_ctx,
        not_free,
        stencils,
        lhs_binders,
        nat_vars,
        rhs,
        slots,
        meta_room,
        typings: Default::default(),
        filter: Filter::default(),
        views,
    };
    Ok((compiled, typing.lhs))
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
        Tmpl::Built(_, f, _) => check_holes(f, vars, lhs_ctx, not_free, span),
        Tmpl::Node(n, _) => n
            .children()
            .iter()
            .try_for_each(|c| check_holes(c, vars, lhs_ctx, not_free, span)),
    }
}

#[cfg(test)]
mod tests {
    /// Map fusion's two `map` spines are two view atoms, the second's class the first's
    /// argument; a rule with a single spine keeps its plain atoms.
    #[test]
    fn a_query_joining_two_spines_reads_views() {
        let src = crate::source::Source::new(
            "test.rules",
            "rule map-fusion = map f (map g a) => map (fun x => f (g x)) a\n\
             rule split-join-4 = map f a => join (map (map f) (split<4> a))",
        );
        let rules = crate::rise::parse::parse_rule_file(&src).unwrap().rules;
        let fusion = super::compile(&rules[0]).unwrap();
        assert_eq!(
            fusion.query,
            "(view-map-2 w1 v1 v2) (view-map-2 root v0 w1)"
        );
        let split = super::compile(&rules[1]).unwrap();
        assert!(!split.query.contains("view-"), "{}", split.query);
    }
}
