//! Sketches (paper section 3.2): program patterns that leave details unspecified.
//!
//! ```text
//! s ::= ?                     any term
//!     | F(s1, .., sn)         a node: app(f, x), lam(b), natlam(b), natapp(f, n), var (any
//!                             variable), var(i) (De Bruijn index i), a literal (`0.0`, `1`),
//!                             or a primitive (`map`; `map(f, x)` is app(app(map, f), x))
//!     | contains(s)           a term with a subterm satisfying s
//!     | s1 or s2
//!     | s :: t                a type sketch: a Rise type with holes `?t`, `?n`
//! ```
//!
//! Sketch files (`programs/*.sketch`, parsed by [`parse`]) define abstractions with
//! parameters, as the paper's listing 5, and named sketches:
//!
//! ```text
//! def containsMap(n: nat, f) = contains(app(map :: ?t -> n.?dt -> ?t, f))
//! sketch baseline = containsMap(m, containsMap(n, containsReduceSeq(k, containsAddMul)))
//! ```
//!
//! Sizes in a sketch name the size parameters of the program searched (`nfun m n k`), and
//! are matched in the context of the program's leading `nfun`s. A sketch becomes a query on
//! the e-graph ([`query`]) and guides extraction ([`extract`]).

#[cfg(feature = "dataflow")]
pub mod dataflow;
pub mod eval;
pub mod extract;
pub mod of;
pub mod parse;
pub mod query;
pub mod why;

use crate::error::{Error, Result};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::primitives::Prim;
use crate::rise::syntax::Float;
use crate::rise::term::{Node, Term};
use crate::rise::types::Type;
use crate::source::{Source, Span};

/// The function symbol of a node sketch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    App,
    Lam,
    NatLam,
    /// A nat application, with its size (a hole matches any).
    NatApp(Nat),
    /// A variable; with an index, only that De Bruijn index (0: the innermost binder).
    Var(Option<u32>),
    Prim(Prim),
    /// A literal.
    F32(Float),
    Int(i64),
}

impl Op {
    /// Does a node have this operator (and payload)? A size hole matches any size.
    pub fn matches<C>(&self, node: &Node<C>) -> bool {
        match (self, node) {
            (Op::App, Node::App(..)) | (Op::Lam, Node::Lam(_)) | (Op::NatLam, Node::NatLam(_)) => {
                true
            }
            (Op::Var(i), Node::Var(j)) => i.is_none_or(|i| i == *j),
            (Op::NatApp(n), Node::NatApp(_, m)) => n.as_meta().is_some() || n == m,
            (Op::Prim(p), Node::Prim(q)) => p == q,
            (Op::F32(x), Node::F32(y)) => x == y,
            (Op::Int(i), Node::Int(j)) => i == j,
            _ => false,
        }
    }

    pub fn arity(&self) -> usize {
        match self {
            Op::App => 2,
            Op::Lam | Op::NatLam | Op::NatApp(_) => 1,
            Op::Var(_) | Op::Prim(_) | Op::F32(_) | Op::Int(_) => 0,
        }
    }
}

/// A sketch of SketchBasic with type sketches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Sketch {
    Any,
    Node(Op, Vec<Sketch>),
    Contains(Box<Sketch>),
    Or(Box<Sketch>, Box<Sketch>),
    /// The type's metavariables are independent holes.
    Typed(Box<Sketch>, Type),
}

