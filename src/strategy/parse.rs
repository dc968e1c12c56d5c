//! Strategy files (`.elevate`), with located errors.
//!
//! ```text
//! file   := item*
//! item   := "rules" STRING                  (the rules of `FILE.rules[:SET]`, as strategies)
//!         | "def" NAME ("(" param ("," param)* ")")? "=" expr
//! param  := NAME | INT                      (INT: this clause applies to that number only)
//! expr   := seq ("<+" seq)*                 (left choice binds loosest)
//! seq    := at ((";" | ";;") at)*
//! at     := arith ("@" arith)*              (`s @ t`: the traversal t applied to s)
//! arith  := atom (("+" | "-" | "*") atom)*  (on numbers; `-` needs spaces: `d - 1`)
//! atom   := NAME ("(" expr ("," expr)* ")")? | INT | STRING | "(" expr ")"
//! ```
//!
//! A name may contain `-` between letters and digits written without spaces (`split-join-32`),
//! as rule names do, and end in sizes that instantiate a rule (`split-join<lanes>`). Several `def`s of one name are clauses, tried in order: a clause whose
//! numeric parameter differs from the argument does not apply. Paths are relative to the file.

use super::builtins;
use super::{Call, Expr};
use crate::error::{Error, Result};
use crate::files::read_source;
use crate::rise::syntax::RuleDecl;
use crate::rules::Params;
use crate::source::{Source, Span};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// A parameter of a definition's clause.
#[derive(Clone, Debug)]
pub enum Param {
    Name(Rc<str>),
    /// The clause applies only when this argument is this number.
    Num(i64),
}

/// One clause of a definition: `def name(params) = body`.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: Rc<str>,
    pub params: Vec<Param>,
    pub body: Rc<Expr>,
    /// Where its name is written.
    pub span: Span,
    /// The whole clause as written.
    pub text: Span,
}

/// A strategy file: its definitions, and the rules it names.
#[derive(Clone, Debug, Default)]
pub struct StrategyFile {
    pub defs: Vec<Def>,
    pub rules: Vec<RuleDecl>,
    /// The rules with size parameters of its rules files, each with the sizes its file
    /// gives: a strategy names an instance, `split-join<lanes>` ([`crate::rules::params`]).
    pub templates: Vec<(RuleDecl, crate::rules::Params)>,
    /// The directory its file references are relative to.
    pub dir: PathBuf,
    /// The files it was read from: itself and its rules files.
    pub inputs: Vec<PathBuf>,
}

impl StrategyFile {
    /// The instance `NAME<SIZE,..>` of one of its rules with parameters, if `name` is one.
    pub fn instance(&self, name: &str) -> Result<Option<RuleDecl>> {
        let (base, args) = crate::rules::params::parse_reference(name)?;
        if args.is_empty() {
            return Ok(None);
        }
        let Some((rule, params)) = self.templates.iter().find(|(r, _)| r.name == base) else {
            return Ok(None);
        };
        crate::rules::params::instance(rule, &args, params)
            .map(Some)
            .map_err(Error::bad_input)
    }

    /// The clauses of definition `name`, in order.
    pub fn clauses<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Def> + 'a {
        self.defs.iter().filter(move |d| &*d.name == name)
    }

    /// The lines of the definitions `e` calls here, directly or through other definitions
    /// (comments and blank lines aside): how long the strategy is as written.
    pub fn lines_of(&self, e: &Expr) -> usize {
        let mut seen: Vec<&str> = vec![];
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            match e {
                Expr::Call(c) => {
                    if !seen.contains(&&*c.name) && self.clauses(&c.name).next().is_some() {
                        seen.push(&c.name);
                        todo.extend(self.clauses(&c.name).map(|d| &*d.body));
                    }
                    todo.extend(c.args.iter().map(|a| &**a));
                }
                Expr::Seq(a, b)
                | Expr::SeqNormal(a, b)
                | Expr::Choice(a, b)
                | Expr::At(a, b)
                | Expr::Arith(_, a, b) => todo.extend([&**a, &**b]),
                Expr::Num(..) | Expr::Str(..) => {}
            }
        }
        let code = |d: &Def| {
            let lines = d.text.text().lines();
            lines
                .filter(|l| !l.trim().is_empty() && !l.trim().starts_with("//"))
                .count()
        };
        (self.defs.iter())
            .filter(|d| seen.contains(&&*d.name))
            .map(code)
            .sum()
    }
}

/// Reads a `.elevate` file, the rules files it names, and checks every name it uses.
pub fn load(path: &Path, params: &Params) -> Result<StrategyFile> {
    let src = read_source(path)?;
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut file = parse(&src, &dir, params)?;
    file.inputs.insert(0, path.to_path_buf());
    Ok(file)
}

/// Parses strategy text whose file references are relative to `dir`, reading the rules files
/// it names (their rules' sizes from `params`), and checks every name it uses.
pub fn parse(src: &Arc<Source>, dir: &Path, params: &Params) -> Result<StrategyFile> {
    let file = items(src, dir, params)?;
    super::check::check(&file, Some(&*super::prelude::prelude()?))?;
    Ok(file)
}

