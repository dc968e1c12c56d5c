//! Why a sketch is not found (`check --why`): read off the final e-graph of a search.
//!
//! Three parts, each from the sketch-satisfying extraction's tables ([`SketchExtractor`]),
//! which hold, for every sub-sketch, the e-classes with a term satisfying it:
//! 1. every sub-sketch, with the number of e-classes satisfying it and whether the
//!    program's e-class does;
//! 2. the nearest misses: the largest sub-sketch the program's e-class satisfies, and the
//!    largest one satisfied by a subterm of the program, each with its cheapest term;
//! 3. where it fails: the sketch followed down the program's terms, in words, to the places
//!    where no term has the operator asked for, or the type.

use super::extract::SketchExtractor;
use super::Sketch;
use crate::egraph::extract::{CostModel, ENode, ExprGraph, Extractor};
use crate::error::Result;
use crate::rise::term::Node;
use crate::rise::{debruijn, print};
use egglog::Value;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::fmt::Write;

/// How deep the failure explanation follows the sketch.
const MAX_DEPTH: usize = 12;

/// An explanation: its text, and the e-classes its lines are about.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Explanation {
    pub text: String,
    /// `(line, class)`: line `line` of the text (from 0) is about the e-class `class`, named
    /// as in the e-graph's JSON export. A line that names a class names one: the cheapest
    /// terms' e-classes in the nearest misses, the places where it fails.
    pub classes: Vec<(usize, String)>,
}

impl Explanation {
    /// An explanation about no e-class.
    pub fn plain(text: String) -> Explanation {
        Explanation {
            text,
            classes: vec![],
        }
    }
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The explanation of why no term of `root`'s e-class satisfies `sketch`; `names` are the
/// program's own names for its leading binders, used in what is printed; `class_id` names
/// an e-class as the e-graph's JSON export does.
pub fn explain(
    graph: &ExprGraph,
    sketch: &Sketch,
    root: Value,
    cost: &impl CostModel,
    names: &debruijn::Names,
    class_id: impl Fn(Value) -> String,
) -> Result<Explanation> {
    // Sizes printed on their own (in types) are named as the program's leading ones.
    // (A program whose every term the filter removed has none to name them by.)
    let sizes = if names.sizes.is_empty() {
        (Extractor::new(graph, cost).extract(root))
            .map(|t| debruijn::leading_size_names(&t))
            .unwrap_or_default()
    } else {
        names.sizes.clone()
    };
    let mut why = Why {
        graph,
        extractor: SketchExtractor::new(graph, cost),
        out: String::new(),
        classes: vec![],
        sizes,
        names: names.clone(),
        root,
        scopes: scopes(graph, root, names),
    };
    why.table(sketch, root);
    why.nearest_misses(sketch, root)?;
    why.out += "where it fails:\n";
    why.fail(sketch, root, "the program", 1);
    Ok(Explanation {
        text: why.readable(&why.out),
        classes: (why.classes.iter())
            .map(|(line, class)| (*line, class_id(*class)))
            .collect(),
    })
}

struct Why<'g> {
    graph: &'g ExprGraph,
    extractor: SketchExtractor<'g>,
    out: String,
    /// The e-class each line of `out` that is about one is about, by line number.
    classes: Vec<(usize, Value)>,
    sizes: Vec<String>,
    names: debruijn::Names,
    root: Value,
    /// For each e-class below the program's, the binders around it on a shortest path from
    /// the program: its terms' variables bound outside print with those binders' names.
    scopes: HashMap<Value, debruijn::Scope>,
}

/// The scope of every e-class reachable from `root`, along a shortest path.
fn scopes(
    graph: &ExprGraph,
    root: Value,
    names: &debruijn::Names,
) -> HashMap<Value, debruijn::Scope> {
    let mut scopes = HashMap::default();
    scopes.insert(root, debruijn::Scope::default());
    breadth_first(graph, root, |class, node, kid| {
        let inner = scopes[&class].enter(node, names);
        scopes.insert(kid, inner);
    });
    scopes
}

