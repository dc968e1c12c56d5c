//! Running a strategy on a term.
//!
//! Counting follows Elevate: a *rewrite step* is every success a strategy produces (a rule, a
//! predicate, `id`, and each one-level traversal that rebuilds a node around a rewritten
//! child); `;`, `<+` and calls of definitions pass their parts' results on without adding
//! one. A *rule application* is a success of a named rule or a lambda-calculus step.

use super::builtins::{self, Op};
use super::parse::{Def, Param, StrategyFile};
use super::traverse::{child, visit_order, with_child, with_children};
use super::{Call, Expr};
use crate::egraph::saturate::Limits;
use crate::error::{Error, ErrorKind, Result};
use crate::rise::lambda;
use crate::rise::primitives::Prim;
use crate::rise::term::{Node, Term};
use crate::rise::types::{fun, Type};
use crate::rules::TermRule;
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The order in which `one` (and every traversal built on it) visits an application's
/// function and argument. Elevate's matrix multiplication strategies were written for
/// argument first, its Harris strategies for function first.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    #[default]
    ArgumentFirst,
    FunctionFirst,
}

/// How a strategy runs.
#[derive(Clone, Debug)]
pub struct Settings {
    pub order: Order,
    /// Rewrite steps before the run stops (a strategy that does not terminate).
    pub max_steps: u64,
    pub time: Duration,
    /// Resident memory of the process, in MB.
    pub memory_mb: Option<u64>,
    /// Definitions called inside one another before the run stops (unbounded recursion).
    pub max_depth: usize,
    /// Record every rule application with its position.
    pub trace: bool,
    /// The limits of each guided search (`saturate`), within the run's own time.
    pub search: Limits,
    /// What runs guided searches; a run without one fails at `saturate` and `search`.
    pub searcher: Option<Rc<dyn Searcher>>,
    /// The program's size parameters, outermost first, which sketches name.
    pub sizes: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            order: Order::default(),
            max_steps: 100_000_000,
            time: Duration::from_secs(60),
            memory_mb: None,
            max_depth: 10_000,
            trace: false,
            search: Limits::default(),
            searcher: None,
            sizes: vec![],
        }
    }
}

/// What a run counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Successes, as Elevate counts rewrite steps.
    pub steps: u64,
    /// Successes of named rules and lambda-calculus steps.
    pub rules: u64,
    /// Guided searches run (`saturate`).
    pub searches: u64,
    /// The e-nodes its guided searches grew, in total.
    pub enodes: usize,
}

/// Where a strategy failed: the part of it that failed, and the term it was applied to.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The failing part as written (a sequence passes on its failing element's failure, a
    /// definition its body's).
    pub strategy: String,
    /// Where it was written.
    pub span: Span,
    /// The definitions it was inside, outermost first.
    pub within: Vec<Rc<str>>,
    /// The term's position in the input: child indices from the root.
    pub at: Vec<usize>,
    pub term: Rc<Term>,
}

/// One rule application, when traced.
#[derive(Clone, Debug)]
pub struct Applied {
    pub rule: Rc<str>,
    /// Child indices from the root.
    pub at: Vec<usize>,
    pub result: Rc<Term>,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub enum Ending {
    Success(Rc<Term>),
    Failure(Box<Failure>),
    /// A limit stopped it (its name).
    Stopped(&'static str),
}

/// A run: how it ended, what it counted, and how long it took.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub ending: Ending,
    pub counts: Counts,
    pub seconds: f64,
    pub trace: Vec<Applied>,
}

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
enum Value {
    Num(i64),
    File(Rc<str>, Span),
    Strategy(Rc<Expr>, Env),
}

/// The parameters in scope, and which file's names the expression sees.
#[derive(Clone, Debug, Default)]
struct Env {
    params: Rc<Vec<(Rc<str>, Value)>>,
    /// In the prelude: only the prelude's names (and built-ins) are seen.
    prelude: bool,
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

type Step = Result<Option<Rc<Term>>>;

/// What a name in a strategy names.
#[derive(Clone)]
enum Target {
    Builtin(Op),
    /// A definition of the user's file (0) or the prelude (1).
    Def(usize),
    Rule(Rc<TermRule>),
}

struct Machine<'a> {
    /// The user's file, then the prelude.
    files: [&'a StrategyFile; 2],
    settings: &'a Settings,
    /// What each name names, by whether it is seen from the prelude.
    resolved: HashMap<(Rc<str>, bool), Option<Target>>,
    counts: Counts,
    started: Instant,
    /// The position being rewritten: child indices from the root.
    path: Vec<usize>,
    /// The definitions being run, outermost first.
    within: Vec<Rc<str>>,
    failure: Option<LastFailure>,
    trace: Vec<Applied>,
}

impl Machine<'_> {
    /// A success: counted, and the limits checked now and then.
    fn success(&mut self, t: Rc<Term>) -> Step {
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
    fn failed(&mut self, expr: &Rc<Expr>, t: &Rc<Term>) -> Step {
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

    fn apply(&mut self, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
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
            }
        }
        self.resolved.insert(key, target.clone());
        Ok(target)
    }

