//! Named Rise: the surface syntax tree that the parser produces and the printer prints.
//!
//! Variables are names; `let x = e in b` is sugar for the primitive application
//! `let e (fun x => b)`. Equality ignores source spans.

use super::nat::Nat;
use super::types::Type;
use crate::source::Span;

/// An f32 literal, compared and hashed by its bits.
#[derive(Clone, Copy, Debug)]
pub struct Float(pub f32);

impl PartialEq for Float {
    fn eq(&self, o: &Float) -> bool {
        self.0.to_bits() == o.0.to_bits()
    }
}
impl Eq for Float {}
impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h)
    }
}

/// A named Rise expression with its source span (None for generated terms).
#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Option<Span>,
    /// For an expression printed from a typed term, the type of that term, its sizes named
    /// as in the expression ([`super::print::print_with_types`]); `None` for one parsed.
    pub ty: Option<Type>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A variable, a primitive or a reference to an earlier definition.
    Var(String),
    /// `fun (x : t) => body`; the annotation is optional.
    Lam(String, Option<Type>, Box<Expr>),
    App(Box<Expr>, Box<Expr>),
    /// `nfun n => body`: abstraction over a size.
    NatLam(String, Box<Expr>),
    /// `dfun a => body`: abstraction over a data type. The outermost binders of a definition
    /// make it generic in their data types; elsewhere (a definition inlined into another)
    /// inference instantiates them.
    DataLam(String, Box<Expr>),
    /// `f<n>`: application to a size.
    NatApp(Box<Expr>, Nat),
    F32(Float),
    Int(i64),
    /// `(e : t)`.
    Annot(Box<Expr>, Type),
    /// `f >> g` (also written `g o f`): `f`, then `g`. Programs desugar it to a lambda as
    /// they are read; rules keep it, for the combinator normal form.
    Comp(Box<Expr>, Box<Expr>),
}

impl PartialEq for Expr {
    fn eq(&self, o: &Expr) -> bool {
        self.kind == o.kind
    }
}

impl Expr {
    pub fn new(kind: ExprKind) -> Expr {
        Expr {
            kind,
            span: None,
            ty: None,
        }
    }
    pub fn var(x: &str) -> Expr {
        Expr::new(ExprKind::Var(x.to_string()))
    }
    pub fn lam(x: &str, body: Expr) -> Expr {
        Expr::new(ExprKind::Lam(x.to_string(), None, Box::new(body)))
    }
    pub fn app(f: Expr, x: Expr) -> Expr {
        Expr::new(ExprKind::App(Box::new(f), Box::new(x)))
    }
    /// The size parameters of a definition: its leading `nfun` binders, outermost first.
    /// The names of the leading binders: size parameters, then value parameters.
    pub fn leading_names(&self) -> crate::rise::debruijn::Names {
        let mut names = crate::rise::debruijn::Names::default();
        let mut e = self;
        loop {
            match &e.kind {
                ExprKind::NatLam(x, body) if names.params.is_empty() => {
                    names.sizes.push(x.clone());
                    e = body;
                }
                ExprKind::Lam(x, _, body) => {
                    names.params.push(x.clone());
                    e = body;
                }
                ExprKind::Annot(inner, _) | ExprKind::DataLam(_, inner) => e = inner,
                _ => return names,
            }
        }
    }

    pub fn size_params(&self) -> Vec<String> {
        match &self.kind {
            ExprKind::NatLam(x, body) => {
                let mut v = vec![x.clone()];
                v.extend(body.size_params());
                v
            }
            ExprKind::Annot(inner, _) | ExprKind::DataLam(_, inner) => inner.size_params(),
            _ => vec![],
        }
    }

    /// The depth of the expression tree (computed without recursion, for any input).
    pub fn depth(&self) -> usize {
        let (mut deepest, mut todo) = (0, vec![(self, 1)]);
        while let Some((e, d)) = todo.pop() {
            deepest = deepest.max(d);
            match &e.kind {
                ExprKind::Var(_) | ExprKind::F32(_) | ExprKind::Int(_) => {}
                ExprKind::Lam(_, _, b)
                | ExprKind::NatLam(_, b)
                | ExprKind::DataLam(_, b)
                | ExprKind::NatApp(b, _)
                | ExprKind::Annot(b, _) => todo.push((b, d + 1)),
                ExprKind::App(f, x) | ExprKind::Comp(f, x) => {
                    todo.extend([(&**f, d + 1), (&**x, d + 1)])
                }
            }
        }
        deepest
    }

    /// Fails with a located error when the expression nests past
    /// [`crate::limits::MAX_NESTING`] (long application chains do, without parentheses).
    pub fn check_depth(&self, at: &Span) -> crate::error::Result<()> {
        if self.depth() > crate::limits::MAX_NESTING {
            return Err(crate::limits::too_deep(at, "the expression"));
        }
        Ok(())
    }

