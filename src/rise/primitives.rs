//! The Rise primitives sketchlog knows, with their polymorphic, nat-dependent types
//! (as the Rise project's `primitives.rise` declares them, `rise-lang/shine`).
//!
//! A primitive's type is a *scheme*: implicit parameters (`{n}{t}`) become fresh
//! metavariables at each use, explicit nat parameters (`(n)`) are [`Type::NatFun`] binders
//! that a nat application `split<32>` instantiates.

use super::nat::Nat;
use super::types::{arr, fun, nat_fun, pair, vector, Type};

macro_rules! primitives {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A Rise primitive.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Prim { $($variant),* }

        impl Prim {
            /// The name used in source code and in the e-graph.
            pub fn name(self) -> &'static str {
                match self { $(Prim::$variant => $name),* }
            }

            pub fn from_name(name: &str) -> Option<Prim> {
                match name { $($name => Some(Prim::$variant),)* _ => None }
            }
        }
    };
}

primitives! {
    Map = "map", MapSeq = "mapSeq", MapPar = "mapPar",
    Reduce = "reduce", ReduceSeq = "reduceSeq", ReduceSeqUnroll = "reduceSeqUnroll",
    Zip = "zip", Unzip = "unzip", Split = "split", Join = "join", Transpose = "transpose",
    Slide = "slide", Generate = "generate", Fst = "fst", Snd = "snd", MakePair = "makePair",
    Add = "add", Mul = "mul", Let = "let", ToMem = "toMem",
    AsVector = "asVector", AsVectorAligned = "asVectorAligned", AsScalar = "asScalar",
    VectorFromScalar = "vectorFromScalar", Id = "id",
    Weights2d = "weights2d", WeightsH = "weightsH", WeightsV = "weightsV",
    Vectorize = "vectorize", Generalize = "generalize",
    // shine's Rise: arithmetic, padding and slicing, pairs, streaming and scans.
    Sub = "sub", Div = "div", Mod = "mod", Neg = "neg",
    PadClamp = "padClamp", PadCst = "padCst", PadEmpty = "padEmpty",
    Drop = "drop", Take = "take", Concat = "concat",
    MapFst = "mapFst", MapSnd = "mapSnd",
    MapSeqUnroll = "mapSeqUnroll", MapStream = "mapStream", IterateStream = "iterateStream",
    ScanSeq = "scanSeq", CircularBuffer = "circularBuffer", RotateValues = "rotateValues",
    Idx = "idx", Gather = "gather", Scatter = "scatter",
    // Booleans, conversions and indices as numbers.
    Select = "select", Not = "not", Equal = "equal", Lt = "lt", Gt = "gt", Cast = "cast",
    NatAsIndex = "natAsIndex", IndexAsNat = "indexAsNat",
    // OpenMP: a reduction whose iterations run in parallel (the operator must be associative).
    ReducePar = "reducePar",
    // `makeArray<k> x1 .. xk`: an array of its `k` arguments (its type depends on `k`, so
    // elaboration types each use: [`Prim::make_array`]).
    MakeArray = "makeArray",
    // Elementary functions of `f32` (C's `sinf`, `fmaxf`, `powf`, ...).
    Sin = "sin", Cos = "cos", Tan = "tan", Sinh = "sinh", Cosh = "cosh", Tanh = "tanh",
    Exp = "exp", Log = "log", Sqrt = "sqrt", Absolute = "abs",
    Max = "max", Min = "min", Pow = "pow",
}

/// Supplies fresh metavariables when a scheme is instantiated.
pub trait Fresh {
    /// A fresh data-type metavariable.
    fn data(&mut self) -> Type;
    /// A fresh nat metavariable.
    fn nat(&mut self) -> Nat;
}