/// Parses strategy text that names no rules files (the prelude), unchecked.
pub(super) fn parse_defs(src: &Arc<Source>) -> Result<StrategyFile> {
    items(src, Path::new(""), &Params::default())
}

fn items(src: &Arc<Source>, dir: &Path, params: &Params) -> Result<StrategyFile> {
    let mut p = Parser::new(src)?;
    let mut file = StrategyFile {
        dir: dir.to_path_buf(),
        ..Default::default()
    };
    while p.peek() != &Tok::Eof {
        if p.eat_word("rules") {
            let (name, span) = p.string()?;
            let (path, set) = crate::rules::split_spec(&name);
            let path = dir.join(path);
            let rule_file = crate::rules::load_rule_file(&path).map_err(|e| e.or_at(&span))?;
            let rules =
                crate::rules::select(&rule_file, set, params).map_err(|e| e.or_at(&span))?;
            file.rules.extend(rules);
            let params = params.or_defaults(&rule_file.params);
            for r in rule_file.rules.into_iter().filter(|r| !r.params.is_empty()) {
                file.templates.push((r, params.clone()));
            }
            file.inputs.push(path);
        } else if p.eat_word("def") {
            file.defs.push(p.def()?);
        } else {
            return p.expected("`def` or `rules`");
        }
    }
    Ok(file)
}

/// One strategy expression (`--strategy` text on the command line, a step of a guide).
pub fn parse_expr(src: &Arc<Source>) -> Result<Rc<Expr>> {
    let mut p = Parser::new(src)?;
    let e = p.expr()?;
    match p.peek() {
        Tok::Eof => Ok(e),
        _ => p.expected("the end of the strategy"),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Int(i64),
    Str(String),
    Sym(&'static str),
    Eof,
}

const SYMBOLS: &[&str] = &[";;", ";", "<+", "@", "(", ")", ",", "=", "+", "-", "*"];

fn lex(src: &Arc<Source>) -> Result<Vec<(Tok, Span)>> {
    let text = &src.text;
    let bytes = text.as_bytes();
    let mut toks = vec![];
    let mut i = 0;
    let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'';
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let tok = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |k| i + k);
            continue;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len()
                && (name_char(bytes[i])
                    || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(|c| name_char(*c))))
            {
                i += 1;
            }
            let mut name = text[start..i].to_string();
            // An instance of a rule with sizes: `split-join<lanes>`, `strips<16, 4>`.
            if text[i..].starts_with('<') && !text[i..].starts_with("<+") {
                let close = text[i..].find(['>', '\n']).map(|k| i + k);
                let Some(close) = close.filter(|c| bytes[*c] == b'>') else {
                    return Err(Error::at(
                        &Span::new(src, i, i + 1),
                        "expected `>` after the sizes",
                    ));
                };
                name.extend(text[i..=close].chars().filter(|c| !c.is_whitespace()));
                i = close + 1;
            }
            Tok::Name(name)
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let span = Span::new(src, start, i);
            Tok::Int(
                text[start..i]
                    .parse()
                    .map_err(|_| Error::at(&span, "number too large"))?,
            )
        } else if c == b'"' {
            let end = text[i + 1..].find(['"', '\n']).map(|k| i + 1 + k);
            match end {
                Some(end) if bytes[end] == b'"' => {
                    i = end + 1;
                    Tok::Str(text[start + 1..end].to_string())
                }
                _ => {
                    let span = Span::new(src, start, start + 1);
                    return Err(Error::at(&span, "unterminated string"));
                }
            }
        } else if let Some(sym) = SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            i += sym.len();
            Tok::Sym(sym)
        } else {
            let ch = text[i..].chars().next().expect("not at the end");
            let span = Span::new(src, i, i + ch.len_utf8());
            return Err(Error::at(&span, format!("unexpected character `{ch}`")));
        };
        toks.push((tok, Span::new(src, start, i)));
    }
    toks.push((Tok::Eof, Span::new(src, bytes.len(), bytes.len())));
    Ok(toks)
}

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    src: Arc<Source>,
    /// Open nested expressions, bounded by [`crate::limits::MAX_NESTING`].
    depth: usize,
}