    /// The free occurrences of the variables `wanted` picks (binders shadow), in the order
    /// of one walk of the expression, each with its span.
    pub fn free_uses(&self, wanted: &dyn Fn(&str) -> bool) -> Vec<(&str, Option<Span>)> {
        enum Step<'e> {
            Visit(&'e Expr),
            Unbind(&'e str),
        }
        let mut bound: std::collections::HashMap<&str, usize> = Default::default();
        let (mut found, mut todo) = (vec![], vec![Step::Visit(self)]);
        while let Some(step) = todo.pop() {
            let e = match step {
                Step::Visit(e) => e,
                Step::Unbind(x) => {
                    *bound.get_mut(x).expect("bound before") -= 1;
                    continue;
                }
            };
            match &e.kind {
                ExprKind::Var(y) => {
                    if wanted(y) && bound.get(y.as_str()).is_none_or(|n| *n == 0) {
                        found.push((y.as_str(), e.span.clone()));
                    }
                }
                ExprKind::F32(_) | ExprKind::Int(_) => {}
                ExprKind::Lam(y, _, b) => {
                    *bound.entry(y.as_str()).or_default() += 1;
                    todo.extend([Step::Unbind(y.as_str()), Step::Visit(b)]);
                }
                ExprKind::NatLam(_, b)
                | ExprKind::DataLam(_, b)
                | ExprKind::NatApp(b, _)
                | ExprKind::Annot(b, _) => todo.push(Step::Visit(b)),
                ExprKind::App(f, x) | ExprKind::Comp(f, x) => {
                    todo.extend([Step::Visit(f), Step::Visit(x)])
                }
            }
        }
        found
    }

    /// The expression with each chain of compositions `f1 >> f2 >> .. >> fk` (however
    /// nested) written as the lambda `fun x => fk (.. (f1 x))`, the form beta-eta normal
    /// form has. The binders are named `x∘1`, `x∘2`, ...: names no program can write.
    pub fn expand_compositions(&self) -> Expr {
        self.expand_with(&mut 0)
    }

    fn expand_with(&self, made: &mut usize) -> Expr {
        let kind = match &self.kind {
            ExprKind::Comp(..) => {
                let mut chain = vec![];
                self.composed(&mut chain);
                *made += 1;
                let x = format!("x\u{2218}{made}");
                let span = self.span.clone();
                let body = chain.into_iter().fold(Expr::var(&x), |arg, f| Expr {
                    span: span.clone(),
                    ..Expr::app(f.expand_with(made), arg)
                });
                return Expr {
                    span,
                    ..Expr::lam(&x, body)
                };
            }
            ExprKind::Var(_) | ExprKind::F32(_) | ExprKind::Int(_) => self.kind.clone(),
            ExprKind::Lam(x, t, b) => ExprKind::Lam(x.clone(), t.clone(), b.expanded(made)),
            ExprKind::App(f, x) => ExprKind::App(f.expanded(made), x.expanded(made)),
            ExprKind::NatLam(n, b) => ExprKind::NatLam(n.clone(), b.expanded(made)),
            ExprKind::DataLam(a, b) => ExprKind::DataLam(a.clone(), b.expanded(made)),
            ExprKind::NatApp(f, n) => ExprKind::NatApp(f.expanded(made), n.clone()),
            ExprKind::Annot(e, t) => ExprKind::Annot(e.expanded(made), t.clone()),
        };
        Expr {
            kind,
            span: self.span.clone(),
            ty: self.ty.clone(),
        }
    }

    fn expanded(&self, made: &mut usize) -> Box<Expr> {
        Box::new(self.expand_with(made))
    }

    /// The functions of a chain of compositions, first applied first.
    pub fn composed<'e>(&'e self, chain: &mut Vec<&'e Expr>) {
        match &self.kind {
            ExprKind::Comp(f, g) => {
                f.composed(chain);
                g.composed(chain);
            }
            _ => chain.push(self),
        }
    }

    pub fn with_span(mut self, span: Span) -> Expr {
        self.span = Some(span);
        self
    }

