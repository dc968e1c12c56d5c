//! Evaluating a sketch query's relations in Rust, from one scan of the e-graph per check.
//!
//! The relations are those [`super::query`] prints as egglog rules, computed bottom-up in
//! the order they were compiled: a node relation is one pass over the scanned e-nodes,
//! `contains` a breadth-first search from its inner relation's classes up the parent edges,
//! `or` a union, a type sketch a lookup of each class's type (matched once per type value
//! and remembered: types are hash-consed and never merged). Each check costs a few passes
//! over the e-graph's e-nodes, whatever the sketch's nesting, where egglog's semi-naive
//! rounds (one per level of `contains`) each paid for index upkeep on the whole tables.
//! Subsumed e-nodes (pruned by the term-size filter) are skipped, as extraction skips them.

use super::query::Def;
use super::{type_matches, Op};
use crate::egraph::costs::{adjacency, Dense};
use crate::egraph::encode::TypeTable;
use crate::egraph::schema::{Con, Family};
use crate::error::{Error, Result};
use crate::rise::primitives::Prim;
use crate::rise::types::Type;
use egglog::{EGraph, Value};
use rustc_hash::FxHashMap as HashMap;

/// One e-node: its class, kind, term children (dense class numbers) and payload (the size
/// of a `NatApp`, the name of a `Prim`).
#[derive(Clone, Copy)]
struct Scanned {
    class: u32,
    kind: Con,
    kids: [u32; 2],
    arity: u8,
    payload: Value,
}

/// The e-graph's Rise e-nodes with densely numbered classes.
#[derive(Default)]
struct Scan {
    classes: Dense,
    /// Grouped by kind, in [`Con::ALL`]'s order (as [`scan_nodes`] visits them).
    nodes: Vec<Scanned>,
    /// Each kind's nodes: where they end in `nodes`, by the kind's place in [`Con::ALL`].
    kind_ends: Vec<usize>,
    /// Each class's type value.
    class_ty: Vec<Value>,
}

/// An e-node as egglog stores it: class, kind, term children, payload and type value.
pub(super) struct RawNode {
    pub class: Value,
    pub kind: Con,
    pub kids: [Value; 2],
    pub arity: usize,
    pub payload: Value,
    pub ty: Value,
}

/// Visits every Rise e-node that is not subsumed (pruned by the term-size filter).
pub(super) fn scan_nodes(eg: &EGraph, mut visit: impl FnMut(RawNode)) -> Result<()> {
    for kind in Con::ALL {
        // The other encodings' constructors count as leaves: of no interest to sketches.
        let rise = kind.family() == Family::Rise;
        let children: Vec<usize> = kind.children().filter(|_| rise).collect();
        let arity = children.len();
        eg.constructor_enodes(kind.name(), |e| {
            if e.subsumed {
                return;
            }
            let mut kids = [Value::new_const(0); 2];
            for (k, &i) in kids.iter_mut().zip(&children) {
                *k = e.children[i];
            }
            let payload = match kind.payload() {
                Some(i) if rise => e.children[i],
                _ => Value::new_const(0),
            };
            visit(RawNode {
                class: e.eclass,
                kind,
                kids,
                arity,
                payload,
                ty: *e.children.last().unwrap(),
            });
        })
        .map_err(|e| Error::internal(format!("sketch scan: {e}")))?;
    }
    Ok(())
}

/// A kind's place in [`Con::ALL`].
fn position(kind: Con) -> usize {
    Con::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("every kind is in Con::ALL")
}

/// The kind of e-node that can have operator `op` ([`Evaluator::has_op`] is false for the
/// others).
fn kind_of(op: &Op) -> Con {
    match op {
        Op::App => Con::App,
        Op::Lam => Con::Lam,
        Op::NatLam => Con::NatLam,
        Op::NatApp(_) => Con::NatApp,
        Op::Var(_) => Con::Var,
        Op::Prim(_) => Con::Prim,
        Op::F32(_) => Con::F32,
        Op::Int(_) => Con::Int,
    }
}

impl Scan {
    fn read(eg: &EGraph) -> Result<Scan> {
        let mut scan = Scan::default();
        let mut types: Vec<(u32, Value)> = vec![];
        scan_nodes(eg, |n| {
            let class = scan.classes.id(n.class);
            let mut kids = [0; 2];
            for (k, v) in kids.iter_mut().zip(&n.kids[..n.arity]) {
                *k = scan.classes.id(*v);
            }
            scan.nodes.push(Scanned {
                class,
                kind: n.kind,
                kids,
                arity: n.arity as u8,
                payload: n.payload,
            });
            types.push((class, n.ty));
        })?;
        debug_assert!(scan.nodes.is_sorted_by_key(|n| position(n.kind)));
        scan.kind_ends = (Con::ALL.iter())
            .map(|kind| {
                scan.nodes
                    .partition_point(|n| position(n.kind) <= position(*kind))
            })
            .collect();
        scan.class_ty = vec![Value::new_const(u32::MAX); scan.classes.len()];
        for (class, ty) in types {
            scan.class_ty[class as usize] = ty;
        }
        Ok(scan)
    }

    /// The nodes of one kind.
    fn of_kind(&self, kind: Con) -> &[Scanned] {
        let at = position(kind);
        let start = if at == 0 { 0 } else { self.kind_ends[at - 1] };
        &self.nodes[start..self.kind_ends[at]]
    }

