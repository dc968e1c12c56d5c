//! sketchlog's own fuzzer: inputs for every parser and command, made by mutating the
//! project's files (`programs/`, `rules/`, `schemas/`) and by generating from the grammars.
//!
//! Most inputs run in-process through what the CLI would do with them (parse, type-check,
//! elaborate, compile sketches and rules for every encoding, load guides and cost files, run
//! `.egg` programs and include graphs). An input fails the run when it panics, hangs (a
//! watchdog aborts with the input's number), overflows the stack (the process aborts: rerun
//! with `--replay N`), or is rejected with a bad-input error that has no `file:line:column`
//! or `file:` location. Some run the `sketchlog` binary instead ([`process`]): command lines,
//! REPL sessions and low-level programs compiled to C. Inputs are numbered, and input `n` of
//! a seed is generated on its own, so any failure can be replayed. `examples/fuzz.rs` is the
//! command line; `tests/suite/reliability.rs` has a smoke run.

pub mod paths;
pub mod process;

use crate::error::{Error, ErrorKind, Result};
use crate::source::Source;
pub use process::Outcome;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kinds of input: one per parser, then `.egg` include graphs, and those that run the
/// binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Rise,
    Sketch,
    Rules,
    Guide,
    Cost,
    Egg,
    /// A strategy file, its definitions run on the matrix multiplication.
    Elevate,
    /// Several `.egg` files including each other, cycles and all.
    Includes,
    /// A command line.
    Flags,
    /// `.egg` text typed into `sketchlog run`'s REPL.
    Repl,
    /// A low-level program through `bench-c`: C compiled, run and validated.
    LowLevel,
    /// A command whose outputs may be its inputs, which must survive byte for byte.
    Outputs,
    /// A guide or `.egg` program naming a file that does not exist.
    Missing,
    /// A file with a byte that is not UTF-8.
    Utf8,
}

/// The kinds of file the project has, which mutation starts from.
pub const FILE_KINDS: [Kind; 7] = [
    Kind::Rise,
    Kind::Sketch,
    Kind::Rules,
    Kind::Guide,
    Kind::Cost,
    Kind::Egg,
    Kind::Elevate,
];

impl Kind {
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Rise => "rise",
            Kind::Sketch => "sketch",
            Kind::Rules => "rules",
            Kind::Guide => "guide",
            Kind::Cost => "cost",
            Kind::Elevate => "elevate",
            Kind::Egg | Kind::Includes | Kind::Repl => "egg",
            Kind::Flags | Kind::Outputs => "command line",
            Kind::LowLevel => "rise (C)",
            Kind::Missing => "guide or egg",
            Kind::Utf8 => "any",
        }
    }

    /// What the reports call it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Includes => "include graphs",
            Kind::Flags => "command lines",
            Kind::Repl => "REPL sessions",
            Kind::LowLevel => "low-level programs (bench-c)",
            Kind::Outputs => "outputs over inputs",
            Kind::Missing => "missing named files",
            Kind::Utf8 => "invalid UTF-8",
            k => k.extension(),
        }
    }

    /// The kind of input `n`: in every 400, one low-level program (a C compile each), eight
    /// command lines, four REPL sessions, four include graphs, three commands whose outputs
    /// may be their inputs, twelve files naming missing files and twenty files with bytes
    /// that are not UTF-8; the rest files of each kind in turn.
    fn of(n: u64) -> Kind {
        match n % 400 {
            0 => Kind::LowLevel,
            1..=8 => Kind::Flags,
            9..=12 => Kind::Repl,
            13..=16 => Kind::Includes,
            17..=19 => Kind::Outputs,
            20..=31 => Kind::Missing,
            32..=51 => Kind::Utf8,
            k => FILE_KINDS[(k % FILE_KINDS.len() as u64) as usize],
        }
    }
}