    /// A rule application: counted, and traced when asked.
    fn applied(&mut self, rule: &Rc<str>, u: Rc<Term>) -> Step {
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

    fn value(&mut self, e: &Rc<Expr>, env: &Env) -> Result<Value> {
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

    fn number(&mut self, e: &Rc<Expr>, env: &Env) -> Result<i64> {
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

    fn strategy_arg(&mut self, args: &[Rc<Expr>], k: usize, env: &Env) -> Result<(Rc<Expr>, Env)> {
        match self.value(&args[k], env)? {
            Value::Strategy(e, env) => Ok((e, env)),
            _ => Err(Error::at(
                args[k].span(),
                format!("`{}` is not a strategy", args[k]),
            )),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn builtin(
        &mut self,
        site: &Rc<Expr>,
        op: Op,
        c: &Call,
        args: &[Rc<Expr>],
        env: &Env,
        t: &Rc<Term>,
    ) -> Step {
        let b = builtins::BUILTINS
            .iter()
            .find(|b| b.op == op)
            .expect("a built-in");
        if args.len() != b.args.len() {
            return Err(Error::at(
                &c.span,
                format!(
                    "`{}` takes {} argument(s), given {}",
                    b.name,
                    b.args.len(),
                    args.len()
                ),
            ));
        }
        let r = match op {
            Op::Id => return self.success(t.clone()),
            Op::Fail => None,
            Op::Try => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                match self.apply(&s, &e, t)? {
                    Some(u) => Some(u),
                    None => return self.success(t.clone()),
                }
            }
            Op::Repeat => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                return self.repeat(&s, &e, t);
            }
            Op::RepeatNTimes => {
                let n = self.number(&args[0], env)?;
                let (s, e) = self.strategy_arg(args, 1, env)?;
                let mut u = t.clone();
                for _ in 0..n.max(0) {
                    match self.apply(&s, &e, &u)? {
                        Some(v) => u = v,
                        None => return Ok(None),
                    }
                }
                return self.success(u);
            }
            Op::Not => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                match self.apply(&s, &e, t)? {
                    Some(_) => None,
                    None => return self.success(t.clone()),
                }
            }
            Op::One | Op::All | Op::Some => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let mut f = |m: &mut Self, c: &Rc<Term>| m.apply(&s, &e, c);
                match op {
                    Op::One => self.one(t, &mut f)?,
                    Op::All => self.all(t, &mut f)?,
                    _ => self.some(t, &mut f)?,
                }
            }
            Op::TopDown
            | Op::BottomUp
            | Op::AllTopdown
            | Op::AllBottomup
            | Op::TryAll
            | Op::Alltd
            | Op::Sometd
            | Op::Somebu => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                // Counted inside; fails as a whole where `s` applies nowhere (as Elevate's
                // `one` at the root does).
                match self.whole(op, &s, &e, t)? {
                    Some(u) => return Ok(Some(u)),
                    None => None,
                }
            }
            Op::Normalize => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let top_down = |m: &mut Self, u: &Rc<Term>| m.whole(Op::TopDown, &s, &e, u);
                return self.repeat_with(t, top_down);
            }
            Op::Body | Op::Function | Op::Argument => {
                let (s, e) = self.strategy_arg(args, 0, env)?;
                let i = match (op, &t.node) {
                    (Op::Body, Node::Lam(_) | Node::NatLam(_)) => Some(0),
                    (Op::Function, Node::App(..)) => Some(0),
                    (Op::Argument, Node::App(..)) => Some(1),
                    _ => None,
                };
                match i {
                    // The child's failure is the traversal's (as in Elevate).
                    Some(i) => return self.passing(t, i, &s, &e),
                    None => None,
                }
            }
            Op::ArgumentOf => {
                let p = prim_arg(&args[0])?;
                let (s, e) = self.strategy_arg(args, 1, env)?;
                match &t.node {
                    Node::App(f, _) if head_is(f, p) => return self.passing(t, 1, &s, &e),
                    _ => None,
                }
            }
            Op::Is | Op::IsPrim(_) => {
                let p = match op {
                    Op::IsPrim(p) => p,
                    _ => prim_arg(&args[0])?,
                };
                head_is(t, p).then(|| t.clone())
            }
            Op::IsLambda => matches!(t.node, Node::Lam(_)).then(|| t.clone()),
            Op::IsDepLambda => matches!(t.node, Node::NatLam(_)).then(|| t.clone()),
            Op::IsComputation => is_computation(t).then(|| t.clone()),
            Op::StoreInMemory => {
                let (what, we) = self.strategy_arg(args, 0, env)?;
                let (how, he) = self.strategy_arg(args, 1, env)?;
                self.store_in_memory((&what, &we), (&how, &he), t)?
            }
            Op::IsApply => matches!(t.node, Node::App(..)).then(|| t.clone()),
            Op::IsIdentifier => matches!(t.node, Node::Var(_)).then(|| t.clone()),
            Op::IsApp | Op::IsApplied => {
                let (fs, fe) = self.strategy_arg(args, 0, env)?;
                match &t.node {
                    Node::App(f, x) => {
                        let ok = self.apply(&fs, &fe, f)?.is_some()
                            && match op {
                                Op::IsApp => {
                                    let (xs, xe) = self.strategy_arg(args, 1, env)?;
                                    self.apply(&xs, &xe, x)?.is_some()
                                }
                                _ => self.success(x.clone())?.is_some(),
                            };
                        ok.then(|| t.clone())
                    }
                    _ => None,
                }
            }
            Op::Beta | Op::Eta | Op::EtaAbstraction => {
                let u = match op {
                    Op::Beta => lambda::beta(t),
                    Op::Eta => lambda::eta_reduce(t),
                    _ => lambda::eta_abstract(t),
                };
                return match u {
                    Some(u) => self.applied(&c.name, u),
                    None => self.failed(site, t),
                };
            }
            Op::Saturate | Op::Search => self.saturate(op, args, env, t)?,
        };
        match r {
            Some(u) => self.success(u),
            None => self.failed(site, t),
        }
    }

