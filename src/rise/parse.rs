//! Parser for named Rise (`.rise` files), with located errors.
//!
//! ```text
//! program := ("def" IDENT (":" type)? "=" expr)*
//! expr    := "fun" binder+ "=>" expr | ("nfun" | "dfun") IDENT+ "=>" expr
//!          | "let" IDENT "=" expr "in" expr | chain
//! chain   := app ("o" app)* | app (">>" app)*  (compositions: `f o g` applies g first)
//! binder  := IDENT | "(" IDENT ":" type ")"
//! app     := postfix+                       (left-associative application)
//! postfix := atom ("<" nat ("," nat)* ">")* (nat application)
//! atom    := IDENT | INT | FLOAT | "(" expr ")" | "(" expr ":" type ")"
//! type    := btype ("->" type)? | "(" IDENT ":" "nat" ")" "->" type
//! btype   := natfactor "." btype | "f32" | "int" | "bool" | "idx" "[" nat "]"
//!          | "vec" "[" type "," nat "]" | "(" type "," type ")" | "(" type ")"
//! nat     := nterm (("+" | "-") nterm)*;  nterm := nfactor (("*" | "/") nfactor)*
//! nfactor := INT | IDENT | "(" nat ")"
//! ```
//! Comments run from `//` to the end of the line.

use super::nat::Nat;
use super::syntax::{
    Def, Expr, ExprKind, Float, Program, RuleDecl, RuleFile, RuleRef, RulesetDecl,
};
use super::types::{arr, fun, nat_fun, pair, vector, Type};
use crate::error::{Error, Result};
use crate::source::{Source, Span};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Int(String),
    Sym(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

const SYMBOLS: &[&str] = &[
    "=>", "->", "::", "(", ")", "[", "]", "<", ">", ",", ":", ".", "=", "+", "-", "*", "/", "?",
];

fn lex(src: &Arc<Source>) -> Result<Vec<Token>> {
    let text = &src.text;
    let bytes = text.as_bytes();
    let mut toks = vec![];
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |k| i + k);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'\'')
            {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Ident(text[start..i].to_string()),
                start,
                end: i,
            });
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Int(text[start..i].to_string()),
                start,
                end: i,
            });
        } else if let Some(sym) = SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            toks.push(Token {
                tok: Tok::Sym(sym),
                start: i,
                end: i + sym.len(),
            });
            i += sym.len();
        } else {
            let ch = text[i..].chars().next().unwrap();
            return Err(Error::at(
                &Span::new(src, i, i + ch.len_utf8()),
                format!("unexpected character `{ch}`"),
            ));
        }
    }
    toks.push(Token {
        tok: Tok::Eof,
        start: bytes.len(),
        end: bytes.len(),
    });
    Ok(toks)
}

const KEYWORDS: &[&str] = &[
    "fun", "nfun", "dfun", "in", "def", "nat", "rule", "ruleset", "param", "where", "notin",
];

/// Composition (`f o g`): a name elsewhere (a size `o`), but never an argument.
const COMPOSE: &str = "o";

/// The parser, shared with the sketch parser (`crate::sketch::parse`).
pub(crate) struct Parser {
    src: Arc<Source>,
    toks: Vec<Token>,
    pub(crate) pos: usize,
    /// Whether `?name` holes are allowed in types and sizes (type sketches): each becomes a
    /// fresh metavariable.
    pub(crate) holes: bool,
    next_hole: u32,
    /// In a rule, `?name` stands for the same type or size wherever it occurs: the hole
    /// numbers given to names (reset for each rule). `None`: every hole is independent.
    named_holes: Option<HashMap<String, u32>>,
    /// How many nested calls of the recursive parsing functions are open (bounded by
    /// [`crate::limits::MAX_NESTING`]).
    depth: usize,
    /// Whether compositions stay composition nodes (in rules) rather than lambdas.
    pub(crate) keep_compositions: bool,
}