/// One input: a file's text, or a command line (with its standard input and the files it
/// reads, written to the scratch directory first).
#[derive(Clone, Debug)]
pub struct Input {
    pub kind: Kind,
    pub text: String,
    pub args: Vec<String>,
    pub files: Vec<(String, String)>,
    /// Files (of `files`) whose bytes the command must leave as they were.
    pub sentinels: Vec<String>,
    /// Where the first file gets a byte that is not UTF-8 (a byte offset in its text).
    pub bad_byte: Option<usize>,
    /// Where the error must be: `file:line:column`, or a `file:line:` prefix.
    pub expect_at: Option<String>,
    /// The address-space limit (bytes) the command inherits, as `prlimit --as` sets it.
    pub address_space: Option<u64>,
}

impl Input {
    fn text(kind: Kind, text: String) -> Input {
        Input {
            kind,
            text,
            args: vec![],
            files: vec![],
            sentinels: vec![],
            bad_byte: None,
            expect_at: None,
            address_space: None,
        }
    }

    /// The bytes of file `i` of `files` as written (with the bad byte, if any).
    fn bytes(&self, i: usize) -> Vec<u8> {
        let mut bytes = self.files[i].1.as_bytes().to_vec();
        if let (0, Some(at)) = (i, self.bad_byte) {
            bytes.insert(at, 0xFF);
        }
        bytes
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, text) in &self.files {
            writeln!(f, "--- {name}:\n{text}")?;
        }
        if let Some(at) = self.bad_byte {
            writeln!(f, "--- byte 0xFF inserted at offset {at} of the first file")?;
        }
        if let Some(bytes) = self.address_space {
            writeln!(f, "--- under an address-space limit of {} MB", bytes >> 20)?;
        }
        if !self.args.is_empty() {
            writeln!(f, "--- sketchlog {}", self.args.join(" "))?;
        }
        write!(f, "{}", self.text)
    }
}

/// fastrand's generator, seeded per input, with the two choices the fuzzer makes.
type Rng = fastrand::Rng;

trait Choose {
    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize;
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T;
}

impl Choose for Rng {
    fn below(&mut self, n: usize) -> usize {
        self.usize(..n.max(1))
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Tokens worth inserting: every grammar's keywords and punctuation, and numbers at the
/// edges of what the readers accept.
const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ",",
    ".",
    ":",
    "::",
    "=>",
    "->",
    "=",
    "?",
    "?x",
    "fun",
    "nfun",
    "let",
    "in",
    "def",
    "sketch",
    "rule",
    "ruleset",
    "where",
    "notin",
    "contains",
    "or",
    "app",
    "lam",
    "var",
    "natapp",
    "natlam",
    "map",
    "reduce",
    "zip",
    "split",
    "join",
    "transpose",
    "mapSeq",
    "toMem",
    "asVector",
    "f32",
    "int",
    "idx",
    "vec",
    "nat",
    "step",
    "limits",
    "time",
    "enodes",
    "iterations",
    "memory",
    "filter",
    "ast-size",
    "array-depth",
    "cost",
    "weights",
    "program",
    "sketches",
    "rules",
    "0",
    "1",
    "-1",
    "0.0",
    "1.5",
    "1e400",
    "-1e400",
    "inf",
    "NaN",
    "99999999999999999999",
    "18446744073709551615",
    "9223372036854775808",
    "m/32",
    "n+2",
    "m*n",
    "\"",
    "\\",
    "//",
    ";",
    "\n",
    " ",
    "(rule",
    "(run 1)",
    "(check",
    "(let $x",
    "(rise-load",
    "(rise-extract",
    "(sketch-check",
    "(guide",
    "x",
    "y",
    "f",
    "nope",
    "\u{fffd}",
];

/// The files mutation starts from, by kind (read once).
pub struct Corpus {
    files: Vec<(Kind, String)>,
    /// Where generated guides point for programs, sketches and rules.
    root: PathBuf,
    /// The names the Rise schema declares, its rule sets and its rule variables.
    schema_names: Vec<String>,
}

impl Corpus {
    /// The project's files of every kind under `root` (the repository).
    pub fn load(root: &Path) -> Result<Corpus> {
        let mut files = vec![];
        for dir in ["programs", "rules", "schemas", "tests/egglog"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            paths.sort();
            for p in paths {
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                let Some(kind) = FILE_KINDS.iter().find(|k| k.extension() == ext) else {
                    continue;
                };
                let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
                // Guides and strategies name files relative to themselves: make those paths
                // absolute.
                let text = match kind {
                    Kind::Guide => absolute_guide_paths(&text, &root.join(dir)),
                    Kind::Elevate => absolute_quoted_paths(&text, &root.join(dir)),
                    _ => text,
                };
                files.push((*kind, text));
            }
        }
        let mut schema_names = crate::egraph::schema_names();
        schema_names.extend(["rise-types", "rise-free"].map(String::from));
        let text = crate::egraph::schema_text();
        let variables = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .filter(|w| w.starts_with(crate::egraph::schema::NAMESPACE));
        for v in variables {
            let bare = v.trim_start_matches(crate::egraph::schema::NAMESPACE);
            for name in [v, bare] {
                if !schema_names.iter().any(|n| n == name) {
                    schema_names.push(name.to_string());
                }
            }
        }
        Ok(Corpus {
            files,
            root: root.to_path_buf(),
            schema_names,
        })
    }