    /// `repeat(s)`: `s` until it fails, then `id`.
    fn repeat(&mut self, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        self.repeat_with(t, |m, u| m.apply(s, env, u))
    }

    fn repeat_with(
        &mut self,
        t: &Rc<Term>,
        mut f: impl FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Step {
        let mut u = t.clone();
        while let Some(v) = f(self, &u)? {
            u = v;
        }
        self.success(u)
    }

    /// `s` on child `i` of `t`, and `t` rebuilt around its result (a success); the child's
    /// failure is passed on.
    fn passing(&mut self, t: &Rc<Term>, i: usize, s: &Rc<Expr>, env: &Env) -> Step {
        match self.at_child(t, i, &mut |m, c| m.apply(s, env, c))? {
            Some(u) => self.success(u),
            None => Ok(None),
        }
    }

    /// `f` on child `i` of `t`, and `t` rebuilt around its result.
    fn at_child(
        &mut self,
        t: &Rc<Term>,
        i: usize,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        self.path.push(i);
        let r = f(self, child(t, i));
        self.path.pop();
        Ok(r?.map(|c| with_child(t, i, c)))
    }

    fn one(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        for &i in visit_order(t, self.settings.order) {
            if let Some(u) = self.at_child(t, i, f)? {
                return Ok(Some(u));
            }
        }
        Ok(None)
    }

    fn all(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        let mut kids = vec![];
        for (i, c) in t.node.children().into_iter().enumerate() {
            self.path.push(i);
            let r = f(self, c);
            self.path.pop();
            match r? {
                Some(u) => kids.push(u),
                None => return Ok(None),
            }
        }
        Ok(Some(with_children(t, kids)))
    }

    fn some(
        &mut self,
        t: &Rc<Term>,
        f: &mut dyn FnMut(&mut Self, &Rc<Term>) -> Step,
    ) -> Result<Option<Rc<Term>>> {
        let (mut kids, mut any) = (vec![], false);
        for (i, c) in t.node.children().into_iter().enumerate() {
            self.path.push(i);
            let r = f(self, c);
            self.path.pop();
            match r? {
                Some(u) => {
                    any = true;
                    kids.push(u)
                }
                None => kids.push(c.clone()),
            }
        }
        Ok(any.then(|| with_children(t, kids)))
    }

    /// A whole-term traversal of `s` (a success of its own is counted by the caller, as the
    /// traversal's last one-level step or `s` itself).
    fn whole(&mut self, op: Op, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        stacker::maybe_grow(256 * 1024, 8 * 1024 * 1024, || {
            self.whole_here(op, s, env, t)
        })
    }

    fn whole_here(&mut self, op: Op, s: &Rc<Expr>, env: &Env, t: &Rc<Term>) -> Step {
        let mut rec = |m: &mut Self, c: &Rc<Term>| m.whole(op, s, env, c);
        let counted = |m: &mut Self, r: Option<Rc<Term>>| match r {
            Some(u) => m.success(u),
            None => Ok(None),
        };
        match op {
            Op::TopDown | Op::Alltd | Op::Sometd => {
                if let Some(u) = self.apply(s, env, t)? {
                    return Ok(Some(u));
                }
                let r = match op {
                    Op::TopDown => self.one(t, &mut rec)?,
                    Op::Alltd => self.all(t, &mut rec)?,
                    _ => self.some(t, &mut rec)?,
                };
                counted(self, r)
            }
            Op::BottomUp | Op::Somebu => {
                let r = match op {
                    Op::BottomUp => self.one(t, &mut rec)?,
                    _ => self.some(t, &mut rec)?,
                };
                match r {
                    Some(u) => self.success(u),
                    None => self.apply(s, env, t),
                }
            }
            Op::AllTopdown => match self.apply(s, env, t)? {
                Some(u) => {
                    let r = self.all(&u, &mut rec)?;
                    counted(self, r)
                }
                None => Ok(None),
            },
            Op::AllBottomup => match self.all(t, &mut rec)? {
                Some(u) => {
                    let u = self.success(u)?.expect("a success");
                    self.apply(s, env, &u)
                }
                None => Ok(None),
            },
            Op::TryAll => {
                let u = self.all(t, &mut rec)?.expect("tryAll never fails");
                let u = self.success(u)?.expect("a success");
                match self.apply(s, env, &u)? {
                    Some(v) => Ok(Some(v)),
                    None => self.success(u),
                }
            }
            _ => unreachable!("not a whole-term traversal"),
        }
    }

    /// `saturate("F.rules[:SET]", "F.sketch:NAME" | "F.rise:NAME")` or
    /// `search("F.guide:SKETCH")`: a guided search from `t`, by the run's [`Searcher`].
    fn saturate(
        &mut self,
        op: Op,
        args: &[Rc<Expr>],
        env: &Env,
        t: &Rc<Term>,
    ) -> Result<Option<Rc<Term>>> {
        let mut files = vec![];
        for a in args {
            match self.value(a, env)? {
                Value::File(s, span) => files.push((s, span)),
                _ => return Err(Error::at(a.span(), "expected a file name in quotes")),
            }
        }
        let Some(searcher) = self.settings.searcher.clone() else {
            let at = &files[0].1;
            return Err(Error::at(at, "this run of strategies has no guided search"));
        };
        let time = self.settings.time.saturating_sub(self.started.elapsed());
        let call = SearchCall {
            guide_step: op == Op::Search,
            dir: &self.files[usize::from(env.prelude)].dir,
            files: &files,
            sizes: &self.settings.sizes,
            limits: &self.settings.search,
            time,
        };
        let found = searcher.search(&call, t)?;
        self.counts.searches += 1;
        self.counts.enodes += found.enodes;
        if found.out_of_time {
            return Err(limit("time"));
        }
        Ok(found.term.filter(|u| u.ty == t.ty))
    }
}

/// A guided search a strategy names: `search("F.guide:SKETCH")` (`guide_step`) or
/// `saturate("F.rules[:SET]", "F.sketch:NAME" | "F.rise:NAME")`.
pub struct SearchCall<'a> {
    pub guide_step: bool,
    /// The directory the files are relative to.
    pub dir: &'a std::path::Path,
    /// The files named, each where it is written.
    pub files: &'a [(Rc<str>, Span)],
    /// The program's size parameters, which sketches name.
    pub sizes: &'a [String],
    /// `saturate`'s limits.
    pub limits: &'a Limits,
    /// What is left of the run's time.
    pub time: Duration,
}

