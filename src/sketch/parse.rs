//! Parser for sketch files (`.sketch`), with located errors.
//!
//! ```text
//! file    := (def | sketch)*
//! def     := "def" NAME ("(" param ("," param)* ")")? "=" sk     (a sketch abstraction)
//! param   := IDENT (":" "nat")?                                    (a sketch, or a size)
//! sketch  := "sketch" NAME "=" sk      (NAME: words joined by `-`)
//! sk      := typed ("or" typed)*
//! typed   := applied ("::" type)?              (a Rise type; `?x` holes match anything)
//! applied := atom ("<" nat ("," nat)* ">" | "(" sk ("," sk)* ")")*
//!                               (written right after the atom: `natapp`s, `app`s)
//! atom    := "?" | "contains" "(" sk ")" | "app" "(" sk "," sk ")" | "lam" "(" sk ")"
//!          | "natlam" "(" sk ")" | "natapp" "(" sk "," nat ")"
//!          | "var" ("(" INT ")")?            (any variable, or De Bruijn index INT)
//!          | "-"? INT | "-"? INT "." INT       (an int or f32 literal: `1`, `-0.5`)
//!          | PRIM ("<" nat ("," nat)* ">")? ("(" sk ("," sk)* ")")?   (applied primitive)
//!          | NAME ("(" arg ("," arg)* ")")?    (abstraction call, or a parameter)
//!          | "(" sk ")"
//! ```
//!
//! An abstraction's body is checked where it is defined and expanded at each call, with the
//! arguments in place of the parameters.

use super::{Op, Sketch, SketchDecl, SketchFile};
use crate::error::{Error, Result};
use crate::rise::nat::{Nat, NatAtom};
use crate::rise::parse::{finish, parser, Parser, Tok};
use crate::rise::primitives::Prim;
use crate::rise::syntax::ExprKind;
use crate::rise::types::Type;
use crate::source::{Source, Span};
use std::collections::HashMap;
use std::sync::Arc;

/// A parameter of a sketch abstraction.
#[derive(Clone)]
enum Arg {
    Sketch(Sketch),
    Nat(Nat),
}

struct Abstraction {
    params: Vec<(String, bool)>,
    /// Token position of the body.
    body: usize,
}

struct SketchParser {
    p: Parser,
    defs: HashMap<String, Abstraction>,
    /// Parameters in scope while a body is parsed.
    env: HashMap<String, Arg>,
    /// Operators counted (outside abstraction bodies).
    size: usize,
    /// Depth of abstraction bodies being parsed.
    expanding: usize,
    /// Nested `sk` calls open (bounded by [`crate::limits::MAX_NESTING`]).
    depth: usize,
    /// Nodes built for the current sketch or definition, abstractions expanded (bounded by
    /// [`crate::limits::MAX_SKETCH_NODES`]), and that declaration's name.
    nodes: usize,
    declaring: (String, Span),
    size_names: Vec<(String, Span)>,
}

const RESERVED: &[&str] = &[
    "contains", "app", "lam", "natlam", "natapp", "var", "or", "def", "sketch",
];

impl SketchParser {
    fn file(&mut self) -> Result<SketchFile> {
        let mut file = SketchFile::default();
        while *self.p.peek() != Tok::Eof {
            let start = self.p.pos;
            if self.p.is_kw("def") {
                self.p.pos += 1;
                self.def()?;
                continue;
            }
            self.p.expect_kw("sketch")?;
            let name_span = self.p.here();
            let name = self.p.rule_name()?;
            if file.sketches.iter().any(|s| s.name == name) {
                return Err(Error::at(
                    &name_span,
                    format!("sketch `{name}` is already defined"),
                ));
            }
            self.p.expect_sym("=")?;
            self.size = 0;
            self.nodes = 0;
            self.declaring = (name.clone(), name_span.clone());
            self.size_names.clear();
            let sketch = match self.sk() {
                Ok(s) if s.depth() > crate::limits::MAX_NESTING => {
                    Err(crate::limits::too_deep(&name_span, "the sketch"))
                }
                other => other,
            };
            // A bad sketch is kept as its error, and the rest of the file stays usable.
            let sketch = match sketch {
                Ok(s) => s,
                Err(e) => {
                    file.broken.push((name, e));
                    self.skip_to_next_declaration();
                    continue;
                }
            };
            file.sketches.push(SketchDecl {
                name,
                sketch,
                size: self.size,
                size_names: std::mem::take(&mut self.size_names),
                span: self.p.since(start),
            });
        }
        Ok(file)
    }