    /// Input `n` of `seed`; files it names are in `dir`.
    pub fn input(&self, seed: u64, n: u64, dir: &Path) -> Input {
        let mut rng = Rng::with_seed(seed ^ n.wrapping_mul(0xA24B_AED4_963E_E407));
        match Kind::of(n) {
            Kind::Flags => Input {
                args: process::flags(&mut rng, dir),
                address_space: (rng.below(6) == 0).then_some(4 << 30),
                ..Input::text(Kind::Flags, String::new())
            },
            Kind::Outputs => paths::outputs(&mut rng, &self.root, dir),
            Kind::Missing => {
                let guides: Vec<&String> = self.of_kind(Kind::Guide);
                paths::missing(&mut rng, &guides, dir)
            }
            Kind::Utf8 => {
                let kind = *rng.pick(&FILE_KINDS);
                let text = self.file(kind, &mut rng);
                paths::invalid_utf8(&mut rng, kind, text, dir)
            }
            Kind::Repl => {
                let text = self.file(Kind::Egg, &mut rng);
                let (args, text) = process::repl(&mut rng, text);
                Input {
                    args,
                    ..Input::text(Kind::Repl, text)
                }
            }
            Kind::LowLevel => {
                let (args, text) = process::low_level(&mut rng, dir, n);
                Input {
                    args,
                    files: vec![(format!("low-{n}.rise"), text)],
                    ..Input::text(Kind::LowLevel, String::new())
                }
            }
            Kind::Includes => {
                let body = self.file(Kind::Egg, &mut rng);
                let files = include_graph(&mut rng, &body, dir);
                Input {
                    files,
                    ..Input::text(Kind::Includes, String::new())
                }
            }
            kind => Input::text(kind, self.file(kind, &mut rng)),
        }
    }

    /// The project's files of `kind`.
    fn of_kind(&self, kind: Kind) -> Vec<&String> {
        self.files
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, t)| t)
            .collect()
    }

    /// A file of `kind`: generated from its grammar, or one of the project's mutated.
    fn file(&self, kind: Kind, rng: &mut Rng) -> String {
        let of_kind = self.of_kind(kind);
        if of_kind.is_empty() || rng.below(4) == 0 {
            return generate(kind, rng, self);
        }
        let base = rng.pick(&of_kind).to_string();
        let rounds = 1 + rng.below(4);
        (0..rounds).fold(base, |t, _| mutate(&t, rng))
    }
}

/// Two to four `.egg` files in `dir` that include each other at random (a file may include
/// itself, or one that is missing), the first holding `body`: `file0.egg` is run.
fn include_graph(rng: &mut Rng, body: &str, dir: &Path) -> Vec<(String, String)> {
    let n = 2 + rng.below(3);
    (0..n)
        .map(|i| {
            let mut text = String::new();
            for _ in 0..rng.below(3) {
                let included = dir.join(format!("file{}.egg", rng.below(n + 1)));
                text += &format!("(include \"{}\")\n", included.display());
            }
            // A body that may search for long is left out: the files run whole.
            if i == 0 && !PARSE_ONLY.iter().any(|w| body.contains(w)) {
                text += body;
            } else {
                text += &format!("(datatype T{i} (C{i}))\n");
            }
            (format!("file{i}.egg"), text)
        })
        .collect()
}

