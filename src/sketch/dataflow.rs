//! Evaluating a sketch query's relations incrementally, with differential dataflow
//! (`sketchlog-dataflow`, in `dataflow/`).
//!
//! Each check reads the e-graph into the dataflow's two collections: its e-nodes, each
//! `(class, ops, children)` where `ops` says which of the query's node sketches have the
//! e-node's operator, and its classes, each with the type sketches its type matches. The
//! dataflow is fed only the difference from the last check and maintains the relations that
//! `--show-query` prints: `F(s..)` filters the e-nodes and semijoins them with the children's
//! relations, `contains(s)` is an `iterate` up the child-to-parent edges, `or` a
//! concatenation, `s :: t` a semijoin with the classes of a matching type. "Found" reads the
//! root relation, kept as it changes.
//!
//! Finding the difference still reads every e-node (egglog reports no deltas), so a check
//! costs one pass over the e-graph plus work in proportion to what changed.

use super::eval::{scan_nodes, Evaluator};
use super::query::Def;
use crate::egraph::costs::Dense;
use crate::error::{Error, Result};
use egglog::{EGraph, Value};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use sketchlog_dataflow::{Enode, Relation, Relations, NONE};

/// The dataflow of one sketch query, kept between checks.
pub struct Dataflow {
    relations: Relations,
    classes: Dense,
    /// Matching operators and types (decoded sizes and types, primitive names, type
    /// sketches matched per type value).
    ops: Evaluator,
    /// For each relation, its bit among node (or typed) relations.
    bits: Vec<u32>,
}

impl Dataflow {
    /// Builds the dataflow of `relations` with `root` as the relation of the whole sketch.
    pub(super) fn new(relations: &[(String, Def)], root: Option<usize>) -> Result<Dataflow> {
        let (mut nodes, mut typed) = (0u32, 0u32);
        let next = |counter: &mut u32| {
            *counter += 1;
            *counter - 1
        };
        let rels: Vec<Relation> = (relations.iter())
            .map(|(_, def)| match def {
                Def::Node { kids, .. } => Relation::Node {
                    bit: next(&mut nodes),
                    kids: kids.clone(),
                },
                Def::Typed { inner, .. } => Relation::Typed {
                    bit: next(&mut typed),
                    inner: *inner,
                },
                Def::Contains(inner) => Relation::Contains(*inner),
                Def::Or(a, b) => Relation::Or(*a, *b),
            })
            .collect();
        let bits = (rels.iter())
            .map(|r| match r {
                Relation::Node { bit, .. } | Relation::Typed { bit, .. } => *bit,
                _ => 0,
            })
            .collect();
        if nodes > 64 || typed > 64 {
            return Err(Error::bad_input(
                "the dataflow sketch engine takes at most 64 node and 64 type sketches",
            ));
        }
        Ok(Dataflow {
            relations: Relations::new(&rels, root),
            classes: Dense::default(),
            ops: Evaluator::default(),
            bits,
        })
    }

    /// Feeds the e-graph's changes since the last check and brings the relations up to
    /// date; returns the number of changes fed.
    pub(super) fn update(&mut self, eg: &EGraph, relations: &[(String, Def)]) -> Result<usize> {
        self.ops.refresh(eg)?;
        let mut now: HashSet<Enode> = HashSet::default();
        let mut types: HashMap<u32, u64> = HashMap::default();
        scan_nodes(eg, |node| {
            let class = self.classes.id(node.class);
            let mut ops = 0u64;
            for (r, (_, def)) in relations.iter().enumerate() {
                if let Def::Node { op, .. } = def {
                    if self.ops.has_op(eg, op, node.kind, node.payload) {
                        ops |= 1 << self.bits[r];
                    }
                }
            }
            let mut kids = [NONE; 2];
            for (k, v) in kids.iter_mut().zip(&node.kids[..node.arity]) {
                *k = self.classes.id(*v);
            }
            now.insert((class, ops, kids));
            if let std::collections::hash_map::Entry::Vacant(e) = types.entry(class) {
                let mut matching = 0u64;
                for (r, (_, def)) in relations.iter().enumerate() {
                    if let Def::Typed { ty, .. } = def {
                        if self.ops.has_type(r, ty, node.ty) {
                            matching |= 1 << self.bits[r];
                        }
                    }
                }
                e.insert(matching);
            }
        })?;
        Ok(self.relations.update(now, types))
    }

    /// Does some term of `class` satisfy the sketch?
    pub fn holds(&self, class: Value) -> bool {
        let class = self.classes.ids.get(&class);
        class.map_or(self.relations.holds_every_class(), |c| {
            self.relations.holds(*c)
        })
    }
}
