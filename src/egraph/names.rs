//! The named encodings of the paper's Table 2 (section 4.2): variables carry their names as
//! operator metadata (`NamedVar "x"`, `NamedLam "x"`), so alpha-equivalent terms are different
//! e-nodes. They exist to be compared with De Bruijn indices.
//!
//! - Loading names binder `k` levels deep `x<k>` ([`binder_name`]).
//! - "Found" is an alpha-equivalence match from the start's class ([`alpha_found`]).
//! - Extraction-based substitution ([`add_beta_eta`]) substitutes on representatives and
//!   renames a binder that would capture a free name of the argument.
//! - Explicit substitution ([`add_explicit_substitution`]) adds `Let` e-nodes and pushes them
//!   through the term with rewrite rules, renaming a binder that would capture with a name
//!   derived from the matched e-class id (as the reference prototype does).
//!
//! Freshness reads the schema's `nfree` relation: a name free in some term of the class.

use super::lookup::{find_named_term, Lookup};
use super::saturate::Cancel;
use super::subst::{add_snapshot_rule, scan, Builder, Raw, RustRule, SharedSnapshot};
use crate::egraph::schema::Con;
use crate::error::Result;
use crate::rise::term::{Node, Term};
use egglog::{EGraph, Value};
use rustc_hash::FxHashMap as HashMap;

/// The name a loaded term gives the binder with `depth` binders around it.
pub fn binder_name(depth: u32) -> String {
    format!("x{depth}")
}

/// "Found" for the named encodings: is a term alpha-equivalent to `goal` in the class of
/// `start` (loaded with [`binder_name`]s)? A top-down match from the start's class: the
/// goal's binders match any name distinct from those of the binders around them (so a
/// variable cannot be confused with a shadowing binder's), and its variables the names
/// their binders matched.
///
/// (Written as an egglog query instead, with binder names as query variables, egglog spent
/// 5 s compiling it in debug builds, and as a semi-naive rule its join took gigabytes.)
pub fn alpha_found(eg: &EGraph, start: &Term, goal: &Term) -> Result<bool> {
    let Some(root) = find_named_term(eg, start) else {
        return Ok(false);
    };
    let mut nodes: HashMap<Value, Vec<(Raw, Value)>> = HashMap::default();
    let all = scan(eg, &Cancel::default())?.unwrap_or_default();
    for (class, node, ty) in all {
        nodes.entry(class).or_default().push((node, ty));
    }
    Ok(eg.read(|rs| {
        AlphaMatcher {
            find: Lookup::new(&rs),
            nodes: &nodes,
            memo: HashMap::default(),
        }
        .matches(root, goal, &mut vec![])
    }))
}

struct AlphaMatcher<'r, 't, R> {
    find: Lookup<'r, 't, R>,
    /// Each class's e-nodes with their types.
    nodes: &'r HashMap<Value, Vec<(Raw, Value)>>,
    /// (class, goal subterm, names of the binders around it) -> matches.
    memo: HashMap<(Value, *const Term, Vec<Value>), bool>,
}

impl<'t, 'a, 'db: 'a, R: egglog::Read<'a, 'db>> AlphaMatcher<'_, 't, R> {
    fn matches(&mut self, class: Value, goal: &'t Term, env: &mut Vec<Value>) -> bool {
        let key = (class, goal as *const Term, env.clone());
        if let Some(m) = self.memo.get(&key) {
            return *m;
        }
        let m = self.matches_uncached(class, goal, env);
        self.memo.insert(key, m);
        m
    }

