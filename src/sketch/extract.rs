//! Sketch-satisfying extraction (paper section 3.4): the cheapest term of an e-class that
//! satisfies a sketch, for a monotone local cost model.
//!
//! Each sub-sketch gets a table from e-classes to (cost, how to build the term), computed
//! bottom-up over the sketch: `?` is plain extraction, `F(s..)` joins a class's `F` nodes with
//! its children's tables, `contains(s)` starts from `s`'s table and relaxes over parents to a
//! fixpoint (so cycles are fine), `or` keeps the cheaper side and `s :: t` keeps the classes
//! of a matching type. Node costs are at least 1, so following choices always terminates.

use super::{type_matches, Sketch};
use crate::egraph::extract::{CostModel, ExprGraph, Extractor};
use crate::error::{Error, Result};
use crate::rise::term::Term;
use egglog::Value;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// How a table entry's term is built.
#[derive(Clone, Debug)]
enum Choice {
    /// The class's term in another table (`None`: the cheapest term of any shape).
    Via(Option<usize>),
    /// Node `i` of the class, each child from the given table.
    Node(usize, Vec<Option<usize>>),
}

type Table = HashMap<Value, (u64, Choice)>;

/// Extraction of cheapest sketch-satisfying terms from one e-graph.
pub struct SketchExtractor<'g> {
    graph: &'g ExprGraph,
    any: Extractor<'g>,
    /// Own cost of each node, by class and position.
    node_costs: HashMap<Value, Vec<u64>>,
    tables: Vec<Table>,
    /// The table of each sub-sketch computed so far.
    memo: HashMap<Sketch, Option<usize>>,
}

