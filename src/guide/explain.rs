//! The rewrite path of a step (`check --explain`, `guide --explain`): which rule, applied
//! where, turns the step's input into the term it extracted, one rewrite at a time.
//!
//! Nothing is recorded while searching: egglog 3.0's proof mode does not cover the Rust
//! rules that do substitution (`egraph/subst.rs`), and recording every application would
//! cost the search memory that most runs never use. The path is found afterwards, by a
//! best-first search over terms from the input towards the extracted term:
//! - a term's successors are its one-rule rewrites: the term alone is loaded into a small
//!   e-graph and each rule runs there for one iteration, without beta or eta; every e-node a
//!   rule added to the e-class of one of the term's positions is one rewrite at that
//!   position (its children are the term's own subterms wherever the rule kept them);
//! - each successor is put in beta-eta normal form, the form the search's e-graph matches
//!   rules against;
//! - the term expanded next is the one met so far that is nearest the goal: the fewest
//!   spine features (which operator is applied to which) that differ from the goal's.
//!
//! The cost is paid only when asked: one small e-graph per expanded term, tens of
//! milliseconds each. A path found is a real one (every rewrite is an application of the
//! named rule); the search may miss one within its [`PathLimits`], and then says so.

use crate::egraph::extract::{CostModel, ENode, ExprGraph, Extractor};
use crate::egraph::filter::Filter;
use crate::egraph::lookup::find_term;
use crate::egraph::saturate::{normalise, saturate, Check, Limits};
use crate::egraph::subst::SharedSnapshot;
use crate::egraph::{encode, rise_egraph};

use crate::egraph::encoding::Encoding;
use crate::egraph::normal::NormalForm;
use crate::error::{Error, Result};
use crate::rise::syntax::RuleDecl;
use crate::rise::term::{Node, Term};
use crate::rules::install::install_for;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

/// How far the path search looks.
#[derive(Clone, Copy, Debug)]
pub struct PathLimits {
    /// Terms whose rewrites are tried, at most.
    pub expansions: usize,
    /// Rewrites in a path, at most.
    pub depth: usize,
}

impl Default for PathLimits {
    fn default() -> PathLimits {
        PathLimits {
            expansions: 500,
            depth: 40,
        }
    }
}

/// One rewrite of a path.
#[derive(Clone, Debug)]
pub struct Rewrite {
    pub rule: String,
    /// Where, as child indices from the root (an application's function is 0, its
    /// argument 1; a binder's body is 0).
    pub position: Vec<usize>,
    /// The subterm the rule matched, and what it became (before normalising).
    pub before: Rc<Term>,
    pub after: Rc<Term>,
    /// The whole program after the rewrite, in beta-eta normal form.
    pub term: Rc<Term>,
}

/// What the path search found.
#[derive(Clone, Debug)]
pub enum Explanation {
    /// The rewrites from `start`, in order.
    Path {
        start: Rc<Term>,
        rewrites: Vec<Rewrite>,
    },
    /// No path within the limits; `explored` terms were tried.
    NotFound { explored: usize, limits: PathLimits },
}

/// The rewrites that take `start` to `goal` (both in beta-eta normal form) with `rules`:
/// best first, always expanding the term met so far that is nearest the goal.
pub fn explain(
    start: &Rc<Term>,
    goal: &Rc<Term>,
    rules: &[RuleDecl],
    limits: &Limits,
    path: PathLimits,
) -> Result<Explanation> {
    use std::cmp::Reverse;
    let target = Target::new(goal);
    // Every term met, with the rewrite that reached it, the index of the one before, and
    // its depth.
    let mut met: Vec<Met> = vec![(start.clone(), None, 0)];
    let mut seen: HashSet<Rc<Term>> = [start.clone()].into_iter().collect();
    let mut queue = std::collections::BinaryHeap::new();
    queue.push((Reverse(target.distance(start)), Reverse(0), 0));
    let mut expanded = 0;
    while let Some((_, Reverse(depth), i)) = queue.pop() {
        if met[i].0 == *goal {
            return Ok(path_to(&met, i));
        }
        if expanded == path.expansions {
            break;
        }
        if depth == path.depth {
            continue;
        }
        expanded += 1;
        for rw in successors(&met[i].0, rules, limits)? {
            if seen.insert(rw.term.clone()) {
                let distance = target.distance(&rw.term);
                queue.push((Reverse(distance), Reverse(depth + 1), met.len()));
                met.push((rw.term.clone(), Some((rw, i)), depth + 1));
            }
        }
    }
    Ok(Explanation::NotFound {
        explored: expanded,
        limits: path,
    })
}

