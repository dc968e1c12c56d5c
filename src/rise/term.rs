//! Typed De Bruijn Rise terms: the form sketchlog reasons about.
//!
//! Variables are De Bruijn indices (0 = innermost `Lam`), sizes under `nfun` are nat indices
//! (0 = innermost `NatLam`), and every node carries its monotype, with its free nat variables
//! as indices relative to the node's position. Alpha-equivalent named programs elaborate to
//! identical terms, and this is the form stored in the e-graph.

use super::nat::Nat;
use super::primitives::Prim;
use super::syntax::Float;
use super::types::Type;
use crate::source::Span;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node<C> {
    Var(u32),
    App(C, C),
    Lam(C),
    NatApp(C, Nat),
    NatLam(C),
    Prim(Prim),
    F32(Float),
    Int(i64),
    /// `f >> g`: `f`, then `g` (the combinator normal form's composition).
    Comp(C, C),
}

impl<C> Node<C> {
    /// The children, in order (at most two, held inline).
    pub fn children(&self) -> smallvec::SmallVec<[&C; 2]> {
        match self {
            Node::App(f, x) | Node::Comp(f, x) => smallvec::smallvec![f, x],
            Node::Lam(b) | Node::NatApp(b, _) | Node::NatLam(b) => smallvec::smallvec![b],
            _ => smallvec::SmallVec::new(),
        }
    }

    /// The same node with children mapped by `f`, or `None` where `f` gives `None` for one.
    pub fn try_map<D>(&self, mut f: impl FnMut(&C) -> Option<D>) -> Option<Node<D>> {
        let kids = (self.children().into_iter())
            .map(&mut f)
            .collect::<Option<Vec<D>>>()?;
        let mut kids = kids.into_iter();
        Some(self.map(|_| kids.next().expect("one per child")))
    }

    /// The same node with children mapped by `f`.
    pub fn map<D>(&self, mut f: impl FnMut(&C) -> D) -> Node<D> {
        match self {
            Node::Var(i) => Node::Var(*i),
            Node::App(a, b) => {
                let a = f(a);
                Node::App(a, f(b))
            }
            Node::Lam(b) => Node::Lam(f(b)),
            Node::NatApp(b, n) => Node::NatApp(f(b), n.clone()),
            Node::NatLam(b) => Node::NatLam(f(b)),
            Node::Prim(p) => Node::Prim(*p),
            Node::F32(x) => Node::F32(*x),
            Node::Int(i) => Node::Int(*i),
            Node::Comp(a, b) => {
                let a = f(a);
                Node::Comp(a, f(b))
            }
        }
    }
}

/// A typed De Bruijn term.
///
/// A term elaborated from source keeps, on each node, where in the source it was written:
/// the interpreter and the code generator point their run-time errors there. The span is
/// not part of the term's identity: equality and hashing ignore it.
#[derive(Clone)]
pub struct Term {
    pub node: Node<Rc<Term>>,
    pub ty: Type,
    pub span: Option<Span>,
}

impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        self.node == other.node && self.ty == other.ty
    }
}

impl Eq for Term {}

impl std::hash::Hash for Term {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.node.hash(state);
        self.ty.hash(state);
    }
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("node", &self.node)
            .field("ty", &self.ty)
            .finish()
    }
}

impl Term {
    /// A node written nowhere in particular (built by a rewrite or extracted).
    pub fn new(node: Node<Rc<Term>>, ty: Type) -> Rc<Term> {
        Term::at(node, ty, None)
    }

    /// A node written at `span`.
    pub fn at(node: Node<Rc<Term>>, ty: Type, span: Option<Span>) -> Rc<Term> {
        Rc::new(Term { node, ty, span })
    }

    /// A size-polymorphic function applied to sizes, `(nfun n .. => e)<s>..`, reduced: `e`
    /// with the sizes substituted; `None` if the term is not such an application.
    pub fn nat_beta(&self) -> Option<Rc<Term>> {
        let Node::NatApp(f, n) = &self.node else {
            return None;
        };
        let f = f.nat_beta().unwrap_or_else(|| f.clone());
        match &f.node {
            Node::NatLam(body) => Some(body.instantiate_nat(n, 0)),
            _ => None,
        }
    }