/// What a guided search found.
pub struct Found {
    /// The extracted term; `None` when the target was not found.
    pub term: Option<Rc<Term>>,
    pub enodes: usize,
    /// The run's time ran out during the search.
    pub out_of_time: bool,
}

/// Runs the guided searches strategies name (the guide module's is
/// `crate::guide::Searches`).
pub trait Searcher: std::fmt::Debug {
    fn search(&self, call: &SearchCall, t: &Rc<Term>) -> Result<Found>;
}

impl Machine<'_> {
    /// Elevate's `storeInMemory(what, how)`: the first subterm where `what` succeeds (a
    /// term of the root's scope: it uses no variable bound inside the root), `how` applied to
    /// it, and the root with every occurrence of it replaced by a variable bound to the stored
    /// result: `let (toMem how(e)) (fun x => root[e := x])`.
    fn store_in_memory(
        &mut self,
        what: (&Rc<Expr>, &Env),
        how: (&Rc<Expr>, &Env),
        t: &Rc<Term>,
    ) -> Result<Option<Rc<Term>>> {
        let Some(e) = self.extract(what, t, 0)? else {
            return Ok(None);
        };
        let Some(stored) = self.apply(how.0, how.1, &e)? else {
            return Ok(None);
        };
        let Some(body) = replace_all(&e, t, 0) else {
            return Ok(None);
        };
        let to_mem = Term::new(Node::Prim(Prim::ToMem), fun(e.ty.clone(), e.ty.clone()));
        let value = Term::new(Node::App(to_mem, stored), e.ty.clone());
        let lam = lambda::lambda(e.ty.clone(), body);
        let let_ty = fun(e.ty.clone(), fun(lam.ty.clone(), t.ty.clone()));
        let bind = Term::new(Node::Prim(Prim::Let), let_ty);
        let partial = Term::new(Node::App(bind, value), fun(lam.ty.clone(), t.ty.clone()));
        Ok(Some(Term::new(Node::App(partial, lam), t.ty.clone())))
    }

    /// The first subterm of `t` (under `depth` binders of the root) where `what` succeeds, in
    /// Elevate's order (the node, then an application's function and argument, a lambda's
    /// body), lowered to the root's scope; `None` where it uses a variable bound inside.
    fn extract(
        &mut self,
        what: (&Rc<Expr>, &Env),
        t: &Rc<Term>,
        depth: u32,
    ) -> Result<Option<Rc<Term>>> {
        if self.apply(what.0, what.1, t)?.is_some() {
            let outer = !lambda::has_free_below(t, depth);
            return Ok(outer
                .then(|| lambda::shift(t, -(depth as i64), 0, 0))
                .flatten());
        }
        match &t.node {
            Node::App(f, x) => match self.extract(what, f, depth)? {
                Some(e) => Ok(Some(e)),
                None => self.extract(what, x, depth),
            },
            Node::Lam(b) => self.extract(what, b, depth + 1),
            _ => Ok(None),
        }
    }
}