/// The e-classes of `root`'s terms and all their subterms, nearest first; `reached(class,
/// node, kid)` sees the e-node through which each was first reached.
fn breadth_first(
    graph: &ExprGraph,
    root: Value,
    mut reached: impl FnMut(Value, &ENode, Value),
) -> Vec<Value> {
    let (mut seen, mut order) = (HashSet::default(), vec![root]);
    seen.insert(root);
    let mut i = 0;
    while i < order.len() {
        let class = order[i];
        for node in graph.classes.get(&class).into_iter().flatten() {
            for kid in node.children() {
                if seen.insert(*kid) {
                    reached(class, node, *kid);
                    order.push(*kid);
                }
            }
        }
        i += 1;
    }
    order
}

impl Why<'_> {
    /// Part 1: each distinct sub-sketch, the e-classes satisfying it, and the program's.
    fn table(&mut self, sketch: &Sketch, root: Value) {
        let (nodes, classes) = self.graph.size();
        writeln!(
            self.out,
            "why not found, in the final e-graph ({nodes} e-nodes, {classes} e-classes):\n  program  e-classes  sub-sketch"
        )
        .unwrap();
        let mut seen = HashSet::default();
        for (sub, depth) in with_depths(sketch) {
            if matches!(sub, Sketch::Any) || !seen.insert(sub) {
                continue;
            }
            let count = self.extractor.satisfying(sub).map_or(classes, |c| c.len());
            let here = if self.holds(sub, root) { "yes" } else { "no" };
            let indent = "  ".repeat(depth);
            writeln!(self.out, "  {here:<7}  {count:>9}  {indent}{}", short(sub)).unwrap();
        }
    }

    fn holds(&mut self, sketch: &Sketch, class: Value) -> bool {
        self.extractor.cost(sketch, class).is_some()
    }

    /// Part 2: the largest sub-sketches satisfied by the program, and by a subterm of it.
    fn nearest_misses(&mut self, sketch: &Sketch, root: Value) -> Result<()> {
        let subs: Vec<&Sketch> = sketch
            .subsketches()
            .into_iter()
            .filter(|s| !matches!(s, Sketch::Any))
            .collect();
        let weight = sketch.weight();
        let at_root = subs
            .iter()
            .filter(|s| self.holds(s, root))
            .max_by_key(|s| s.weight());
        match at_root {
            Some(s) => {
                let term = self.term(s, root)?;
                self.mark(root);
                writeln!(
                    self.out,
                    "largest sub-sketch the program satisfies ({} of {weight} nodes): {s}\n  cheapest such term: {term}",
                    s.weight()
                )
                .unwrap();
            }
            None => writeln!(self.out, "the program satisfies no sub-sketch").unwrap(),
        }
        let below = self.reachable(root);
        let mut best: Option<(&Sketch, Value, u64)> = None;
        for s in subs {
            if best.is_some_and(|(b, _, _)| b.weight() >= s.weight()) {
                continue;
            }
            let cheapest = (below.iter())
                .filter_map(|c| Some((*c, self.extractor.cost(s, *c)?)))
                .min_by_key(|(_, cost)| *cost);
            if let Some((class, cost)) = cheapest {
                best = Some((s, class, cost));
            }
        }
        if let Some((s, class, _)) = best {
            let term = self.term(s, class)?;
            self.mark(class);
            writeln!(
                self.out,
                "largest sub-sketch a subterm of the program satisfies ({} of {weight} nodes): {s}\n  cheapest such subterm: {term}",
                s.weight()
            )
            .unwrap();
        }
        Ok(())
    }

    /// The cheapest term of `class` satisfying `sketch`, printed as named Rise.
    fn term(&mut self, sketch: &Sketch, class: Value) -> Result<String> {
        let (_, t) = self.extractor.extract(sketch, class)?;
        // Only a term of the program's own class starts with the program's binders; a
        // subterm's variables bound outside it are named as their binders.
        let named = match self.scopes.get(&class) {
            _ if class == self.root => {
                debruijn::to_named_as(&t, debruijn::Annotate::Leading, &self.names)
            }
            Some(scope) => scope.name(&t),
            None => debruijn::to_named(&t, debruijn::Annotate::Leading),
        };
        Ok(print::print_expr(&named))
    }

    /// The e-classes of `root`'s terms and all their subterms, nearest first.
    fn reachable(&self, root: Value) -> Vec<Value> {
        breadth_first(self.graph, root, |_, _, _| {})
    }

    /// How much of `sketch` a term of `class` has, looking `levels` deep: three per sketch
    /// node if it holds; else, for a node, its operator (three for a primitive, which says
    /// more than an application) and the children's closeness.
    fn closeness(&mut self, sketch: &Sketch, class: Value, levels: usize) -> usize {
        if self.holds(sketch, class) {
            return 3 * sketch.weight();
        }
        if levels == 0 {
            return 0;
        }
        match sketch {
            Sketch::Node(op, kids) => {
                let nodes = self.graph.classes.get(&class).cloned().unwrap_or_default();
                (nodes.iter())
                    .filter(|n| op.matches(n) && n.children().len() == kids.len())
                    .map(|n| {
                        let children = n.children();
                        let own = if matches!(op, super::Op::Prim(_)) {
                            3
                        } else {
                            1
                        };
                        own + (kids.iter().zip(children))
                            .map(|(k, c)| self.closeness(k, *c, levels - 1))
                            .sum::<usize>()
                    })
                    .max()
                    .unwrap_or(0)
            }
            Sketch::Typed(inner, _) => self.closeness(inner, class, levels),
            Sketch::Or(a, b) => {
                let a = self.closeness(a, class, levels);
                a.max(self.closeness(b, class, levels))
            }
            Sketch::Any | Sketch::Contains(_) => 0,
        }
    }

    /// A place in the program, in words: what it is and its cheapest term.
    fn place(&mut self, what: &str, class: Value) -> String {
        let term = self.term(&Sketch::Any, class).unwrap_or_default();
        format!("{what} `{}`", clip(&term))
    }

    /// `text` with type-hole numbers hidden (`?t12` as `?`) and the program's sizes named
    /// (`#0` is the innermost size parameter).
    fn readable(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let digits = |chars: &mut std::iter::Peekable<std::str::Chars>| {
                let mut n = String::new();
                while let Some(d) = chars.next_if(char::is_ascii_digit) {
                    n.push(d);
                }
                n
            };
            match c {
                '?' if matches!(chars.peek(), Some('t' | 'n')) => {
                    let mut after = chars.clone();
                    after.next();
                    if after.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                        digits(&mut chars);
                    }
                    out.push('?');
                }
                '#' if chars.peek().is_some_and(char::is_ascii_digit) => {
                    let n = digits(&mut chars);
                    let name = (n.parse::<usize>().ok())
                        .and_then(|i| self.sizes.len().checked_sub(i + 1))
                        .map(|k| self.sizes[k].clone());
                    out.push_str(&name.unwrap_or(format!("#{n}")));
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// Writes a line about `class`.
    fn line(&mut self, depth: usize, class: Value, text: String) {
        self.mark(class);
        writeln!(self.out, "{}{text}", "  ".repeat(depth)).unwrap();
    }

    /// Notes that the next line is about `class`.
    fn mark(&mut self, class: Value) {
        let line = self.out.matches('\n').count();
        self.classes.push((line, class));
    }

    /// Part 3: why no term of `class` (reached along `path`) satisfies `sketch`.
    fn fail(&mut self, sketch: &Sketch, class: Value, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return self.line(
                depth,
                class,
                format!("{path}: ... (deeper reasons left out)"),
            );
        }
        match sketch {
            Sketch::Any => {}
            Sketch::Node(op, kids) => {
                let nodes = self.graph.classes.get(&class).cloned().unwrap_or_default();
                let candidates: Vec<&ENode> = (nodes.iter())
                    .filter(|n| op.matches(n) && n.children().len() == kids.len())
                    .collect();
                let Some(best) = candidates
                    .iter()
                    .max_by_key(|n| {
                        let children = n.children();
                        (kids.iter().zip(children))
                            .map(|(k, c)| self.closeness(k, *c, 2))
                            .sum::<usize>()
                    })
                    .copied()
                else {
                    let mut heads: Vec<String> = vec![];
                    for h in nodes.iter().map(head) {
                        if !heads.contains(&h) {
                            heads.push(h);
                        }
                    }
                    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
                    let shown = Sketch::Node(op.clone(), vec![Sketch::Any; kids.len()]);
                    let example = self.term(&Sketch::Any, class).unwrap_or_default();
                    return self.line(
                        depth,
                        class,
                        format!(
                            "{path}: no term here is `{shown}`; its terms are {}, such as `{}`",
                            crate::error::listing(&heads),
                            clip(&example)
                        ),
                    );
                };
                for (j, (kid, child)) in kids.iter().zip(best.children()).enumerate() {
                    if !self.holds(kid, *child) {
                        let place = self.place(child_name(best, j), *child);
                        self.fail(kid, *child, &place, depth + 1);
                    }
                }
            }
            Sketch::Contains(inner) => {
                let elsewhere = self.extractor.satisfying(inner).map_or(0, |c| c.len());
                self.line(depth, class,
                    format!(
                        "{path}: no subterm satisfies `{}` ({elsewhere} e-classes elsewhere in the e-graph do)",
                        short(inner)
                    ),
                );
                // Terms are in beta-eta normal form: `map f` where the sketch says
                // `map(f, x)` (an application the sketch asks for, eta-reduced away).
                if let Sketch::Node(super::Op::App, parts) = &**inner {
                    let below = self.reachable(class);
                    let partial = &parts[0];
                    if !matches!(partial, Sketch::Any)
                        && below.iter().any(|c| self.holds(partial, *c))
                    {
                        self.line(
                            depth + 1,
                            class,
                            format!(
                                "`{}` is there, but not applied to one more argument: terms are \
                                 compared in beta-eta normal form, where `fun x => f x` is `f`; \
                                 a sketch matches `{}` itself",
                                short(partial),
                                short(partial)
                            ),
                        );
                    }
                }
                // Follow the subterm that comes closest, the nearest of those first.
                let below = self.reachable(class);
                let mut nearest = None;
                for c in below {
                    let close = self.closeness(inner, c, 2);
                    if close > 0 && nearest.is_none_or(|(_, best)| close > best) {
                        nearest = Some((c, close));
                    }
                }
                if let Some((c, _)) = nearest {
                    let place = if c == class {
                        path.to_string()
                    } else {
                        self.place("the closest subterm", c)
                    };
                    self.fail(inner, c, &place, depth + 1);
                }
            }
            Sketch::Or(a, b) => {
                self.line(
                    depth,
                    class,
                    format!("{path}: neither side of `{}` holds", short(sketch)),
                );
                self.fail(a, class, path, depth + 1);
                self.fail(b, class, path, depth + 1);
            }
            Sketch::Typed(inner, t) => {
                if self.holds(inner, class) {
                    let ty =
                        (self.graph.ty(class)).map_or("unknown".to_string(), |t| t.to_string());
                    self.line(
                        depth,
                        class,
                        format!("{path}: the term has type {ty}, the sketch asks for {t}"),
                    );
                } else {
                    self.fail(inner, class, path, depth);
                }
            }
        }
    }
}