fn absolute_guide_paths(text: &str, dir: &Path) -> String {
    text.lines()
        .map(|line| {
            let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
            if let [key, arg] = words.as_mut_slice() {
                let named = [".rise", ".sketch", ".rules", ".cost"]
                    .iter()
                    .any(|e| arg.contains(e));
                if matches!(key.as_str(), "program" | "sketches" | "rules" | "cost") && named {
                    *arg = dir.join(&*arg).display().to_string();
                }
            }
            if let [key, w, arg] = words.as_mut_slice() {
                if key == "cost" && w == "weights" {
                    *arg = dir.join(&*arg).display().to_string();
                }
            }
            words.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with each quoted file name (`"../rules/mm.rules:copy"`) made absolute.
fn absolute_quoted_paths(text: &str, dir: &Path) -> String {
    let parts: Vec<&str> = text.split('"').collect();
    let quoted = |(i, p): (usize, &&str)| match i % 2 {
        1 if p.contains('.') => dir.join(p).display().to_string(),
        _ => p.to_string(),
    };
    parts
        .iter()
        .enumerate()
        .map(quoted)
        .collect::<Vec<_>>()
        .join("\"")
}

/// One random edit: delete, duplicate or move a span; insert a token; nest a span very
/// deeply; replace a number with an edge case.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let at = rng.below(n + 1);
    let len = rng.below(40).min(n - at);
    let span: String = chars[at..at + len].iter().collect();
    let (before, after): (String, String) = (
        chars[..at].iter().collect(),
        chars[at + len..].iter().collect(),
    );
    match rng.below(8) {
        0 => format!("{before}{after}"),
        1 => format!("{before}{span}{span}{after}"),
        2 | 3 => format!("{before}{} {span}{after}", rng.pick(TOKENS)),
        4 => {
            let depth = *rng.pick(&[2, 10, 100, 999, 1001, 3000, 10_000]);
            let (open, close) = *rng.pick(&[("(", ")"), ("contains(", ")"), ("[", "]")]);
            format!(
                "{before}{}{span}{}{after}",
                open.repeat(depth),
                close.repeat(depth)
            )
        }
        5 => {
            let chain = *rng.pick(&["fun x => ", "let y = x in ", "x ", "1.", "? or "]);
            let depth = *rng.pick(&[10, 999, 1001, 5000]);
            format!("{before}{}{span}{after}", chain.repeat(depth))
        }
        6 => {
            // Replace the next number with an edge case.
            let number = after.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
            let (a, b) = after.split_at(number);
            let rest = b.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let edge = *rng.pick(&["-1", "0", "1e400", "NaN", "inf", "99999999999999999999"]);
            format!("{before}{span}{a}{edge}{rest}")
        }
        _ => {
            let other = rng.below(n + 1);
            let (lo, hi) = (other.min(at), other.max(at));
            let head: String = chars[..lo].iter().collect();
            let mid: String = chars[lo..hi].iter().collect();
            let tail: String = chars[hi..].iter().collect();
            format!("{head}{span}{mid}{tail}")
        }
    }
}

const PRIMS: &[&str] = &[
    "map",
    "reduce",
    "zip",
    "split<32>",
    "join",
    "transpose",
    "fst",
    "snd",
    "add",
    "mul",
    "id",
    "mapSeq",
    "reduceSeq",
    "slide<3, 1>",
    "toMem",
    "asVector<8>",
    "asScalar",
];

/// A random Rise expression over variables `vars`.
fn gen_expr(rng: &mut Rng, depth: usize, vars: &mut Vec<String>) -> String {
    if depth == 0 || rng.below(4) == 0 {
        return match rng.below(4) {
            0 if !vars.is_empty() => rng.pick(vars).clone(),
            1 => format!("{}.0", rng.below(10)),
            2 => rng.below(10).to_string(),
            _ => rng.pick(PRIMS).to_string(),
        };
    }
    match rng.below(5) {
        0 => {
            let x = format!("x{}", vars.len());
            vars.push(x.clone());
            let body = gen_expr(rng, depth - 1, vars);
            vars.pop();
            format!("(fun {x} => {body})")
        }
        1 => {
            let value = gen_expr(rng, depth - 1, vars);
            let x = format!("v{}", vars.len());
            vars.push(x.clone());
            let body = gen_expr(rng, depth - 1, vars);
            vars.pop();
            format!("(let {x} = {value} in {body})")
        }
        2 => format!(
            "({} : {})",
            gen_expr(rng, depth - 1, vars),
            gen_type(rng, 3)
        ),
        _ => format!(
            "({} {})",
            gen_expr(rng, depth - 1, vars),
            gen_expr(rng, depth - 1, vars)
        ),
    }
}

fn gen_type(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng.pick(&["f32", "int", "?t"]).to_string();
    }
    match rng.below(5) {
        0 => format!(
            "{}.{}",
            rng.pick(&["n", "m", "32", "n/2", "?n"]),
            gen_type(rng, depth - 1)
        ),
        1 => format!(
            "({}, {})",
            gen_type(rng, depth - 1),
            gen_type(rng, depth - 1)
        ),
        2 => format!(
            "{} -> {}",
            gen_type(rng, depth - 1),
            gen_type(rng, depth - 1)
        ),
        3 => format!("vec[f32, {}]", rng.pick(&["4", "8", "n"])),
        _ => rng.pick(&["f32", "int", "idx[n]"]).to_string(),
    }
}

fn gen_sketch(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng
            .pick(&["?", "var", "map", "add", "mul", "reduce"])
            .to_string();
    }
    let a = gen_sketch(rng, depth - 1);
    match rng.below(6) {
        0 => format!("contains({a})"),
        1 => format!("app({a}, {})", gen_sketch(rng, depth - 1)),
        2 => format!("lam({a})"),
        3 => format!("{a} or {}", gen_sketch(rng, depth - 1)),
        4 => format!("({a} :: {})", gen_type(rng, 2)),
        _ => format!("map({a}, {})", gen_sketch(rng, depth - 1)),
    }
}

