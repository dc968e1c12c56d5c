//! From typed De Bruijn terms back to named Rise, with generated names and as few type
//! annotations as still determine every type.
//!
//! Named -> De Bruijn is elaboration (`infer.rs`), which also assigns the types. Shifting and
//! substitution happen in the e-graph, on e-class ids (`egraph/subst.rs`).

use super::nat::{Nat, NatAtom};
use super::primitives::Prim;
use super::syntax::{Expr, ExprKind};
use super::term::{Node, Term};
use super::types::{fresh_nat_name, Type};

/// How many lambda parameters get a type annotation when printing back to named form.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Annotate {
    /// As few as needed: the leading parameters of the program; if that does not determine
    /// every type, also the body's type; if still not, everything (as `All`).
    Leading,
    /// Every parameter and every primitive: the result always re-elaborates to the same
    /// typed term.
    All,
    /// None at all, for reading (a subterm in a rewrite path): need not re-elaborate.
    Bare,
}

/// Converts a named-free nat (indices) into named form given binder names, innermost last.
fn name_nat(n: &Nat, depth: u32, names: &[String]) -> Nat {
    n.substitute(&mut |a| match a {
        NatAtom::Index(i) if *i >= depth => {
            let k = (*i - depth) as usize;
            names
                .len()
                .checked_sub(k + 1)
                .map(|pos| Nat::var(&names[pos]))
        }
        _ => None,
    })
}

/// The type with free nat indices replaced by the given names (innermost last).
pub fn name_type(t: &Type, names: &[String]) -> Type {
    t.map_nats(0, &mut |n, depth| name_nat(n, depth, names))
}

/// The names [`to_named`] gives the leading size parameters (`nfun n m k =>`) of `t`,
/// outermost first.
pub fn leading_size_names(t: &Term) -> Vec<String> {
    let mut names = vec![];
    let mut body = t;
    loop {
        match &body.node {
            Node::NatLam(b) => {
                names.push(super::types::fresh_nat_name(&names));
                body = b;
            }
            Node::Lam(b) => body = b,
            _ => return names,
        }
    }
}

/// A fresh variable name: `x`, `y`, `z`, `u`, `v`, `w`, then `x6`, ..., by depth, skipping
/// the names in scope.
fn var_name(vars: &[String]) -> String {
    const BASE: [&str; 6] = ["x", "y", "z", "u", "v", "w"];
    (vars.len()..)
        .map(|i| match BASE.get(i) {
            Some(b) => b.to_string(),
            None => format!("x{i}"),
        })
        .find(|n| !vars.contains(n))
        .expect("some name is free")
}

/// A program's own names for its leading binders: its size parameters (`nfun m k =>`) and
/// then its value parameters (`fun (a : ..) (v : ..) =>`), outermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    pub sizes: Vec<String>,
    pub params: Vec<String>,
}

/// The leading-binder names still to use while printing.
struct Hints<'a> {
    sizes: std::slice::Iter<'a, String>,
    params: std::slice::Iter<'a, String>,
}

/// Converts a typed De Bruijn term to named Rise with generated names. The result of a
/// closed term always elaborates back to `t`; variables bound outside an open term print as
/// `%i`.
pub fn to_named(t: &Term, annotate: Annotate) -> Expr {
    to_named_as(t, annotate, &Names::default())
}

/// [`to_named`], with the leading binders named as `names` says (where a name would clash
/// with one in scope, a generated one instead).
pub fn to_named_as(t: &Term, annotate: Annotate, names: &Names) -> Expr {
    let hints = || Hints {
        sizes: names.sizes.iter(),
        params: names.params.iter(),
    };
    // The data types the term is generic in, bound by `dfun`s around it.
    let data = data_types(t);
    let named = |annotate| {
        let e = to_named_in(t, annotate, &mut vec![], &mut vec![], &mut hints(), true);
        data.iter().rev().fold(e, |body, a| {
            Expr::new(ExprKind::DataLam(a.to_string(), Box::new(body)))
        })
    };
    if annotate != Annotate::Leading {
        return named(annotate);
    }
    let leading = named(annotate);
    let candidates = [leading.clone(), annotate_body(leading, t, &mut vec![])];
    candidates
        .into_iter()
        .find(|e| super::infer::elaborate(None, e).is_ok_and(|back| *back == *t))
        .unwrap_or_else(|| named(Annotate::All))
}