    /// After an error in a sketch: on to the next `sketch` or `def`, with a clean state.
    fn skip_to_next_declaration(&mut self) {
        while !(self.p.is_kw("sketch") || self.p.is_kw("def") || *self.p.peek() == Tok::Eof) {
            self.p.pos += 1;
        }
        self.env.clear();
        self.expanding = 0;
        self.depth = 0;
    }

    fn name(&mut self) -> Result<String> {
        let span = self.p.here();
        let name = self.p.ident()?;
        self.check_unreserved(&name, &span)?;
        Ok(name)
    }

    fn check_unreserved(&self, name: &str, span: &Span) -> Result<()> {
        if RESERVED.contains(&name) || Prim::from_name(name).is_some() {
            return Err(Error::at(span, format!("`{name}` is reserved in sketches")));
        }
        Ok(())
    }

    fn def(&mut self) -> Result<()> {
        let name_span = self.p.here();
        let first = self.p.ident()?;
        let name = self.p.hyphenated(first);
        self.check_unreserved(&name, &name_span)?;
        if self.defs.contains_key(&name) {
            return Err(Error::at(
                &name_span,
                format!("`{name}` is already defined"),
            ));
        }
        let mut params = vec![];
        if self.p.eat_sym("(") {
            loop {
                let span = self.p.here();
                let x = self.name()?;
                if params.iter().any(|(p, _)| *p == x) {
                    return Err(Error::at(&span, format!("parameter `{x}` is repeated")));
                }
                let is_nat = self.p.eat_sym(":");
                if is_nat {
                    self.p.expect_kw("nat")?;
                }
                params.push((x, is_nat));
                if !self.p.eat_sym(",") {
                    break;
                }
            }
            self.p.expect_sym(")")?;
        }
        self.p.expect_sym("=")?;
        let body = self.p.pos;
        self.nodes = 0;
        self.declaring = (name.clone(), name_span.clone());
        // Check the body now, with placeholders for the parameters.
        let env = params
            .iter()
            .map(|(x, is_nat)| {
                let arg = if *is_nat {
                    Arg::Nat(Nat::var(x))
                } else {
                    Arg::Sketch(Sketch::Any)
                };
                (x.clone(), arg)
            })
            .collect();
        self.expand(body, env)?;
        self.defs.insert(name, Abstraction { params, body });
        Ok(())
    }

    /// Parses the body at token `body` with `env` for its parameters; returns to where it was.
    fn expand(&mut self, body: usize, env: HashMap<String, Arg>) -> Result<Sketch> {
        let (pos, outer) = (self.p.pos, std::mem::replace(&mut self.env, env));
        self.p.pos = body;
        self.expanding += 1;
        let s = self.sk();
        self.expanding -= 1;
        self.env = outer;
        // At the definition, go on after the body; at a call, return to the call.
        if pos != body {
            self.p.pos = pos;
        }
        s
    }

