//! Running a strategy on a term.
//!
//! Counting follows Elevate: a *rewrite step* is every success a strategy produces (a rule, a
//! predicate, `id`, and each one-level traversal that rebuilds a node around a rewritten
//! child); `;`, `<+` and calls of definitions pass their parts' results on without adding
//! one. A *rule application* is a success of a named rule or a lambda-calculus step.

use super::builtins::{self, Op};
use super::parse::{Def, Param, StrategyFile};
use super::settings::{Applied, Counts, Ending, Failure, Outcome, Settings};
use super::{Call, Expr};
use crate::error::{Error, ErrorKind, Result};
use crate::rise::term::Term;
use crate::rules::TermRule;
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;
use std::time::Instant;

/// Runs `strategy` (written in, or for, `file`) on `term`.
pub fn run(
    file: &StrategyFile,
    strategy: &Rc<Expr>,
    term: &Rc<Term>,
    settings: &Settings,
) -> Result<Outcome> {
    let prelude = super::prelude::prelude()?;
    let mut m = Machine {
        files: [file, &*prelude],
        settings,
        resolved: HashMap::default(),
        counts: Counts::default(),
        started: Instant::now(),
        path: vec![],
        within: vec![],
        failure: None,
        trace: vec![],
    };
    let env = Env::default();
    let ending = match m.apply(strategy, &env, term) {
        Ok(Some(t)) => Ending::Success(t),
        Ok(None) => Ending::Failure(Box::new(m.failure.take().map_or_else(
            || Failure {
                strategy: strategy.to_string(),
                span: strategy.span().clone(),
                within: vec![],
                at: vec![],
                term: term.clone(),
            },
            |f| f.report(),
        ))),
        Err(e) => match e.kind {
            ErrorKind::Limit(name) => Ending::Stopped(name),
            _ => return Err(e),
        },
    };
    Ok(Outcome {
        ending,
        counts: m.counts,
        seconds: m.started.elapsed().as_secs_f64(),
        trace: m.trace,
    })
}

/// A value a definition's parameter holds.
#[derive(Clone, Debug)]
pub(super) enum Value {
    Num(i64),
    File(Rc<str>, Span),
    Strategy(Rc<Expr>, Env),
}

/// The parameters in scope, and which file's names the expression sees.
#[derive(Clone, Debug, Default)]
pub(super) struct Env {
    params: Rc<Vec<(Rc<str>, Value)>>,
    /// In the prelude: only the prelude's names (and built-ins) are seen.
    pub(super) prelude: bool,
}

impl Env {
    fn param(&self, name: &str) -> Option<&Value> {
        self.params
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }
}

/// The failure recorded last, cheaply: the failing expression, where, and the definitions
/// around it.
struct LastFailure {
    expr: Rc<Expr>,
    at: Vec<usize>,
    within: Vec<Rc<str>>,
    term: Rc<Term>,
}

impl LastFailure {
    fn report(self) -> Failure {
        Failure {
            strategy: self.expr.to_string(),
            span: self.expr.span().clone(),
            within: self.within,
            at: self.at,
            term: self.term,
        }
    }
}

pub(super) type Step = Result<Option<Rc<Term>>>;

/// What a name in a strategy names.
#[derive(Clone)]
enum Target {
    Builtin(Op),
    /// A definition of the user's file (0) or the prelude (1).
    Def(usize),
    Rule(Rc<TermRule>),
}

pub(super) struct Machine<'a> {
    /// The user's file, then the prelude.
    pub(super) files: [&'a StrategyFile; 2],
    pub(super) settings: &'a Settings,
    /// What each name names, by whether it is seen from the prelude.
    resolved: HashMap<(Rc<str>, bool), Option<Target>>,
    pub(super) counts: Counts,
    pub(super) started: Instant,
    /// The position being rewritten: child indices from the root.
    pub(super) path: Vec<usize>,
    /// The definitions being run, outermost first.
    within: Vec<Rc<str>>,
    failure: Option<LastFailure>,
    trace: Vec<Applied>,
}

