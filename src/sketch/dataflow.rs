//! Evaluating a sketch query's relations incrementally, with differential dataflow.
//!
//! The e-graph enters the dataflow as two collections that change from check to check: its
//! e-nodes, each `(class, ops, children)` where `ops` says which of the query's node
//! sketches have the e-node's operator, and its classes, each with the type sketches its
//! type matches. A check feeds only the difference from the last one: the e-nodes that are
//! new, and the retraction of those whose canonical form changed when classes merged. The
//! relations are the ones `--show-query` prints, maintained by differential dataflow: `F(s..)`
//! filters the e-nodes and semijoins them with the children's relations, `contains(s)` is an
//! `iterate` up the child-to-parent edges, `or` a concatenation, `s :: t` a semijoin with
//! the classes of a matching type. "Found" reads the root relation, kept as it changes.
//!
//! Finding the difference still reads every e-node (egglog reports no deltas), so a check
//! costs one pass over the e-graph plus work in proportion to what changed.

use super::eval::{scan_nodes, Evaluator};
use super::query::Def;
use crate::egraph::costs::Dense;
use crate::error::{Error, Result};
use differential_dataflow::input::{Input, InputSession};
use differential_dataflow::VecCollection;
use egglog::{EGraph, Value};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefCell;
use std::rc::Rc;
use timely::communication::allocator::thread::Thread;
use timely::communication::Allocator;
use timely::dataflow::operators::probe::Handle;
use timely::worker::Worker;

/// An e-node as the dataflow sees it: class, which node sketches' operators it has (a bit
/// per node relation), and its term children (at most two; `u32::MAX` for none).
type Enode = (u32, u64, [u32; 2]);
/// A class and which type sketches its type matches (a bit per typed relation).
type ClassType = (u32, u64);

