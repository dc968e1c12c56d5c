//! The Rise term schema, defined once: every e-node constructor of sort `Expr` ([`Con`]) with
//! its fields in order ([`Con::fields`]: term children and payloads, the type last) and the
//! encodings that add it ([`Family`]).
//!
//! Everything that only needs a constructor's shape is derived from this table: the egglog
//! declaration of `Expr`, the `ty` function and its `rise-types` rules ([`declarations`],
//! loaded between `schemas/types.egg` and `schemas/free.egg`), counting e-nodes, the sketch
//! scan, the term-size filter. The code that gives a constructor its meaning (encoding and
//! extraction, substitution, the rule compiler, the free-variable rules) names it by its
//! variant. Adding a constructor is a new variant here plus that code.

use crate::rise::nat::Nat;
use crate::rise::term::Node;
use smallvec::{smallvec, SmallVec};

/// The kind of a constructor's field, by its egglog sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// A Rise term (an e-class of sort `Expr`).
    Term,
    Nat,
    Type,
    I64,
    F64,
    String,
}

impl Field {
    /// The egglog sort.
    pub fn sort(self) -> &'static str {
        match self {
            Field::Term => "Expr",
            Field::Nat => "Nat",
            Field::Type => "Type",
            Field::I64 => "i64",
            Field::F64 => "f64",
            Field::String => "String",
        }
    }
}

/// Which encodings add a constructor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Rise itself, in De Bruijn form: what extraction reads and sketches match.
    Rise,
    /// Explicit substitution: sigma and phi, never extracted.
    Explicit,
    /// Named variables (Table 2's name-based encodings), never extracted.
    Names,
}

/// A term constructor of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Con {
    Var,
    App,
    Lam,
    NatApp,
    NatLam,
    Prim,
    F32,
    Int,
    Comp,
    Sig,
    Phi,
    NamedVar,
    NamedLam,
    Let,
}

impl Con {
    /// Every constructor, in declaration order.
    pub const ALL: [Con; 14] = [
        Con::Var,
        Con::App,
        Con::Lam,
        Con::NatApp,
        Con::NatLam,
        Con::Prim,
        Con::F32,
        Con::Int,
        Con::Comp,
        Con::Sig,
        Con::Phi,
        Con::NamedVar,
        Con::NamedLam,
        Con::Let,
    ];

