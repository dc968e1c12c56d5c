//! Rewrite rules written with names (`rules/*.rules`), and their compilation to encodings:
//! `compile` (left-hand side to an egglog query, right-hand side to a template of typed
//! slots, the same for every encoding), `rhs` (the right-hand side built in Rust on each
//! match), `backend` (the encoding's part: one small back-end per encoding), `install` (rules
//! into an e-graph).
//!
//! ```text
//! rule map-fusion = map f (map g a) => map (fun x => f (g x)) a
//! rule map-fission = map (fun x => f gx) => fun y => map f (map (fun x => gx) y) where x notin f
//! ruleset fission = map-fusion map-fission
//! ```
//! Free identifiers that are not primitives are pattern variables; free size names in `<..>`
//! are size pattern variables. Both sides are type-checked together when the file is loaded.

mod backend;
pub mod compile;
pub mod install;
mod on_terms;
pub mod params;

pub use params::Params;

pub use on_terms::TermRule;
mod rhs;

use crate::error::{Error, Result};
use crate::files::read_source;
use crate::rise::parse::parse_rule_file;
use crate::rise::syntax::{Expr, ExprKind, RuleDecl, RuleFile, RulesetDecl};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Reads a `.rules` file.
pub fn load_rule_file(path: &Path) -> Result<RuleFile> {
    let mut file = parse_rule_file(&read_source(path)?)?;
    file.path = Some(path.to_path_buf());
    Ok(file)
}

/// The rules named by `FILE[:SET]`: the whole file, one ruleset of it, or (where no ruleset
/// has the name) one rule, `NAME` or `NAME<SIZE,..>` ([`params`]). The whole file is its rules
/// without parameters and the instances its rulesets name.
pub fn select(file: &RuleFile, set: Option<&str>, params: &Params) -> Result<Vec<RuleDecl>> {
    let params = &params.or_defaults(&file.params);
    let mut expansion = Expansion::default();
    let Some(set) = set else {
        let mut all: Vec<RuleDecl> = (file.rules.iter())
            .filter(|r| r.params.is_empty())
            .cloned()
            .collect();
        for decl in &file.rulesets {
            for r in ruleset(file, decl, params, &mut expansion)? {
                if !all.iter().any(|x| x.name == r.name) {
                    all.push(r);
                }
            }
        }
        return Ok(all);
    };
    if let Some(decl) = file.rulesets.iter().find(|r| r.name == set) {
        return ruleset(file, decl, params, &mut expansion);
    }
    let (name, args) = params::parse_reference(set)?;
    let Some(rule) = file.rules.iter().find(|r| r.name == name) else {
        let names: Vec<&str> = file.rulesets.iter().map(|r| r.name.as_str()).collect();
        return Err(Error::bad_input(format!(
            "no ruleset or rule named `{name}` (the file's rulesets: {})",
            crate::error::listing(&names)
        )));
    };
    Ok(vec![
        params::instance(rule, &args, params).map_err(Error::bad_input)?
    ])
}

/// The state of expanding rulesets: the rulesets being expanded (to refuse one that
/// includes itself), and the other rules files read, each read once.
#[derive(Default)]
struct Expansion {
    open: Vec<(Option<PathBuf>, String)>,
    read: HashMap<PathBuf, Rc<RuleFile>>,
}

/// The rules of a ruleset, instantiated with `params` (and, for a rule of another file,
/// that file's defaults).
fn ruleset(
    file: &RuleFile,
    decl: &RulesetDecl,
    params: &Params,
    expansion: &mut Expansion,
) -> Result<Vec<RuleDecl>> {
    let mut rules = vec![];
    members(file, decl, params, expansion, &mut rules)?;
    Ok(rules)
}

/// Adds the rules of `decl` to `out`: its rules, and the rules of the rulesets it names.
fn members(
    file: &RuleFile,
    decl: &RulesetDecl,
    params: &Params,
    expansion: &mut Expansion,
    out: &mut Vec<RuleDecl>,
) -> Result<()> {
    expansion.open.push((file.path.clone(), decl.name.clone()));
    for r in &decl.rules {
        let other;
        let (from, params) = match &r.file {
            None => (file, params.clone()),
            Some(name) => {
                let dir = file.path.as_deref().and_then(Path::parent);
                let path = dir.unwrap_or(Path::new("")).join(name);
                other = match expansion.read.get(&path) {
                    Some(read) => read.clone(),
                    None => {
                        let read = Rc::new(load_rule_file(&path).map_err(|e| e.or_at(&r.span))?);
                        expansion.read.insert(path, read.clone());
                        read
                    }
                };
                let params = params.or_defaults(&other.params);
                (&*other, params)
            }
        };
        let set = from.rulesets.iter().find(|s| s.name == r.name);
        if let (Some(set), true) = (set, r.args.is_empty()) {
            if expansion
                .open
                .contains(&(from.path.clone(), set.name.clone()))
            {
                return Err(Error::at(
                    &r.span,
                    format!("ruleset `{}` includes itself", r.name),
                ));
            }
            members(from, set, &params, expansion, out)?;
            continue;
        }
        let rule = (from.rules.iter().find(|x| x.name == r.name))
            .ok_or_else(|| Error::at(&r.span, format!("no rule or ruleset named `{}`", r.name)))?;
        let rule = params::instance(rule, &r.args, &params).map_err(|e| Error::at(&r.span, e))?;
        if !out.iter().any(|x| x.name == rule.name) {
            out.push(rule);
        }
    }
    expansion.open.pop();
    Ok(())
}

/// The file and the set (or rule) of `FILE.rules[:SET]`.
pub fn split_spec(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once(':') {
        Some((f, s)) if f.ends_with(".rules") => (f, Some(s)),
        _ => (spec, None),
    }
}

/// The rules named by `FILE.rules[:SET]`, instantiated with `params`.
pub fn load_selection(spec: &str, params: &Params) -> Result<Vec<RuleDecl>> {
    let (file, set) = split_spec(spec);
    select(&load_rule_file(Path::new(file))?, set, params)
}

/// Pattern variables (value and size) of a rule, in order of first occurrence in the LHS.
pub fn pattern_vars(lhs: &Expr) -> (Vec<String>, Vec<String>) {
    fn go(e: &Expr, bound: &mut Vec<String>, vars: &mut Vec<String>, nats: &mut BTreeSet<String>) {
        match &e.kind {
            ExprKind::Var(x) => {
                let prim = crate::rise::primitives::Prim::from_name(x).is_some();
                if !bound.contains(x) && !prim && !vars.contains(x) {
                    vars.push(x.clone());
                }
            }
            ExprKind::Lam(x, _, b) => {
                bound.push(x.clone());
                go(b, bound, vars, nats);
                bound.pop();
            }
            ExprKind::App(f, x) | ExprKind::Comp(f, x) => {
                go(f, bound, vars, nats);
                go(x, bound, vars, nats);
            }
            ExprKind::NatLam(_, b) | ExprKind::DataLam(_, b) | ExprKind::Annot(b, _) => {
                go(b, bound, vars, nats)
            }
            ExprKind::NatApp(f, n) => {
                go(f, bound, vars, nats);
                for a in n.atoms() {
                    if let crate::rise::nat::NatAtom::Var(v) = a {
                        nats.insert(v.clone());
                    }
                }
            }
            ExprKind::F32(_) | ExprKind::Int(_) => {}
        }
    }
    let (mut vars, mut nats) = (vec![], BTreeSet::new());
    go(lhs, &mut vec![], &mut vars, &mut nats);
    (vars, nats.into_iter().collect())
}