/// Sketch abstractions that double (or more) at every step: `a0(x) = app(x, x)`, each next
/// one applying the last to itself, up to forty.
fn self_expanding(rng: &mut Rng) -> String {
    let steps = 1 + rng.below(40);
    let copies = 2 + rng.below(2);
    let mut text = String::from("def a0(x) = app(x, x)\n");
    for i in 1..=steps {
        let inner = (0..copies).fold("x".to_string(), |e, _| format!("a{}({e})", i - 1));
        text += &format!("def a{i}(x) = {inner}\n");
    }
    text + &format!("sketch s = a{steps}(?)\n")
}

/// A random input of `kind` from its grammar.
fn generate(kind: Kind, rng: &mut Rng, corpus: &Corpus) -> String {
    let root = &corpus.root;
    let depth = 1 + rng.below(6);
    match kind {
        Kind::Rise => {
            let body = gen_expr(rng, depth, &mut vec![]);
            format!("def d = nfun n m => fun (a : n.f32) => {body}\ndef e = d")
        }
        Kind::Sketch if rng.below(4) == 0 => self_expanding(rng),
        Kind::Sketch => format!(
            "def c(f) = contains(f)\nsketch s = {}\nsketch t = c({})",
            gen_sketch(rng, depth),
            gen_sketch(rng, depth)
        ),
        Kind::Rules => {
            let lhs = gen_expr(rng, depth, &mut vec![]);
            let rhs = gen_expr(rng, depth, &mut vec![]);
            format!("rule r = {lhs} => {rhs}\nruleset s = r")
        }
        Kind::Guide => {
            let p = root.join("programs");
            format!(
                "program {}:mm\nsketches {}\nrules {}\nlimits time {} enodes {}\nstep {}\n  rules {}",
                p.join("matmul.rise").display(),
                p.join("mm.sketch").display(),
                root.join("rules/mm.rules").display(),
                rng.pick(&["1", "-1", "1e400", "NaN", "0.5"]),
                rng.pick(&["10", "0", "-5", "x"]),
                rng.pick(&["split", "baseline", "nope"]),
                rng.pick(&["split", "baseline", "nope", "*"]),
            )
        }
        Kind::Elevate => gen_strategy(rng, depth, root),
        Kind::Cost => format!(
            "{} {}\ndefault {}",
            rng.pick(&["app", "lam", "map", "nope", "asVector"]),
            rng.pick(&["1", "0", "-1", "1000000000", "1000000001", "1e3"]),
            rng.below(5)
        ),
        _ => {
            let n = rng.below(5) + 1;
            let mut s = String::from("(datatype E (A) (B E E))\n");
            // A name the Rise schema declares or uses, declared or bound first.
            if rng.below(3) == 0 {
                let name = rng.pick(&corpus.schema_names);
                s += &match rng.below(3) {
                    0 => format!("(relation {name} (i64))\n"),
                    1 => format!("(let ${name} 1)\n"),
                    _ => format!("(ruleset {name})\n"),
                };
            }
            for i in 0..n {
                s += &format!("(let $x{i} (B (A) (A)))\n");
            }
            // Paths in `.egg` programs are read from the program's (scratch) directory.
            let reduction = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/reduction.rise");
            s += &format!(
                "(check (= $x0 (B (A) (A))))\n(rise-load $r \"{reduction}\" \"start\")\n(rise-extract $r)\n"
            );
            s
        }
    }
}

