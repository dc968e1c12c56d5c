//! Rise primitives applied to values: data-layout primitives become views (index arithmetic
//! on what they read, never a copy), the imperative ones deferred loops written where their
//! result goes, and a map of a layout primitive over a value not computed yet a view of its
//! destination.

use super::*;

impl Emitter {
    pub(super) fn primitive(
        &mut self,
        prim: Prim,
        nats: &[i64],
        args: Vec<Val>,
        ty: &Type,
    ) -> Result<Val> {
        use Prim::*;
        self.check_blocks(prim, ty)?;
        let arg = |i: usize| args[i].clone();
        match prim {
            MapSeq | MapPar | MapSeqUnroll | MapStream | IterateStream | ReduceSeq
            | ReduceSeqUnroll | ReducePar => Ok(Val::Deferred {
                prim,
                args,
                ty: ty.uncurry().1.clone(),
            }),
            Reduce => unreachable!("rejected where the primitive occurs"),
            // A high-level map of a function that only rearranges data is a view; one that
            // computes must have been lowered (the generator does not choose its loop).
            Map => {
                if let Some(dest) = self.layout_dest(&args[0], &args[1]) {
                    // `map join y` written to `d` is `y` written to `map split d`.
                    let len = self.len_of(&args[1])?;
                    return Ok(Val::Reshaped {
                        inner: Rc::new(arg(1)),
                        dest: Rc::new(move |d| {
                            let dest = dest.clone();
                            Ok(view(len, false, move |em, i| dest(em.get(&d, i)?)))
                        }),
                        ty: ty.uncurry().1.clone(),
                    });
                }
                let (f, xs) = (arg(0), self.force(arg(1))?);
                // `f` of an element, which must not compute.
                let of = move |em: &mut Self, x: Val| {
                    let (code, ops) = (em.body.len(), em.arith);
                    let y = em.apply(f.clone(), x)?;
                    if em.body.len() != code || em.arith != ops {
                        return Err(unsupported(
                            "the high-level primitive `map` computes here; lower it first (mapSeq, mapPar)",
                        ));
                    }
                    Ok(y)
                };
                let mapped = {
                    let (xs, of) = (xs.clone(), of.clone());
                    view(array_len(&xs)?, false, move |em, i| {
                        let x = em.get(&xs, i)?;
                        of(em, x)
                    })
                };
                if !matches!(
                    xs,
                    Val::Array {
                        before: Some(_),
                        ..
                    }
                ) {
                    return Ok(mapped);
                }
                Ok(with_before(
                    mapped,
                    Rc::new(move |em, m| {
                        let x = block_before(em, &xs, m, "`map`")?;
                        of(em, x)
                    }),
                ))
            }
            Id => Ok(arg(0)),
            Let => self.apply(arg(1), arg(0)),
            ToMem => self.materialise(arg(0), ty.uncurry().1),
            Fst | Snd => match self.force(arg(0))? {
                Val::Pair(a, b) => Ok(if prim == Fst {
                    (*a).clone()
                } else {
                    (*b).clone()
                }),
                _ => Err(unsupported("fst/snd of something that is not a pair")),
            },
            MakePair => Ok(Val::Pair(Rc::new(arg(0)), Rc::new(arg(1)))),
            Add | Mul | Sub | Div | Equal | Lt | Gt => {
                self.arith += 1;
                let op = match prim {
                    Add => "+",
                    Mul => "*",
                    Sub => "-",
                    Div => "/",
                    Equal => "==",
                    Lt => "<",
                    _ => ">",
                };
                let (a, b) = (self.force(arg(0))?, self.force(arg(1))?);
                self.arith(a, b, op)
            }
            Not | Select | Cast => {
                let mut scalar = |i: usize| match self.force(arg(i))? {
                    Val::Scalar(x) => Ok(Rc::new(x)),
                    _ => Err(unsupported(format!(
                        "`{}` of something not a scalar",
                        prim.name()
                    ))),
                };
                Ok(Val::Scalar(match prim {
                    Not => Scalar::Op("==", scalar(0)?, Rc::new(Scalar::Code("0".into()))),
                    Select => Scalar::Select(scalar(0)?, scalar(1)?, scalar(2)?),
                    _ => match ty.uncurry().1 {
                        Type::F32 => Scalar::Cast("float", scalar(0)?),
                        Type::Int => Scalar::Cast("long", scalar(0)?),
                        other => {
                            let other = self.show(other);
                            return Err(unsupported(format!("a cast to {other}")));
                        }
                    },
                }))
            }
            Neg | Sin | Cos | Tan | Sinh | Cosh | Tanh | Exp | Log | Sqrt | Absolute | Max
            | Min | Pow => {
                self.arith += 1;
                let mut scalars = vec![];
                for a in args {
                    match self.force(a)? {
                        Val::Scalar(x) => scalars.push(Rc::new(x)),
                        _ => {
                            return Err(unsupported(format!(
                                "`{}` of something not a scalar",
                                prim.name()
                            )))
                        }
                    }
                }
                let c = elementary(prim, scalars);
                if let Scalar::Call(f, _) = &c {
                    self.math.insert(f);
                }
                Ok(Val::Scalar(c))
            }
            // An index is a number in C.
            NatAsIndex | IndexAsNat => self.force(arg(0)),
            // A line buffer where a sequential loop reads it (`streams`), in memory elsewhere.
            CircularBuffer | RotateValues => Ok(Val::Deferred {
                prim,
                args,
                ty: ty.uncurry().1.clone(),
            }),
            PadClamp => {
                // Element `i` of `padClamp<l, r> xs` is `xs[clamp(i - l, 0, n - 1)]`.
                let (a, l, r) = (self.force(arg(0))?, nats[0], nats[1]);
                let n = array_len(&a)?;
                let shift = Ix::constant(-l);
                Ok(view(l + n + r, false, move |em, i| {
                    let clamped = em.clamp(&i.add(&shift), n - 1);
                    em.get(&a, &clamped)
                }))
            }
            Drop | Take => {
                let (a, k) = (self.force(arg(0))?, nats[0]);
                let len = array_len(&a)?;
                let (len, offset) = match prim {
                    Drop => (len - k, Ix::constant(k)),
                    _ => (k, Ix::constant(0)),
                };
                Ok(view(len, false, move |em, i| em.get(&a, &i.add(&offset))))
            }
            Zip if streams::is_stream(&args[0]) || streams::is_stream(&args[1]) => {
                Ok(Val::Deferred {
                    prim,
                    args,
                    ty: ty.uncurry().1.clone(),
                })
            }
            Zip => {
                let (a, b) = (self.force(arg(0))?, self.force(arg(1))?);
                let len = array_len(&a)?;
                Ok(view(len, false, move |em, i| {
                    let x = em.get(&a, i)?;
                    let y = em.get(&b, i)?;
                    Ok(Val::Pair(Rc::new(x), Rc::new(y)))
                }))
            }
            Unzip => {
                let a = self.force(arg(0))?;
                let len = array_len(&a)?;
                let part = |first: bool| {
                    let a = a.clone();
                    view(len, false, move |em, i| match em.get(&a, i)? {
                        Val::Pair(x, y) => Ok(if first { (*x).clone() } else { (*y).clone() }),
                        _ => Err(unsupported("unzip of an array of non-pairs")),
                    })
                };
                Ok(Val::Pair(Rc::new(part(true)), Rc::new(part(false))))
            }
            Split | AsVector | AsVectorAligned | Join | AsScalar | Transpose => {
                let a = arg(0);
                let vector = prim != Split;
                // Element length of the result's rows (join: of the argument's rows).
                let (view_of, dest_of): (Reshape, Reshape) = match prim {
                    Split | AsVector | AsVectorAligned => {
                        let (n, total) = (nats[0], self.len_of(&a)?);
                        (
                            Rc::new(move |v| split_view(v, n, vector)),
                            Rc::new(move |d| join_view(d, n, total)),
                        )
                    }
                    Join | AsScalar => {
                        let total = self.result_len(ty)?;
                        let inner = self.row_len(ty)?;
                        (
                            Rc::new(move |v| join_view(v, inner, total)),
                            Rc::new(move |d| split_view(d, inner, vector)),
                        )
                    }
                    _ => {
                        let (rows, cols) = (self.len_of(&a)?, self.result_len(ty)?);
                        (
                            Rc::new(move |v| transpose_view(v, cols)),
                            Rc::new(move |d| transpose_view(d, rows)),
                        )
                    }
                };
                if is_deferred(&a) {
                    // Not computed yet: it will be written through the reshaped destination
                    // (the layout becomes index arithmetic on the writes).
                    return Ok(Val::Reshaped {
                        inner: Rc::new(a),
                        dest: dest_of,
                        ty: ty.uncurry().1.clone(),
                    });
                }
                view_of(a)
            }
            Slide => {
                let (a, sz, sp) = (self.force(arg(0))?, nats[0], nats[1]);
                let n = array_len(&a)?;
                let (len, start) = blocks(n, sz, sp).ok_or_else(|| {
                    unsupported(format!("slide<{sz}, {sp}> on an array of length {n}"))
                })?;
                Ok(view(len, false, move |em, i| {
                    let (a, first) = (a.clone(), start(em, i));
                    Ok(view(sz, false, move |em, j| em.get(&a, &first.add(j))))
                }))
            }
            Generate => {
                let f = arg(0);
                Ok(view(self.result_len(ty)?, false, move |em, i| {
                    em.apply(f.clone(), Val::Scalar(Scalar::Index(i.clone())))
                }))
            }
            VectorFromScalar => {
                let x = self.force(arg(0))?;
                Ok(view(self.result_len(ty)?, true, move |_, _| Ok(x.clone())))
            }
            // The binomial filter's weights ([1, 2, 1] / 4, and its outer product) as C
            // array literals.
            WeightsH | WeightsV => Ok(view(3, false, |_, i| {
                Ok(Scalar::load(
                    "((const float[]){0.25f, 0.5f, 0.25f})",
                    i.clone(),
                ))
            })),
            Weights2d => Ok(view(3, false, |_, i| {
                let i = i.clone();
                Ok(view(3, false, move |_, j| {
                    Ok(Scalar::load(
                        "((const float[]){0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f})",
                        i.scale(3).add(j),
                    ))
                }))
            })),
            // Constants as a C array literal, element `i` of it; computed elements stored in
            // an array of their own.
            MakeArray => {
                let mut literals = vec![];
                for a in &args {
                    match self.force(a.clone())? {
                        Val::Scalar(Scalar::Code(c)) => literals.push(c.to_string()),
                        _ => break,
                    }
                }
                if literals.len() == args.len() {
                    let array: Rc<str> =
                        format!("((const float[]){{{}}})", literals.join(", ")).into();
                    return Ok(view(args.len() as i64, false, move |_, i| {
                        Ok(Scalar::load(array.clone(), i.clone()))
                    }));
                }
                let dest = self.allocate(ty.uncurry().1)?.1;
                for (k, a) in args.into_iter().enumerate() {
                    let d = self.get(&dest, &Ix::constant(k as i64))?;
                    self.write(a, d)?;
                }
                Ok(dest)
            }
            Vectorize | Generalize | Mod | PadCst | PadEmpty | Concat | MapFst | MapSnd
            | ScanSeq | Idx | Gather | Scatter => Err(unsupported(format!(
                "the primitive `{}` has no C translation",
                prim.name()
            ))),
        }
    }