    /// The expression with the free size names that `value` gives replaced by those sizes,
    /// in its size applications and type annotations; a `nfun` of the same name hides it.
    pub fn with_sizes(&self, value: &dyn Fn(&str) -> Option<Nat>) -> Expr {
        let nat = |n: &Nat| {
            n.substitute(&mut |a| match a {
                super::nat::NatAtom::Var(x) => value(x),
                _ => None,
            })
        };
        let ty = |t: &Type| t.map_nats(0, &mut |n, _| nat(n));
        let kind = match &self.kind {
            ExprKind::Var(_) | ExprKind::F32(_) | ExprKind::Int(_) => self.kind.clone(),
            ExprKind::Lam(x, t, b) => {
                ExprKind::Lam(x.clone(), t.as_ref().map(ty), Box::new(b.with_sizes(value)))
            }
            ExprKind::App(f, x) => {
                ExprKind::App(Box::new(f.with_sizes(value)), Box::new(x.with_sizes(value)))
            }
            ExprKind::Comp(f, x) => {
                ExprKind::Comp(Box::new(f.with_sizes(value)), Box::new(x.with_sizes(value)))
            }
            ExprKind::NatLam(n, b) => {
                let hidden = |x: &str| if x == n { None } else { value(x) };
                ExprKind::NatLam(n.clone(), Box::new(b.with_sizes(&hidden)))
            }
            ExprKind::DataLam(a, b) => ExprKind::DataLam(a.clone(), Box::new(b.with_sizes(value))),
            ExprKind::NatApp(f, n) => ExprKind::NatApp(Box::new(f.with_sizes(value)), nat(n)),
            ExprKind::Annot(e, t) => ExprKind::Annot(Box::new(e.with_sizes(value)), ty(t)),
        };
        Expr {
            kind,
            span: self.span.clone(),
            ty: self.ty.clone(),
        }
    }
}

/// A named definition `def name = expr` in a `.rise` file.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: String,
    pub expr: Expr,
    pub span: Span,
}

/// The definitions of one `.rise` file, in order. A definition may use earlier ones.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub defs: Vec<Def>,
}

impl Program {
    pub fn get(&self, name: &str) -> Option<&Def> {
        self.defs.iter().find(|d| d.name == name)
    }
}

/// A rewrite rule written with names: `rule NAME = LHS => RHS where x notin f, ...`.
///
/// Free identifiers that are not primitives are pattern variables; free size names in
/// `<...>` are size pattern variables. `x notin f` requires the LHS binder `x` not to be free
/// in what pattern variable `f` matches; `p stencil`, that what `p` matches is a row
/// stencil ([`crate::rise::rows`]).
#[derive(Clone, Debug)]
pub struct RuleDecl {
    pub name: String,
    /// Size parameters (`rule split-join<k> = ..`): the rule is a template, instantiated
    /// with a size for each ([`crate::rules::params`]).
    pub params: Vec<String>,
    pub lhs: Expr,
    pub rhs: Expr,
    /// (binder, pattern variable) pairs.
    pub not_free: Vec<(String, String)>,
    /// Pattern variables that must match row stencils.
    pub stencils: Vec<String>,
    pub span: Span,
}

impl RuleDecl {
    /// The rule with its compositions written as lambdas ([`Expr::expand_compositions`]):
    /// the rule a beta-eta normal form search runs.
    pub fn compositions_expanded(&self) -> RuleDecl {
        RuleDecl {
            lhs: self.lhs.expand_compositions(),
            rhs: self.rhs.expand_compositions(),
            ..self.clone()
        }
    }
}

/// A named group of rules: `ruleset NAME = rule1 rule2<lanes> ...`.
#[derive(Clone, Debug)]
pub struct RulesetDecl {
    pub name: String,
    pub rules: Vec<RuleRef>,
}

/// A rule named in a ruleset, with a size for each of its parameters: `split-join<4>`, or
/// `split-join<lanes>` (a named parameter, [`crate::rules::params::Params`]).
#[derive(Clone, Debug)]
pub struct RuleRef {
    /// The rules file of the rule, `kernel.rules` in `kernel.rules:split-join<4>`, in the
    /// folder of the file that names it; `None`: that file.
    pub file: Option<String>,
    pub name: String,
    pub args: Vec<Nat>,
    pub span: Span,
}

impl std::fmt::Display for RuleRef {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        f.write_str(&self.name)?;
        if !self.args.is_empty() {
            let args: Vec<String> = self.args.iter().map(|n| n.to_string()).collect();
            write!(f, "<{}>", args.join(", "))?;
        }
        Ok(())
    }
}

/// The contents of a `.rules` file.
#[derive(Clone, Debug, Default)]
pub struct RuleFile {
    /// Where it was read from (`None`: not from a file); the rules files its rulesets name
    /// are in its folder (or the current directory).
    pub path: Option<std::path::PathBuf>,
    /// `param NAME = VALUE`: the sizes its rulesets name, where the guide or the command
    /// line sets none ([`crate::rules::params`]).
    pub params: Vec<(String, i64)>,
    pub rules: Vec<RuleDecl>,
    pub rulesets: Vec<RulesetDecl>,
}