    /// The egglog constructor's name.
    pub fn name(self) -> &'static str {
        match self {
            Con::Var => "Var",
            Con::App => "App",
            Con::Lam => "Lam",
            Con::NatApp => "NatApp",
            Con::NatLam => "NatLam",
            Con::Prim => "Prim",
            Con::F32 => "F32",
            Con::Int => "Int",
            Con::Comp => "Comp",
            Con::Sig => "Sig",
            Con::Phi => "Phi",
            Con::NamedVar => "NamedVar",
            Con::NamedLam => "NamedLam",
            Con::Let => "Let",
        }
    }

    /// The fields in order; the last is the term's type.
    pub fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            Con::Var => &[I64, Type],
            Con::App | Con::Comp => &[Term, Term, Type],
            Con::Lam | Con::NatLam => &[Term, Type],
            Con::NatApp => &[Term, Nat, Type],
            Con::Prim | Con::NamedVar => &[String, Type],
            Con::F32 => &[F64, Type],
            Con::Int => &[I64, Type],
            Con::Sig => &[I64, Term, Term, Type],
            Con::Phi => &[I64, I64, Term, Type],
            Con::NamedLam => &[String, Term, Type],
            Con::Let => &[String, Term, Term, Type],
        }
    }

    /// What the declaration's comment says the constructor is.
    fn doc(self) -> &'static str {
        match self {
            Con::Var => "De Bruijn index (0 = innermost lambda)",
            Con::App => "f x",
            Con::Lam => "fun => b, binding index 0",
            Con::NatApp => "f<n>",
            Con::NatLam => "nfun n => e, binding nat index 0",
            Con::Prim => "map, reduce, split, ...",
            Con::F32 => "an f32 literal (exactly representable in f64)",
            Con::Int => "an integer literal",
            Con::Comp => "f >> g: f, then g (combinator normal form)",
            Con::Sig => "sigma(i, a, b): b substituted for index i in a",
            Con::Phi => "phi(d, k, a): d added to the indices >= k of a",
            Con::NamedVar => "a named variable",
            Con::NamedLam => "fun x => b",
            Con::Let => "let(x, e, b): e substituted for x in b",
        }
    }

    /// The encodings that add it.
    pub fn family(self) -> Family {
        match self {
            Con::Sig | Con::Phi => Family::Explicit,
            Con::NamedVar | Con::NamedLam | Con::Let => Family::Names,
            _ => Family::Rise,
        }
    }

    /// The positions of its term children.
    pub fn children(self) -> impl Iterator<Item = usize> {
        let fields = self.fields();
        (0..fields.len()).filter(move |&i| fields[i] == Field::Term)
    }

    /// The position of its first field that is neither a term nor the type (an index, a
    /// literal, a primitive's name, a size).
    pub fn payload(self) -> Option<usize> {
        let fields = self.fields();
        (0..fields.len() - 1).find(|&i| fields[i] != Field::Term)
    }

    /// The position of the type field.
    pub fn type_field(self) -> usize {
        self.fields().len() - 1
    }

    /// The egglog term `(Name arg ..)`, the fields in order.
    pub fn apply<S: AsRef<str>>(self, args: &[S]) -> String {
        debug_assert_eq!(args.len(), self.fields().len(), "{}", self.name());
        let mut out = format!("({}", self.name());
        for a in args {
            out.push(' ');
            out.push_str(a.as_ref());
        }
        out + ")"
    }

    /// A query pattern: term children `c0`, `c1`, ..., the payload as given, any other field
    /// `p<position>`, the type `t`. `(App c0 c1 t)`, `(Prim "map" t)`.
    pub fn pattern(self, payload: &str) -> String {
        let mut child = 0;
        let args: Vec<String> = (self.fields().iter().enumerate())
            .map(|(i, field)| match field {
                _ if i == self.type_field() => "t".to_string(),
                Field::Term => {
                    child += 1;
                    format!("c{}", child - 1)
                }
                _ if Some(i) == self.payload() => payload.to_string(),
                _ => format!("p{i}"),
            })
            .collect();
        self.apply(&args)
    }
}

/// A field of a Rise node other than its type: a child (a term, or a template in the rule
/// compiler) or a payload.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'n, C> {
    Child(&'n C),
    /// A De Bruijn index.
    Index(u32),
    /// A primitive's name.
    Prim(&'static str),
    F32(f64),
    Int(i64),
    Nat(&'n Nat),
}

impl<C> Arg<'_, C> {
    /// A payload that is an egglog base value, as egglog text (`3`, `"map"`, `1.0`).
    pub fn literal(&self) -> Option<String> {
        match self {
            Arg::Index(i) => Some(i.to_string()),
            Arg::Int(i) => Some(i.to_string()),
            Arg::Prim(p) => Some(format!("\"{p}\"")),
            Arg::F32(x) => Some(format!("{x:?}")),
            Arg::Child(_) | Arg::Nat(_) => None,
        }
    }

    /// A payload that is an egglog base value, as an e-graph value.
    pub fn base_value<'a, 'db: 'a>(
        &self,
        rs: &impl egglog::Core<'a, 'db>,
    ) -> Option<egglog::Value> {
        use egglog::IntoValue;
        let base = rs.base_values();
        match *self {
            Arg::Index(i) => Some((i as i64).into_value(base)),
            Arg::Int(i) => Some(i.into_value(base)),
            Arg::Prim(p) => Some(p.into_value(base)),
            Arg::F32(x) => Some(x.into_value(base)),
            Arg::Child(_) | Arg::Nat(_) => None,
        }
    }
}