/// The sub-sketches with their depth in the sketch tree, in pre-order.
fn with_depths(sketch: &Sketch) -> Vec<(&Sketch, usize)> {
    let (mut out, mut todo) = (vec![], vec![(sketch, 0)]);
    while let Some((s, d)) = todo.pop() {
        out.push((s, d));
        let kids: Vec<&Sketch> = match s {
            Sketch::Any => vec![],
            Sketch::Node(_, kids) => kids.iter().collect(),
            Sketch::Contains(k) | Sketch::Typed(k, _) => vec![&**k],
            Sketch::Or(a, b) => vec![&**a, &**b],
        };
        todo.extend(kids.into_iter().rev().map(|k| (k, d + 1)));
    }
    out
}

/// A sketch printed to two levels, deeper parts as `..`.
fn short(sketch: &Sketch) -> String {
    format!("{sketch:.2}")
}

/// A term cut to 70 characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(70) {
        Some((i, _)) => format!("{} ..", &text[..i]),
        None => text.to_string(),
    }
}

/// What an e-node is, in words.
fn head(node: &ENode) -> String {
    match node {
        Node::App(..) => "an application".into(),
        Node::Comp(..) => "a composition".into(),
        Node::Lam(_) => "a lambda".into(),
        Node::NatApp(_, n) => format!("a size application <{n}>"),
        Node::NatLam(_) => "an nfun".into(),
        Node::Var(_) => "a variable".into(),
        Node::Prim(p) => format!("`{}`", p.name()),
        Node::F32(x) => format!("the literal {}", x.0),
        Node::Int(i) => format!("the literal {i}"),
    }
}

/// Where child `j` of an e-node is, in words.
fn child_name(node: &ENode, j: usize) -> &'static str {
    match (node, j) {
        (Node::App(..), 0) => "the function applied",
        (Node::App(..), _) => "the argument",
        (Node::Lam(_), _) => "the lambda's body",
        (Node::NatLam(_), _) => "the nfun's body",
        _ => "the function applied to a size",
    }
}