    fn matches_uncached(&mut self, class: Value, goal: &'t Term, env: &mut Vec<Value>) -> bool {
        let Some(ty) = self.find.ty(&goal.ty) else {
            return false;
        };
        if goal.node.children().is_empty() && !matches!(goal.node, Node::Var(_)) {
            // A primitive or literal: its e-node is in the class or not.
            return self.find.term(goal, None) == Some(class);
        }
        let nodes = self.nodes;
        let candidates = nodes.get(&class).map_or(&[][..], Vec::as_slice);
        candidates.iter().any(|&(node, t)| {
            t == ty
                && match (node, &goal.node) {
                    (Raw::NamedVar(x), Node::Var(i)) => {
                        env.len() > *i as usize && env[env.len() - 1 - *i as usize] == x
                    }
                    (Raw::NamedLam(x, body), Node::Lam(b)) if !env.contains(&x) => {
                        env.push(x);
                        let m = self.matches(body, b, env);
                        env.pop();
                        m
                    }
                    (Raw::App(f, x), Node::App(gf, gx)) | (Raw::Comp(f, x), Node::Comp(gf, gx)) => {
                        self.matches(f, gf, env) && self.matches(x, gx, env)
                    }
                    (Raw::NatApp(f, n), Node::NatApp(gf, gn)) => {
                        self.find.nat(gn) == Some(n) && self.matches(f, gf, env)
                    }
                    (Raw::NatLam(b), Node::NatLam(gb)) => self.matches(b, gb, env),
                    _ => false,
                }
        })
    }
}

/// One name being substituted: `name` by the class `by`, whose free names are those of the
/// class (or just `renamed`, when `by` is a fresh variable for a renamed binder).
#[derive(Clone, Copy)]
struct Replace {
    name: Value,
    by: Value,
    renamed: Option<Value>,
}

impl Replace {
    fn may_have_free(&self, b: &Builder, x: Value) -> bool {
        match self.renamed {
            Some(r) => r == x,
            None => b.snap().may_have_free_name(self.by, x),
        }
    }
}

/// A name like `x` that is free neither in `body` nor in a replacement: `x'`, `x''`, ...
fn fresh_name(b: &mut Builder, x: Value, body: Value, env: &[Replace]) -> Option<Value> {
    let mut name = b.string(x);
    (0..16).find_map(|_| {
        name.push('\'');
        let v = b.base(name.as_str());
        let clash = b.snap().may_have_free_name(body, v)
            || env.iter().any(|r| r.name == v || r.may_have_free(b, v));
        (!clash).then_some(v)
    })
}

/// Capture-avoiding substitution on the representative of `class`: each `env` name replaced
/// by its class. Classes in which no replaced name may be free are reused. `None` when a
/// representative is missing, a replacement's type differs from the variable's (a term from
/// another context), or the walk would pass a De Bruijn or size binder.
fn substitute(
    b: &mut Builder,
    class: Value,
    env: &[Replace],
    memo: &mut HashMap<Value, Value>,
) -> Option<Value> {
    let snap = b.snap();
    if env.iter().all(|r| !snap.may_have_free_name(class, r.name)) {
        return Some(class);
    }
    if let Some(v) = memo.get(&class) {
        return Some(*v);
    }
    let (node, ty) = snap.rep(class)?;
    let v = match node {
        Raw::NamedVar(y) => match env.iter().find(|r| r.name == y) {
            Some(r) if snap.class_type_value(r.by).is_none_or(|t| t == ty) => r.by,
            Some(_) => return None,
            None => class,
        },
        Raw::App(f, x) => {
            let f = substitute(b, f, env, memo)?;
            let x = substitute(b, x, env, memo)?;
            b.add(Con::App, &[f, x], ty)
        }
        Raw::Comp(f, g) => {
            let f = substitute(b, f, env, memo)?;
            let g = substitute(b, g, env, memo)?;
            b.add(Con::Comp, &[f, g], ty)
        }
        Raw::NatApp(f, n) => {
            let f = substitute(b, f, env, memo)?;
            b.add(Con::NatApp, &[f, n], ty)
        }
        Raw::NamedLam(y, body) => {
            let mut inner: Vec<Replace> = env.iter().filter(|r| r.name != y).copied().collect();
            let mut binder = y;
            if inner.iter().any(|r| r.may_have_free(b, y)) {
                // `y` would capture a free name of a replacement: rename it.
                binder = fresh_name(b, y, body, &inner)?;
                let crate::rise::types::Type::Fun(param, _) = snap.class_type(class)? else {
                    return None;
                };
                let param = b.type_value(param)?;
                let var = b.add(Con::NamedVar, &[binder], param);
                inner.push(Replace {
                    name: y,
                    by: var,
                    renamed: Some(binder),
                });
            }
            let body = substitute(b, body, &inner, &mut HashMap::default())?;
            b.add(Con::NamedLam, &[binder, body], ty)
        }
        Raw::Leaf(..) => class,
        Raw::Var(_) | Raw::Lam(_) | Raw::NatLam(_) => return None,
    };
    memo.insert(class, v);
    Some(v)
}