/// Prints a sketch in the syntax of sketch files: `map(f, x)` for applied primitives, sizes
/// as De Bruijn indices (`#0`) once resolved against a program. A precision prints that many
/// levels, deeper parts as `..` (`{:.2}`).
impl std::fmt::Display for Sketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let levels = f.precision();
        if levels == Some(0) && !matches!(self, Sketch::Any) {
            return write!(f, "..");
        }
        let kid = |k: &Sketch| match levels {
            Some(l) => format!("{k:.*}", l - 1),
            None => k.to_string(),
        };
        match self {
            Sketch::Any => write!(f, "?"),
            Sketch::Contains(s) => write!(f, "contains({})", kid(s)),
            Sketch::Or(a, b) => write!(f, "({} or {})", kid(a), kid(b)),
            Sketch::Typed(s, t) => match levels {
                Some(l) => write!(f, "{s:.l$} :: {t}"),
                None => write!(f, "{s} :: {t}"),
            },
            Sketch::Node(Op::App | Op::NatApp(_), _) => {
                // `app(app(f, x), y)` is written `f(x, y)`, `natapp(natapp(f, m), n)` `f<m, n>`:
                // each run of arguments of one kind (`true`: sizes) in one bracket.
                let (mut head, mut applied) = (self, vec![]);
                while let Sketch::Node(op @ (Op::App | Op::NatApp(_)), k) = head {
                    applied.push(match op {
                        Op::NatApp(n) if n.as_meta().is_some() => (true, "?".to_string()),
                        Op::NatApp(n) => (true, n.to_string()),
                        _ => (false, kid(&k[1])),
                    });
                    head = &k[0];
                }
                match head {
                    Sketch::Typed(..) => write!(f, "({})", kid(head))?,
                    _ => write!(f, "{}", kid(head))?,
                }
                applied.reverse();
                for run in applied.chunk_by(|a, b| a.0 == b.0) {
                    let shown: Vec<&str> = run.iter().map(|(_, s)| s.as_str()).collect();
                    match run[0].0 {
                        true => write!(f, "<{}>", shown.join(", "))?,
                        false => write!(f, "({})", shown.join(", "))?,
                    }
                }
                Ok(())
            }
            Sketch::Node(op, kids) => {
                let name = match op {
                    Op::Lam => "lam".to_string(),
                    Op::NatLam => "natlam".to_string(),
                    Op::Var(None) => "var".to_string(),
                    Op::Var(Some(i)) => format!("var({i})"),
                    Op::Prim(p) => p.name().to_string(),
                    Op::F32(x) => crate::rise::print::show_f32(x.0),
                    Op::Int(i) => i.to_string(),
                    Op::App | Op::NatApp(_) => unreachable!("written as applications above"),
                };
                let args: Vec<String> = kids.iter().map(kid).collect();
                if args.is_empty() {
                    write!(f, "{name}")
                } else {
                    write!(f, "{name}({})", args.join(", "))
                }
            }
        }
    }
}

impl Sketch {
    /// The sub-sketches, this one first, then each child's in order.
    pub fn subsketches(&self) -> Vec<&Sketch> {
        let (mut out, mut todo) = (vec![], vec![self]);
        while let Some(s) = todo.pop() {
            out.push(s);
            let kids: Vec<&Sketch> = match s {
                Sketch::Any => vec![],
                Sketch::Node(_, kids) => kids.iter().collect(),
                Sketch::Contains(k) | Sketch::Typed(k, _) => vec![&**k],
                Sketch::Or(a, b) => vec![&**a, &**b],
            };
            todo.extend(kids.into_iter().rev());
        }
        out
    }

    /// The number of sketch nodes (`?` counts none).
    pub fn weight(&self) -> usize {
        self.subsketches()
            .iter()
            .filter(|s| !matches!(s, Sketch::Any))
            .count()
    }

    /// The number of nodes of the sketch tree (computed without recursion).
    pub fn node_count(&self) -> usize {
        let (mut count, mut todo) = (0, vec![self]);
        while let Some(s) = todo.pop() {
            count += 1;
            match s {
                Sketch::Any => {}
                Sketch::Node(_, kids) => todo.extend(kids.iter()),
                Sketch::Contains(k) | Sketch::Typed(k, _) => todo.push(k),
                Sketch::Or(a, b) => todo.extend([&**a, &**b]),
            }
        }
        count
    }

    /// The depth of the sketch tree (computed without recursion, for any input).
    pub fn depth(&self) -> usize {
        let (mut deepest, mut todo) = (0, vec![(self, 1)]);
        while let Some((s, d)) = todo.pop() {
            deepest = deepest.max(d);
            match s {
                Sketch::Any => {}
                Sketch::Node(_, kids) => todo.extend(kids.iter().map(|k| (k, d + 1))),
                Sketch::Contains(k) | Sketch::Typed(k, _) => todo.push((k, d + 1)),
                Sketch::Or(a, b) => todo.extend([(&**a, d + 1), (&**b, d + 1)]),
            }
        }
        deepest
    }