    /// The term with size index `depth` (counted from the term's own position) replaced by
    /// `arg` and the indices above it lowered by one.
    fn instantiate_nat(&self, arg: &super::nat::Nat, depth: u32) -> Rc<Term> {
        use super::types::subst_index;
        let node = match &self.node {
            Node::NatLam(b) => Node::NatLam(b.instantiate_nat(arg, depth + 1)),
            Node::NatApp(f, n) => {
                Node::NatApp(f.instantiate_nat(arg, depth), subst_index(n, depth, arg))
            }
            n => n.map(|c| c.instantiate_nat(arg, depth)),
        };
        let ty = (self.ty).map_nats(depth, &mut |n, d| subst_index(n, d, arg));
        Term::at(node, ty, self.span.clone())
    }

    /// The term with each free size index renumbered ([`super::types::reindex_nat`]).
    pub fn reindex_nats(&self, depth: u32, new: &impl Fn(u32) -> u32) -> Rc<Term> {
        use super::types::reindex_nat;
        let node = match &self.node {
            Node::NatLam(b) => Node::NatLam(b.reindex_nats(depth + 1, new)),
            Node::NatApp(f, n) => {
                Node::NatApp(f.reindex_nats(depth, new), reindex_nat(n, depth, new))
            }
            n => n.map(|c| c.reindex_nats(depth, new)),
        };
        Term::at(node, self.ty.reindex_nats(depth, new), self.span.clone())
    }

    /// `generalize f` (a rule's right-hand side): `f` made a function of the sizes its
    /// result's shape names ([`super::types::generalizing`]) and applied to them, `(nfun n m
    /// => f[n/h, m/w])<h><w>`, a size beta-expansion, so the same value. `None` where the
    /// result's shape names no size variable, `f` is a size application already, or it reads
    /// a variable bound outside it (whose type would keep the sizes).
    pub fn generalized(&self) -> Option<Rc<Term>> {
        if matches!(self.node, Node::NatApp(..)) || super::lambda::has_free_below(self, u32::MAX) {
            return None;
        }
        let (sizes, new) = super::types::generalizing(&self.ty)?;
        let mut t = self.reindex_nats(0, &new);
        for _ in &sizes {
            let ty = super::types::nat_fun(t.ty.clone());
            t = Term::new(Node::NatLam(t), ty);
        }
        for s in sizes {
            let Type::NatFun(body) = &t.ty else {
                return None;
            };
            let ty = Type::instantiate(body, &Nat::index(s));
            t = Term::new(Node::NatApp(t, Nat::index(s)), ty);
        }
        Some(t)
    }

    /// Number of nodes.
    pub fn size(&self) -> usize {
        1 + self.node.children().iter().map(|c| c.size()).sum::<usize>()
    }

    /// How many data types the term is generic in: its `dfun` binders, which the e-graph
    /// does not hold (a bound data type is a rigid type there).
    pub fn data_binders(&self) -> usize {
        let mut seen = vec![];
        self.ty.for_each_type(&mut |t| match t {
            Type::Data(a) if !seen.contains(a) => seen.push(a.clone()),
            _ => {}
        });
        seen.len()
    }

    /// Does the term hold a composition (`f >> g`)?
    pub fn has_compositions(&self) -> bool {
        matches!(self.node, Node::Comp(..))
            || self.node.children().iter().any(|c| c.has_compositions())
    }

    /// Program size as the paper's Table 5 counts it: operators, lambdas, variables and
    /// constants; applications (of values and of sizes) are not counted.
    pub fn operator_count(&self) -> usize {
        let own = usize::from(!matches!(self.node, Node::App(..) | Node::NatApp(..)));
        own + self
            .node
            .children()
            .iter()
            .map(|c| c.operator_count())
            .sum::<usize>()
    }
}