/// Substitutes `by` for the name `x` in the representative of `body`.
pub fn substitute_name(b: &mut Builder, body: Value, x: Value, by: Value) -> Option<Value> {
    let env = [Replace {
        name: x,
        by,
        renamed: None,
    }];
    substitute(b, body, &env, &mut HashMap::default())
}

/// The queries of the Rust rules for named terms: eta, beta, and `let` over a lambda that
/// binds another name.
pub const ETA_QUERY: &str = "(= e (NamedLam x (App f (NamedVar x vt) at) (TFun vt at)))";
pub const BETA_QUERY: &str = "(= e (App (NamedLam x body lt) arg at))";
pub const LET_LAM_QUERY: &str = "(= e (Let v a (NamedLam w body (TFun p r)) t)) (!= v w)";

/// Eta, `fun x => f x` to `f` when `x` is not free in `f`.
fn add_eta(eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
    let vars = [("e", "Expr"), ("x", "String"), ("f", "Expr")];
    let query = ETA_QUERY;
    add_snapshot_rule(eg, "eta-names", ruleset, snap, &vars, query, |b, v| {
        (!b.snap().may_have_free_name(v[2], v[1])).then_some(v[2])
    })
}

/// Adds extraction-based beta and eta for named terms to `ruleset`.
pub fn add_beta_eta(eg: &mut EGraph, ruleset: &str, snap: &SharedSnapshot) -> Result<()> {
    super::add_family_analyses(eg, super::schema::Family::Names)?;
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    let vars = [
        ("e", "Expr"),
        ("x", "String"),
        ("body", "Expr"),
        ("arg", "Expr"),
    ];
    let query = BETA_QUERY;
    add_snapshot_rule(
        eg,
        "beta-extract-names",
        ruleset,
        snap,
        &vars,
        query,
        |b, v| substitute_name(b, v[2], v[1], v[3]),
    )?;
    add_eta(eg, ruleset, snap)
}

/// Beta and the rules that push `Let` through a term, over every term of a class. `Let` has
/// the type of its body.
pub const LET_RULES: [RustRule; 9] = [
    RustRule {
        name: "beta-let",
        vars: &[
            ("e", "Expr"),
            ("x", "String"),
            ("body", "Expr"),
            ("arg", "Expr"),
            ("at", "Type"),
        ],
        query: BETA_QUERY,
        builds: "(Let x arg body at)",
        rhs: |b, v| Some(b.add(Con::Let, &[v[1], v[3], v[2]], v[4])),
    },
    RustRule {
        name: "let-app",
        vars: &[
            ("e", "Expr"),
            ("v", "String"),
            ("a", "Expr"),
            ("f", "Expr"),
            ("y", "Expr"),
            ("at", "Type"),
        ],
        query: "(= e (Let v a (App f y at) t))",
        builds: "(App (Let v a f (ty f)) (Let v a y (ty y)) at)",
        rhs: |b, v| {
            let f = let_over(b, v[1], v[2], v[3])?;
            let y = let_over(b, v[1], v[2], v[4])?;
            Some(b.add(Con::App, &[f, y], v[5]))
        },
    },
    RustRule {
        name: "let-natapp",
        vars: &[
            ("e", "Expr"),
            ("v", "String"),
            ("a", "Expr"),
            ("f", "Expr"),
            ("n", "Nat"),
            ("nt", "Type"),
        ],
        query: "(= e (Let v a (NatApp f n nt) t))",
        builds: "(NatApp (Let v a f (ty f)) n nt)",
        rhs: |b, v| {
            let f = let_over(b, v[1], v[2], v[3])?;
            Some(b.add(Con::NatApp, &[f, v[4]], v[5]))
        },
    },
    RustRule {
        name: "let-var-same",
        vars: &[("e", "Expr"), ("a", "Expr"), ("t", "Type")],
        query: "(= e (Let v a (NamedVar v t) t))",
        builds: "a, if (ty a) is t",
        rhs: |b, v| (b.snap().class_type_value(v[1]) == Some(v[2])).then_some(v[1]),
    },
    RustRule {
        name: "let-var-other",
        vars: &[("e", "Expr"), ("w", "String"), ("t", "Type")],
        query: "(= e (Let v a (NamedVar w t) t)) (!= v w)",
        builds: "(NamedVar w t)",
        rhs: |b, v| Some(b.add(Con::NamedVar, &[v[1]], v[2])),
    },
    RustRule {
        name: "let-lam-same",
        vars: &[
            ("e", "Expr"),
            ("v", "String"),
            ("body", "Expr"),
            ("t", "Type"),
        ],
        query: "(= e (Let v a (NamedLam v body t) t))",
        builds: "(NamedLam v body t)",
        rhs: |b, v| Some(b.add(Con::NamedLam, &[v[1], v[2]], v[3])),
    },
    RustRule {
        name: "let-prim",
        vars: &[("e", "Expr"), ("c", "Expr")],
        query: "(= e (Let v a c t)) (= c (Prim p t))",
        builds: "c",
        rhs: |_, v| Some(v[1]),
    },
    RustRule {
        name: "let-f32",
        vars: &[("e", "Expr"), ("c", "Expr")],
        query: "(= e (Let v a c t)) (= c (F32 x t))",
        builds: "c",
        rhs: |_, v| Some(v[1]),
    },
    RustRule {
        name: "let-int",
        vars: &[("e", "Expr"), ("c", "Expr")],
        query: "(= e (Let v a c t)) (= c (Int i t))",
        builds: "c",
        rhs: |_, v| Some(v[1]),
    },
];