type Met = (Rc<Term>, Option<(Rewrite, usize)>, usize);

fn path_to(met: &[Met], mut i: usize) -> Explanation {
    let mut rewrites = vec![];
    while let Some((rw, before)) = &met[i].1 {
        rewrites.push(rw.clone());
        i = *before;
    }
    rewrites.reverse();
    Explanation::Path {
        start: met[0].0.clone(),
        rewrites,
    }
}

/// How far a term is from the goal: how many of its spine features (an application's head
/// with each argument's head, a binder with its body's head; variables as one label, so
/// that re-indexing under a new binder does not count) differ from the goal's, counted as
/// multisets. Exact shared subterms would be a poor guide: a rewrite that adds a binder
/// shifts every De Bruijn index beneath it, and the goal's subterms then appear only at the
/// end of a path.
struct Target {
    features: HashMap<Feature, i64>,
}

type Feature = (Head, usize, Head);

/// What a term is, seen from above: its application head, without the arguments.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Head {
    Prim(crate::rise::primitives::Prim),
    Var,
    Lam,
    NatLam,
    Literal,
    /// An application whose head is a binder (not beta-normal; does not occur after
    /// normalising, but a term may hold one).
    Redex,
}

/// The head of `t` and its arguments, outermost application last.
fn spine(t: &Term) -> (Head, Vec<&Rc<Term>>) {
    let mut args = vec![];
    let mut cur = t;
    loop {
        match &cur.node {
            Node::App(f, x) => {
                args.push(x);
                cur = f;
            }
            Node::NatApp(f, _) => cur = f,
            _ => break,
        }
    }
    args.reverse();
    let head = match &cur.node {
        Node::Prim(p) => Head::Prim(*p),
        Node::Var(_) => Head::Var,
        Node::Lam(_) if args.is_empty() => Head::Lam,
        Node::Lam(_) => Head::Redex,
        Node::NatLam(_) => Head::NatLam,
        _ => Head::Literal,
    };
    (head, args)
}

fn features(t: &Term, into: &mut HashMap<Feature, i64>, sign: i64) {
    let (head, args) = spine(t);
    *into.entry((head, 0, head)).or_default() += sign;
    for (i, a) in args.iter().enumerate() {
        *into.entry((head, i + 1, spine(a).0)).or_default() += sign;
        features(a, into, sign);
    }
    if args.is_empty() {
        if let Node::Lam(b) | Node::NatLam(b) = &t.node {
            *into.entry((head, 1, spine(b).0)).or_default() += sign;
            features(b, into, sign);
        }
    }
}

impl Target {
    fn new(goal: &Rc<Term>) -> Target {
        let mut features = HashMap::default();
        self::features(goal, &mut features, 1);
        Target { features }
    }

    fn distance(&self, t: &Rc<Term>) -> usize {
        let mut diff = self.features.clone();
        features(t, &mut diff, -1);
        diff.values().map(|d| d.unsigned_abs() as usize).sum()
    }
}

/// Every position of `t` (child indices from the root) with its subterm, root first.
fn positions(t: &Rc<Term>) -> Vec<(Vec<usize>, Rc<Term>)> {
    let mut out = vec![];
    fn walk(t: &Rc<Term>, at: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, Rc<Term>)>) {
        out.push((at.clone(), t.clone()));
        for (i, c) in t.node.children().into_iter().enumerate() {
            at.push(i);
            walk(c, at, out);
            at.pop();
        }
    }
    walk(t, &mut vec![], &mut out);
    out
}

/// `t` with the subterm at `position` replaced by `by`.
fn replace(t: &Rc<Term>, position: &[usize], by: &Rc<Term>) -> Rc<Term> {
    let Some((&first, rest)) = position.split_first() else {
        return by.clone();
    };
    let mut k = 0;
    let node = t.node.map(|c| {
        let child = if k == first {
            replace(c, rest, by)
        } else {
            c.clone()
        };
        k += 1;
        child
    });
    Term::new(node, t.ty.clone())
}

/// Prefers the e-nodes of the term being rewritten: a rewrite's new part is as small as the
/// rule made it, everything else is the term's own.
struct Original<'a>(&'a HashSet<ENode>);

impl CostModel for Original<'_> {
    fn node_cost(&self, node: &ENode) -> u64 {
        if self.0.contains(node) {
            1
        } else {
            1 << 20
        }
    }
}

