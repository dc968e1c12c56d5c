//! The relations of a sketch query over a changing e-graph, maintained incrementally by
//! differential dataflow: sketchlog's `--sketch-engine dataflow`.
//!
//! The e-graph enters as two collections that change from check to check: its e-nodes, each
//! `(class, ops, children)` where `ops` says which of the query's node relations have the
//! e-node's operator (a bit each), and its classes, each with the type relations its type
//! matches (a bit each). [`Relations::update`] feeds only the difference from the last
//! update: the e-nodes that are new, and the retraction of those that are gone (their
//! canonical form changed when classes merged). A node relation filters the e-nodes and
//! semijoins them with its children's relations, `contains` is an `iterate` up the
//! child-to-parent edges, `or` a concatenation, a typed relation a semijoin with the classes
//! of a matching type. [`Relations::holds`] reads the root relation, kept as it changes.
//!
//! The crate knows nothing of Rise or egglog: classes are dense `u32` ids and operators and
//! types are bits, decided by the caller. It is a crate of its own so that the generic code
//! of differential dataflow it instantiates is compiled once, apart from sketchlog.

use differential_dataflow::input::{Input, InputSession};
use differential_dataflow::VecCollection;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefCell;
use std::rc::Rc;
use timely::communication::allocator::thread::Thread;
use timely::communication::Allocator;
use timely::dataflow::operators::probe::Handle;
use timely::worker::Worker;

/// An e-node: its class, the node relations whose operator it has (a bit per node
/// relation), and its term children (at most two; [`NONE`] for none).
pub type Enode = (u32, u64, [u32; 2]);

/// No child.
pub const NONE: u32 = u32::MAX;

/// A relation of the query, defined on the e-nodes, the classes' types and the relations
/// before it.
#[derive(Clone, Debug)]
pub enum Relation {
    /// The classes of e-nodes with operator bit `bit` whose children are in the given
    /// relations (a child with `None` is unconstrained).
    Node { bit: u32, kids: Vec<Option<usize>> },
    /// The classes with a term that contains a term of the relation.
    Contains(usize),
    /// The classes of either relation.
    Or(usize, usize),
    /// The classes whose type has bit `bit`, of relation `inner` when given.
    Typed { bit: u32, inner: Option<usize> },
}

/// The dataflow of one query, kept between updates.
pub struct Relations {
    worker: Worker,
    enodes: InputSession<u32, Enode, isize>,
    class_types: InputSession<u32, (u32, u64), isize>,
    probe: Handle<u32>,
    /// The root relation's classes, with their multiplicities.
    root: Rc<RefCell<HashMap<u32, isize>>>,
    /// Whether there is no root relation (every class satisfies the query).
    any: bool,
    /// What was fed so far (to find the difference).
    fed_enodes: HashSet<Enode>,
    fed_types: HashMap<u32, u64>,
}