/// `Let v a` over a class, at the class's type.
fn let_over(b: &mut Builder, v: Value, a: Value, over: Value) -> Option<Value> {
    let ty = b.snap().class_type_value(over)?;
    Some(b.add(Con::Let, &[v, a, over], ty))
}

/// Adds explicit substitution for named terms (beta creates `Let`), and eta, to `ruleset`.
pub fn add_explicit_substitution(
    eg: &mut EGraph,
    ruleset: &str,
    snap: &SharedSnapshot,
) -> Result<()> {
    super::add_family_analyses(eg, super::schema::Family::Names)?;
    let _ = egglog::prelude::add_ruleset(eg, ruleset);
    for rule in &LET_RULES {
        rule.install(eg, ruleset, snap)?;
    }
    // let v a (fun w => b), w != v: fun w => let v a b when w is not free in a; otherwise
    // w is renamed to a name derived from the matched class, f: fun f => let v a (let w f b).
    let vars = [
        ("e", "Expr"),
        ("v", "String"),
        ("a", "Expr"),
        ("w", "String"),
        ("body", "Expr"),
        ("p", "Type"),
        ("r", "Type"),
        ("t", "Type"),
    ];
    let query = LET_LAM_QUERY;
    add_snapshot_rule(eg, "let-lam-other", ruleset, snap, &vars, query, |b, v| {
        let [e, name, a, w, body, p, r, t] = v.try_into().expect("eight variables");
        let snap = b.snap();
        if !snap.may_have_free_name(a, w) {
            let inner = b.add(Con::Let, &[name, a, body], r);
            return Some(b.add(Con::NamedLam, &[w, inner], t));
        }
        let f = b.base(format!("_{}", class_number(e)));
        if snap.may_have_free_name(a, f) || snap.may_have_free_name(body, f) {
            return None;
        }
        let var = b.add(Con::NamedVar, &[f], p);
        let renamed = b.add(Con::Let, &[w, var, body], r);
        let inner = b.add(Con::Let, &[name, a, renamed], r);
        Some(b.add(Con::NamedLam, &[f, inner], t))
    })?;
    add_eta(eg, ruleset, snap)
}

/// The number of an e-class id, for names derived from it.
pub fn class_number(v: Value) -> String {
    format!("{v:?}")
        .chars()
        .filter(char::is_ascii_digit)
        .collect()
}
