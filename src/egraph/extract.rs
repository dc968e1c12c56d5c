//! Extraction: the cheapest term of an e-class, by a local cost model.
//!
//! sketchlog scans egglog's constructor tables once ([`ExprGraph::read`]) and computes
//! best costs in Rust; egglog's built-in extractor is too slow on large e-graphs
//! (it tries every term it can build, with no sharing of best costs). Best costs come from [`super::costs::cheapest`], so e-graphs with
//! cycles are handled: a class's cost is finite only if some finite term lives in it.

use super::costs::{cheapest, CostedNodes};
use super::encode::TypeTable;
use super::engine;
use crate::egraph::schema::Con;
use crate::error::{Error, Result};
use crate::rise::primitives::Prim;
use crate::rise::syntax::Float;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use egglog::{Core, EGraph, Read, Value};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// An e-node of a Rise term: children are e-class ids.
pub type ENode = Node<Value>;

/// The Rise term e-classes of an e-graph, read out of egglog.
pub struct ExprGraph {
    pub classes: HashMap<Value, Vec<ENode>>,
    /// Each class's type, as an e-graph value (see [`ExprGraph::ty`]).
    type_values: HashMap<Value, Value>,
    table: TypeTable,
}

impl ExprGraph {
    /// The e-classes with their types.
    pub fn read(eg: &EGraph) -> Result<ExprGraph> {
        let table = TypeTable::read(eg)?;
        let mut classes: HashMap<Value, Vec<ENode>> = HashMap::default();
        let mut type_values: HashMap<Value, Value> = HashMap::default();
        let mut bad = None;
        eg.read(|rs| -> std::result::Result<(), egglog::Error> {
            // Every Expr constructor has its type as the last field.
            let mut scan = |con: Con, f: &mut dyn FnMut(&[Value]) -> Option<ENode>| {
                rs.constructor_enodes(con.name(), |e| {
                    if e.subsumed {
                        return;
                    }
                    let tv = *e.children.last().unwrap();
                    match f(e.children) {
                        Some(n) if table.ty(tv).is_some() => {
                            classes.entry(e.eclass).or_default().push(n);
                            type_values.entry(e.eclass).or_insert(tv);
                        }
                        _ => bad = Some(con.name()),
                    }
                })
            };
            scan(Con::Var, &mut |c| {
                Some(Node::Var(rs.value_to_base::<i64>(c[0]) as u32))
            })?;
            scan(Con::Int, &mut |c| {
                Some(Node::Int(rs.value_to_base::<i64>(c[0])))
            })?;
            scan(Con::F32, &mut |c| {
                let x = rs.value_to_base::<egglog::sort::F>(c[0]);
                Some(Node::F32(Float(x.0 .0 as f32)))
            })?;
            scan(Con::Prim, &mut |c| {
                let s = rs.value_to_base::<egglog::sort::S>(c[0]);
                Prim::from_name(&s.0).map(Node::Prim)
            })?;
            scan(Con::App, &mut |c| Some(Node::App(c[0], c[1])))?;
            scan(Con::Comp, &mut |c| Some(Node::Comp(c[0], c[1])))?;
            scan(Con::Lam, &mut |c| Some(Node::Lam(c[0])))?;
            scan(Con::NatLam, &mut |c| Some(Node::NatLam(c[0])))?;
            scan(Con::NatApp, &mut |c| {
                table.nat(c[1]).map(|n| Node::NatApp(c[0], n.clone()))
            })?;
            Ok(())
        })
        .map_err(engine)?;
        if let Some(name) = bad {
            return Err(Error::bad_input(format!(
                "e-graph holds a `{name}` node sketchlog cannot read (unknown primitive, size or type)"
            )));
        }
        Ok(ExprGraph {
            classes,
            type_values,
            table,
        })
    }

    /// The type of a class.
    pub fn ty(&self, class: Value) -> Option<&Type> {
        self.table.ty(*self.type_values.get(&class)?)
    }

    /// Every class with its type.
    pub fn typed_classes(&self) -> impl Iterator<Item = (Value, &Type)> {
        self.type_values
            .iter()
            .filter_map(|(c, t)| Some((*c, self.table.ty(*t)?)))
    }

    /// Number of e-nodes and e-classes of Rise terms.
    pub fn size(&self) -> (usize, usize) {
        (
            self.classes.values().map(Vec::len).sum(),
            self.classes.len(),
        )
    }
}

/// A monotone, local cost: a node's cost plus its children's.
pub trait CostModel {
    fn node_cost(&self, node: &ENode) -> u64;
}

/// Every node costs 1: the cheapest term is the smallest.
pub struct AstSize;

impl CostModel for AstSize {
    fn node_cost(&self, _: &ENode) -> u64 {
        1
    }
}

/// A weighted size: each constructor has a weight (`app`, `lam`, `var`, `natapp`, `natlam`,
/// `literal`, or a primitive's name), others weigh `default`. Read from a cost file of
/// `NAME WEIGHT` lines (`//` comments), e.g. `asVector 1000` and `default 2`.
#[derive(Clone, Debug)]
pub struct Weighted {
    weights: HashMap<String, u64>,
    default: u64,
}

impl Weighted {
    /// The largest weight: costs of terms of any size the e-graph can hold stay far from
    /// overflowing 64 bits.
    pub const MAX: u64 = 1_000_000_000;