impl Machine<'_> {
    /// A success: counted, and the limits checked now and then.
    pub(super) fn success(&mut self, t: Rc<Term>) -> Step {
        self.counts.steps += 1;
        if self.counts.steps >= self.settings.max_steps {
            return Err(limit("steps"));
        }
        if self.counts.steps.is_multiple_of(4096) {
            if self.started.elapsed() > self.settings.time {
                return Err(limit("time"));
            }
            if let Some(mb) = self.settings.memory_mb {
                if crate::egraph::saturate::resident_mb(false) > mb as f64 {
                    return Err(limit("memory"));
                }
            }
        }
        Ok(Some(t))
    }

    /// A failure of `expr` on `t`, recorded (the last recorded is the one reported).
    pub(super) fn failed(&mut self, expr: &Rc<Expr>, t: &Rc<Term>) -> Step {
        match &mut self.failure {
            Some(f) => {
                f.expr = expr.clone();
                f.at.clone_from(&self.path);
                f.within.clone_from(&self.within);
                f.term = t.clone();
            }
            None => {
                self.failure = Some(LastFailure {
                    expr: expr.clone(),
                    at: self.path.clone(),
                    within: self.within.clone(),
                    term: t.clone(),
                })
            }
        }
        Ok(None)
    }

    pub(super) fn apply(&mut self, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || self.apply_here(s, env, t))
    }

    fn apply_here(&mut self, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        match &**s {
            Expr::Seq(a, b) => match self.apply(a, env, t)? {
                Some(u) => self.apply(b, env, &u),
                None => Ok(None),
            },
            Expr::SeqNormal(a, b) => {
                let Some(u) = self.apply(a, env, t)? else {
                    return Ok(None);
                };
                let dfnf = Call {
                    name: "DFNF".into(),
                    args: vec![],
                    span: s.span().clone(),
                };
                let prelude = Env {
                    prelude: true,
                    ..Env::default()
                };
                match self.call(s, &dfnf, &[], &prelude, &u)? {
                    Some(v) => self.apply(b, env, &v),
                    None => Ok(None),
                }
            }
            // A failed choice fails as its right side did (as in Elevate).
            Expr::Choice(a, b) => match self.apply(a, env, t)? {
                Some(u) => Ok(Some(u)),
                None => self.apply(b, env, t),
            },
            Expr::At(inner, traversal) => {
                let Expr::Call(c) = &**traversal else {
                    return Err(Error::at(traversal.span(), "not a traversal"));
                };
                let mut args = c.args.clone();
                args.push(inner.clone());
                self.call(s, c, &args, env, t)
            }
            Expr::Call(c) => self.call(s, c, &c.args, env, t),
            Expr::Num(..) | Expr::Arith(..) | Expr::Str(..) => {
                Err(Error::at(s.span(), format!("`{s}` is not a strategy")))
            }
        }
    }

    /// Calls `c`'s name with `args` (the call as written is `site`).
    fn call(
        &mut self,
        site: &Rc<Expr>,
        c: &Call,
        args: &[Rc<Expr>],
        env: &Env,
        t: &Rc<Term>,
    ) -> Step {
        if args.is_empty() {
            match env.param(&c.name) {
                Some(Value::Strategy(e, inner)) => {
                    let (e, inner) = (e.clone(), inner.clone());
                    return self.apply(&e, &inner, t);
                }
                Some(_) => {
                    return Err(Error::at(
                        &c.span,
                        format!("`{}` is a number or file here, not a strategy", c.name),
                    ))
                }
                None => {}
            }
        }
        match self.resolve(&c.name, env.prelude)? {
            Some(Target::Builtin(op)) => self.builtin(site, op, c, args, env, t),
            Some(Target::Def(k)) => {
                let file = self.files[k];
                let values = args
                    .iter()
                    .map(|a| self.value(a, env))
                    .collect::<Result<Vec<_>>>()?;
                self.definition(file, c, values, k == 1, t)
            }
            Some(Target::Rule(rule)) => match rule.rewrite(t) {
                Some(u) => self.applied(&c.name, u),
                None => self.failed(site, t),
            },
            None => Err(Error::at(
                &c.span,
                format!("no strategy named `{}`", c.name),
            )),
        }
    }

    /// What `name` names, seen from the user's file or (`prelude`) from the prelude: a
    /// built-in, a definition of the first file that has one, or a rule (compiled once).
    fn resolve(&mut self, name: &Rc<str>, prelude: bool) -> Result<Option<Target>> {
        let key = (name.clone(), prelude);
        if let Some(t) = self.resolved.get(&key) {
            return Ok(t.clone());
        }
        let files = self.files;
        let mut target = builtins::lookup(name).map(|b| Target::Builtin(b.op));
        for (k, file) in files.iter().enumerate().skip(usize::from(prelude)) {
            if target.is_some() {
                break;
            }
            if file.clauses(name).next().is_some() {
                target = Some(Target::Def(k));
            } else if let Some(rule) = file.rules.iter().find(|r| *r.name == **name) {
                target = Some(Target::Rule(Rc::new(TermRule::new(rule)?)));
            } else if let Some(rule) = file.instance(name)? {
                target = Some(Target::Rule(Rc::new(TermRule::new(&rule)?)));
            }
        }
        self.resolved.insert(key, target.clone());
        Ok(target)
    }

    /// A rule application: counted, and traced when asked.
    pub(super) fn applied(&mut self, rule: &Rc<str>, u: Rc<Term>) -> Step {
        self.counts.rules += 1;
        if self.settings.trace {
            self.trace.push(Applied {
                rule: rule.clone(),
                at: self.path.clone(),
                result: u.clone(),
            });
        }
        self.success(u)
    }

    pub(super) fn value(&mut self, e: &Rc<Expr>, env: &Env) -> Result<Value> {
        Ok(match &**e {
            Expr::Num(n, _) => Value::Num(*n),
            Expr::Str(s, span) => Value::File(s.clone(), span.clone()),
            Expr::Arith(..) => Value::Num(self.number(e, env)?),
            Expr::Call(c) if c.args.is_empty() && env.param(&c.name).is_some() => {
                env.param(&c.name).expect("present").clone()
            }
            _ => Value::Strategy(e.clone(), env.clone()),
        })
    }

    pub(super) fn number(&mut self, e: &Rc<Expr>, env: &Env) -> Result<i64> {
        let Expr::Arith(op, a, b) = &**e else {
            return match self.value(e, env)? {
                Value::Num(n) => Ok(n),
                _ => Err(Error::at(e.span(), format!("`{e}` is not a number"))),
            };
        };
        let (a, b) = (self.number(a, env)?, self.number(b, env)?);
        match op {
            '+' => a.checked_add(b),
            '-' => a.checked_sub(b),
            _ => a.checked_mul(b),
        }
        .ok_or_else(|| Error::at(e.span(), "number out of range"))
    }

    fn definition(
        &mut self,
        file: &StrategyFile,
        c: &Call,
        values: Vec<Value>,
        prelude: bool,
        t: &Rc<Term>,
    ) -> Step {
        let clause = file.clauses(&c.name).find(|d| applies(d, &values));
        let Some(def) = clause else {
            return Err(Error::at(
                &c.span,
                format!(
                    "no clause of `{}` takes {} such argument{}",
                    c.name,
                    values.len(),
                    if values.len() == 1 { "" } else { "s" }
                ),
            ));
        };
        if self.within.len() >= self.settings.max_depth {
            return Err(limit("depth"));
        }
        let params = def
            .params
            .iter()
            .zip(values)
            .filter_map(|(p, v)| match p {
                Param::Name(n) => Some((n.clone(), v)),
                Param::Num(_) => None,
            })
            .collect();
        let env = Env {
            params: Rc::new(params),
            prelude,
        };
        let body = def.body.clone();
        self.within.push(c.name.clone());
        let r = self.apply(&body, &env, t);
        self.within.pop();
        r
    }

    pub(super) fn strategy_arg(
        &mut self,
        args: &[Rc<Expr>],
        k: usize,
        env: &Env,
    ) -> Result<(Rc<Expr>, Env)> {
        match self.value(&args[k], env)? {
            Value::Strategy(e, env) => Ok((e, env)),
            _ => Err(Error::at(
                args[k].span(),
                format!("`{}` is not a strategy", args[k]),
            )),
        }
    }
}

/// Does clause `d` take these arguments?
fn applies(d: &Def, values: &[Value]) -> bool {
    d.params.len() == values.len()
        && d.params.iter().zip(values).all(|(p, v)| match (p, v) {
            (Param::Num(n), Value::Num(m)) => n == m,
            (Param::Num(_), _) => false,
            (Param::Name(_), _) => true,
        })
}

pub(super) fn limit(name: &'static str) -> Error {
    Error {
        kind: ErrorKind::Limit(name),
        ..Error::check_failed(format!("the {name} limit stopped the strategy"))
    }
}