/// A strategy file of random combinators, traversals, rules and definitions.
fn gen_strategy(rng: &mut Rng, depth: usize, root: &Path) -> String {
    fn strategy(rng: &mut Rng, depth: usize) -> String {
        const LEAVES: [&str; 12] = [
            "id",
            "fail",
            "beta",
            "eta",
            "etaAbstraction",
            "isMap",
            "map-fusion",
            "DFNF",
            "BENF",
            "RNF",
            "d",
            "s",
        ];
        const UNARY: [&str; 10] = [
            "try",
            "repeat",
            "not",
            "one",
            "all",
            "topDown",
            "normalize",
            "body",
            "fmap",
            "mapNest",
        ];
        if depth == 0 {
            return rng.pick(&LEAVES).to_string();
        }
        let (a, b) = (strategy(rng, depth - 1), strategy(rng, depth - 1));
        match rng.below(6) {
            0 => format!("{a} ; {b}"),
            1 => format!("({a} <+ {b})"),
            2 => format!("({a} ;; {b})"),
            3 => format!(
                "{a} @ {}",
                rng.pick(&["topDown", "outermost(isApply)", "body"])
            ),
            4 => format!(
                "repeatNTimes({}, {a})",
                rng.pick(&["0", "3", "-1", "99999999999"])
            ),
            _ => format!("{}({a})", rng.pick(&UNARY)),
        }
    }
    let rules = root.join("rules/mm.rules");
    format!(
        "rules \"{}\"\ndef d = {}\ndef e(s) = {}\ndef f = e({})",
        rules.display(),
        strategy(rng, depth),
        strategy(rng, depth),
        strategy(rng, depth)
    )
}

/// What a mutated `.egg` program is only parsed for, not run: commands that may search for
/// long, and `print-function :file`, which writes where egglog's working directory is.
const PARSE_ONLY: &[&str] = &[
    "run",
    "saturate",
    "sketch-check",
    "guide",
    "repeat",
    ":file",
];

/// The binary the command-line inputs run, where (the repository, whose files they name),
/// and how long one may run before it counts as a hang.
#[derive(Clone, Debug)]
pub struct Binary {
    pub path: PathBuf,
    pub root: PathBuf,
    pub deadline: std::time::Duration,
}