    /// Reads a cost file: `NAME WEIGHT` lines, `default WEIGHT` for every other constructor.
    pub fn load(path: &std::path::Path) -> Result<Weighted> {
        Weighted::parse(&crate::files::read_source(path)?)
    }

    /// [`Weighted::load`] of a source's text.
    pub fn parse(src: &std::sync::Arc<crate::source::Source>) -> Result<Weighted> {
        let mut w = Weighted {
            weights: HashMap::default(),
            default: 1,
        };
        for (span, words) in crate::source::word_lines(src, "//") {
            let words: Vec<&str> = words.iter().map(|w| &*w.text).collect();
            match words.as_slice() {
                [name, weight] => {
                    let weight: u64 = weight
                        .parse()
                        .ok()
                        .filter(|w| (1..=Weighted::MAX).contains(w))
                        .ok_or_else(|| {
                            Error::at(
                                &span,
                                format!(
                                    "weight `{weight}` is not a whole number from 1 to {}",
                                    Weighted::MAX
                                ),
                            )
                        })?;
                    if *name == "default" {
                        w.default = weight;
                    } else if Weighted::KEYS.contains(name) || Prim::from_name(name).is_some() {
                        w.weights.insert(name.to_string(), weight);
                    } else {
                        return Err(Error::at(&span, format!("unknown constructor `{name}`")));
                    }
                }
                _ => return Err(Error::at(&span, "expected `NAME WEIGHT`")),
            }
        }
        Ok(w)
    }

    const KEYS: [&'static str; 7] = ["app", "comp", "lam", "var", "natapp", "natlam", "literal"];
}

impl CostModel for Weighted {
    fn node_cost(&self, node: &ENode) -> u64 {
        let key = match node {
            Node::App(..) => "app",
            Node::Comp(..) => "comp",
            Node::Lam(_) => "lam",
            Node::Var(_) => "var",
            Node::NatApp(..) => "natapp",
            Node::NatLam(_) => "natlam",
            Node::F32(_) | Node::Int(_) => "literal",
            Node::Prim(p) => p.name(),
        };
        self.weights.get(key).copied().unwrap_or(self.default)
    }
}

/// Fewest beta-redexes first, then smallest: the cost of beta-eta normal forms. A
/// composition counts as a redex (beta-eta normal form has none).
pub struct RedexesThenSize {
    lam_classes: std::collections::HashSet<Value>,
}

impl RedexesThenSize {
    pub fn new(graph: &ExprGraph) -> RedexesThenSize {
        let lam_classes = graph
            .classes
            .iter()
            .filter(|(_, ns)| ns.iter().any(|n| matches!(n, Node::Lam(_))))
            .map(|(c, _)| *c)
            .collect();
        RedexesThenSize { lam_classes }
    }
}

impl CostModel for RedexesThenSize {
    fn node_cost(&self, node: &ENode) -> u64 {
        let redex = match node {
            Node::App(f, _) => self.lam_classes.contains(f),
            Node::Comp(..) => true,
            _ => false,
        };
        redexes_then_size(redex)
    }
}

/// The cost of one node when ranking by beta-redexes first, then size (packed in one integer).
pub fn redexes_then_size(is_redex: bool) -> u64 {
    if is_redex {
        (1 << 32) + 1
    } else {
        1
    }
}

/// Best costs of all classes, and extraction of best terms.
pub struct Extractor<'g> {
    graph: &'g ExprGraph,
    best: HashMap<Value, (u64, usize)>,
}

impl<'g> Extractor<'g> {
    pub fn new(graph: &'g ExprGraph, cost: &impl CostModel) -> Extractor<'g> {
        let mut flat = CostedNodes::default();
        let mut position = vec![];
        for (class, nodes) in &graph.classes {
            for (i, n) in nodes.iter().enumerate() {
                let kids: smallvec::SmallVec<[Value; 2]> =
                    n.children().into_iter().copied().collect();
                flat.push(*class, &kids, cost.node_cost(n));
                position.push(i);
            }
        }
        let best = (cheapest(&flat, &flat.users()).into_iter().enumerate())
            .filter_map(|(class, best)| {
                let (c, k) = best?;
                Some((flat.class_value(class as u32), (c, position[k])))
            })
            .collect();
        Extractor { graph, best }
    }

    /// The cost of the cheapest term of `class` (`None` if it has no finite term).
    pub fn cost(&self, class: Value) -> Option<u64> {
        self.best.get(&class).map(|(c, _)| *c)
    }

    /// The cheapest term of `class`.
    pub fn extract(&self, class: Value) -> Result<Rc<Term>> {
        let (_, i) = self
            .best
            .get(&class)
            .ok_or_else(|| Error::bad_input("this e-class contains no finite term"))?;
        let node = &self.graph.classes[&class][*i];
        let ty = self
            .graph
            .ty(class)
            .ok_or_else(|| Error::bad_input("an e-class has no type"))?
            .clone();
        let mut err = None;
        let node = node.map(|c| {
            self.extract(*c).unwrap_or_else(|e| {
                err.get_or_insert(e);
                Term::new(Node::Int(0), Type::Int)
            })
        });
        err.map_or(Ok(Term::new(node, ty)), Err)
    }
}