    /// Parent classes of each class, as a compressed adjacency list.
    fn parents(&self) -> (Vec<u32>, Vec<u32>) {
        let edges: Vec<(u32, u32)> = self
            .nodes
            .iter()
            .flat_map(|n| {
                n.kids[..n.arity as usize]
                    .iter()
                    .map(move |k| (*k, n.class))
            })
            .collect();
        adjacency(self.classes.len(), &edges)
    }
}

/// The classes satisfying a sketch after a check.
pub struct Satisfying {
    ids: HashMap<Value, u32>,
    /// `None`: every class (the sketch is `?`).
    holds: Option<Vec<bool>>,
}

impl Satisfying {
    pub fn holds(&self, class: Value) -> bool {
        match &self.holds {
            None => true,
            Some(h) => self.ids.get(&class).is_some_and(|i| h[*i as usize]),
        }
    }
}

/// State kept between checks: decoded sizes and types, and which type values match each
/// type sketch.
#[derive(Default)]
pub struct Evaluator {
    table: TypeTable,
    type_matches: HashMap<(usize, Value), bool>,
    prims: HashMap<Value, Option<Prim>>,
}

impl Evaluator {
    /// Computes the relations on the e-graph as it is; returns the classes of relation
    /// `root` (`None`: every class) and the number of tuples of all relations.
    pub(super) fn run(
        &mut self,
        eg: &EGraph,
        relations: &[(String, Def)],
        root: Option<usize>,
    ) -> Result<(Satisfying, usize)> {
        self.refresh(eg)?;
        let scan = Scan::read(eg)?;
        let classes = scan.classes.len();
        let mut parents = None;
        let mut rels: Vec<Vec<bool>> = Vec::with_capacity(relations.len());
        for (r, (_, def)) in relations.iter().enumerate() {
            let mut holds = vec![false; classes];
            match def {
                Def::Node { op, kids } => {
                    for n in scan.of_kind(kind_of(op)) {
                        if self.has_op(eg, op, n.kind, n.payload)
                            && kids
                                .iter()
                                .enumerate()
                                .all(|(i, k)| k.is_none_or(|k| rels[k][n.kids[i] as usize]))
                        {
                            holds[n.class as usize] = true;
                        }
                    }
                }
                Def::Contains(inner) => {
                    let (start, up) = parents.get_or_insert_with(|| scan.parents());
                    holds.clone_from(&rels[*inner]);
                    let mut todo: Vec<u32> =
                        (0..classes as u32).filter(|c| holds[*c as usize]).collect();
                    while let Some(c) = todo.pop() {
                        for p in &up[start[c as usize] as usize..start[c as usize + 1] as usize] {
                            if !holds[*p as usize] {
                                holds[*p as usize] = true;
                                todo.push(*p);
                            }
                        }
                    }
                }
                Def::Or(a, b) => {
                    for (h, (x, y)) in holds.iter_mut().zip(rels[*a].iter().zip(&rels[*b])) {
                        *h = *x || *y;
                    }
                }
                Def::Typed { inner, ty } => {
                    for (c, h) in holds.iter_mut().enumerate() {
                        if inner.is_none_or(|i| rels[i][c]) {
                            *h = self.has_type(r, ty, scan.class_ty[c]);
                        }
                    }
                }
            }
            rels.push(holds);
        }
        let tuples = rels.iter().map(|h| h.iter().filter(|x| **x).count()).sum();
        let holds = root.map(|r| rels.swap_remove(r));
        Ok((
            Satisfying {
                ids: scan.classes.ids,
                holds,
            },
            tuples,
        ))
    }

    /// Decodes the sizes and types added since the last check.
    pub(super) fn refresh(&mut self, eg: &EGraph) -> Result<()> {
        self.table.update(eg)
    }

    /// Does the type value `v` match the type sketch `ty` of relation `r`? (Remembered
    /// per relation and type value: types are hash-consed and never merged.)
    pub(super) fn has_type(&mut self, r: usize, ty: &Type, v: Value) -> bool {
        let table = &self.table;
        *self
            .type_matches
            .entry((r, v))
            .or_insert_with(|| table.ty(v).is_some_and(|t| type_matches(ty, t)))
    }

    /// Does an e-node of this kind and payload have the sketch's operator (and size, or
    /// primitive)?
    pub(super) fn has_op(&mut self, eg: &EGraph, op: &Op, kind: Con, payload: Value) -> bool {
        match (op, kind) {
            (Op::App, Con::App) | (Op::Lam, Con::Lam) => true,
            (Op::NatLam, Con::NatLam) | (Op::Var(None), Con::Var) => true,
            (Op::Var(Some(i)), Con::Var) => eg.value_to_base::<i64>(payload) == i64::from(*i),
            (Op::Int(i), Con::Int) => eg.value_to_base::<i64>(payload) == *i,
            (Op::F32(x), Con::F32) => {
                let v = eg.value_to_base::<egglog::sort::F>(payload);
                v.0 .0 == f64::from(x.0)
            }
            (Op::NatApp(size), Con::NatApp) => {
                size.as_meta().is_some() || self.table.nat(payload) == Some(size)
            }
            (Op::Prim(p), Con::Prim) => {
                let name = *self.prims.entry(payload).or_insert_with(|| {
                    Prim::from_name(&eg.value_to_base::<egglog::sort::S>(payload).0)
                });
                name == Some(*p)
            }
            _ => false,
        }
    }
}