impl Prim {
    /// The elementary function of `f32` the primitive is (`sin`, `max`, ...), as C's
    /// `<math.h>` names it, if it is one.
    pub fn math_function(self) -> Option<&'static str> {
        use Prim::*;
        Some(match self {
            Sin => "sinf",
            Cos => "cosf",
            Tan => "tanf",
            Sinh => "sinhf",
            Cosh => "coshf",
            Tanh => "tanhf",
            Exp => "expf",
            Log => "logf",
            Sqrt => "sqrtf",
            Absolute => "fabsf",
            Max => "fmaxf",
            Min => "fminf",
            Pow => "powf",
            _ => return None,
        })
    }

    /// Number of nat arguments the primitive takes before its value arguments.
    pub fn nat_arity(self) -> usize {
        match self {
            Prim::Split | Prim::AsVector | Prim::AsVectorAligned => 1,
            Prim::PadEmpty | Prim::Drop | Prim::Take | Prim::RotateValues => 1,
            Prim::NatAsIndex | Prim::MakeArray => 1,
            Prim::Slide | Prim::PadClamp | Prim::PadCst | Prim::CircularBuffer => 2,
            _ => 0,
        }
    }

    /// Number of value arguments after which the primitive computes.
    pub fn arity(self) -> usize {
        match self {
            Prim::Weights2d | Prim::WeightsH | Prim::WeightsV => 0,
            Prim::Reduce | Prim::ReduceSeq | Prim::ReduceSeqUnroll | Prim::ReducePar => 3,
            Prim::ScanSeq | Prim::Select => 3,
            Prim::Map
            | Prim::MapSeq
            | Prim::MapPar
            | Prim::MapSeqUnroll
            | Prim::MapStream
            | Prim::IterateStream
            | Prim::Zip
            | Prim::Add
            | Prim::Mul
            | Prim::Sub
            | Prim::Div
            | Prim::Mod
            | Prim::Let
            | Prim::MakePair
            | Prim::PadCst
            | Prim::Concat
            | Prim::MapFst
            | Prim::MapSnd
            | Prim::CircularBuffer
            | Prim::RotateValues
            | Prim::Idx
            | Prim::Gather
            | Prim::Scatter
            | Prim::Equal
            | Prim::Lt
            | Prim::Gt
            | Prim::Max
            | Prim::Min
            | Prim::Pow => 2,
            _ => 1,
        }
    }

    /// The type of `makeArray<k>`: `k` arguments of one data type `t`, then `k.t` (the
    /// size binder unused: each `k` is its own type).
    pub fn make_array(k: usize, fr: &mut impl Fresh) -> Type {
        let t = fr.data();
        let array = arr(Nat::cst(k as i64), t.clone());
        nat_fun((0..k).fold(array, |rest, _| fun(t.clone(), rest)))
    }

    /// A fresh instance of the primitive's type scheme (`makeArray`: of `makeArray<1>`;
    /// elaboration types each use by its size).
    pub fn instantiate(self, fr: &mut impl Fresh) -> Type {
        use Prim::*;
        let three = || Nat::cst(3);
        match self {
            Map | MapSeq | MapPar | MapSeqUnroll | MapStream | IterateStream => {
                let (n, s, t) = (fr.nat(), fr.data(), fr.data());
                fun(fun(s.clone(), t.clone()), fun(arr(n.clone(), s), arr(n, t)))
            }
            Reduce | ReducePar => {
                let (n, t) = (fr.nat(), fr.data());
                let op = fun(t.clone(), fun(t.clone(), t.clone()));
                fun(op, fun(t.clone(), fun(arr(n, t.clone()), t)))
            }
            ReduceSeq | ReduceSeqUnroll => {
                let (n, s, t) = (fr.nat(), fr.data(), fr.data());
                let op = fun(t.clone(), fun(s.clone(), t.clone()));
                fun(op, fun(t.clone(), fun(arr(n, s), t)))
            }
            Zip => {
                let (n, s, t) = (fr.nat(), fr.data(), fr.data());
                fun(
                    arr(n.clone(), s.clone()),
                    fun(arr(n.clone(), t.clone()), arr(n, pair(s, t))),
                )
            }
            Unzip => {
                let (n, s, t) = (fr.nat(), fr.data(), fr.data());
                fun(
                    arr(n.clone(), pair(s.clone(), t.clone())),
                    pair(arr(n.clone(), s), arr(n, t)),
                )
            }
            Split => {
                // (n) {m} {t} (m*n).t -> m.n.t, with n as nat index 0
                let (m, t) = (fr.nat(), fr.data());
                let n = Nat::index(0);
                nat_fun(fun(arr(m.mul(&n), t.clone()), arr(m, arr(n, t))))
            }
            Join => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                fun(arr(n.clone(), arr(m.clone(), t.clone())), arr(n.mul(&m), t))
            }
            Transpose => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                fun(arr(n.clone(), arr(m.clone(), t.clone())), arr(m, arr(n, t)))
            }
            Slide => {
                // {n} (sz) (sp) {t} (sp*n+sz).t -> (1+n).sz.t; sz is index 1, sp index 0
                let (n, t) = (fr.nat(), fr.data());
                let (sz, sp) = (Nat::index(1), Nat::index(0));
                nat_fun(nat_fun(fun(
                    arr(sp.mul(&n).add(&sz), t.clone()),
                    arr(n.add(&Nat::cst(1)), arr(sz, t)),
                )))
            }
            Generate => {
                let (n, t) = (fr.nat(), fr.data());
                fun(fun(Type::Idx(n.clone()), t.clone()), arr(n, t))
            }
            Fst | Snd => {
                let (s, t) = (fr.data(), fr.data());
                let out = if self == Fst { s.clone() } else { t.clone() };
                fun(pair(s, t), out)
            }
            MakePair => {
                let (s, t) = (fr.data(), fr.data());
                fun(s.clone(), fun(t.clone(), pair(s, t)))
            }
            Add | Mul | Sub | Div | Mod => {
                let t = fr.data();
                fun(t.clone(), fun(t.clone(), t))
            }
            Neg => {
                let t = fr.data();
                fun(t.clone(), t)
            }
            Sin | Cos | Tan | Sinh | Cosh | Tanh | Exp | Log | Sqrt | Absolute => {
                fun(Type::F32, Type::F32)
            }
            Max | Min | Pow => fun(Type::F32, fun(Type::F32, Type::F32)),
            PadClamp | PadCst => {
                // (l) (r) {n} {t} [t ->] n.t -> (l+n+r).t; l is index 1, r index 0
                let (n, t) = (fr.nat(), fr.data());
                let (l, r) = (Nat::index(1), Nat::index(0));
                let padded = fun(arr(n.clone(), t.clone()), arr(l.add(&n).add(&r), t.clone()));
                nat_fun(nat_fun(match self {
                    PadCst => fun(t, padded),
                    _ => padded,
                }))
            }
            PadEmpty => {
                // (r) {n} {t} n.t -> (n+r).t
                let (n, t) = (fr.nat(), fr.data());
                let r = Nat::index(0);
                nat_fun(fun(arr(n.clone(), t.clone()), arr(n.add(&r), t)))
            }
            Drop | Take => {
                // (n) {m} {t} (n+m).t -> m.t (drop) or n.t (take)
                let (m, t) = (fr.nat(), fr.data());
                let n = Nat::index(0);
                let kept = if self == Drop { m.clone() } else { n.clone() };
                nat_fun(fun(arr(n.add(&m), t.clone()), arr(kept, t)))
            }
            Concat => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                let both = arr(n.add(&m), t.clone());
                fun(arr(n, t.clone()), fun(arr(m, t), both))
            }
            MapFst | MapSnd => {
                let (s, t, u) = (fr.data(), fr.data(), fr.data());
                let (before, after) = match self {
                    MapFst => (pair(s.clone(), t.clone()), pair(u.clone(), t)),
                    _ => (pair(t.clone(), s.clone()), pair(t, u.clone())),
                };
                fun(fun(s, u), fun(before, after))
            }
            ScanSeq => {
                let (n, s, t) = (fr.nat(), fr.data(), fr.data());
                let op = fun(s.clone(), fun(t.clone(), t.clone()));
                fun(op, fun(t.clone(), fun(arr(n.clone(), s), arr(n, t))))
            }
            CircularBuffer | RotateValues => {
                // circularBuffer: (alloc) (sz) {n} {s} {t} (s -> t) -> (n-1+sz).s -> n.sz.t;
                // rotateValues: (sz) {n} {t} (t -> t) -> (n-1+sz).t -> n.sz.t
                let (n, s) = (fr.nat(), fr.data());
                let t = if self == RotateValues {
                    s.clone()
                } else {
                    fr.data()
                };
                let sz = Nat::index(0);
                let input = arr(n.sub(&Nat::cst(1)).add(&sz), s.clone());
                let windows = fun(fun(s, t.clone()), fun(input, arr(n, arr(sz, t))));
                match self {
                    CircularBuffer => nat_fun(nat_fun(windows)),
                    _ => nat_fun(windows),
                }
            }
            Idx => {
                let (n, t) = (fr.nat(), fr.data());
                fun(Type::Idx(n.clone()), fun(arr(n, t.clone()), t))
            }
            Gather => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                fun(
                    arr(n.clone(), Type::Idx(m.clone())),
                    fun(arr(m, t.clone()), arr(n, t)),
                )
            }
            Scatter => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                fun(
                    arr(n.clone(), Type::Idx(m.clone())),
                    fun(arr(n, t.clone()), arr(m, t)),
                )
            }
            Select => {
                let t = fr.data();
                fun(Type::Bool, fun(t.clone(), fun(t.clone(), t)))
            }
            Not => fun(Type::Bool, Type::Bool),
            Equal | Lt | Gt => {
                let t = fr.data();
                fun(t.clone(), fun(t, Type::Bool))
            }
            Cast => fun(fr.data(), fr.data()),
            // shine's natural numbers as values are `int`s here.
            NatAsIndex => nat_fun(fun(Type::Int, Type::Idx(Nat::index(0)))),
            IndexAsNat => fun(Type::Idx(fr.nat()), Type::Int),
            Let => {
                let (s, t) = (fr.data(), fr.data());
                fun(s.clone(), fun(fun(s, t.clone()), t))
            }
            ToMem | Id => {
                let t = fr.data();
                fun(t.clone(), t)
            }
            AsVector | AsVectorAligned => {
                let (m, t) = (fr.nat(), fr.data());
                let n = Nat::index(0);
                nat_fun(fun(arr(m.mul(&n), t.clone()), arr(m, vector(t, n))))
            }
            AsScalar => {
                let (n, m, t) = (fr.nat(), fr.nat(), fr.data());
                fun(
                    arr(m.clone(), vector(t.clone(), n.clone())),
                    arr(m.mul(&n), t),
                )
            }
            VectorFromScalar => {
                let (n, t) = (fr.nat(), fr.data());
                fun(t.clone(), vector(t, n))
            }
            // Rule-only (`vec-before-map`): the rule compiler builds the vector version of
            // the function in Rust; the types on both sides come from the rule's context.
            Vectorize => {
                let (s, t, u, v) = (fr.data(), fr.data(), fr.data(), fr.data());
                fun(fun(s, t), fun(u, v))
            }
            // Rule-only: `generalize f` is `f` made a function of the sizes its result's
            // shape names, applied to them (built in Rust), so it has `f`'s type.
            Generalize => {
                let (s, t) = (fr.data(), fr.data());
                fun(fun(s.clone(), t.clone()), fun(s, t))
            }
            MakeArray => Prim::make_array(1, fr),
            Weights2d => arr(three(), arr(three(), Type::F32)),
            WeightsH | WeightsV => arr(three(), Type::F32),
        }
    }
}