    /// R(s) of the paper's figure 6, on a term: does `t` satisfy the sketch? The check of
    /// a printed result (the e-graph query answers the same question for whole e-classes).
    pub fn satisfied_by(&self, t: &Term) -> bool {
        match self {
            Sketch::Any => true,
            Sketch::Node(op, kids) => {
                let ok = op.matches(&t.node);
                let children = t.node.children();
                ok && children.len() == kids.len()
                    && children.iter().zip(kids).all(|(c, k)| k.satisfied_by(c))
            }
            Sketch::Contains(inner) => {
                inner.satisfied_by(t) || t.node.children().iter().any(|c| self.satisfied_by(c))
            }
            Sketch::Or(a, b) => a.satisfied_by(t) || b.satisfied_by(t),
            Sketch::Typed(inner, ty) => type_matches(ty, &t.ty) && inner.satisfied_by(t),
        }
    }
}

/// A named sketch of a sketch file.
#[derive(Clone, Debug)]
pub struct SketchDecl {
    pub name: String,
    pub sketch: Sketch,
    /// Operators written in the declaration (abstraction calls count one each): the paper's
    /// sketch size (Table 5).
    pub size: usize,
    /// The size names the sketch uses, where they are written.
    pub size_names: Vec<(String, Span)>,
    pub span: Span,
}

/// A parsed sketch file: its named sketches (abstractions are expanded).
#[derive(Clone, Debug, Default)]
pub struct SketchFile {
    pub sketches: Vec<SketchDecl>,
    /// Sketches that do not parse or check, with their errors: asking for one is its error,
    /// and the others stay usable. (A bad `def` makes the whole file an error.)
    pub broken: Vec<(String, Error)>,
}

impl SketchFile {
    pub fn get(&self, name: &str) -> Result<&SketchDecl> {
        if let Some((_, e)) = self.broken.iter().find(|(n, _)| n == name) {
            return Err(e.clone());
        }
        self.sketches
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.sketches.iter().map(|s| s.name.as_str()).collect();
                Error::bad_input(format!(
                    "no sketch named `{name}` (the file has: {})",
                    crate::error::listing(&names)
                ))
            })
    }
}

/// Reads `FILE.sketch:NAME` as written (its sizes by name, not resolved against a program).
pub fn read(spec: &str) -> Result<SketchDecl> {
    let (file, name) = spec.rsplit_once(':').ok_or_else(|| {
        Error::bad_input(format!("`{spec}` names no sketch: write FILE.sketch:NAME"))
    })?;
    let src = crate::files::read_source(std::path::Path::new(file))?;
    Ok(parse::parse_sketch_file(&src)?.get(name)?.clone())
}

/// Loads `FILE.sketch:NAME` and resolves its sizes against the program's size parameters,
/// and the target's sizes ([`crate::rules::Params::default`]) for the other names.
pub fn load(spec: &str, sizes: &[String]) -> Result<SketchDecl> {
    load_with(spec, sizes, &crate::rules::Params::default())
}

/// [`load`], the names that are not the program's sizes those of `params`.
pub fn load_with(
    spec: &str,
    sizes: &[String],
    params: &crate::rules::Params,
) -> Result<SketchDecl> {
    read(spec)?.with_params(sizes, params).resolve(sizes)
}

impl SketchDecl {
    /// The sketch `?`, named `name` (a search whose stop is decided elsewhere).
    pub fn any(name: &str) -> SketchDecl {
        let source = Source::new(name, "?".to_string());
        SketchDecl {
            name: name.to_string(),
            sketch: Sketch::Any,
            size: 0,
            size_names: vec![],
            span: Span::new(&source, 0, 1),
        }
    }

    /// The sketch with the size names that `params` sets, other than the program's `sizes`,
    /// replaced by their values (`containsMap(lanes, ..)`).
    pub fn with_params(mut self, sizes: &[String], params: &crate::rules::Params) -> SketchDecl {
        let value = |x: &str| params.get(x).filter(|_| !sizes.iter().any(|s| s == x));
        self.sketch = self.sketch.map_nats(&mut |n| {
            n.substitute(&mut |a| match a {
                NatAtom::Var(x) => value(x).map(Nat::cst),
                _ => None,
            })
        });
        self.size_names.retain(|(n, _)| value(n).is_none());
        self
    }