    /// When a map's function `f` is a data-layout primitive (`join`, `transpose`, `split`,
    /// ...), or a map of one (`map join`), and its array `xs` is not computed yet: how a
    /// destination of `f x` is seen as one of `x`, so that the map is written through its
    /// destination instead of `xs` being computed into a buffer and copied.
    fn layout_dest(&mut self, f: &Val, xs: &Val) -> Option<Reshape> {
        use Prim::*;
        let Val::Prim { ty, .. } = f else {
            return None;
        };
        if !is_layout(f) || !is_deferred(xs) {
            return None;
        }
        // A stand-in for one element of `xs` (of `f`'s parameter type), never written: `f`
        // of it is `Reshaped`.
        let element = Val::Deferred {
            prim: Id,
            args: vec![],
            ty: (*ty.uncurry().0.last()?).clone(),
        };
        match self.apply(f.clone(), element) {
            Ok(Val::Reshaped { dest, .. }) => Some(dest),
            _ => None,
        }
    }
}

/// Is `f` a data-layout primitive waiting for its array, or a map of one (so that applying it
/// to a value not computed yet emits no code)?
fn is_layout(f: &Val) -> bool {
    use Prim::*;
    match f {
        Val::Prim {
            prim: Map, args, ..
        } => args.len() == 1 && is_layout(&args[0]),
        Val::Prim { prim, args, .. } => {
            let layout = matches!(
                prim,
                Split | AsVector | AsVectorAligned | Join | AsScalar | Transpose
            );
            layout && args.len() + 1 == prim.arity()
        }
        _ => false,
    }
}

