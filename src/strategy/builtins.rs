//! The built-in strategies: Elevate's combinators, one-level and whole-term traversals, Rise
//! traversals and predicates, the lambda-calculus steps and the guided search. Each has a
//! meaning and an example, which the strategies chapter of the book lists.

/// What a built-in takes as an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Strategy,
    Num,
    /// A Rise primitive's name (`map`).
    Prim,
    /// A file reference in quotes.
    File,
}

/// A built-in strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Id,
    Fail,
    Try,
    Repeat,
    RepeatNTimes,
    Not,
    One,
    All,
    Some,
    TopDown,
    BottomUp,
    AllTopdown,
    AllBottomup,
    TryAll,
    Alltd,
    Sometd,
    Somebu,
    Normalize,
    Body,
    Function,
    Argument,
    DepFunction,
    ArgumentOf,
    Is,
    IsPrim(crate::rise::primitives::Prim),
    IsLambda,
    IsDepLambda,
    IsComputation,
    IsApply,
    IsIdentifier,
    IsApp,
    IsApplied,
    Beta,
    Eta,
    EtaAbstraction,
    StoreInMemory,
    Saturate,
    Search,
}

/// A built-in: its name, arguments, meaning and an example.
#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub op: Op,
    pub args: &'static [Kind],
    pub meaning: &'static str,
    pub example: &'static str,
}

use crate::rise::primitives::Prim;
use Kind::{File, Num, Prim as P, Strategy as S};

macro_rules! builtins {
    ($($name:literal $op:expr, [$($k:expr),*], $meaning:literal, $example:literal;)*) => {
        /// Every built-in strategy, in the order the book lists them.
        pub const BUILTINS: &[Builtin] = &[$(Builtin {
            name: $name,
            op: $op,
            args: &[$($k),*],
            meaning: $meaning,
            example: $example,
        }),*];
    };
}