/// The names of the `dfun`-bound data types in the types of `t`, in order of appearance.
fn data_types(t: &Term) -> Vec<std::sync::Arc<str>> {
    let mut names: Vec<std::sync::Arc<str>> = vec![];
    let mut todo = vec![t];
    while let Some(t) = todo.pop() {
        t.ty.for_each_type(&mut |ty| {
            if let Type::Data(a) = ty {
                if !names.contains(a) {
                    names.push(a.clone());
                }
            }
        });
        todo.extend(t.node.children().into_iter().map(|c| &**c));
    }
    names
}

/// Annotates the body under the leading `nfun`/`fun` binders with its type.
fn annotate_body(e: Expr, t: &Term, nats: &mut Vec<String>) -> Expr {
    let ty = e.ty;
    let kind = match (e.kind, &t.node) {
        (ExprKind::Lam(x, ann, b), Node::Lam(tb)) => {
            ExprKind::Lam(x, ann, Box::new(annotate_body(*b, tb, nats)))
        }
        (ExprKind::NatLam(n, b), Node::NatLam(tb)) => {
            nats.push(n.clone());
            let body = annotate_body(*b, tb, nats);
            nats.pop();
            ExprKind::NatLam(n, Box::new(body))
        }
        (kind, _) => {
            let inner = Expr {
                ty: ty.clone(),
                ..Expr::new(kind)
            };
            ExprKind::Annot(Box::new(inner), name_type(&t.ty, nats))
        }
    };
    Expr {
        ty,
        ..Expr::new(kind)
    }
}

/// The name of a value binder: its own (a leading parameter's) unless that clashes with one
/// in scope, else a generated one.
fn param_name(own: Option<&String>, vars: &[String], nats: &[String]) -> String {
    match own {
        Some(n) if !vars.contains(n) && !nats.contains(n) => n.clone(),
        _ => var_name(vars),
    }
}

/// [`param_name`] for a size binder.
fn size_name(own: Option<&String>, vars: &[String], nats: &[String]) -> String {
    match own {
        Some(n) if !nats.contains(n) && !vars.contains(n) => n.clone(),
        _ => fresh_nat_name(nats),
    }
}

/// The binders around a place in a term, named as [`to_named_as`] names them: entered one
/// node at a time from the root, so that a subterm printed on its own keeps the names of
/// the variables bound outside it.
#[derive(Clone, Debug)]
pub struct Scope {
    vars: Vec<String>,
    nats: Vec<String>,
    /// Still in the leading `nfun`/`fun` binders, which take the program's own names.
    leading: bool,
}

impl Default for Scope {
    fn default() -> Scope {
        Scope {
            vars: vec![],
            nats: vec![],
            leading: true,
        }
    }
}

impl Scope {
    /// The scope inside a child of `node` (a binder adds its variable).
    pub fn enter<C>(&self, node: &Node<C>, names: &Names) -> Scope {
        let mut inner = self.clone();
        let own = |names: &[String], bound: usize| {
            self.leading.then(|| names.get(bound)).flatten().cloned()
        };
        let leading_vars = if self.leading { self.vars.len() } else { 0 };
        let leading_nats = if self.leading { self.nats.len() } else { 0 };
        match node {
            Node::Lam(_) => {
                let own = own(&names.params, leading_vars);
                let name = param_name(own.as_ref(), &self.vars, &self.nats);
                inner.vars.push(name);
            }
            Node::NatLam(_) => {
                let own = own(&names.sizes, leading_nats);
                let name = size_name(own.as_ref(), &self.vars, &self.nats);
                inner.nats.push(name);
            }
            _ => inner.leading = false,
        }
        inner
    }