impl Parser {
    fn new(src: &Arc<Source>) -> Result<Parser> {
        Ok(Parser {
            toks: lex(src)?,
            pos: 0,
            src: src.clone(),
            depth: 0,
        })
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn here(&self) -> Span {
        self.toks[self.pos].1.clone()
    }

    fn since(&self, start: &Span) -> Span {
        let end = self.toks[self.pos.saturating_sub(1)].1.end.max(start.start);
        Span::new(&self.src, start.start, end)
    }

    fn expected<T>(&self, what: &str) -> Result<T> {
        let found = match self.peek() {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::Eof => "the end of the file".to_string(),
        };
        Err(Error::at(
            &self.here(),
            format!("expected {what}, found {found}"),
        ))
    }

    fn eat(&mut self, sym: &str) -> bool {
        let hit = matches!(self.peek(), Tok::Sym(s) if *s == sym);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, sym: &str) -> Result<()> {
        match self.eat(sym) {
            true => Ok(()),
            false => self.expected(&format!("`{sym}`")),
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let hit = matches!(self.peek(), Tok::Name(n) if n == word);
        self.pos += usize::from(hit);
        hit
    }

    fn name(&mut self) -> Result<(Rc<str>, Span)> {
        match self.peek().clone() {
            Tok::Name(n) if n != "def" && n != "rules" => {
                self.pos += 1;
                Ok((n.into(), self.toks[self.pos - 1].1.clone()))
            }
            _ => self.expected("a name"),
        }
    }

    fn string(&mut self) -> Result<(Rc<str>, Span)> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.pos += 1;
                Ok((s.into(), self.toks[self.pos - 1].1.clone()))
            }
            _ => self.expected("a file name in quotes"),
        }
    }

    fn def(&mut self) -> Result<Def> {
        let (name, span) = self.name()?;
        if builtins::lookup(&name).is_some() {
            return Err(Error::at(
                &span,
                format!("`{name}` is a built-in strategy; choose another name"),
            ));
        }
        let mut params = vec![];
        if self.eat("(") {
            loop {
                params.push(match self.peek().clone() {
                    Tok::Int(n) => {
                        self.pos += 1;
                        Param::Num(n)
                    }
                    _ => Param::Name(self.name()?.0),
                });
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
        }
        self.expect("=")?;
        let body = self.expr()?;
        Ok(Def {
            name,
            params,
            body,
            text: self.since(&span),
            span,
        })
    }

    /// One more open level (an expression in parentheses or arguments, or an operator of a
    /// chain, which nests as deep as it is long), failing at a located error past
    /// [`crate::limits::MAX_NESTING`] open levels instead of growing a term too deep to walk.
    fn open(&mut self) -> Result<()> {
        if self.depth >= crate::limits::MAX_NESTING {
            let limit = crate::limits::MAX_NESTING;
            let message = format!("strategy nested more than {limit} levels deep");
            return Err(Error::at(&self.here(), message));
        }
        self.depth += 1;
        Ok(())
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.open()?;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// One more operator in a chain, `n` of them so far (closed by the chain's end).
    fn chained(&mut self, n: &mut usize) -> Result<()> {
        *n += 1;
        self.open()
    }

    fn expr(&mut self) -> Result<Rc<Expr>> {
        self.nested(|p| {
            let (mut e, mut n) = (p.seq()?, 0);
            while p.eat("<+") {
                p.chained(&mut n)?;
                e = Rc::new(Expr::Choice(e, p.seq()?));
            }
            p.depth -= n;
            Ok(e)
        })
    }

    fn seq(&mut self) -> Result<Rc<Expr>> {
        let (mut e, mut n) = (self.at()?, 0);
        loop {
            if matches!(self.peek(), Tok::Sym(";" | ";;")) {
                self.chained(&mut n)?;
            }
            if self.eat(";;") {
                e = Rc::new(Expr::SeqNormal(e, self.at()?));
            } else if self.eat(";") {
                e = Rc::new(Expr::Seq(e, self.at()?));
            } else {
                self.depth -= n;
                return Ok(e);
            }
        }
    }

    fn at(&mut self) -> Result<Rc<Expr>> {
        let (mut e, mut n) = (self.arith()?, 0);
        while self.eat("@") {
            self.chained(&mut n)?;
            let t = self.arith()?;
            if !matches!(&*t, Expr::Call(_)) {
                return Err(Error::at(
                    t.span(),
                    "the right of `@` is a traversal: a name, or a call missing its last argument",
                ));
            }
            e = Rc::new(Expr::At(e, t));
        }
        self.depth -= n;
        Ok(e)
    }

    fn arith(&mut self) -> Result<Rc<Expr>> {
        let (mut e, mut n) = (self.atom()?, 0);
        loop {
            let op = match self.peek() {
                Tok::Sym("+") => '+',
                Tok::Sym("-") => '-',
                Tok::Sym("*") => '*',
                _ => {
                    self.depth -= n;
                    return Ok(e);
                }
            };
            self.chained(&mut n)?;
            self.pos += 1;
            e = Rc::new(Expr::Arith(op, e, self.atom()?));
        }
    }

    fn atom(&mut self) -> Result<Rc<Expr>> {
        let span = self.here();
        match self.peek().clone() {
            Tok::Int(n) => {
                self.pos += 1;
                Ok(Rc::new(Expr::Num(n, span)))
            }
            Tok::Str(_) => {
                let (s, span) = self.string()?;
                Ok(Rc::new(Expr::Str(s, span)))
            }
            Tok::Sym("(") => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Name(_) => {
                let (name, _) = self.name()?;
                let mut args = vec![];
                if self.eat("(") {
                    loop {
                        args.push(self.expr()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(")")?;
                }
                Ok(Rc::new(Expr::Call(Call {
                    name,
                    args,
                    span: self.since(&span),
                })))
            }
            _ => self.expected("a strategy"),
        }
    }
}
