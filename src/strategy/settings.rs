//! What a strategy run takes (its settings) and gives (its outcome).

use super::searcher::Searcher;
use crate::egraph::saturate::Limits;
use crate::rise::term::Term;
use crate::source::Span;
use std::rc::Rc;
use std::time::Duration;

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

impl std::fmt::Display for Failure {
    /// `strategy failed: `S` (in D > E) at position [0,1]: TERM`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "strategy failed: `{}`", self.strategy)?;
        if !self.within.is_empty() {
            write!(f, " (in {})", self.within.join(" > "))?;
        }
        let term =
            crate::rise::debruijn::to_named(&self.term, crate::rise::debruijn::Annotate::Bare);
        let term = crate::rise::print::print_expr(&term);
        write!(f, " at position [{}]: {term}", position(&self.at))
    }
}

/// Child indices from the root, comma-separated.
pub fn position(at: &[usize]) -> String {
    let parts: Vec<String> = at.iter().map(|i| i.to_string()).collect();
    parts.join(",")
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