builtins! {
    "id" Op::Id, [], "succeeds, unchanged", "id";
    "fail" Op::Fail, [], "fails", "fail";
    "try" Op::Try, [S], "`s <+ id`: never fails", "try(map-fusion)";
    "repeat" Op::Repeat, [S], "`s` until it fails; never fails (a strategy that always succeeds runs into the step limit)", "repeat(beta)";
    "repeatNTimes" Op::RepeatNTimes, [Num, S], "`s` exactly n times in sequence", "repeatNTimes(2, one(beta))";
    "not" Op::Not, [S], "succeeds, unchanged, where `s` fails; fails where it succeeds", "not(isLambda)";
    "one" Op::One, [S], "`s` on the first child where it succeeds (the order: `--order`)", "one(beta)";
    "all" Op::All, [S], "`s` on every child; a leaf succeeds", "all(try(eta))";
    "some" Op::Some, [S], "`s` on every child where it succeeds, at least one", "some(beta)";
    "topDown" Op::TopDown, [S], "`s <+ one(topDown(s))`: the first match in pre-order", "topDown(map-fusion)";
    "bottomUp" Op::BottomUp, [S], "`one(bottomUp(s)) <+ s`: the first match in post-order", "bottomUp(isMap)";
    "allTopdown" Op::AllTopdown, [S], "`s ; all(allTopdown(s))`: `s` at every node, parents first", "allTopdown(try(eta))";
    "allBottomup" Op::AllBottomup, [S], "`all(allBottomup(s)) ; s`: `s` at every node, children first", "allBottomup(try(eta))";
    "tryAll" Op::TryAll, [S], "`all(tryAll(try(s))) ; try(s)`: `s` wherever it applies, children first; never fails", "tryAll(beta)";
    "alltd" Op::Alltd, [S], "`s <+ all(alltd(s))`: the outermost matches on every path", "alltd(map-fusion)";
    "sometd" Op::Sometd, [S], "`s <+ some(sometd(s))`: the outermost matches, at least one", "sometd(map-fusion)";
    "somebu" Op::Somebu, [S], "`some(somebu(s)) <+ s`: the innermost matches, at least one", "somebu(map-fusion)";
    "normalize" Op::Normalize, [S], "`repeat(topDown(s))`: until `s` applies nowhere; never fails", "normalize(beta <+ eta)";
    "body" Op::Body, [S], "`s` on a lambda's (or size lambda's) body", "body(eta)";
    "function" Op::Function, [S], "`s` on an application's function", "function(isMap)";
    "argument" Op::Argument, [S], "`s` on an application's argument", "argument(beta)";
    "depFunction" Op::DepFunction, [S], "`s` on a size application's function (`f<n>`)", "depFunction(isDepLambda)";
    "argumentOf" Op::ArgumentOf, [P, S], "`s` on the argument of primitive `p` applied to one argument", "argumentOf(map, etaAbstraction)";
    "is" Op::Is, [P], "the term is primitive `p` (with its sizes)", "is(split)";
    "isMap" Op::IsPrim(Prim::Map), [], "the term is `map`", "isApplied(isMap)";
    "isReduce" Op::IsPrim(Prim::Reduce), [], "the term is `reduce`", "isApplied(isReduce)";
    "isReduceSeq" Op::IsPrim(Prim::ReduceSeq), [], "the term is `reduceSeq`", "isApplied(isReduceSeq)";
    "isTranspose" Op::IsPrim(Prim::Transpose), [], "the term is `transpose`", "isApplied(isTranspose)";
    "isLet" Op::IsPrim(Prim::Let), [], "the term is `let`", "isApplied(isLet)";
    "isZip" Op::IsPrim(Prim::Zip), [], "the term is `zip`", "isApplied(isZip)";
    "isLambda" Op::IsLambda, [], "the term is a lambda", "not(isLambda)";
    "isDepLambda" Op::IsDepLambda, [], "the term is a size lambda (`nfun`)", "isLambda <+ isDepLambda";
    "isComputation" Op::IsComputation, [], "the term is a lambda from scalars (or pairs of them) to scalars, or the identity", "topDown(isComputation)";
    "isApply" Op::IsApply, [], "the term is an application", "not(isApply)";
    "isIdentifier" Op::IsIdentifier, [], "the term is a variable", "argument(isIdentifier)";
    "isApp" Op::IsApp, [S, S], "an application whose function satisfies `f` and argument `e`; unchanged", "isApp(isMap, id)";
    "isApplied" Op::IsApplied, [S], "`isApp(f, id)`", "isApplied(isApplied(isMap))";
    "beta" Op::Beta, [], "`(fun x => b) a` to `b[x := a]` (a size function applied to sizes stays, as in the e-graph's normal form)", "normalize(beta)";
    "eta" Op::Eta, [], "`fun x => f x` to `f` when `x` is not free in `f`", "normalize(eta)";
    "etaAbstraction" Op::EtaAbstraction, [], "a function `f` to `fun x => f x`", "argumentOf(map, etaAbstraction)";
    "storeInMemory" Op::StoreInMemory, [S, S], "the first subterm (function first, pre-order) where `what` succeeds, rewritten by `how` and computed into memory first: `let (toMem how(e)) (fun x => ..)` with every occurrence of it replaced by `x`", "storeInMemory(isApplied(isTranspose), id)";
    "saturate" Op::Saturate, [File, File], "a guided search from the term with rules `\"F.rules[:SET]\"` until sketch `\"F.sketch:NAME\"` (or goal `\"F.rise:NAME\"`) holds, under default limits; the cheapest term satisfying it, or failure", "saturate(\"mm.rules:split\", \"mm.sketch:split\")";
    "search" Op::Search, [File], "the step of a guide `\"F.guide:SKETCH\"` (its rules, limits, filter, cost and normal form) as a guided search from the term; its result, or failure", "search(\"blocking.guide:reorder1\")";
}

/// The built-in named `name`; Elevate's long names of the lambda-calculus steps are accepted
/// too.
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    let name = match name {
        "betaReduction" => "beta",
        "etaReduction" => "eta",
        n => n,
    };
    BUILTINS.iter().find(|b| b.name == name)
}

/// The built-ins as a Markdown table (name and arguments, meaning, example), as the book
/// lists them.
pub fn markdown_table() -> String {
    let mut s = String::from("| strategy | meaning | example |\n|---|---|---|\n");
    for b in BUILTINS {
        let args: Vec<&str> = (b.args.iter())
            .map(|k| match k {
                Kind::Strategy => "s",
                Kind::Num => "n",
                Kind::Prim => "p",
                Kind::File => "\"file\"",
            })
            .collect();
        let call = match args.is_empty() {
            true => b.name.to_string(),
            false => format!("{}({})", b.name, args.join(", ")),
        };
        s += &format!("| `{call}` | {} | `{}` |\n", b.meaning, b.example);
    }
    s
}
