//! Sketch-satisfying extraction (paper section 3.4): the cheapest term of an e-class that
//! satisfies a sketch, for a monotone local cost model.
//!
//! Each sub-sketch gets a table from e-classes to (cost, how to build the term), computed
//! bottom-up over the sketch: `?` is plain extraction, `F(s..)` joins a class's `F` nodes with
//! its children's tables (from the parents of the smallest child table's classes),
//! `contains(s)` starts from `s`'s table and spreads to parents cheapest first (Dijkstra's
//! algorithm over the parent relation: cycles are fine, and each class is settled once, so an
//! e-graph of millions of e-nodes takes one pass, not one per level of nesting), `or` keeps the
//! cheaper side and `s :: t` keeps the classes of a matching type. Node costs are at least 1,
//! so following choices always terminates.

use super::{type_matches, Op, Sketch};
use crate::egraph::extract::{CostModel, ENode, ExprGraph, Extractor};
use crate::error::{Error, Result};
use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use egglog::Value;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// How a table entry's term is built (a few bytes: tables have an entry per class).
#[derive(Clone, Copy, Debug)]
enum Choice {
    /// The class's term in another table (`None`: the cheapest term of any shape).
    Via(Option<usize>),
    /// Node `i` of the class, each child from the table of the sketch node's child
    /// ([`Table::kids`]).
    Node(u32),
    /// Node `i` of the class, its child `j` from this same table (`contains`), the others of
    /// any shape.
    Inside(u32, u32),
}

/// Each class with a satisfying term: its cost and how to build it.
type Entries = HashMap<Value, (u64, Choice)>;

/// A sub-sketch's table.
struct Table {
    entries: Entries,
    /// For [`Choice::Node`]: the tables of the sketch node's children.
    kids: Vec<Option<usize>>,
}

/// Where each class occurs as a child: (child class, parent class, node index, child
/// position), sorted by child class (one flat vector: an e-graph has millions of them).
struct Parents(Vec<(Value, Value, u32, u32)>);

impl Parents {
    fn of(graph: &ExprGraph) -> Parents {
        let mut all = vec![];
        for (class, nodes) in &graph.classes {
            for (i, node) in nodes.iter().enumerate() {
                for (j, kid) in node.children().into_iter().enumerate() {
                    all.push((*kid, *class, i as u32, j as u32));
                }
            }
        }
        all.sort_unstable_by_key(|o| o.0);
        Parents(all)
    }

    /// The occurrences of `class` as a child: the first found by bisection, the others read
    /// on from it (a class has few, where bisecting the rest of the vector for their end
    /// would touch a new cache line at each step).
    fn of_class(&self, class: Value) -> &[(Value, Value, u32, u32)] {
        let start = self.0.partition_point(|o| o.0 < class);
        let count = self.0[start..].iter().take_while(|o| o.0 == class).count();
        &self.0[start..start + count]
    }
}

/// A node's operator as a node sketch's [`Op`] names it, without payload but a primitive's.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Head {
    App,
    Lam,
    NatLam,
    NatApp,
    Var,
    Prim(Prim),
    F32,
    Int,
    Comp,
}

impl Head {
    fn of_node(node: &ENode) -> Head {
        match node {
            Node::App(..) => Head::App,
            Node::Lam(_) => Head::Lam,
            Node::NatLam(_) => Head::NatLam,
            Node::NatApp(..) => Head::NatApp,
            Node::Var(_) => Head::Var,
            Node::Prim(p) => Head::Prim(*p),
            Node::F32(_) => Head::F32,
            Node::Int(_) => Head::Int,
            Node::Comp(..) => Head::Comp,
        }
    }

    fn of_op(op: &Op) -> Head {
        match op {
            Op::App => Head::App,
            Op::Lam => Head::Lam,
            Op::NatLam => Head::NatLam,
            Op::NatApp(_) => Head::NatApp,
            Op::Var(_) => Head::Var,
            Op::Prim(p) => Head::Prim(*p),
            Op::F32(_) => Head::F32,
            Op::Int(_) => Head::Int,
        }
    }
}