impl Con {
    /// A node of a De Bruijn Rise term as its constructor and fields in the schema's order
    /// (the type aside): the one place that maps Rise's nodes to the schema.
    pub fn of<C>(node: &Node<C>) -> (Con, SmallVec<[Arg<'_, C>; 2]>) {
        match node {
            Node::Var(i) => (Con::Var, smallvec![Arg::Index(*i)]),
            Node::App(f, x) => (Con::App, smallvec![Arg::Child(f), Arg::Child(x)]),
            Node::Lam(b) => (Con::Lam, smallvec![Arg::Child(b)]),
            Node::NatApp(f, n) => (Con::NatApp, smallvec![Arg::Child(f), Arg::Nat(n)]),
            Node::NatLam(b) => (Con::NatLam, smallvec![Arg::Child(b)]),
            Node::Prim(p) => (Con::Prim, smallvec![Arg::Prim(p.name())]),
            Node::F32(x) => (Con::F32, smallvec![Arg::F32(x.0 as f64)]),
            Node::Int(i) => (Con::Int, smallvec![Arg::Int(*i)]),
            Node::Comp(f, g) => (Con::Comp, smallvec![Arg::Child(f), Arg::Child(g)]),
        }
    }
}

/// The constructors that extraction reads and sketches match.
pub fn rise() -> impl Iterator<Item = Con> {
    Con::ALL.into_iter().filter(|c| c.family() == Family::Rise)
}

/// The egglog text derived from the table: `(datatype Expr ...)`, the `ty` function that gives
/// each e-class its type and the `rise-types` rules that set it for e-nodes rewrites add, for
/// Rise's own constructors ([`family_rules`] has the other families').
pub fn declarations() -> String {
    let mut out = String::from("(datatype Expr\n");
    for c in Con::ALL {
        let sorts: Vec<&str> = c.fields().iter().map(|f| f.sort()).collect();
        out += &format!("  ({} {}) ; {}\n", c.name(), sorts.join(" "), c.doc());
    }
    out += ")\n\n(function ty (Expr) Type :no-merge)\n(ruleset rise-types)\n";
    out + &type_rules(Family::Rise)
}

/// The analysis rules of the constructors of an encoding's own `family` (explicit
/// substitutions, named binders), which the encoding adds to its e-graphs
/// (`super::add_family_analyses`): their `rise-types` rules and their free-variable rules
/// (`schemas/free-explicit.egg`, `schemas/free-named.egg`). Every e-graph steps its analysis
/// rulesets before every iteration, and egglog prepares every rule of a ruleset on every step,
/// whether its tables have rows or not, so they are added only where they are needed.
/// (Rise's own are in [`declarations`] and `schemas/free.egg`.)
pub fn family_rules(family: Family) -> String {
    let free = match family {
        Family::Rise => "",
        Family::Explicit => include_str!("../../schemas/free-explicit.egg"),
        Family::Names => include_str!("../../schemas/free-named.egg"),
    };
    type_rules(family) + free
}

/// The prefix of the schema's own rule variables: a user's global (`$e`) cannot be named like
/// one of them by accident (egglog refuses a rule variable named like a global).
pub const NAMESPACE: &str = "rise.";

/// The `rise-types` rules of a family's constructors: each sets its class's `ty` from the
/// e-node's type field.
fn type_rules(family: Family) -> String {
    let mut out = String::new();
    // Variables in the schema's namespace, apart from the globals (`$e`, `$x0`) a user's
    // program may have defined before a Rise command adds the schema.
    for c in Con::ALL.into_iter().filter(|c| c.family() == family) {
        let vars: Vec<String> = (0..c.fields().len())
            .map(|i| format!("{NAMESPACE}arg{i}"))
            .collect();
        out += &format!(
            "(rule ((= {NAMESPACE}e ({} {}))) ((set (ty {NAMESPACE}e) {NAMESPACE}arg{})) :ruleset rise-types :name \"ty-{}\")\n",
            c.name(),
            vars.join(" "),
            c.type_field(),
            c.name()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_children_payload_and_type() {
        assert_eq!(Con::App.pattern("n"), "(App c0 c1 t)");
        assert_eq!(Con::NatApp.pattern("n"), "(NatApp c0 n t)");
        assert_eq!(Con::Prim.pattern("\"map\""), "(Prim \"map\" t)");
        assert_eq!(Con::Phi.pattern("d"), "(Phi d p1 c0 t)");
        assert_eq!(Con::Let.children().collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn the_declarations_load_and_declare_every_constructor() {
        let eg = crate::egraph::rise_egraph().unwrap();
        for c in Con::ALL {
            let mut seen = 0;
            eg.constructor_enodes(c.name(), |_| seen += 1).unwrap();
            assert_eq!(seen, 0, "{} is declared and empty", c.name());
        }
        assert_eq!(rise().count(), 9);
    }
}