    /// Replaces size names by the De Bruijn nat indices of the program's leading `nfun`s
    /// (`sizes`, outermost first); an unknown name is an error where it is written.
    pub fn resolve(mut self, sizes: &[String]) -> Result<SketchDecl> {
        if let Some((name, span)) = self.size_names.iter().find(|(n, _)| !sizes.contains(n)) {
            return Err(Error::at(
                span,
                format!(
                    "`{name}` is not a size parameter of the program (it has: {})",
                    if sizes.is_empty() {
                        "none".to_string()
                    } else {
                        sizes.join(", ")
                    }
                ),
            ));
        }
        let index = |a: &NatAtom| match a {
            NatAtom::Var(x) => sizes
                .iter()
                .position(|s| s == x)
                .map(|p| Nat::index((sizes.len() - 1 - p) as u32)),
            _ => None,
        };
        self.sketch = self
            .sketch
            .map_nats(&mut |n| n.substitute(&mut |a| index(a)));
        // A hole matches a whole size; inside an expression there is nothing to match it by.
        let mut mixed = None;
        self.sketch.map_nats(&mut |n| {
            let hole_inside = n.atoms().iter().any(|a| matches!(a, NatAtom::Meta(_)));
            if hole_inside && n.as_meta().is_none() {
                mixed.get_or_insert_with(|| n.clone());
            }
            n.clone()
        });
        if let Some(n) = mixed {
            return Err(Error::at(
                &self.span,
                format!(
                    "a size hole stands for a whole size, not part of one (`{n}` here): \
                     write `?n` alone, or a size of the program"
                ),
            ));
        }
        Ok(self)
    }
}

impl Sketch {
    pub fn contains(s: Sketch) -> Sketch {
        Sketch::Contains(Box::new(s))
    }

    /// The same sketch with every size mapped by `f`.
    pub fn map_nats(&self, f: &mut impl FnMut(&Nat) -> Nat) -> Sketch {
        match self {
            Sketch::Any => Sketch::Any,
            Sketch::Node(op, kids) => {
                let op = match op {
                    Op::NatApp(n) => Op::NatApp(f(n)),
                    other => other.clone(),
                };
                Sketch::Node(op, kids.iter().map(|k| k.map_nats(f)).collect())
            }
            Sketch::Contains(s) => Sketch::contains(s.map_nats(f)),
            Sketch::Or(a, b) => Sketch::Or(Box::new(a.map_nats(f)), Box::new(b.map_nats(f))),
            Sketch::Typed(s, t) => {
                Sketch::Typed(Box::new(s.map_nats(f)), t.map_nats(0, &mut |n, _| f(n)))
            }
        }
    }
}

/// Does a type satisfy a type sketch? Metavariables of the sketch are independent holes; a
/// size that is exactly a hole matches any size.
pub fn type_matches(pattern: &Type, t: &Type) -> bool {
    fn nat(p: &Nat, n: &Nat) -> bool {
        p.as_meta().is_some() || p == n
    }
    match (pattern, t) {
        (Type::Meta(_), _) => true,
        (Type::F32, Type::F32) | (Type::Int, Type::Int) | (Type::Bool, Type::Bool) => true,
        (Type::Data(a), Type::Data(b)) => a == b,
        (Type::Idx(a), Type::Idx(b)) => nat(a, b),
        (Type::Arr(a, x), Type::Arr(b, y)) => nat(a, b) && type_matches(x, y),
        (Type::Vector(x, a), Type::Vector(y, b)) => nat(a, b) && type_matches(x, y),
        (Type::Pair(a, b), Type::Pair(c, d)) | (Type::Fun(a, b), Type::Fun(c, d)) => {
            type_matches(a, c) && type_matches(b, d)
        }
        (Type::NatFun(a), Type::NatFun(b)) => type_matches(a, b),
        _ => false,
    }
}