/// The dataflow of one sketch query, kept between checks.
pub struct Dataflow {
    worker: Worker,
    enodes: InputSession<u32, Enode, isize>,
    class_types: InputSession<u32, ClassType, isize>,
    probe: Handle<u32>,
    /// The root relation's classes, with their multiplicities.
    root: Rc<RefCell<HashMap<u32, isize>>>,
    /// Whether the sketch is `?` (every class satisfies it).
    any: bool,
    /// What was fed so far (to find the difference).
    fed_enodes: HashSet<Enode>,
    fed_types: HashMap<u32, u64>,
    classes: Dense,
    /// Matching operators and types (decoded sizes and types, primitive names, type
    /// sketches matched per type value).
    ops: Evaluator,
    /// For each relation, its bit among node (or typed) relations.
    bits: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Dataflow {
    /// Builds the dataflow of `relations` with `root` as the relation of the whole sketch.
    pub(super) fn new(relations: &[(String, Def)], root: Option<usize>) -> Result<Dataflow> {
        let mut bits = vec![];
        let (mut nodes, mut typed) = (0u32, 0u32);
        for (_, def) in relations {
            let counter = match def {
                Def::Node { .. } => &mut nodes,
                Def::Typed { .. } => &mut typed,
                _ => {
                    bits.push(0);
                    continue;
                }
            };
            bits.push(*counter);
            *counter += 1;
        }
        if nodes > 64 || typed > 64 {
            return Err(Error::bad_input(
                "the dataflow sketch engine takes at most 64 node and 64 type sketches",
            ));
        }
        let mut worker = Worker::new(
            timely::WorkerConfig::default(),
            Allocator::Thread(Thread::default()),
            None,
        );
        let probe = Handle::new();
        let out: Rc<RefCell<HashMap<u32, isize>>> = Rc::default();
        let sink = out.clone();
        let defs: Vec<Def> = relations.iter().map(|(_, d)| d.clone()).collect();
        let rel_bits = bits.clone();
        let (enodes, class_types) = worker.dataflow::<u32, _, _>(|scope| {
            let (enodes_in, enodes) = scope.new_collection::<Enode, isize>();
            let (types_in, class_types) = scope.new_collection::<ClassType, isize>();
            let rels = relations_of(&defs, &rel_bits, enodes, class_types);
            if let Some(r) = root {
                rels[r]
                    .clone()
                    .inspect(move |(c, _, diff)| {
                        *sink.borrow_mut().entry(*c).or_insert(0) += diff;
                    })
                    .probe_with(&probe);
            } else {
                rels.into_iter().for_each(|r| {
                    r.probe_with(&probe);
                });
            }
            (enodes_in, types_in)
        });
        Ok(Dataflow {
            worker,
            enodes,
            class_types,
            probe,
            root: out,
            any: root.is_none(),
            fed_enodes: HashSet::default(),
            fed_types: HashMap::default(),
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
        let mut changes = 0;
        for n in now.difference(&self.fed_enodes) {
            self.enodes.insert(*n);
            changes += 1;
        }
        for n in self.fed_enodes.difference(&now) {
            self.enodes.remove(*n);
            changes += 1;
        }
        for (c, m) in &types {
            match self.fed_types.get(c) {
                Some(old) if old == m => continue,
                Some(old) => self.class_types.remove((*c, *old)),
                None => {}
            }
            self.class_types.insert((*c, *m));
            changes += 1;
        }
        for (c, old) in &self.fed_types {
            if !types.contains_key(c) {
                self.class_types.remove((*c, *old));
                changes += 1;
            }
        }
        self.fed_enodes = now;
        self.fed_types = types;
        let next = self.enodes.time() + 1;
        self.enodes.advance_to(next);
        self.class_types.advance_to(next);
        self.enodes.flush();
        self.class_types.flush();
        let (probe, input) = (&self.probe, &self.enodes);
        self.worker.step_while(|| probe.less_than(input.time()));
        Ok(changes)
    }

    /// Does some term of `class` satisfy the sketch?
    pub fn holds(&self, class: Value) -> bool {
        self.any
            || self
                .classes
                .ids
                .get(&class)
                .is_some_and(|c| self.root.borrow().get(c).is_some_and(|m| *m > 0))
    }
}

/// The relations of `defs` over the e-node and class-type collections, in order.
fn relations_of<'s>(
    defs: &[Def],
    bits: &[u32],
    enodes: VecCollection<'s, u32, Enode, isize>,
    class_types: VecCollection<'s, u32, ClassType, isize>,
) -> Vec<VecCollection<'s, u32, u32, isize>> {
    use differential_dataflow::operators::Iterate;
    let parents = enodes.clone().flat_map(|(class, _, kids)| {
        kids.into_iter()
            .filter(|k| *k != NONE)
            .map(move |k| (k, class))
    });
    let mut rels: Vec<VecCollection<'s, u32, u32, isize>> = vec![];
    for (def, bit) in defs.iter().zip(bits) {
        let bit = 1u64 << bit;
        let rel = match def {
            Def::Node { kids, .. } => {
                let mut matching = enodes.clone().filter(move |(_, ops, _)| ops & bit != 0);
                for (i, k) in kids.iter().enumerate() {
                    if let Some(k) = k {
                        matching = matching
                            .map(move |n| (n.2[i], n))
                            .semijoin(rels[*k].clone())
                            .map(|(_, n)| n);
                    }
                }
                matching.map(|(class, _, _)| class).distinct()
            }
            Def::Contains(inner) => {
                let seeds = rels[*inner].clone();
                let parents = parents.clone();
                seeds.clone().iterate(|scope, reached| {
                    let up = parents.enter(scope);
                    up.semijoin(reached)
                        .map(|(_, p)| p)
                        .concat(seeds.enter(scope))
                        .distinct()
                })
            }
            Def::Or(a, b) => rels[*a].clone().concat(rels[*b].clone()).distinct(),
            Def::Typed { inner, .. } => {
                let typed = class_types
                    .clone()
                    .filter(move |(_, m)| m & bit != 0)
                    .map(|(c, _)| c);
                match inner {
                    Some(i) => rels[*i]
                        .clone()
                        .map(|c| (c, ()))
                        .semijoin(typed)
                        .map(|(c, _)| c),
                    None => typed,
                }
            }
        };
        rels.push(rel);
    }
    rels
}
