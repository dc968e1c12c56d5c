//! A bounded view of a serialized e-graph: the e-classes within a few edges of a chosen one,
//! small enough to draw whatever the size of the whole.
//!
//! The view holds the chosen e-class, the e-classes whose e-nodes point at it (its parents)
//! and the e-classes below it, breadth first, up to a depth and an e-node budget. An e-class
//! at the edge of the view is drawn as one placeholder e-node that says how many e-nodes it
//! has, and an e-class with more e-nodes than the view shows of each gets one that says how
//! many more there are; both can be chosen to centre the next view on them.

use egraph_serialize::{ClassId, Cost, EGraph as Serialized, Node, NodeId};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;

/// How much a view shows.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// E-classes at most this many edges below the centre are shown.
    pub depth: usize,
    /// At most this many e-nodes in all (placeholders aside).
    pub max_enodes: usize,
    /// At most this many e-nodes of each e-class; parents of the centre as many again.
    pub per_class: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            depth: 8,
            max_enodes: 120,
            per_class: 8,
        }
    }
}

/// A view of an e-graph around one e-class.
pub struct Neighbourhood {
    /// The view, an e-graph of its own (placeholders included), to draw.
    pub graph: Serialized,
    pub centre: ClassId,
    /// The e-class each e-node of the view stands in, placeholders included.
    pub class_of: HashMap<NodeId, ClassId>,
    /// E-classes and e-nodes shown (placeholders aside), and in the whole e-graph.
    pub shown: (usize, usize),
    pub total: (usize, usize),
}

/// The view of `g` around `centre` (by default, `g`'s first root e-class, or else its first
/// e-class); `None` for an e-graph without e-nodes or a centre it does not have.
pub fn around(g: &Serialized, centre: Option<&ClassId>, bounds: Bounds) -> Option<Neighbourhood> {
    let classes = g.classes();
    let centre = match centre {
        Some(c) => c.clone(),
        None => (g.root_eclasses.iter())
            .find(|c| classes.contains_key(*c))
            .or_else(|| classes.keys().next())?
            .clone(),
    };
    let shown_nodes = |class: &ClassId| -> Vec<NodeId> {
        let mut nodes = classes[class].nodes.clone();
        // Live e-nodes first, then the fewest children: the simplest terms.
        nodes.sort_by_key(|n| (g.nodes[n].subsumed, g.nodes[n].children.len()));
        nodes.truncate(bounds.per_class);
        nodes
    };
    if !classes.contains_key(&centre) {
        return None;
    }
    // The e-classes shown, each with the e-nodes shown of it.
    let mut shown: Vec<(ClassId, Vec<NodeId>)> = vec![];
    let mut placed: HashSet<ClassId> = HashSet::default();
    let mut budget = bounds.max_enodes;
    let mut queue = VecDeque::from([(centre.clone(), 0)]);
    placed.insert(centre.clone());
    while let Some((class, depth)) = queue.pop_front() {
        let nodes = shown_nodes(&class);
        if budget < nodes.len() && !shown.is_empty() {
            placed.remove(&class);
            continue;
        }
        budget = budget.saturating_sub(nodes.len());
        if depth < bounds.depth {
            for n in &nodes {
                for child in &g.nodes[n].children {
                    let c = g.nid_to_cid(child);
                    if placed.insert(c.clone()) {
                        queue.push_back((c.clone(), depth + 1));
                    }
                }
            }
        }
        shown.push((class, nodes));
    }
    // The centre's parents: the e-nodes that point at it, grouped by e-class.
    let mut parents: Vec<(ClassId, Vec<NodeId>)> = vec![];
    for (id, node) in &g.nodes {
        let points_at = (node.children.iter()).any(|c| g.nid_to_cid(c) == &centre);
        if !points_at || placed.contains(&node.eclass) && node.eclass != centre {
            continue;
        }
        match parents.iter().position(|(c, _)| c == &node.eclass) {
            Some(i) => parents[i].1.push(id.clone()),
            None if parents.len() < bounds.per_class && node.eclass != centre => {
                parents.push((node.eclass.clone(), vec![id.clone()]))
            }
            None => {}
        }
    }
    for (class, mut nodes) in parents {
        nodes.truncate(bounds.per_class);
        placed.insert(class.clone());
        shown.push((class, nodes));
    }

    let mut view = Serialized::default();
    let mut class_of = HashMap::default();
    let mut enodes = 0;
    let shown_ids: HashMap<&ClassId, &Vec<NodeId>> = shown.iter().map(|(c, n)| (c, n)).collect();
    for (class, nodes) in &shown {
        for id in nodes {
            let mut node = g.nodes[id].clone();
            for child in &mut node.children {
                let c = g.nid_to_cid(child);
                *child = match shown_ids.get(c) {
                    Some(kids) if kids.contains(child) => child.clone(),
                    Some(kids) => kids[0].clone(),
                    None => placeholder(&mut view, &mut class_of, c, count(classes[c].nodes.len())),
                };
            }
            view.add_node(id.clone(), node);
            class_of.insert(id.clone(), class.clone());
            enodes += 1;
        }
        let more = classes[class].nodes.len() - nodes.len();
        if more > 0 {
            placeholder(&mut view, &mut class_of, class, format!("{more} more"));
        }
    }
    view.root_eclasses = (g.root_eclasses.iter())
        .filter(|c| placed.contains(*c))
        .cloned()
        .collect();
    let in_view: HashSet<&ClassId> = view.nodes.values().map(|n| &n.eclass).collect();
    view.class_data = (g.class_data.iter())
        .filter(|(c, _)| in_view.contains(c))
        .map(|(c, d)| (c.clone(), d.clone()))
        .collect();
    Some(Neighbourhood {
        graph: view,
        centre,
        class_of,
        shown: (shown.len(), enodes),
        total: (classes.len(), g.nodes.len()),
    })
}