/// The one-rule rewrites of `t`, each in beta-eta normal form: an e-graph holds `t` and the
/// rules, each in its own rule set, each run on `t` for one iteration inside `push`/`pop`.
/// (The e-graph is not reused for the next term: a compiled rule keeps e-graph values of the
/// types it met, which a `pop` after it has run on another term would invalidate.)
fn successors(t: &Rc<Term>, rules: &[RuleDecl], limits: &Limits) -> Result<Vec<Rewrite>> {
    let ruleset = |i: usize| format!("explain-{i}");
    let mut eg = rise_egraph()?;
    encode::load_term(&mut eg, t)?;
    let snap = SharedSnapshot::default();
    for (i, rule) in rules.iter().enumerate() {
        install_for(
            &mut eg,
            &ruleset(i),
            std::slice::from_ref(rule),
            &snap,
            (Encoding::EFFICIENT, NormalForm::Benf),
            &Filter::default(),
        )?;
    }
    let once = Limits {
        iterations: 1,
        ..limits.clone()
    };
    let mut out = vec![];
    for (i, rule) in rules.iter().enumerate() {
        eg.push();
        // Representatives are taken afresh: the last rule's are gone.
        *snap.write().unwrap() = Default::default();
        saturate(
            &mut eg,
            &ruleset(i),
            &snap,
            &once,
            |_| Ok(Check::from(false)),
            |_| {},
        )?;
        out.extend(rewrites_in(&eg, t, &rule.name, limits)?);
        eg.pop().map_err(crate::egraph::engine)?;
    }
    Ok(out)
}

/// The rewrites of `t` a rule has just made in `eg` (which held `t` alone before): every
/// e-node the rule added to the e-class of one of `t`'s positions.
fn rewrites_in(
    eg: &egglog::EGraph,
    t: &Rc<Term>,
    rule: &str,
    limits: &Limits,
) -> Result<Vec<Rewrite>> {
    let lost = || Error::internal("a subterm left the e-graph while explaining");
    let at = positions(t);
    let classes: HashMap<&Rc<Term>, egglog::Value> = at
        .iter()
        .map(|(_, s)| Ok((s, find_term(eg, s).ok_or_else(lost)?)))
        .collect::<Result<_>>()?;
    let own = |s: &Rc<Term>| s.node.map(|c| classes[c]);
    let originals: HashSet<ENode> = at.iter().map(|(_, s)| own(s)).collect();
    let graph = ExprGraph::read(eg)?;
    let extractor = Extractor::new(&graph, &Original(&originals));
    let mut out = vec![];
    for (position, sub) in &at {
        let class = classes[sub];
        let ty = graph.ty(class).ok_or_else(lost)?;
        for node in graph.classes.get(&class).into_iter().flatten() {
            if *node == own(sub) {
                continue;
            }
            let mut failed = false;
            let node = node.map(|c| {
                extractor.extract(*c).unwrap_or_else(|_| {
                    failed = true;
                    sub.clone()
                })
            });
            if failed {
                continue;
            }
            let after = Term::new(node, ty.clone());
            let (term, _) = normalise(&replace(t, position, &after), limits)?;
            if term != *t {
                out.push(Rewrite {
                    rule: rule.to_string(),
                    position: position.clone(),
                    before: sub.clone(),
                    after,
                    term,
                });
            }
        }
    }
    Ok(out)
}

/// A position in words, runs of one step counted: `nfun body > fun body x6 > argument`.
pub fn position_in_words(t: &Term, position: &[usize]) -> String {
    let mut runs: Vec<(&str, usize)> = vec![];
    let mut cur = t;
    for &i in position {
        let word = match (&cur.node, i) {
            (Node::Lam(_), _) => "fun body",
            (Node::NatLam(_), _) => "nfun body",
            (Node::NatApp(..), _) => "size application's function",
            (Node::App(..), 0) => "function",
            _ => "argument",
        };
        match runs.last_mut() {
            Some((last, n)) if *last == word => *n += 1,
            _ => runs.push((word, 1)),
        }
        cur = cur.node.children()[i];
    }
    if runs.is_empty() {
        return "the whole program".to_string();
    }
    let run = |(word, n): &(&str, usize)| match n {
        1 => word.to_string(),
        n => format!("{word} x{n}"),
    };
    runs.iter().map(run).collect::<Vec<_>>().join(" > ")
}