/// Runs one input: a file in-process through what the CLI does with a file of its kind, or
/// a command line through `binary`. `dir` is a scratch directory for the files inputs read.
pub fn run_input(input: &Input, dir: &Path, binary: &Binary) -> Outcome {
    for (i, (name, _)) in input.files.iter().enumerate() {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, input.bytes(i)) {
            return Outcome::Internal(format!("writing {}: {e}", path.display()));
        }
    }
    match input.kind {
        Kind::Flags | Kind::Repl | Kind::LowLevel | Kind::Outputs => {
            let judge = match input.kind {
                Kind::Repl => process::Judge::Session,
                Kind::LowLevel => process::Judge::Validated,
                _ => process::Judge::Exit,
            };
            let command = (&input.args[..], &input.text[..]);
            let ran = process::run(binary, dir, command, judge, input.address_space);
            match overwritten(input, dir) {
                Some(file) => Outcome::Overwrote(format!("{file} changed ({ran:?})")),
                None => ran,
            }
        }
        Kind::Missing | Kind::Utf8 => {
            let path = dir.join(&input.files[0].0);
            let ran = std::panic::catch_unwind(|| paths::load(&path, dir));
            let expected = input.expect_at.as_deref().unwrap_or("");
            match ran {
                Ok(Err(e)) if e.kind == ErrorKind::BadInput => match &e.location {
                    Some(at)
                        if at == expected
                            || (expected.ends_with(':') && at.starts_with(expected)) =>
                    {
                        Outcome::Located
                    }
                    _ => Outcome::Unlocated(format!("want {expected}, got: {e}")),
                },
                Ok(Err(e)) if e.kind == ErrorKind::Internal => Outcome::Internal(e.to_string()),
                Ok(other) => {
                    Outcome::Unlocated(format!("want an error at {expected}, got {other:?}"))
                }
                Err(p) => Outcome::Internal(format!("panic: {}", crate::error::panic_message(&*p))),
            }
        }
        kind => {
            let ran = std::panic::catch_unwind(|| match kind {
                Kind::Includes => {
                    let root = dir.join(&input.files[0].0);
                    crate::runner::run_files(&[root], Some(dir), &mut std::io::sink())
                }
                _ => run_file(kind, &input.text, dir),
            });
            match ran {
                Ok(Ok(())) => Outcome::Accepted,
                Ok(Err(e)) => match e.kind {
                    ErrorKind::Internal => Outcome::Internal(e.to_string()),
                    ErrorKind::BadInput if e.location.is_none() => {
                        Outcome::Unlocated(e.to_string())
                    }
                    _ => Outcome::Located,
                },
                Err(p) => Outcome::Internal(format!("panic: {}", crate::error::panic_message(&*p))),
            }
        }
    }
}

/// The first sentinel file of `input` whose bytes are no longer those it was written with.
fn overwritten(input: &Input, dir: &Path) -> Option<String> {
    let files = input.files.iter().enumerate();
    let mut sentinels = files.filter(|(_, (name, _))| input.sentinels.contains(name));
    sentinels
        .find(|(i, (name, _))| std::fs::read(dir.join(name)).ok() != Some(input.bytes(*i)))
        .map(|(_, (name, _))| name.clone())
}

/// Runs a file's text in-process through what the CLI does with a file of its kind.
fn run_file(kind: Kind, text: &str, dir: &Path) -> Result<()> {
    let name = format!("fuzz.{}", kind.extension());
    let src: Arc<Source> = Source::new(name.clone(), text);
    match kind {
        Kind::Rise => {
            let program = crate::rise::parse::parse_program(&src)?;
            for def in &program.defs {
                crate::rise::infer::def_type(&program, &def.name)?;
                if let Ok(t) = crate::rise::infer::elaborate_def(&program, &def.name) {
                    let named = crate::rise::debruijn::to_named(
                        &t,
                        crate::rise::debruijn::Annotate::Leading,
                    );
                    crate::rise::print::print_expr(&named);
                }
            }
        }
        Kind::Sketch => {
            let file = crate::sketch::parse::parse_sketch_file(&src)?;
            let sizes = ["m", "n", "k"].map(String::from);
            for s in &file.sketches {
                let s = s.clone().resolve(&sizes)?;
                crate::sketch::query::SketchQuery::compile(&s.sketch)?;
            }
        }
        Kind::Rules => {
            let file = crate::rise::parse::parse_rule_file(&src)?;
            for r in &crate::rules::select(&file, None, &Default::default())? {
                for encoding in crate::egraph::encoding::Encoding::ALL {
                    crate::rules::compile::compile_for(r, encoding)?;
                }
            }
        }
        _ => {
            let path = dir.join(&name);
            std::fs::write(&path, text).map_err(|e| Error::write(&path, e))?;
            match kind {
                Kind::Guide => {
                    crate::guide::parse::load_guide(&path)?;
                }
                Kind::Cost => {
                    crate::egraph::extract::Weighted::load(&path)?;
                }
                Kind::Elevate => run_strategies(&path)?,
                _ if PARSE_ONLY.iter().any(|w| text.contains(w)) => {
                    crate::limits::check_egg_nesting(&src, crate::limits::MAX_EGG_NESTING)?;
                    let mut eg = crate::runner::sketchlog_egraph();
                    eg.parse_program(Some(name.clone()), text)
                        .map_err(|e| crate::runner::from_egglog(e, &name))?;
                }
                // `input` and `output` read and write in the scratch directory.
                _ => crate::runner::run_files(&[path], Some(dir), &mut std::io::sink())?,
            }
        }
    }
    Ok(())
}