    /// Counts `n` more nodes of the sketch being built; past the limit, an error at the
    /// declaration being built.
    fn grow(&mut self, n: usize) -> Result<()> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > crate::limits::MAX_SKETCH_NODES {
            let (name, span) = &self.declaring;
            return Err(Error::at(
                span,
                format!(
                    "`{name}` expands to more than {} nodes, its abstractions expanded (sketchlog's limit)",
                    crate::limits::MAX_SKETCH_NODES
                ),
            ));
        }
        Ok(())
    }

    fn count(&mut self) {
        if self.expanding == 0 {
            self.size += 1;
        }
    }

    fn sk(&mut self) -> Result<Sketch> {
        if self.depth >= crate::limits::MAX_NESTING {
            return Err(crate::limits::too_deep(&self.p.here(), "the sketch"));
        }
        self.grow(1)?;
        self.depth += 1;
        let s = self.sk_level();
        self.depth -= 1;
        s
    }

    fn sk_level(&mut self) -> Result<Sketch> {
        let mut s = self.typed()?;
        while self.p.is_kw("or") {
            self.p.pos += 1;
            self.count();
            s = Sketch::Or(Box::new(s), Box::new(self.typed()?));
        }
        Ok(s)
    }

    fn typed(&mut self) -> Result<Sketch> {
        let s = self.applied()?;
        if self.p.eat_sym("::") {
            let start = self.p.pos;
            self.p.holes = true;
            let t = self.p.ty();
            self.p.holes = false;
            let t = self.sizes_of_type(t?, start);
            return Ok(Sketch::Typed(Box::new(s), t));
        }
        Ok(s)
    }

    /// An atom applied, written right after it: to sizes, `s<32, w>` (`natapp`s), or to
    /// sketches, `s(a, b)` (`app`s), as often as written: `natlam(natlam(lam(?)))<32, w>(x)`.
    fn applied(&mut self) -> Result<Sketch> {
        let mut s = self.atom()?;
        loop {
            let touching = self.p.adjacent(self.p.pos - 1);
            if touching && self.p.eat_sym("<") {
                loop {
                    self.count();
                    s = Sketch::Node(Op::NatApp(self.nat()?), vec![s]);
                    if !self.p.eat_sym(",") {
                        break;
                    }
                }
                self.p.expect_sym(">")?;
            } else if touching && self.p.eat_sym("(") {
                loop {
                    self.count();
                    s = Sketch::Node(Op::App, vec![s, self.sk()?]);
                    if !self.p.eat_sym(",") {
                        break;
                    }
                }
                self.p.expect_sym(")")?;
            } else {
                return Ok(s);
            }
        }
    }

    fn args(&mut self, n: usize, what: &str) -> Result<Vec<Sketch>> {
        self.p.expect_sym("(")?;
        let mut kids = vec![];
        for i in 0..n {
            if i > 0 {
                self.p.expect_sym(",")?;
            }
            kids.push(self.sk()?);
        }
        if !self.p.is_sym(")") {
            return self
                .p
                .expected(&format!("`)`: {what} takes {n} argument(s)"));
        }
        self.p.pos += 1;
        Ok(kids)
    }

    fn atom(&mut self) -> Result<Sketch> {
        if self.p.eat_sym("?") {
            return Ok(Sketch::Any);
        }
        if self.p.eat_sym("(") {
            let s = self.sk()?;
            self.p.expect_sym(")")?;
            return Ok(s);
        }
        let span = self.p.here();
        let word = match self.p.peek().clone() {
            Tok::Ident(w) => w,
            Tok::Int(_) | Tok::Sym("-") if self.at_number() => {
                let negative = self.p.eat_sym("-");
                let literal = self.p.number(negative)?;
                self.count();
                return Ok(match literal.kind {
                    ExprKind::F32(x) => Sketch::Node(Op::F32(x), vec![]),
                    ExprKind::Int(i) => Sketch::Node(Op::Int(i), vec![]),
                    _ => unreachable!("a number is a literal"),
                });
            }
            _ => return self.p.expected("a sketch"),
        };
        self.p.pos += 1;
        // An abstraction's name may go on with `-` (`parallel-stage`), as a sketch's does.
        let word = self.p.hyphenated(word);
        let node = |op: Op, kids| Sketch::Node(op, kids);
        let s = match word.as_str() {
            "contains" => Sketch::contains(self.args(1, "contains")?.remove(0)),
            "app" => node(Op::App, self.args(2, "app")?),
            "lam" => node(Op::Lam, self.args(1, "lam")?),
            "natlam" => node(Op::NatLam, self.args(1, "natlam")?),
            "var" if self.p.eat_sym("(") => {
                let index = self.index()?;
                self.p.expect_sym(")")?;
                node(Op::Var(Some(index)), vec![])
            }
            "var" => node(Op::Var(None), vec![]),
            "natapp" => {
                self.p.expect_sym("(")?;
                let f = self.sk()?;
                self.p.expect_sym(",")?;
                let n = self.nat()?;
                self.p.expect_sym(")")?;
                node(Op::NatApp(n), vec![f])
            }
            _ => {
                if let Some(prim) = Prim::from_name(&word) {
                    self.count();
                    return self.applied_prim(prim);
                }
                return self.reference(&word, &span);
            }
        };
        self.count();
        Ok(s)
    }

    /// A De Bruijn index (`var(0)`).
    fn index(&mut self) -> Result<u32> {
        let span = self.p.here();
        match self.p.peek().clone() {
            Tok::Int(text) => {
                self.p.pos += 1;
                text.parse()
                    .map_err(|_| Error::at(&span, format!("variable index `{text}` is too large")))
            }
            _ => self
                .p
                .expected("a variable index (0 is the innermost binder)"),
        }
    }

    /// `prim`, `prim<n, ..>`, and either applied to sketches: nested `app`s.
    fn applied_prim(&mut self, prim: Prim) -> Result<Sketch> {
        let mut s = Sketch::Node(Op::Prim(prim), vec![]);
        if self.p.eat_sym("<") {
            loop {
                s = Sketch::Node(Op::NatApp(self.nat()?), vec![s]);
                if !self.p.eat_sym(",") {
                    break;
                }
            }
            self.p.expect_sym(">")?;
        }
        if self.p.eat_sym("(") {
            loop {
                s = Sketch::Node(Op::App, vec![s, self.sk()?]);
                if !self.p.eat_sym(",") {
                    break;
                }
            }
            self.p.expect_sym(")")?;
        }
        Ok(s)
    }

    /// A parameter in scope, or a call of an abstraction.
    fn reference(&mut self, word: &str, span: &Span) -> Result<Sketch> {
        if let Some(arg) = self.env.get(word) {
            return match arg {
                Arg::Sketch(s) => {
                    let s = s.clone();
                    self.grow(s.node_count())?;
                    Ok(s)
                }
                Arg::Nat(_) => Err(Error::at(
                    span,
                    format!("`{word}` is a size parameter, used here as a sketch"),
                )),
            };
        }
        let Some(def) = self.defs.get(word) else {
            return Err(Error::at(
                span,
                format!("unknown sketch `{word}` (not a primitive, parameter or abstraction)"),
            ));
        };
        let (params, body) = (def.params.clone(), def.body);
        self.count();
        let mut env = HashMap::new();
        if !params.is_empty() {
            self.p.expect_sym("(")?;
            for (i, (x, is_nat)) in params.iter().enumerate() {
                if i > 0 {
                    self.p.expect_sym(",")?;
                }
                let arg = if *is_nat {
                    Arg::Nat(self.nat()?)
                } else {
                    Arg::Sketch(self.sk()?)
                };
                env.insert(x.clone(), arg);
            }
            if !self.p.is_sym(")") {
                return self
                    .p
                    .expected(&format!("`)`: `{word}` takes {} argument(s)", params.len()));
            }
            self.p.pos += 1;
        }
        self.expand(body, env)
    }

    /// Whether a literal starts here: a number, or `-` right before one (`-0.5`).
    fn at_number(&self) -> bool {
        match self.p.peek() {
            Tok::Int(_) => true,
            Tok::Sym("-") => {
                matches!(self.p.peek_at(1), Tok::Int(_)) && self.p.adjacent(self.p.pos)
            }
            _ => false,
        }
    }

    /// A size: parameters replaced by their arguments; other names are program sizes.
    fn nat(&mut self) -> Result<Nat> {
        let start = self.p.pos;
        self.p.holes = true;
        let n = self.p.nat();
        self.p.holes = false;
        let n = n?.substitute(&mut |a| self.param_nat(a));
        self.note_sizes(n.atoms().into_iter(), start);
        Ok(n)
    }

    fn param_nat(&self, a: &NatAtom) -> Option<Nat> {
        match a {
            NatAtom::Var(x) => match self.env.get(x) {
                Some(Arg::Nat(n)) => Some(n.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    fn sizes_of_type(&mut self, t: Type, start: usize) -> Type {
        let t = t.map_nats(0, &mut |n, _| n.substitute(&mut |a| self.param_nat(a)));
        let mut names = vec![];
        t.for_each_nat(&mut |n| names.extend(n.atoms().into_iter().cloned()));
        self.note_sizes(names.iter(), start);
        t
    }

    fn note_sizes<'a>(&mut self, atoms: impl Iterator<Item = &'a NatAtom>, start: usize) {
        let span = self.p.since(start);
        for a in atoms {
            if let NatAtom::Var(x) = a {
                let is_param = matches!(self.env.get(x), Some(Arg::Nat(_)));
                if !is_param {
                    self.size_names.push((x.clone(), span.clone()));
                }
            }
        }
    }
}

/// Parses a `.sketch` file.
pub fn parse_sketch_file(src: &Arc<Source>) -> Result<SketchFile> {
    let mut p = SketchParser {
        p: parser(src)?,
        defs: HashMap::new(),
        env: HashMap::new(),
        size: 0,
        expanding: 0,
        depth: 0,
        nodes: 0,
        declaring: (String::new(), Span::new(src, 0, 0)),
        size_names: vec![],
    };
    let f = p.file()?;
    finish(&mut p.p, f)
}