impl<'g> SketchExtractor<'g> {
    pub fn new(graph: &'g ExprGraph, cost: &impl CostModel) -> SketchExtractor<'g> {
        let node_costs = graph
            .classes
            .iter()
            .map(|(c, ns)| (*c, ns.iter().map(|n| cost.node_cost(n).max(1)).collect()))
            .collect();
        SketchExtractor {
            graph,
            any: Extractor::new(graph, cost),
            node_costs,
            tables: vec![],
            memo: HashMap::default(),
        }
    }

    /// The cost of the cheapest term of `class` satisfying `sketch`, if one does.
    pub fn cost(&mut self, sketch: &Sketch, class: Value) -> Option<u64> {
        let table = self.table(sketch);
        self.cost_in(table, class)
    }

    /// The e-classes with a term satisfying `sketch` (`None`: every class).
    pub fn satisfying(&mut self, sketch: &Sketch) -> Option<Vec<Value>> {
        let table = self.table(sketch)?;
        Some(self.tables[table].keys().copied().collect())
    }

    /// The cheapest term of `class` that satisfies `sketch`, with its cost.
    pub fn extract(&mut self, sketch: &Sketch, class: Value) -> Result<(u64, Rc<Term>)> {
        let table = self.table(sketch);
        let cost = self.cost_in(table, class).ok_or_else(|| {
            Error::bad_input("no term of the e-class satisfies the sketch".to_string())
        })?;
        Ok((cost, self.build(table, class)?))
    }

    fn cost_in(&self, table: Option<usize>, class: Value) -> Option<u64> {
        match table {
            None => self.any.cost(class),
            Some(t) => self.tables[t].get(&class).map(|(c, _)| *c),
        }
    }

    fn push(&mut self, t: Table) -> Option<usize> {
        self.tables.push(t);
        Some(self.tables.len() - 1)
    }

    /// The table of `s` (`None`: every term satisfies it).
    fn table(&mut self, s: &Sketch) -> Option<usize> {
        if let Some(t) = self.memo.get(s) {
            return *t;
        }
        let t = self.new_table(s);
        self.memo.insert(s.clone(), t);
        t
    }

    fn new_table(&mut self, s: &Sketch) -> Option<usize> {
        match s {
            Sketch::Any => None,
            Sketch::Node(op, kids) => {
                let kids: Vec<Option<usize>> = kids.iter().map(|k| self.table(k)).collect();
                let mut table = Table::default();
                for (class, nodes) in &self.graph.classes {
                    for (i, node) in nodes.iter().enumerate() {
                        if !op.matches(node) || node.children().len() != kids.len() {
                            continue;
                        }
                        let cost = node
                            .children()
                            .iter()
                            .zip(&kids)
                            .try_fold(self.node_costs[class][i], |acc, (child, t)| {
                                Some(acc.saturating_add(self.cost_in(*t, **child)?))
                            });
                        if let Some(c) = cost {
                            if table.get(class).is_none_or(|(b, _)| c < *b) {
                                table.insert(*class, (c, Choice::Node(i, kids.clone())));
                            }
                        }
                    }
                }
                self.push(table)
            }
            Sketch::Contains(inner) => {
                let base = self.table(inner)?;
                let id = self.tables.len();
                let mut table: Table = self.tables[base]
                    .iter()
                    .map(|(class, (c, _))| (*class, (*c, Choice::Via(Some(base)))))
                    .collect();
                loop {
                    let mut changed = false;
                    for (class, nodes) in &self.graph.classes {
                        for (i, node) in nodes.iter().enumerate() {
                            let kids = node.children();
                            for (j, kid) in kids.iter().enumerate() {
                                let Some((inside, _)) = table.get(*kid) else {
                                    continue;
                                };
                                let mut others = kids.iter().enumerate().filter(|(k, _)| *k != j);
                                let cost = others.try_fold(
                                    self.node_costs[class][i].saturating_add(*inside),
                                    |acc, (_, c)| Some(acc.saturating_add(self.any.cost(**c)?)),
                                );
                                let Some(c) = cost else { continue };
                                if table.get(class).is_none_or(|(b, _)| c < *b) {
                                    let mut from = vec![None; kids.len()];
                                    from[j] = Some(id);
                                    table.insert(*class, (c, Choice::Node(i, from)));
                                    changed = true;
                                }
                            }
                        }
                    }
                    if !changed {
                        break;
                    }
                }
                self.push(table)
            }
            Sketch::Or(a, b) => {
                let (a, b) = (self.table(a), self.table(b));
                let (a, b) = (a?, b?);
                let mut table: Table = self.tables[a]
                    .iter()
                    .map(|(class, (c, _))| (*class, (*c, Choice::Via(Some(a)))))
                    .collect();
                for (class, (c, _)) in &self.tables[b] {
                    if table.get(class).is_none_or(|(best, _)| c < best) {
                        table.insert(*class, (*c, Choice::Via(Some(b))));
                    }
                }
                self.push(table)
            }
            Sketch::Typed(inner, t) => {
                let inner = self.table(inner);
                let table = self
                    .graph
                    .typed_classes()
                    .filter(|(_, ty)| type_matches(t, ty))
                    .filter_map(|(class, _)| {
                        Some((class, (self.cost_in(inner, class)?, Choice::Via(inner))))
                    })
                    .collect();
                self.push(table)
            }
        }
    }

    fn build(&self, table: Option<usize>, class: Value) -> Result<Rc<Term>> {
        let Some(t) = table else {
            return self.any.extract(class);
        };
        let missing = || Error::internal("sketch extraction lost a class");
        match &self.tables[t].get(&class).ok_or_else(missing)?.1 {
            Choice::Via(other) => self.build(*other, class),
            Choice::Node(i, from) => {
                let node = &self.graph.classes[&class][*i];
                let ty = self.graph.ty(class).ok_or_else(missing)?.clone();
                let kids: Vec<Rc<Term>> = node
                    .children()
                    .iter()
                    .zip(from)
                    .map(|(c, t)| self.build(*t, **c))
                    .collect::<Result<_>>()?;
                let mut kids = kids.into_iter();
                Ok(Term::new(node.map(|_| kids.next().unwrap()), ty))
            }
        }
    }
}