    /// `sub`, unannotated, standing in this scope.
    pub fn name(&self, sub: &Term) -> Expr {
        let (mut vars, mut nats) = (self.vars.clone(), self.nats.clone());
        let mut hints = Hints {
            sizes: [].iter(),
            params: [].iter(),
        };
        to_named_in(sub, Annotate::Bare, &mut vars, &mut nats, &mut hints, false)
    }
}

/// `sub`, a term standing at `position` in `t` (child indices from the root), unannotated,
/// with the variables bound around that position named as [`to_named_as`] names them in `t`.
pub fn to_named_at(t: &Term, position: &[usize], sub: &Term, names: &Names) -> Expr {
    let mut scope = Scope::default();
    let mut cur = t;
    for &i in position {
        scope = scope.enter(&cur.node, names);
        cur = cur.node.children()[i];
    }
    scope.name(sub)
}

fn to_named_in(
    t: &Term,
    annotate: Annotate,
    vars: &mut Vec<String>,
    nats: &mut Vec<String>,
    hints: &mut Hints,
    leading: bool,
) -> Expr {
    let ty = name_type(&t.ty, nats);
    let kind = match &t.node {
        // A variable bound outside the term (a subterm printed on its own) keeps its
        // De Bruijn index, counted from the term's edge: `%0` is the innermost outer binder.
        Node::Var(i) => match vars.len().checked_sub(1 + *i as usize) {
            Some(pos) => ExprKind::Var(vars[pos].clone()),
            None => ExprKind::Var(format!("%{}", *i as usize - vars.len())),
        },
        Node::Prim(p) if annotate == Annotate::All => {
            ExprKind::Annot(Box::new(Expr::var(p.name())), name_type(&t.ty, nats))
        }
        Node::Prim(p) => ExprKind::Var(p.name().to_string()),
        Node::F32(x) => ExprKind::F32(*x),
        Node::Int(i) => ExprKind::Int(*i),
        Node::App(f, x) => ExprKind::App(
            Box::new(to_named_in(f, annotate, vars, nats, hints, false)),
            Box::new(to_named_in(x, annotate, vars, nats, hints, false)),
        ),
        Node::Comp(f, g) => ExprKind::Comp(
            Box::new(to_named_in(f, annotate, vars, nats, hints, false)),
            Box::new(to_named_in(g, annotate, vars, nats, hints, false)),
        ),
        // `makeArray<k>`'s type depends on `k`: annotated as a whole, after its size.
        Node::NatApp(f, n)
            if annotate == Annotate::All && f.node == Node::Prim(Prim::MakeArray) =>
        {
            let applied = ExprKind::NatApp(
                Box::new(Expr::var(Prim::MakeArray.name())),
                name_nat(n, 0, nats),
            );
            ExprKind::Annot(Box::new(Expr::new(applied)), name_type(&t.ty, nats))
        }
        Node::NatApp(f, n) => ExprKind::NatApp(
            Box::new(to_named_in(f, annotate, vars, nats, hints, false)),
            name_nat(n, 0, nats),
        ),
        Node::Lam(b) => {
            let name = param_name(leading.then(|| hints.params.next()).flatten(), vars, nats);
            let Type::Fun(param, _) = &t.ty else {
                unreachable!("lambda without a function type")
            };
            let ann = match annotate {
                Annotate::All => Some(name_type(param, nats)),
                Annotate::Leading if leading => Some(name_type(param, nats)),
                _ => None,
            };
            vars.push(name.clone());
            let body = to_named_in(b, annotate, vars, nats, hints, leading);
            vars.pop();
            ExprKind::Lam(name, ann, Box::new(body))
        }
        Node::NatLam(b) => {
            let name = size_name(leading.then(|| hints.sizes.next()).flatten(), vars, nats);
            nats.push(name.clone());
            let body = to_named_in(b, annotate, vars, nats, hints, leading);
            nats.pop();
            ExprKind::NatLam(name, Box::new(body))
        }
    };
    Expr {
        ty: Some(ty),
        ..Expr::new(kind)
    }
}