impl Relations {
    /// The dataflow of `relations` (each defined on those before it), `root` the relation
    /// that [`Relations::holds`] reads; without one, every class holds.
    pub fn new(relations: &[Relation], root: Option<usize>) -> Relations {
        let mut worker = Worker::new(
            timely::WorkerConfig::default(),
            Allocator::Thread(Thread::default()),
            None,
        );
        let probe = Handle::new();
        let out: Rc<RefCell<HashMap<u32, isize>>> = Rc::default();
        let sink = out.clone();
        let (enodes, class_types) = worker.dataflow::<u32, _, _>(|scope| {
            let (enodes_in, enodes) = scope.new_collection::<Enode, isize>();
            let (types_in, class_types) = scope.new_collection::<(u32, u64), isize>();
            let rels = relations_of(relations, enodes, class_types);
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
        Relations {
            worker,
            enodes,
            class_types,
            probe,
            root: out,
            any: root.is_none(),
            fed_enodes: HashSet::default(),
            fed_types: HashMap::default(),
        }
    }

    /// Makes the e-graph `enodes`, with the classes' type bits `types`, the one the
    /// relations are of: feeds the difference from the last update and brings the relations
    /// up to date. The number of changes fed.
    pub fn update(&mut self, enodes: HashSet<Enode>, types: HashMap<u32, u64>) -> usize {
        let mut changes = 0;
        for n in enodes.difference(&self.fed_enodes) {
            self.enodes.insert(*n);
            changes += 1;
        }
        for n in self.fed_enodes.difference(&enodes) {
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
        self.fed_enodes = enodes;
        self.fed_types = types;
        let next = self.enodes.time() + 1;
        self.enodes.advance_to(next);
        self.class_types.advance_to(next);
        self.enodes.flush();
        self.class_types.flush();
        let (probe, input) = (&self.probe, &self.enodes);
        self.worker.step_while(|| probe.less_than(input.time()));
        changes
    }

    /// Is `class` in the root relation?
    pub fn holds(&self, class: u32) -> bool {
        self.any || self.root.borrow().get(&class).is_some_and(|m| *m > 0)
    }

    /// Does every class hold (there is no root relation)?
    pub fn holds_every_class(&self) -> bool {
        self.any
    }
}

/// The collections of `defs` over the e-node and class-type collections, in order.
fn relations_of<'s>(
    defs: &[Relation],
    enodes: VecCollection<'s, u32, Enode, isize>,
    class_types: VecCollection<'s, u32, (u32, u64), isize>,
) -> Vec<VecCollection<'s, u32, u32, isize>> {
    use differential_dataflow::operators::Iterate;
    let parents = enodes.clone().flat_map(|(class, _, kids)| {
        kids.into_iter()
            .filter(|k| *k != NONE)
            .map(move |k| (k, class))
    });
    let mut rels: Vec<VecCollection<'s, u32, u32, isize>> = vec![];
    for def in defs {
        let rel = match def {
            Relation::Node { bit, kids } => {
                let bit = 1u64 << bit;
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
            Relation::Contains(inner) => {
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
            Relation::Or(a, b) => rels[*a].clone().concat(rels[*b].clone()).distinct(),
            Relation::Typed { bit, inner } => {
                let bit = 1u64 << bit;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(contains(g))` over a three-class e-graph, then after an e-node is removed.
    #[test]
    fn relations_follow_the_e_graph_as_it_changes() {
        // Bits: 0 for `f`, 1 for `g`.
        let rels = [
            Relation::Node {
                bit: 1,
                kids: vec![],
            },
            Relation::Contains(0),
            Relation::Node {
                bit: 0,
                kids: vec![Some(1)],
            },
        ];
        let mut q = Relations::new(&rels, Some(2));
        // Class 0 = g, class 1 = h(class 0), class 2 = f(class 1).
        let g = (0, 0b10, [NONE, NONE]);
        let h = (1, 0, [0, NONE]);
        let f = (2, 0b01, [1, NONE]);
        let all: HashSet<Enode> = [g, h, f].into_iter().collect();
        assert_eq!(q.update(all.clone(), HashMap::default()), 3);
        assert!(q.holds(2) && !q.holds(1) && !q.holds(0));
        // h no longer reads class 0: f no longer contains a g.
        let h2 = (1, 0, [NONE, NONE]);
        let changed: HashSet<Enode> = [g, h2, f].into_iter().collect();
        assert_eq!(q.update(changed, HashMap::default()), 2);
        assert!(!q.holds(2));
        assert!(Relations::new(&rels, None).holds(7));
        assert!(!q.holds_every_class());
    }

    #[test]
    fn a_typed_relation_keeps_the_classes_of_a_matching_type() {
        let rels = [
            Relation::Node {
                bit: 0,
                kids: vec![],
            },
            Relation::Typed {
                bit: 3,
                inner: Some(0),
            },
        ];
        let mut q = Relations::new(&rels, Some(1));
        let enodes: HashSet<Enode> = [(0, 1, [NONE, NONE]), (1, 1, [NONE, NONE])]
            .into_iter()
            .collect();
        let types: HashMap<u32, u64> = [(0, 0b1000), (1, 0b0100)].into_iter().collect();
        q.update(enodes.clone(), types);
        assert!(q.holds(0) && !q.holds(1));
        let types: HashMap<u32, u64> = [(0, 0), (1, 0b1000)].into_iter().collect();
        assert_eq!(q.update(enodes, types), 2);
        assert!(!q.holds(0) && q.holds(1));
    }
}
