//! Search filters (as shine's `Predicate`s, `rise-lang/shine`, `src/main/scala/rise/eqsat/Predicate.scala`): which
//! e-nodes a guided search keeps.
//!
//! - array nesting depth of a class's type at most `d`;
//! - all array, vector and index sizes at least 1;
//! - a term-size bound: some term of at most `L` nodes passes through the e-node, or (as
//!   shine's `ASTSizePredicate` has it, [`SizeScope::Class`]) through the e-class.
//!
//! Type conditions are checked where compiled rules type their right-hand sides (a rewrite
//! whose new e-nodes would fail them does not fire); the term-size bound is applied between
//! iterations by subsuming the e-nodes that fail it (never chosen again: see
//! [`super::rust_rule`] for what a subsumed e-node still is), or, per class, by removing them,
//! as the reference deletes failing classes during rebuilding.

use super::costs::{cheapest_within, CostedNodes};
use super::engine;
use super::schema::Con;
use crate::error::Result;
use crate::rise::types::Type;
use egglog::{EGraph, Value, Write};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub array_depth: Option<usize>,
    pub sizes_positive: bool,
    pub ast_size: Option<usize>,
    /// What the term-size bound keeps: e-nodes or e-classes.
    pub ast_size_scope: SizeScope,
}

/// What passes the term-size bound `L`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SizeScope {
    /// An e-node through which a term of at most `L` nodes passes (every other e-node of its
    /// class may be larger).
    #[default]
    Enode,
    /// Every e-node of an e-class through which a term of at most `L` nodes passes: the
    /// smallest context of the class plus its smallest term (shine's `ASTSizePredicate`).
    /// An e-node with a child class that fails goes too. As shine eliminates them, the
    /// e-nodes that fail are removed, not subsumed: a rewrite may add them again.
    Class,
}

fn array_depth(t: &Type) -> usize {
    match t {
        Type::Arr(_, e) => 1 + array_depth(e),
        Type::Vector(e, _) => array_depth(e),
        Type::Pair(a, b) | Type::Fun(a, b) => array_depth(a).max(array_depth(b)),
        Type::NatFun(b) => array_depth(b),
        _ => 0,
    }
}

impl Filter {
    /// Does a new e-node of type `t` pass the type conditions?
    pub fn admits(&self, t: &Type) -> bool {
        if self.array_depth.is_some_and(|d| array_depth(t) > d) {
            return false;
        }
        let mut ok = true;
        t.for_each_nat(&mut |n| {
            let below_one = || n.as_const().is_some_and(|c| c.num < c.den);
            ok &= !(n.overflowed() || self.sizes_positive && below_one());
        });
        ok
    }

    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// Subsumes the e-nodes through which no term reachable from `root` has at most
    /// `ast_size` nodes, counting `outside` more nodes around the root (its `dfun` binders,
    /// which shine's terms hold); returns how many it subsumed.
    pub fn prune(&self, eg: &mut EGraph, root: Value, outside: usize) -> Result<usize> {
        let Some(limit) = self.ast_size else {
            return Ok(0);
        };
        let limit = limit.saturating_sub(outside);
        // Live e-nodes: their class and term children.
        let mut nodes = CostedNodes::default();
        live_enodes(eg, |_, e| {
            // Every term constructor has at most two term children.
            let (mut kids, mut n) = ([Value::new_const(0); 2], 0);
            for i in e.con.children() {
                kids[n] = e.children[i];
                n += 1;
            }
            nodes.push(e.eclass, &kids[..n], 1);
        })?;
        // down[c]: the fewest nodes of a term of class c, if at most the bound.
        // Beyond the bound a class's cost dooms every node that uses it: not computed.
        let down = cheapest_within(&nodes, &nodes.users(), limit as u64);
        let cost = |k: u32| down[k as usize];
        // A node's smallest term: itself plus its children's smallest terms.
        let sizes: Vec<Option<u64>> = (0..nodes.len())
            .map(|i| (nodes.kids(i).iter()).try_fold(1u64, |a, k| Some(a + cost(*k)?)))
            .collect();
        // up[c]: the fewest nodes of a context around class c, from the root. Going from a
        // class to a child k of one of its nodes adds that node's smallest term but k's.
        // Distances beyond the bound doom every e-node below them: they are not computed.
        let up = super::costs::shortest_from(root, &nodes, limit as u64, |i, k| {
            Some(sizes[i]? - cost(k).unwrap_or(0))
        });
        let fails = |through: Option<u64>| through.is_none_or(|s| s > limit as u64);
        let up = |c: u32| Some(up[c as usize]).filter(|u| *u < u64::MAX);
        let doomed: Vec<bool> = match self.ast_size_scope {
            SizeScope::Enode => (0..nodes.len())
                .map(|i| fails(up(nodes.class(i)).zip(sizes[i]).map(|(u, n)| u + n)))
                .collect(),
            SizeScope::Class => {
                let class_fails = |c: u32| match up(c) {
                    Some(u) => fails(cost(c).map(|d| u + d)),
                    None => false,
                };
                (0..nodes.len())
                    .map(|i| {
                        class_fails(nodes.class(i)) || nodes.kids(i).iter().any(|k| class_fails(*k))
                    })
                    .collect()
            }
        };
        drop((nodes, down, up, sizes));
        // The doomed e-nodes' keys, from a second scan in the same order (nothing changed).
        let mut keys: Vec<(&str, Vec<Value>)> = vec![];
        live_enodes(eg, |i, e| {
            if doomed[i] {
                keys.push((e.con.name(), e.children.to_vec()));
            }
        })?;
        let pruned = keys.len();
        let scope = self.ast_size_scope;
        eg.update(|mut fs| {
            for (name, key) in keys {
                match scope {
                    SizeScope::Enode => fs.subsume(name, egglog::RawValues(key))?,
                    SizeScope::Class => fs.subsume(name, egglog::RawValues(key))?,
                }
            }
            Ok(())
        })
        .map_err(engine)?;
        Ok(pruned)
    }
}

/// A live (not subsumed) Rise e-node as scanned: its constructor, class and egglog key.
struct Live<'a> {
    con: Con,
    eclass: Value,
    children: &'a [Value],
}

/// Calls `f` with each live Rise e-node and its number in the scan (the same order on every
/// scan of an unchanged e-graph).
fn live_enodes(eg: &EGraph, mut f: impl FnMut(usize, &Live)) -> Result<()> {
    let mut i = 0;
    for con in super::schema::rise() {
        eg.constructor_enodes(con.name(), |e| {
            if !e.subsumed {
                let live = Live {
                    con,
                    eclass: e.eclass,
                    children: e.children,
                };
                f(i, &live);
                i += 1;
            }
        })
        .map_err(engine)?;
    }
    Ok(())
}
