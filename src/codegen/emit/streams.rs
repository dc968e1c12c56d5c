//! Circular buffers read by a sequential loop, as the line buffers they mean.
//!
//! `circularBuffer<a, sz> f xs` is the windows of `slide<sz, 1>` over `map f xs`, each value
//! of `f` computed once. Read by a sequential loop (`mapSeq`, `mapStream`, `iterateStream`)
//! in order, it needs only the last `sz` values: a *ring* of `sz` elements, filled with the
//! first `sz - 1` before the loop; iteration `i` computes value `i + sz - 1` into slot
//! `(i + sz - 1) % sz` and reads its window from slots `(i + j) % sz`. When the elements are
//! rows, this is the line buffer of an image pipeline: a stencil stage held in `sz` rows
//! instead of a whole image. `rotateValues` (a window of scalars, meant for registers)
//! shifts its `sz` values down instead, so that the window is read at constant slots.
//!
//! A circular buffer over another one (a chain of stencils), zips of circular buffers
//! (several stages streamed together) and sequential maps over them advance in the same
//! loop; a sequential map under a circular buffer computes each element as the ring takes it
//! (no buffer of its own). Read any other way (by a
//! parallel loop, or by a primitive that indexes it), a circular buffer is computed into a
//! buffer of its whole input and its windows are views of that.

use super::*;

/// A sequence read element by element, in order, by one sequential loop.
pub(super) enum Stream {
    /// An array, read at the loop's index.
    Array(Val),
    /// The windows of a circular buffer: the last `sz` values of `f` over `source`, in
    /// `ring` (shifted down at each step when `shift`).
    Ring {
        ring: Val,
        sz: i64,
        f: Val,
        source: Box<Stream>,
        shift: bool,
    },
    Zip(Box<Stream>, Box<Stream>),
    /// A sequential map over a stream, each element computed where the stream is read.
    Map(Val, Box<Stream>),
}

/// Is `v` a circular buffer not computed yet, or a zip with one in it (what a sequential
/// loop reads as a [`Stream`])?
pub(super) fn is_stream(v: &Val) -> bool {
    use Prim::*;
    matches!(
        v,
        Val::Deferred {
            prim: CircularBuffer | RotateValues | Zip,
            ..
        }
    )
}

impl Emitter {
    /// Allocates the rings of the circular buffers in `v` and fills each with its first
    /// values (the code emitted here runs before the loop that reads the stream).
    pub(super) fn open_stream(&mut self, v: Val) -> Result<Stream> {
        use Prim::*;
        match v {
            Val::Deferred {
                prim: prim @ (CircularBuffer | RotateValues),
                args,
                ty,
            } => {
                let (sz, element) = window_of(&ty)?;
                let sz = self.nat(&sz)?;
                let source = self.open_stream(args[1].clone())?;
                let (f, shift) = (args[0].clone(), prim == RotateValues);
                let in_registers = match shift {
                    true => self.ring_in_registers(sz, &element)?,
                    false => None,
                };
                let ring = match in_registers {
                    Some(ring) => ring,
                    None => {
                        self.allocate(&crate::rise::types::arr(Nat::cst(sz), element))?
                            .1
                    }
                };
                self.emit_loop(sz - 1, None, |em, k| {
                    let y = em.next_value(&source, &f, k)?;
                    let slot = if shift {
                        k.add(&Ix::constant(1))
                    } else {
                        k.clone()
                    };
                    let d = em.get(&ring, &slot)?;
                    em.write(y, d)
                })?;
                Ok(Stream::Ring {
                    ring,
                    sz,
                    f,
                    source: Box::new(source),
                    shift,
                })
            }
            Val::Deferred {
                prim: Zip, args, ..
            } => Ok(Stream::Zip(
                Box::new(self.open_stream(args[0].clone())?),
                Box::new(self.open_stream(args[1].clone())?),
            )),
            Val::Deferred {
                prim: MapSeq | MapSeqUnroll | MapStream | IterateStream,
                args,
                ..
            } => Ok(Stream::Map(
                args[0].clone(),
                Box::new(self.open_stream(args[1].clone())?),
            )),
            v => Ok(Stream::Array(self.force(v)?)),
        }
    }

    /// The `sz` values of a rotation held in vector variables (`ring7_0, ring7_1, ...`, one
    /// per machine vector), when they are vectors (short arrays of floats) that together fit
    /// where an accumulator may ([`Target::register_floats`]) and the lowering is the vector
    /// one; `None` otherwise.
    fn ring_in_registers(&mut self, sz: i64, element: &Type) -> Result<Option<Val>> {
        let (shape, floats) = shape_of(element, self)?;
        let fits = shape.len() == 1 && floats.count_ones() == 1 && floats >= 4;
        if !fits || sz * floats > self.register_floats {
            return Ok(None);
        }
        if self.lowering == Lowering::Scalar || self.rings_in_memory {
            return Ok(None);
        }
        let name = self.fresh("ring");
        let width = floats.min(self.machine);
        let vectors: Vec<String> = (0..sz * floats / width)
            .map(|c| format!("{name}_{c}"))
            .collect();
        self.line(&format!("f32x{width} {};", vectors.join(", ")));
        self.widths.insert(width);
        self.registers.insert(name.clone(), width);
        self.rings.insert(name.clone());
        Ok(Some(buffer_view(&name, &[sz, floats], false)))
    }