/// `t` (under `depth` binders of the root) with every occurrence of `e` (a term of the root's
/// scope) replaced by the variable of a new binder around the root; `None` across a size
/// binder.
fn replace_all(e: &Rc<Term>, t: &Rc<Term>, depth: u32) -> Option<Rc<Term>> {
    if t.ty == e.ty && lambda::shift(t, -(depth as i64), 0, 0).is_some_and(|u| u == *e) {
        return Some(Term::new(Node::Var(depth), t.ty.clone()));
    }
    let node = match &t.node {
        Node::Var(i) if *i >= depth => Node::Var(i + 1),
        Node::Lam(b) => Node::Lam(replace_all(e, b, depth + 1)?),
        Node::NatLam(_) => return None,
        n => n.try_map(|c| replace_all(e, c, depth))?,
    };
    Some(Term::at(node, t.ty.clone(), t.span.clone()))
}

/// Elevate's `isComputation`: the identity, or a lambda from scalars (or pairs of them) to
/// scalars (or pairs).
fn is_computation(t: &Term) -> bool {
    fn basic(t: &Type) -> bool {
        match t {
            Type::F32 | Type::Int | Type::Bool | Type::Vector(..) => true,
            Type::Pair(a, b) => basic(a) && basic(b),
            _ => false,
        }
    }
    match (&t.node, &t.ty) {
        (Node::Lam(b), _) if b.node == Node::Var(0) => true,
        (Node::Lam(_), Type::Fun(a, r)) => basic(a) && basic(r),
        _ => false,
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

/// The primitive named by a built-in's primitive argument.
fn prim_arg(e: &Expr) -> Result<crate::rise::primitives::Prim> {
    match e {
        Expr::Call(c) if c.args.is_empty() => crate::rise::primitives::Prim::from_name(&c.name)
            .ok_or_else(|| Error::at(&c.span, format!("`{}` is not a Rise primitive", c.name))),
        _ => Err(Error::at(e.span(), "expected a Rise primitive's name")),
    }
}

/// Is `t` the primitive `p`, applied to sizes or not?
fn head_is(t: &Term, p: crate::rise::primitives::Prim) -> bool {
    match &t.node {
        Node::Prim(q) => *q == p,
        Node::NatApp(f, _) => head_is(f, p),
        _ => false,
    }
}

fn limit(name: &'static str) -> Error {
    Error {
        kind: ErrorKind::Limit(name),
        ..Error::check_failed(format!("the {name} limit stopped the strategy"))
    }
}