fn count(n: usize) -> String {
    format!("{n} e-node{}", if n == 1 { "" } else { "s" })
}

/// The placeholder e-node of `class` that says `label`, added to `view` once.
fn placeholder(
    view: &mut Serialized,
    class_of: &mut HashMap<NodeId, ClassId>,
    class: &ClassId,
    label: String,
) -> NodeId {
    let id = NodeId::from(format!("{class} ({label})"));
    if !view.nodes.contains_key(&id) {
        let node = Node {
            op: format!("… {label}"),
            children: vec![],
            eclass: class.clone(),
            cost: Cost::new(0.0).expect("not NaN"),
            subsumed: false,
        };
        view.add_node(id.clone(), node);
        class_of.insert(id.clone(), class.clone());
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `n` e-classes, `c0 -> c1 -> ...`, each with `width` e-nodes.
    fn chain(n: usize, width: usize) -> Serialized {
        let mut g = Serialized::default();
        for i in 0..n {
            for w in 0..width {
                let children = if i + 1 < n {
                    vec![NodeId::from(format!("n{}-0", i + 1))]
                } else {
                    vec![]
                };
                g.add_node(
                    format!("n{i}-{w}"),
                    Node {
                        op: format!("op{w}"),
                        children,
                        eclass: ClassId::from(format!("c{i}")),
                        cost: Cost::new(1.0).unwrap(),
                        subsumed: false,
                    },
                );
            }
        }
        g.root_eclasses = vec![ClassId::from("c0")];
        g
    }

    #[test]
    fn a_view_stops_at_its_depth_with_placeholders_that_name_their_class() {
        let g = chain(10, 1);
        let bounds = Bounds {
            depth: 2,
            ..Bounds::default()
        };
        let v = around(&g, None, bounds).unwrap();
        assert_eq!(v.centre, ClassId::from("c0"));
        assert_eq!(v.shown, (3, 3));
        assert_eq!(v.total, (10, 10));
        // c3 is drawn as a placeholder, which leads to it.
        let edge: Vec<&NodeId> = v.graph.nodes.values().flat_map(|n| &n.children).collect();
        assert_eq!(edge.len(), 3);
        let last = &v.graph.nodes[edge[2]];
        assert!(last.op.starts_with('…'), "{}", last.op);
        assert_eq!(v.class_of[edge[2]], ClassId::from("c3"));
        assert_eq!(v.graph.root_eclasses, vec![ClassId::from("c0")]);
    }

    #[test]
    fn a_view_shows_the_centres_parents_and_caps_each_class() {
        let g = chain(6, 20);
        let v = around(&g, Some(&ClassId::from("c3")), Bounds::default()).unwrap();
        // c2's e-nodes point at c3; c3, c4 and c5 are below it; 8 e-nodes of each are shown.
        let classes: HashSet<&ClassId> = v.class_of.values().collect();
        for c in ["c2", "c3", "c4", "c5"] {
            assert!(classes.contains(&ClassId::from(c)), "{c} missing");
        }
        assert!(!classes.contains(&ClassId::from("c1")));
        assert_eq!(v.shown.1, 8 * 4);
        let more = (v.graph.nodes.values())
            .filter(|n| n.op == "… 12 more")
            .count();
        assert_eq!(more, 4);
        // Every child of the view is in the view: it can be drawn.
        for n in v.graph.nodes.values() {
            for c in &n.children {
                assert!(v.graph.nodes.contains_key(c));
            }
        }
    }

    #[test]
    fn the_budget_bounds_a_wide_graph() {
        let mut g = Serialized::default();
        let kids: Vec<NodeId> = (0..1000).map(|i| NodeId::from(format!("k{i}"))).collect();
        for (i, k) in kids.iter().enumerate() {
            g.add_node(
                k.clone(),
                Node {
                    op: "leaf".into(),
                    children: vec![],
                    eclass: ClassId::from(format!("k{i}")),
                    cost: Cost::new(1.0).unwrap(),
                    subsumed: false,
                },
            );
        }
        g.add_node(
            "root",
            Node {
                op: "wide".into(),
                children: kids,
                eclass: ClassId::from("root"),
                cost: Cost::new(1.0).unwrap(),
                subsumed: false,
            },
        );
        let v = around(&g, Some(&ClassId::from("root")), Bounds::default()).unwrap();
        assert_eq!(v.shown.1, 120);
        assert_eq!(v.total, (1001, 1001));
        assert!(around(&g, Some(&ClassId::from("nowhere")), Bounds::default()).is_none());
    }
}