    /// Element `i` of a stream, emitted in the body of the loop that reads it at `i` (a
    /// ring computes its newest value here).
    pub(super) fn next(&mut self, s: &Stream, i: &Ix) -> Result<Val> {
        match s {
            Stream::Array(v) => self.get(v, i),
            Stream::Map(f, source) => self.next_value(source, f, i),
            Stream::Zip(a, b) => {
                let x = self.next(a, i)?;
                Ok(Val::Pair(Rc::new(x), Rc::new(self.next(b, i)?)))
            }
            Stream::Ring {
                ring,
                sz,
                f,
                source,
                shift,
            } => {
                let (sz, newest) = (*sz, i.add(&Ix::constant(sz - 1)));
                let y = self.next_value(source, f, &newest)?;
                let slot = if *shift {
                    for j in 0..sz - 1 {
                        let (from, to) = (Ix::constant(j + 1), Ix::constant(j));
                        let (x, d) = (self.get(ring, &from)?, self.get(ring, &to)?);
                        self.write(x, d)?;
                    }
                    Ix::constant(sz - 1)
                } else {
                    newest.rem(sz)
                };
                let d = self.get(ring, &slot)?;
                self.write(y, d)?;
                let (ring, i, shift) = (ring.clone(), i.clone(), *shift);
                Ok(view(sz, false, move |em, j| {
                    let slot = if shift { j.clone() } else { i.add(j).rem(sz) };
                    em.get(&ring, &slot)
                }))
            }
        }
    }

    /// `f` of element `k` of a ring's source.
    fn next_value(&mut self, source: &Stream, f: &Val, k: &Ix) -> Result<Val> {
        let x = self.next(source, k)?;
        self.apply(f.clone(), x)
    }

    /// Before the loop's last iteration `i`, where the source's last block overlaps the one
    /// before ([`value::blocks`]): gives each ring the values of the blocks that end where
    /// the last one starts, so that the last window is contiguous (the other windows are).
    pub(super) fn realign(&mut self, s: &Stream, i: &Ix) -> Result<()> {
        match s {
            Stream::Array(_) => Ok(()),
            Stream::Map(_, source) => self.realign(source, i),
            Stream::Zip(a, b) => {
                self.realign(a, i)?;
                self.realign(b, i)
            }
            Stream::Ring {
                ring,
                sz,
                f,
                source,
                shift,
            } => {
                let newest = i.add(&Ix::constant(sz - 1));
                for m in 1..*sz {
                    let x = self.block_before(source, m)?;
                    let y = self.apply(f.clone(), x)?;
                    // Where `next` finds element `newest - m` (before shifting, for a shift).
                    let slot = match shift {
                        true => Ix::constant(sz - m),
                        false => newest.add(&Ix::constant(-m)).rem(*sz),
                    };
                    let d = self.get(ring, &slot)?;
                    self.write(y, d)?;
                }
                Ok(())
            }
        }
    }

    /// The element of a stream `m` blocks before its overlapping last one ([`value::Before`]).
    fn block_before(&mut self, s: &Stream, m: i64) -> Result<Val> {
        match s {
            Stream::Array(v) => block_before(self, v, m, "a sequential window"),
            Stream::Map(f, source) => {
                let x = self.block_before(source, m)?;
                self.apply(f.clone(), x)
            }
            Stream::Zip(a, b) => {
                let x = self.block_before(a, m)?;
                Ok(Val::Pair(Rc::new(x), Rc::new(self.block_before(b, m)?)))
            }
            Stream::Ring { .. } => Err(unsupported(
                "the last window of windows overlaps the one before (give sizes its blocks divide)",
            )),
        }
    }

    /// A circular buffer read other than by a sequential loop: `f` of every input element
    /// computed once into a buffer, the windows views of it.
    pub(super) fn windows_in_memory(&mut self, f: Val, xs: Val, ty: &Type) -> Result<Val> {
        let (sz, element) = window_of(ty)?;
        if let Some(n) = self.fractional_size(ty) {
            return Err(unsupported(format!(
                "size {n} is not a whole number: the windows over blocks whose last overlaps \
                 the one before are read in order by a sequential loop or not at all (give \
                 sizes the blocks divide)"
            )));
        }
        let sz = self.nat(&sz)?;
        let xs = self.force(xs)?;
        let len = array_len(&xs)?;
        let mapped_ty = crate::rise::types::arr(Nat::cst(len), element);
        let mapped = Val::Deferred {
            prim: Prim::MapSeq,
            args: vec![f, xs],
            ty: mapped_ty.clone(),
        };
        let loaded = self.materialise(mapped, &mapped_ty)?;
        Ok(view(len - sz + 1, false, move |_, i| {
            let (loaded, i) = (loaded.clone(), i.clone());
            Ok(view(sz, false, move |em, j| em.get(&loaded, &i.add(j))))
        }))
    }
}

/// The window size and element type of a circular buffer's result type `n.sz.t`.
fn window_of(ty: &Type) -> Result<(Nat, Type)> {
    match ty {
        Type::Arr(_, window) => match &**window {
            Type::Arr(sz, element) => Ok((sz.clone(), (**element).clone())),
            _ => Err(unsupported("a circular buffer of something not windows")),
        },
        _ => Err(unsupported("a circular buffer of something not an array")),
    }
}