/// An elementary function of scalars as C: `max` and `min` as selects (what vector
/// instructions compute, as the interpreter does), a power by a whole exponent from 1 to 4
/// as products, negation as `-(x)`, the others as calls of `<math.h>`.
fn elementary(prim: Prim, mut args: Vec<Rc<Scalar>>) -> Scalar {
    use crate::rise::interp::small_power;
    let op = |op, a: &Rc<Scalar>, b: &Rc<Scalar>| Rc::new(Scalar::Op(op, a.clone(), b.clone()));
    match prim {
        Prim::Max | Prim::Min => {
            let (a, b) = (args[0].clone(), args[1].clone());
            let cmp = if prim == Prim::Max { ">" } else { "<" };
            Scalar::Select(op(cmp, &a, &b), a, b)
        }
        Prim::Pow => {
            let exponent = match &*args[1] {
                Scalar::Code(c) => c.trim_end_matches('f').parse::<f32>().ok(),
                _ => None,
            };
            match exponent.and_then(small_power) {
                Some(k) => {
                    let x = args.swap_remove(0);
                    let product = (1..k).fold(x.clone(), |p, _| op("*", &p, &x));
                    Rc::unwrap_or_clone(product)
                }
                None => Scalar::Call("powf", args),
            }
        }
        Prim::Neg => Scalar::Call("-", args),
        _ => Scalar::Call(prim.math_function().expect("elementary"), args),
    }
}