/// Every node by its head: (class, node index).
struct Heads(HashMap<Head, Vec<(Value, u32)>>);

impl Heads {
    fn of(graph: &ExprGraph) -> Heads {
        let mut heads: HashMap<Head, Vec<(Value, u32)>> = HashMap::default();
        for (class, nodes) in &graph.classes {
            for (i, node) in nodes.iter().enumerate() {
                heads
                    .entry(Head::of_node(node))
                    .or_default()
                    .push((*class, i as u32));
            }
        }
        Heads(heads)
    }
}

/// Extraction of cheapest sketch-satisfying terms from one e-graph.
pub struct SketchExtractor<'g> {
    graph: &'g ExprGraph,
    any: Extractor<'g>,
    /// Own cost of each node, by class and position.
    node_costs: HashMap<Value, Vec<u64>>,
    tables: Vec<Table>,
    /// The table of each sub-sketch computed so far.
    memo: HashMap<Sketch, Option<usize>>,
    /// Built on the first `contains`, or the first node sketch with a child's table.
    parents: Option<Parents>,
    /// Built on the first node sketch none of whose children has a table.
    heads: Option<Heads>,
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
            parents: None,
            heads: None,
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
        Some(self.tables[table].entries.keys().copied().collect())
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
            Some(t) => self.tables[t].entries.get(&class).map(|(c, _)| *c),
        }
    }

    fn push(&mut self, entries: Entries, kids: Vec<Option<usize>>) -> Option<usize> {
        self.tables.push(Table { entries, kids });
        Some(self.tables.len() - 1)
    }

    /// Table `t`'s classes and costs, each built as in `t`.
    fn via(&self, t: usize) -> Entries {
        let entries = self.tables[t].entries.iter();
        entries
            .map(|(class, (c, _))| (*class, (*c, Choice::Via(Some(t)))))
            .collect()
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
                let entries = self.join(op, &kids);
                self.push(entries, kids)
            }
            Sketch::Contains(inner) => {
                let base = self.table(inner)?;
                let entries = self.contains(base);
                self.push(entries, vec![])
            }
            Sketch::Or(a, b) => {
                let (a, b) = (self.table(a), self.table(b));
                let (a, b) = (a?, b?);
                let mut entries = self.via(a);
                for (class, (c, _)) in &self.tables[b].entries {
                    if entries.get(class).is_none_or(|(best, _)| c < best) {
                        entries.insert(*class, (*c, Choice::Via(Some(b))));
                    }
                }
                self.push(entries, vec![])
            }
            Sketch::Typed(inner, t) => {
                let inner = self.table(inner);
                let entries = self
                    .graph
                    .typed_classes()
                    .filter(|(_, ty)| type_matches(t, ty))
                    .filter_map(|(class, _)| {
                        Some((class, (self.cost_in(inner, class)?, Choice::Via(inner))))
                    })
                    .collect();
                self.push(entries, vec![])
            }
        }
    }

    /// The entries of `op(kids..)`: each class's cheapest node of `op` whose children have
    /// terms in the kids' tables. The candidates are the parents of the smallest kid table's
    /// classes (in that child's place), or with no kid table, every node of `op`'s head. Among
    /// a class's nodes of one cost the first is kept, as a scan of the class would keep it.
    fn join(&mut self, op: &Op, kids: &[Option<usize>]) -> Entries {
        let smallest = (kids.iter().enumerate())
            .filter_map(|(j, t)| Some((j, (*t)?)))
            .min_by_key(|(_, t)| self.tables[*t].entries.len());
        let candidates: Vec<(Value, u32)> = match smallest {
            Some((j, t)) => {
                let parents = self.parents.get_or_insert_with(|| Parents::of(self.graph));
                (self.tables[t].entries.keys())
                    .flat_map(|class| parents.of_class(*class))
                    .filter(|o| o.3 == j as u32)
                    .map(|o| (o.1, o.2))
                    .collect()
            }
            None => {
                let heads = self.heads.get_or_insert_with(|| Heads::of(self.graph));
                heads.0.get(&Head::of_op(op)).cloned().unwrap_or_default()
            }
        };
        let mut entries = Entries::default();
        for (class, i) in candidates {
            let node = &self.graph.classes[&class][i as usize];
            if !op.matches(node) || node.children().len() != kids.len() {
                continue;
            }
            let cost = (node.children().iter().zip(kids))
                .try_fold(self.node_costs[&class][i as usize], |acc, (child, t)| {
                    Some(acc.saturating_add(self.cost_in(*t, **child)?))
                });
            let Some(c) = cost else { continue };
            let better = entries.get(&class).is_none_or(|&(best, choice)| {
                c < best || (c == best && matches!(choice, Choice::Node(k) if i < k))
            });
            if better {
                entries.insert(class, (c, Choice::Node(i)));
            }
        }
        entries
    }

    /// The table of `contains(s)` from `s`'s table `base`: a class's term contains one
    /// satisfying `s` if it does itself, or if a node of it has a child whose term does (the
    /// node's other children of any shape). Spread from `base`'s classes to their parents,
    /// cheapest first.
    fn contains(&mut self, base: usize) -> Entries {
        use std::cmp::Reverse;
        let mut entries = self.via(base);
        let parents = self.parents.get_or_insert_with(|| Parents::of(self.graph));
        let mut queue: std::collections::BinaryHeap<Reverse<(u64, Value)>> = entries
            .iter()
            .map(|(c, (cost, _))| Reverse((*cost, *c)))
            .collect();
        while let Some(Reverse((cost, class))) = queue.pop() {
            if entries.get(&class).is_some_and(|(best, _)| *best < cost) {
                continue;
            }
            for &(_, parent, i, j) in parents.of_class(class) {
                let node = &self.graph.classes[&parent][i as usize];
                let mut others =
                    (node.children().into_iter().enumerate()).filter(|(k, _)| *k != j as usize);
                let own = self.node_costs[&parent][i as usize].saturating_add(cost);
                let total = others.try_fold(own, |acc, (_, c)| {
                    Some(acc.saturating_add(self.any.cost(*c)?))
                });
                let Some(total) = total else { continue };
                if entries.get(&parent).is_none_or(|(best, _)| total < *best) {
                    entries.insert(parent, (total, Choice::Inside(i, j)));
                    queue.push(Reverse((total, parent)));
                }
            }
        }
        entries
    }

    fn build(&self, table: Option<usize>, class: Value) -> Result<Rc<Term>> {
        let Some(t) = table else {
            return self.any.extract(class);
        };
        let missing = || Error::internal("sketch extraction lost a class");
        let node_of = |i: u32| {
            let node = &self.graph.classes[&class][i as usize];
            let ty = self.graph.ty(class).ok_or_else(missing)?.clone();
            Ok::<_, Error>((node, ty))
        };
        let (node, ty, from): (_, _, Vec<Option<usize>>) =
            match self.tables[t].entries.get(&class).ok_or_else(missing)?.1 {
                Choice::Via(other) => return self.build(other, class),
                Choice::Node(i) => {
                    let (node, ty) = node_of(i)?;
                    (node, ty, self.tables[t].kids.clone())
                }
                Choice::Inside(i, j) => {
                    let (node, ty) = node_of(i)?;
                    let n = node.children().len();
                    let from = (0..n).map(|k| (k == j as usize).then_some(t)).collect();
                    (node, ty, from)
                }
            };
        let kids: Vec<Rc<Term>> = node
            .children()
            .iter()
            .zip(from)
            .map(|(c, t)| self.build(t, **c))
            .collect::<Result<_>>()?;
        let mut kids = kids.into_iter();
        Ok(Term::new(node.map(|_| kids.next().unwrap()), ty))
    }
}