/// Every definition of a strategy file that takes no parameter, run on the matrix
/// multiplication under small limits (a search it names is an error: no searcher).
fn run_strategies(path: &Path) -> Result<()> {
    let file = crate::strategy::load(path, &crate::rules::Params::default())?;
    let mm = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/matmul.rise");
    let program = crate::rise::load_def(Path::new(mm), "mm")?;
    let settings = crate::strategy::Settings {
        max_steps: 20_000,
        time: std::time::Duration::from_secs(2),
        max_depth: 200,
        ..Default::default()
    };
    let nullary = file.defs.iter().filter(|d| d.params.is_empty());
    for def in nullary {
        let src = Source::new(path.display().to_string(), def.name.to_string());
        let s = crate::strategy::strategy_in(&file, &src)?;
        crate::strategy::run(&file, &s, &program, &settings)?;
    }
    Ok(())
}

/// What became of the inputs of one kind.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub inputs: u64,
    pub accepted: u64,
    /// Rejected with a located error (or a search or check that did not hold).
    pub located: u64,
    pub aborts: u64,
    /// Internal errors and panics.
    pub internal: u64,
    pub hangs: u64,
    /// Bad-input errors that name no place.
    pub unlocated: u64,
    /// Compiled C that disagreed with the interpreter.
    pub wrong: u64,
    /// Commands that changed a file they read.
    pub overwritten: u64,
}

impl Counts {
    pub fn failures(&self) -> u64 {
        self.aborts + self.internal + self.hangs + self.unlocated + self.wrong + self.overwritten
    }
}

/// A failing input.
#[derive(Clone, Debug)]
pub struct Failure {
    pub number: u64,
    pub kind: Kind,
    pub what: String,
}

/// Runs inputs `from..to` of `seed`, counting per kind; `on_input` sees each number first
/// (a watchdog can name a hanging input).
pub fn run(
    corpus: &Corpus,
    seed: u64,
    range: std::ops::Range<u64>,
    dir: &Path,
    binary: &Binary,
    mut on_input: impl FnMut(u64),
) -> (std::collections::BTreeMap<Kind, Counts>, Vec<Failure>) {
    let mut counts = std::collections::BTreeMap::<Kind, Counts>::new();
    let mut failures = vec![];
    for n in range {
        on_input(n);
        let input = corpus.input(seed, n, dir);
        let c = counts.entry(input.kind).or_default();
        c.inputs += 1;
        let (count, what) = match run_input(&input, dir, binary) {
            Outcome::Accepted => (&mut c.accepted, None),
            Outcome::Located => (&mut c.located, None),
            Outcome::Abort(w) => (&mut c.aborts, Some(format!("abort: {w}"))),
            Outcome::Internal(w) => (&mut c.internal, Some(format!("internal error: {w}"))),
            Outcome::Hang(w) => (&mut c.hangs, Some(format!("hang: {w}"))),
            Outcome::Unlocated(w) => (&mut c.unlocated, Some(format!("unlocated error: {w}"))),
            Outcome::Wrong(w) => (&mut c.wrong, Some(format!("C disagrees: {w}"))),
            Outcome::Overwrote(w) => (&mut c.overwritten, Some(format!("input overwritten: {w}"))),
        };
        *count += 1;
        if let Some(what) = what {
            failures.push(Failure {
                number: n,
                kind: input.kind,
                what,
            });
        }
    }
    (counts, failures)
}