impl Parser {
    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    pub(crate) fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    pub(crate) fn span_of(&self, i: usize) -> Span {
        let t = &self.toks[i.min(self.toks.len() - 1)];
        Span::new(&self.src, t.start, t.end)
    }
    pub(crate) fn here(&self) -> Span {
        self.span_of(self.pos)
    }
    /// Span from token `start` to the last consumed token.
    pub(crate) fn since(&self, start: usize) -> Span {
        self.span_of(start)
            .to(&self.span_of(self.pos.saturating_sub(1).max(start)))
    }
    pub(crate) fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    pub(crate) fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(x) if x == k)
    }
    pub(crate) fn eat_sym(&mut self, s: &str) -> bool {
        let yes = self.is_sym(s);
        if yes {
            self.pos += 1;
        }
        yes
    }
    pub(crate) fn describe(&self) -> String {
        match self.peek() {
            Tok::Ident(x) => format!("`{x}`"),
            Tok::Int(x) => format!("`{x}`"),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::Eof => "end of input".into(),
        }
    }
    pub(crate) fn expected<T>(&self, what: &str) -> Result<T> {
        Err(Error::at(
            &self.here(),
            format!("expected {what}, found {}", self.describe()),
        ))
    }
    pub(crate) fn expect_sym(&mut self, s: &str) -> Result<()> {
        if self.eat_sym(s) {
            return Ok(());
        }
        // A bracket never closed: point at the one opened, not at the end of the file.
        let close = [(")", "("), ("]", "["), ("}", "{")];
        if let (Tok::Eof, Some((_, open))) = (self.peek(), close.iter().find(|(c, _)| *c == s)) {
            if let Some(at) = self.unclosed(open, s) {
                return Err(Error::at(
                    &self.span_of(at),
                    format!("this `{open}` is never closed (the input ends first)"),
                ));
            }
        }
        self.expected(&format!("`{s}`"))
    }

    /// The innermost `open` before the current token that no `close` matches.
    fn unclosed(&self, open: &str, close: &str) -> Option<usize> {
        let mut stack = vec![];
        for (i, t) in self.toks[..self.pos].iter().enumerate() {
            match &t.tok {
                Tok::Sym(x) if *x == open => stack.push(i),
                Tok::Sym(x) if *x == close => {
                    stack.pop();
                }
                _ => {}
            }
        }
        stack.pop()
    }
    pub(crate) fn expect_kw(&mut self, k: &str) -> Result<()> {
        if self.is_kw(k) {
            self.pos += 1;
            Ok(())
        } else {
            self.expected(&format!("`{k}`"))
        }
    }
    pub(crate) fn ident(&mut self) -> Result<String> {
        match self.peek().clone() {
            Tok::Ident(x) if !KEYWORDS.contains(&x.as_str()) => {
                self.pos += 1;
                Ok(x)
            }
            _ => self.expected("an identifier"),
        }
    }
    pub(crate) fn int(&mut self) -> Result<i64> {
        match self.peek().clone() {
            Tok::Int(x) => {
                let span = self.here();
                self.pos += 1;
                x.parse()
                    .map_err(|_| Error::at(&span, format!("integer `{x}` is too large")))
            }
            _ => self.expected("an integer"),
        }
    }
    /// Are tokens `i` and `i+1` adjacent (no whitespace between)?
    pub(crate) fn adjacent(&self, i: usize) -> bool {
        self.toks[i].end == self.toks[i + 1].start
    }

    // ---- programs ----

    fn program(&mut self) -> Result<Program> {
        let mut prog = Program::default();
        while *self.peek() != Tok::Eof {
            let start = self.pos;
            self.expect_kw("def")?;
            let name_span = self.here();
            let first = self.ident()?;
            let name = self.hyphenated(first);
            let name_span = self.since(self.pos - 1).to(&name_span);
            if prog.get(&name).is_some() {
                return Err(Error::at(
                    &name_span,
                    format!("`{name}` is already defined"),
                ));
            }
            let ann = if self.eat_sym(":") {
                Some(self.ty()?)
            } else {
                None
            };
            self.expect_sym("=")?;
            let mut expr = self.expr()?;
            expr.check_depth(&name_span)?;
            if let Some((_, at)) = expr.free_uses(&|y| y == name).into_iter().next() {
                return Err(Error::at(
                    &at.unwrap_or(name_span),
                    format!("`{name}` refers to its own definition; a definition may use only earlier ones"),
                ));
            }
            if let Some(t) = ann {
                let span = expr.span.clone();
                expr = Expr {
                    span,
                    ..Expr::new(ExprKind::Annot(Box::new(expr), t))
                };
            }
            prog.defs.push(Def {
                name,
                expr,
                span: self.since(start),
            });
        }
        // One walk per definition: the first later definition it uses (in file order), at
        // that definition's first use.
        let index: HashMap<&str, usize> = prog
            .defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.as_str(), i))
            .collect();
        for (i, def) in prog.defs.iter().enumerate() {
            let is_later = |y: &str| index.get(y).is_some_and(|&j| j > i);
            let uses = def.expr.free_uses(&is_later);
            if let Some((name, at)) = uses.into_iter().min_by_key(|(y, _)| index[y]) {
                let later = &prog.defs[index[name]];
                return Err(Error::at(
                    &at.unwrap_or_else(|| def.span.clone()),
                    format!(
                        "`{}` is defined later (at {}); a definition may use only earlier ones",
                        later.name, later.span
                    ),
                ));
            }
        }
        Ok(prog)
    }

    // ---- rule files ----

    fn rule_file(&mut self) -> Result<RuleFile> {
        let mut file = RuleFile::default();
        while *self.peek() != Tok::Eof {
            let start = self.pos;
            if self.is_kw("param") {
                self.pos += 1;
                let name = self.ident()?;
                self.expect_sym("=")?;
                let at = self.here();
                let value = match self.peek().clone() {
                    Tok::Int(v) => v.parse::<i64>().ok(),
                    _ => None,
                }
                .filter(|v| (1..=crate::limits::MAX_PARAM).contains(v))
                .ok_or_else(|| {
                    Error::at(
                        &at,
                        format!(
                            "expected a size (a whole number from 1 to {})",
                            crate::limits::MAX_PARAM
                        ),
                    )
                })?;
                self.pos += 1;
                file.params.push((name, value));
                continue;
            }
            if self.is_kw("ruleset") {
                self.pos += 1;
                let name = self.rule_name()?;
                self.expect_sym("=")?;
                let mut rules = vec![];
                while matches!(self.peek(), Tok::Ident(x) if !KEYWORDS.contains(&x.as_str())) {
                    let start = self.pos;
                    let mut name = self.rule_name()?;
                    let mut file = None;
                    // `kernel.rules:split-join<4>`: a rule of another file of the folder.
                    let touching = |p: &Self, k: usize| p.adjacent(p.pos - 1 + k);
                    if self.is_sym(".")
                        && matches!(self.peek_at(1), Tok::Ident(x) if x == "rules")
                        && self.is_sym_at(2, ":")
                        && (0..4).all(|k| touching(self, k))
                    {
                        self.pos += 3;
                        file = Some(format!("{name}.rules"));
                        name = self.rule_name()?;
                    }
                    let mut args = vec![];
                    if self.sizes_follow() {
                        loop {
                            args.push(self.nat()?);
                            if !self.eat_sym(",") {
                                break;
                            }
                        }
                        self.expect_sym(">")?;
                    }
                    let span = self.since(start);
                    rules.push(RuleRef {
                        file,
                        name,
                        args,
                        span,
                    });
                }
                file.rulesets.push(RulesetDecl { name, rules });
                continue;
            }
            self.expect_kw("rule")?;
            self.named_holes = Some(HashMap::new());
            let name = self.rule_name()?;
            let mut params: Vec<String> = vec![];
            if self.sizes_follow() {
                loop {
                    let at = self.here();
                    let p = self.ident()?;
                    if params.contains(&p) {
                        return Err(Error::at(&at, format!("parameter `{p}` is named twice")));
                    }
                    params.push(p);
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.expect_sym(">")?;
            }
            self.expect_sym("=")?;
            let lhs = self.expr()?;
            lhs.check_depth(&self.since(start))?;
            self.expect_sym("=>")?;
            let rhs = self.expr()?;
            rhs.check_depth(&self.since(start))?;
            let (mut not_free, mut stencils) = (vec![], vec![]);
            if self.is_kw("where") {
                self.pos += 1;
                loop {
                    let x = self.ident()?;
                    if self.is_kw("stencil") {
                        self.pos += 1;
                        stencils.push(x);
                    } else if self.is_kw("notin") {
                        self.pos += 1;
                        not_free.push((x, self.ident()?));
                    } else {
                        return self.expected("`notin` or `stencil`");
                    }
                    if !self.eat_sym(",") {
                        break;
                    }
                }
            }
            file.rules.push(RuleDecl {
                name,
                params,
                lhs,
                rhs,
                not_free,
                stencils,
                span: self.since(start),
            });
        }
        Ok(file)
    }

    /// Whether `<` follows the last token without a space (a rule's sizes, `split-join<k>`),
    /// and if so, passes it.
    fn sizes_follow(&mut self) -> bool {
        let follows = self.is_sym("<") && self.adjacent(self.pos - 1);
        if follows {
            self.pos += 1;
        }
        follows
    }

    /// A rule name: identifiers joined by `-` (`map-fusion`).
    pub(crate) fn rule_name(&mut self) -> Result<String> {
        let first = self.ident()?;
        Ok(self.hyphenated(first))
    }

    /// A name continued by `-` and a word or number, written without spaces: a rule's name
    /// (`split-join-32`), a definition's (`reorder3d-132`). `first` and its continuations.
    pub(crate) fn hyphenated(&mut self, first: String) -> String {
        let mut name = first;
        while self.is_sym("-")
            && self.adjacent(self.pos - 1)
            && self.adjacent(self.pos)
            && matches!(self.peek_at(1), Tok::Ident(_) | Tok::Int(_))
        {
            name.push('-');
            self.pos += 1;
            // A part may lex as several adjacent tokens: `2d` is `2` then `d`.
            while let (Tok::Ident(part) | Tok::Int(part), true) =
                (self.peek().clone(), self.adjacent(self.pos - 1))
            {
                name += &part;
                self.pos += 1;
            }
        }
        name
    }

    /// Runs one level of a recursive parsing function, failing at a located error past
    /// [`crate::limits::MAX_NESTING`] open levels instead of overflowing the stack.
    pub(crate) fn nested<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if self.depth >= crate::limits::MAX_NESTING {
            return Err(crate::limits::too_deep(&self.here(), what));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    // ---- expressions ----

    fn expr(&mut self) -> Result<Expr> {
        self.nested("the expression", Self::expr_level)
    }

    fn expr_level(&mut self) -> Result<Expr> {
        let start = self.pos;
        if self.is_kw("fun") {
            self.pos += 1;
            let mut binders = vec![];
            while !self.is_sym("=>") {
                let bstart = self.pos;
                if self.eat_sym("(") {
                    let x = self.ident()?;
                    self.expect_sym(":")?;
                    let t = self.ty()?;
                    self.expect_sym(")")?;
                    binders.push((x, Some(t), bstart));
                } else {
                    binders.push((self.ident()?, None, bstart));
                }
            }
            if binders.is_empty() {
                return self.expected("a parameter");
            }
            self.expect_sym("=>")?;
            let mut body = self.expr()?;
            for (x, t, bstart) in binders.into_iter().rev() {
                body = Expr::new(ExprKind::Lam(x, t, Box::new(body)))
                    .with_span(self.since(bstart.min(start)));
            }
            return Ok(body);
        }
        if self.is_kw("nfun") || self.is_kw("dfun") {
            let data = self.is_kw("dfun");
            self.pos += 1;
            let mut names = vec![self.ident()?];
            while !self.is_sym("=>") {
                names.push(self.ident()?);
            }
            self.expect_sym("=>")?;
            let mut body = self.expr()?;
            for n in names.into_iter().rev() {
                let kind = match data {
                    true => ExprKind::DataLam(n, Box::new(body)),
                    false => ExprKind::NatLam(n, Box::new(body)),
                };
                body = Expr::new(kind).with_span(self.since(start));
            }
            return Ok(body);
        }
        if self.is_kw("let")
            && matches!(self.peek_at(1), Tok::Ident(_))
            && matches!(self.peek_at(2), Tok::Sym("="))
        {
            let let_span = self.here();
            self.pos += 1;
            let x = self.ident()?;
            self.expect_sym("=")?;
            let value = self.expr()?;
            self.expect_kw("in")?;
            let body = self.expr()?;
            let span = self.since(start);
            let f = Expr::var("let").with_span(let_span);
            let lam = Expr::lam(&x, body).with_span(span.clone());
            return Ok(Expr::app(Expr::app(f, value).with_span(span.clone()), lam).with_span(span));
        }
        let e = self.application()?;
        self.composition(e, start)
    }

    /// `f x y ...`: left-associative application.
    fn application(&mut self) -> Result<Expr> {
        let start = self.pos;
        let mut e = self.postfix()?;
        while self.starts_atom() {
            let x = self.postfix()?;
            e = Expr::app(e, x).with_span(self.since(start));
        }
        Ok(e)
    }

    /// Whether the next tokens are `>>` (two adjacent `>`).
    fn is_then(&self) -> bool {
        self.is_sym(">") && self.is_sym_at(1, ">") && self.adjacent(self.pos)
    }

    /// A chain of compositions after its first function `first`: `f o g o h` applies `h`
    /// first, `h >> g >> f` too (shine's two forms; one chain uses one of them). In a
    /// program it means `fun x => f (g (h x))`; a rule keeps the compositions
    /// ([`Parser::keep_compositions`]).
    fn composition(&mut self, first: Expr, start: usize) -> Result<Expr> {
        let mut functions = vec![first];
        let mut forward = None;
        loop {
            let then = self.is_then();
            if !(then || self.is_kw(COMPOSE)) {
                break;
            }
            let op = self.here();
            if forward.is_some_and(|f| f != then) {
                return Err(Error::at(
                    &op,
                    "`o` and `>>` in one chain: parenthesise one of them",
                ));
            }
            forward = Some(then);
            self.pos += if then { 2 } else { 1 };
            functions.push(self.application()?);
        }
        if functions.len() == 1 {
            return Ok(functions.pop().expect("one function"));
        }
        if forward == Some(false) {
            functions.reverse();
        }
        let span = self.since(start);
        let mut functions = functions.into_iter();
        let first = functions.next().expect("two functions");
        let chain = functions.fold(first, |f, g| {
            Expr::new(ExprKind::Comp(Box::new(f), Box::new(g))).with_span(span.clone())
        });
        Ok(match self.keep_compositions {
            true => chain,
            false => chain.expand_compositions(),
        })
    }

    fn starts_atom(&self) -> bool {
        match self.peek() {
            Tok::Ident(x) if x == COMPOSE => false,
            Tok::Ident(x) => {
                !KEYWORDS.contains(&x.as_str()) || ["fun", "nfun", "dfun"].contains(&x.as_str())
            }
            Tok::Int(_) => true,
            Tok::Sym("(") => true,
            Tok::Sym("-") => matches!(self.peek_at(1), Tok::Int(_)) && self.adjacent(self.pos),
            _ => false,
        }
    }

    fn postfix(&mut self) -> Result<Expr> {
        let start = self.pos;
        // A lambda in argument position extends as far as possible, as in `map fun x => e`.
        if self.is_kw("fun") || self.is_kw("nfun") || self.is_kw("dfun") {
            return self.expr();
        }
        let mut e = self.atom()?;
        while self.is_sym("<") {
            self.pos += 1;
            loop {
                let n = self.nat()?;
                e = Expr::new(ExprKind::NatApp(Box::new(e), n)).with_span(self.since(start));
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym(">")?;
            e.span = Some(self.since(start));
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr> {
        let start = self.pos;
        match self.peek().clone() {
            Tok::Ident(x) if !KEYWORDS.contains(&x.as_str()) => {
                self.pos += 1;
                let name = self.hyphenated(x);
                Ok(Expr::var(&name).with_span(self.since(start)))
            }
            Tok::Int(_) => self.number(false),
            Tok::Sym("-") if matches!(self.peek_at(1), Tok::Int(_)) && self.adjacent(self.pos) => {
                self.pos += 1;
                self.number(true)
            }
            Tok::Sym("(") => {
                self.pos += 1;
                let e = self.expr()?;
                if self.eat_sym(":") {
                    let t = self.ty()?;
                    self.expect_sym(")")?;
                    return Ok(
                        Expr::new(ExprKind::Annot(Box::new(e), t)).with_span(self.since(start))
                    );
                }
                self.expect_sym(")")?;
                Ok(e)
            }
            _ => self.expected("an expression"),
        }
    }

    /// An integer literal, or an f32 literal `d.d` written without spaces.
    pub(crate) fn number(&mut self, negative: bool) -> Result<Expr> {
        let start = if negative { self.pos - 1 } else { self.pos };
        let is_float = self.is_sym_at(1, ".")
            && matches!(self.peek_at(2), Tok::Int(_))
            && self.adjacent(self.pos)
            && self.adjacent(self.pos + 1);
        let span = if is_float {
            self.span_of(start).to(&self.span_of(self.pos + 2))
        } else {
            self.span_of(start).to(&self.here())
        };
        let text = span.text().to_string();
        self.pos += if is_float { 3 } else { 1 };
        let kind = if is_float {
            let v: f32 = text
                .parse()
                .map_err(|_| Error::at(&span, format!("bad f32 literal `{text}`")))?;
            ExprKind::F32(Float(v))
        } else {
            let v: i64 = text
                .parse()
                .map_err(|_| Error::at(&span, format!("integer `{text}` is too large")))?;
            ExprKind::Int(v)
        };
        Ok(Expr::new(kind).with_span(span))
    }

    fn is_sym_at(&self, k: usize, s: &str) -> bool {
        matches!(self.peek_at(k), Tok::Sym(x) if *x == s)
    }

    /// `?` or `?name` where holes are allowed: a fresh metavariable number.
    fn hole(&mut self) -> Result<Option<u32>> {
        if !self.is_sym("?") {
            return Ok(None);
        }
        if !self.holes {
            return self.expected("a size or a type (holes `?` belong in sketches)");
        }
        self.pos += 1;
        let mut name = None;
        if let Tok::Ident(x) = self.peek().clone() {
            if self.adjacent(self.pos - 1) {
                self.pos += 1;
                name = Some(x);
            }
        }
        if let (Some(names), Some(name)) = (&mut self.named_holes, name) {
            if let Some(i) = names.get(&name) {
                return Ok(Some(*i));
            }
            names.insert(name, self.next_hole);
        }
        self.next_hole += 1;
        Ok(Some(self.next_hole - 1))
    }

    // ---- nats ----

    pub(crate) fn nat(&mut self) -> Result<Nat> {
        let mut n = self.nat_term()?;
        loop {
            if self.eat_sym("+") {
                n = n.add(&self.nat_term()?);
            } else if self.eat_sym("-") {
                n = n.sub(&self.nat_term()?);
            } else {
                return Ok(n);
            }
        }
    }

    fn nat_term(&mut self) -> Result<Nat> {
        let mut n = self.nat_factor()?;
        loop {
            if self.is_sym("*") {
                let span = self.here();
                self.pos += 1;
                n = n.mul(&self.nat_factor()?);
                if n.degree() > crate::limits::MAX_NAT_DEGREE
                    || n.terms().count() > crate::limits::MAX_NAT_TERMS
                {
                    return Err(Error::at(
                        &span,
                        format!(
                            "this size has a degree above {} or more than {} terms (sketchlog's limit)",
                            crate::limits::MAX_NAT_DEGREE,
                            crate::limits::MAX_NAT_TERMS
                        ),
                    ));
                }
            } else if self.is_sym("/") {
                let span = self.here();
                self.pos += 1;
                let d = self.nat_factor()?;
                n = n.div(&d).ok_or_else(|| {
                    Error::at(&span, "sizes can only be divided by non-zero constants")
                })?;
            } else {
                return Ok(n);
            }
        }
    }

    fn nat_factor(&mut self) -> Result<Nat> {
        self.nested("the size", Self::nat_factor_level)
    }

    fn nat_factor_level(&mut self) -> Result<Nat> {
        if let Some(i) = self.hole()? {
            return Ok(Nat::meta(i));
        }
        match self.peek().clone() {
            Tok::Int(_) => Ok(Nat::cst(self.int()?)),
            Tok::Ident(_) => Ok(Nat::var(&self.ident()?)),
            Tok::Sym("(") => {
                self.pos += 1;
                let n = self.nat()?;
                self.expect_sym(")")?;
                Ok(n)
            }
            _ => self.expected("a size"),
        }
    }

    // ---- types ----

    pub(crate) fn ty(&mut self) -> Result<Type> {
        self.nested("the type", Self::ty_level)
    }

    fn ty_level(&mut self) -> Result<Type> {
        if self.is_sym("(")
            && matches!(self.peek_at(1), Tok::Ident(_))
            && self.is_sym_at(2, ":")
            && matches!(self.peek_at(3), Tok::Ident(x) if x == "nat")
        {
            self.pos += 1;
            let name = self.ident()?;
            self.pos += 2;
            self.expect_sym(")")?;
            self.expect_sym("->")?;
            return Ok(nat_fun(self.ty()?.close(&name)));
        }
        let a = self.btype()?;
        if self.eat_sym("->") {
            Ok(fun(a, self.ty()?))
        } else {
            Ok(a)
        }
    }

    fn btype(&mut self) -> Result<Type> {
        self.nested("the type", Self::btype_level)
    }

    fn btype_level(&mut self) -> Result<Type> {
        // Try `size . type` first, backtracking if it is not an array type.
        let save = self.pos;
        match self.nat_factor() {
            Ok(n) if self.eat_sym(".") => return Ok(arr(n, self.btype()?)),
            // A size past a limit is an error whatever follows it.
            Err(e) if e.message.contains("(sketchlog's limit)") => return Err(e),
            _ => {}
        }
        self.pos = save;
        if let Some(i) = self.hole()? {
            return Ok(Type::Meta(i));
        }
        match self.peek().clone() {
            Tok::Ident(x) if x == "f32" => {
                self.pos += 1;
                Ok(Type::F32)
            }
            Tok::Ident(x) if x == "int" => {
                self.pos += 1;
                Ok(Type::Int)
            }
            Tok::Ident(x) if x == "bool" => {
                self.pos += 1;
                Ok(Type::Bool)
            }
            Tok::Ident(x) if x == "idx" => {
                self.pos += 1;
                self.expect_sym("[")?;
                let n = self.nat()?;
                self.expect_sym("]")?;
                Ok(Type::Idx(n))
            }
            // A data type bound by `dfun` (checked by inference).
            Tok::Ident(x)
                if !KEYWORDS.contains(&x.as_str()) && !["vec", "idx"].contains(&x.as_str()) =>
            {
                self.pos += 1;
                Ok(Type::Data(x.as_str().into()))
            }
            Tok::Ident(x) if x == "vec" => {
                self.pos += 1;
                self.expect_sym("[")?;
                let t = self.ty()?;
                self.expect_sym(",")?;
                let n = self.nat()?;
                self.expect_sym("]")?;
                Ok(vector(t, n))
            }
            Tok::Sym("(") => {
                self.pos += 1;
                let a = self.ty()?;
                if self.eat_sym(",") {
                    let b = self.ty()?;
                    self.expect_sym(")")?;
                    Ok(pair(a, b))
                } else {
                    self.expect_sym(")")?;
                    Ok(a)
                }
            }
            _ => self.expected("a type"),
        }
    }
}

pub(crate) fn parser(src: &Arc<Source>) -> Result<Parser> {
    Ok(Parser {
        src: src.clone(),
        toks: lex(src)?,
        pos: 0,
        holes: false,
        next_hole: 0,
        named_holes: None,
        depth: 0,
        keep_compositions: false,
    })
}

pub(crate) fn finish<T>(p: &mut Parser, v: T) -> Result<T> {
    if *p.peek() != Tok::Eof {
        return p.expected("end of input");
    }
    Ok(v)
}

/// Parses a `.rise` file: a sequence of definitions.
pub fn parse_program(src: &Arc<Source>) -> Result<Program> {
    let mut p = parser(src)?;
    let prog = p.program()?;
    finish(&mut p, prog)
}

/// Parses a `.rules` file.
pub fn parse_rule_file(src: &Arc<Source>) -> Result<RuleFile> {
    let mut p = parser(src)?;
    p.holes = true;
    p.keep_compositions = true;
    let f = p.rule_file()?;
    finish(&mut p, f)
}

/// Parses a single expression.
pub fn parse_expr(src: &Arc<Source>) -> Result<Expr> {
    let mut p = parser(src)?;
    let e = p.expr()?;
    finish(&mut p, e)
}

/// Parses a single size.
pub fn parse_nat(src: &Arc<Source>) -> Result<Nat> {
    let mut p = parser(src)?;
    let n = p.nat()?;
    finish(&mut p, n)
}

/// Parses a single type.
pub fn parse_type(src: &Arc<Source>) -> Result<Type> {
    let mut p = parser(src)?;
    let t = p.ty()?;
    finish(&mut p, t)
}
