//! Reductions: where the accumulator lives (a scalar, vector variables, one vector, an
//! array in memory, or the destination itself when the reduction starts from it), the loop
//! that updates it, and whether it can be updated in place, decided on the recorded reads
//! and writes of the emitted assignments ([`Access`]).

use super::*;

/// The longest sequential reduction into a scalar that is unrolled (a 3 x 3 or 4 x 4 window).
const SHORT_REDUCTION: i64 = 16;

impl Emitter {
    /// A reduction accumulates in local storage, then is written to `dest`. A scalar lives
    /// in a register; a small array (a power of two of floats, at most half the target's
    /// vector registers: a vector, a row of a tile, a tile of a few rows) in C vector
    /// variables, one per machine vector, when every use of it is whole vectors named by
    /// constants (short loops around them unrolled), else in one vector variable of its
    /// size, read and written by the float; a larger array in memory. Arrays in memory made the update of cache-blocks' 32-float rows load
    /// and store through the stack (91 against 100 GFLOP/s); one vector variable wider than
    /// the machine's, or an array of machine vectors, ran the register-blocked kernel at 4
    /// and 35 GFLOP/s against 45 with a variable per machine vector.
    pub(super) fn write_reduction(
        &mut self,
        prim: Prim,
        args: Vec<Val>,
        xs: &Val,
        ty: &Type,
        dest: Val,
    ) -> Result<()> {
        let (shape, floats) = shape_of(ty, self)?;
        let storage = match shape.is_empty() {
            true => Storage::Scalar,
            false if self.lowering == Lowering::Scalar => Storage::Memory,
            false if floats > self.register_floats || floats.count_ones() != 1 => Storage::Memory,
            false => Storage::Registers,
        };
        if storage == Storage::Memory
            && self.reduce_in_destination(prim, &args, xs, &shape, &dest)?
        {
            return Ok(());
        }
        let mark = self.mark();
        let acc = self.reduce_into(storage, prim, &args, xs, &shape, dest.clone())?;
        if storage != Storage::Registers {
            return Ok(());
        }
        let next = next_of(&acc);
        let mine = |a: &str| a == acc || a == next;
        if self.unnamed.iter().any(|(a, _)| mine(a)) || self.spilled.iter().any(|a| mine(a)) {
            self.rewind(&mark);
            self.reduce_into(Storage::Vector, prim, &args, xs, &shape, dest)?;
        }
        Ok(())
    }

    /// Emits a reduction accumulating in `storage` and returns the accumulator's name. An
    /// array accumulator is updated in place when every statement that reads it reads exactly
    /// the element it writes (element-wise updates); otherwise the new value is computed into
    /// a second one (`NAME_next`), which is then swapped in.
    fn reduce_into(
        &mut self,
        storage: Storage,
        prim: Prim,
        args: &[Val],
        xs: &Val,
        shape: &[i64],
        dest: Val,
    ) -> Result<String> {
        let acc = self.fresh("acc");
        let next = next_of(&acc);
        let floats: i64 = shape.iter().product();
        // The declaration of vector variables or arrays, rewritten without `NAME_next` when
        // unused.
        let mut declaration = None;
        let swap = match storage {
            Storage::Scalar => {
                self.line(&format!("float {acc};"));
                String::new()
            }
            Storage::Registers | Storage::Vector => {
                // Registers: `acc_0, acc_1, ...`, one per machine vector; Vector: `acc`.
                let width = match storage {
                    Storage::Registers => floats.min(self.machine),
                    _ => floats,
                };
                let vectors = |name: &str| -> Vec<String> {
                    match storage {
                        Storage::Registers => {
                            (0..floats / width).map(|c| format!("{name}_{c}")).collect()
                        }
                        _ => vec![name.to_string()],
                    }
                };
                let (a, b) = (vectors(&acc), vectors(&next));
                let line = |vars: &[String]| format!("f32x{width} {};", vars.join(", "));
                let both = [a.clone(), b.clone()].concat();
                declaration = Some((self.body.len(), line(&both), line(&a)));
                self.line(&line(&both));
                self.widths.insert(width);
                if storage == Storage::Registers {
                    self.registers.insert(acc.clone(), width);
                    self.registers.insert(next.clone(), width);
                }
                let swap = a.iter().zip(&b).map(|(a, b)| format!("{a} = {b};"));
                swap.collect::<Vec<_>>().join(" ")
            }
            Storage::Memory => {
                let a = aligned();
                let both = format!(
                    "float {acc}_a[{floats}] {a}, {acc}_b[{floats}] {a}, *{acc} = {acc}_a, *{next} = {acc}_b;"
                );
                declaration = Some((
                    self.body.len(),
                    both.clone(),
                    format!("float {acc}[{floats}] {a};"),
                ));
                self.line(&both);
                self.aligned.insert(acc.clone());
                self.aligned.insert(next.clone());
                format!("{{ float *t = {acc}; {acc} = {next}; {next} = t; }}")
            }
        };
        let (cur, next) = match storage {
            Storage::Scalar => (Scalar::code(acc.as_str()), Scalar::code(acc.as_str())),
            _ => (
                buffer_view(&acc, shape, false),
                buffer_view(&next, shape, false),
            ),
        };
        self.write(args[1].clone(), cur.clone())?;
        let len = array_len(xs)?;
        let pragma = self.reduction_pragma(prim, storage, len, &args[0], &acc);
        // One step; `false` if it is not in place (it wrote `next` and swapped).
        let step = |em: &mut Self, i: &Ix| -> Result<bool> {
            let x = em.get(xs, i)?;
            let step = em.apply(args[0].clone(), cur.clone())?;
            let y = em.apply(step, x)?;
            let mark = em.mark();
            em.write(y.clone(), cur.clone())?;
            if storage != Storage::Scalar && !in_place(&em.accesses[mark.accesses..], &acc) {
                em.rewind(&mark);
                em.write(y, next.clone())?;
                em.line(&swap);
                return Ok(false);
            }
            Ok(true)
        };
        let mark = self.mark();
        let i = self.open_loop(len, pragma.as_deref());
        let mut in_place = step(self, &i)?;
        self.close_loop();
        // A short reduction over the windows of a ring in registers is unrolled, so that
        // each window is named by constants.
        let var = i.to_string();
        let unnamed = &self.unnamed[mark.unnamed..];
        if len <= MAX_UNROLLED
            && unnamed
                .iter()
                .any(|(a, ix)| self.rings.contains(a) && ix.mentions(&var))
        {
            self.rewind(&mark);
            in_place = true;
            for c in 0..len {
                in_place &= step(self, &Ix::constant(c))?;
            }
        }
        if let (true, Some((at, both, one))) = (in_place, declaration) {
            let at = at + self.body[at..].find(&both).expect("the declaration stays");
            self.body.replace_range(at..at + both.len(), &one);
        }
        self.write(cur, dest)?;
        Ok(acc)
    }
}

impl Emitter {
    /// A reduction that starts from its destination's own value (`reduceSeq f acc xs`
    /// written back into `acc`: a reduction chained onto an enclosing one's accumulator, a
    /// block of a reduction's steps) accumulates in the destination itself, with no copy in
    /// and out, when its steps read the destination only where they update it, element by
    /// element, and their input and function do not read it at all (probed with the
    /// accumulator elsewhere). `false`, with nothing emitted, where it does not.
    fn reduce_in_destination(
        &mut self,
        prim: Prim,
        args: &[Val],
        xs: &Val,
        shape: &[i64],
        dest: &Val,
    ) -> Result<bool> {
        let Some(array) = self.same_elements(&args[1], dest, shape) else {
            return Ok(false);
        };
        let len = array_len(xs)?;
        let pragma = self.reduction_pragma(prim, Storage::Memory, len, &args[0], &array);
        let mark = self.mark();
        // One step updating `acc`: whether it reads or writes `array` in place only, and
        // whether it reads it at all.
        let step = |em: &mut Self, acc: &Val| -> Result<(bool, bool)> {
            let i = em.open_loop(len, pragma.as_deref());
            let x = em.get(xs, &i)?;
            let f = em.apply(args[0].clone(), acc.clone())?;
            let y = em.apply(f, x)?;
            let at = em.mark();
            em.write(y, acc.clone())?;
            let steps = &em.accesses[at.accesses..];
            let reads = steps.iter().any(|a| {
                let mut elements = a.target.iter().chain(&a.reads);
                elements.any(|(name, _)| **name == *array)
            });
            let in_place = in_place(steps, &array) && em.unnamed.len() == mark.unnamed;
            em.close_loop();
            Ok((in_place, reads))
        };
        let (_, elsewhere) = step(self, &buffer_view("@acc", shape, false))?;
        self.rewind(&mark);
        if elsewhere {
            return Ok(false);
        }
        let (in_place, _) = step(self, dest)?;
        if !in_place {
            self.rewind(&mark);
        }
        Ok(in_place)
    }

    /// The array whose elements `a` and `b` both are, element for element, over `shape`.
    fn same_elements(&mut self, a: &Val, b: &Val, shape: &[i64]) -> Option<Rc<str>> {
        self.probe(|em| {
            let (mut a, mut b) = (a.clone(), b.clone());
            for d in 0..shape.len() {
                let i = Ix::var(&format!("@element{d}"));
                (a, b) = (em.get(&a, &i)?, em.get(&b, &i)?);
            }
            Ok(match (a, b) {
                (
                    Val::Scalar(Scalar::Load { array, ix }),
                    Val::Scalar(Scalar::Load {
                        array: other,
                        ix: at,
                    }),
                ) if array == other && ix == at => Some(array),
                _ => None,
            })
        })
    }

    /// The pragma of a reduction's loop over `len` elements with operator `op` into `acc`:
    /// OpenMP's for a parallel sum into a scalar, an unrolling one for a short sequential
    /// reduction into a scalar (a stencil's window, a small dot product: the C compiler then
    /// vectorises the loop around it instead of running it per element) or where asked for.
    fn reduction_pragma(
        &mut self,
        prim: Prim,
        storage: Storage,
        len: i64,
        op: &Val,
        acc: &str,
    ) -> Option<String> {
        match prim {
            Prim::ReduceSeqUnroll => Some("GCC unroll 64".to_string()),
            Prim::ReduceSeq if storage == Storage::Scalar && len <= SHORT_REDUCTION => {
                Some(format!("GCC unroll {SHORT_REDUCTION}"))
            }
            Prim::ReducePar if storage == Storage::Scalar && self.adds(op) => {
                Some(format!("omp parallel for reduction(+:{acc})"))
            }
            _ => None,
        }
    }

    /// Is the reduction's operator `fun a x => a + x` (or `x + a`) on scalars?
    fn adds(&mut self, op: &Val) -> bool {
        let mark = self.mark();
        let (a, x) = ("rise_sum_a", "rise_sum_x");
        let sum = self
            .apply(op.clone(), Scalar::code(a))
            .and_then(|step| self.apply(step, Scalar::code(x)));
        self.rewind(&mark);
        let Ok(Val::Scalar(Scalar::Op("+", l, r))) = sum else {
            return false;
        };
        let name = |s: &Scalar| match s {
            Scalar::Code(c) => Some(c.to_string()),
            _ => None,
        };
        matches!(
            (name(&l).as_deref(), name(&r).as_deref()),
            (Some(l), Some(r)) if (l, r) == (a, x) || (l, r) == (x, a)
        )
    }
}

/// An emitted assignment: the array element it writes (`None`: a scalar variable) and the
/// array elements it reads. Indices of a vector statement are those of its lane, named
/// [`LANE`] in every such statement, so that two statements over the same elements agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub target: Option<(Rc<str>, Ix)>,
    pub reads: Vec<(Rc<str>, Ix)>,
}

impl Access {
    pub(super) fn new(target: &Scalar, value: &Scalar) -> Access {
        let target = match target {
            Scalar::Load { array, ix } => Some((array.clone(), ix.clone())),
            _ => None,
        };
        let mut reads = vec![];
        value.loads(&mut reads);
        Access { target, reads }
    }

    /// The access with the lane variable `lane` named [`LANE`].
    pub(super) fn with_lane(self, lane: &str) -> Access {
        let rename = |(a, ix): (Rc<str>, Ix)| (a, ix.renamed(lane, LANE));
        Access {
            target: self.target.map(rename),
            reads: self.reads.into_iter().map(rename).collect(),
        }
    }
}

/// The lane variable's name in a vector statement's [`Access`] (no C variable has it).
pub(super) const LANE: &str = "@lane";

/// Where a reduction's accumulator lives: a scalar variable, vector variables of the
/// machine's vector width, one vector variable of its size, or an array in memory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Storage {
    Scalar,
    Registers,
    Vector,
    Memory,
}

/// The name of the accumulator `acc`'s second copy (the next value, when not in place).
fn next_of(acc: &str) -> String {
    format!("{acc}_next")
}

/// Can the assignments `code`, which update the accumulator array `acc`, run in place?
/// `code` writes each element of `acc` once (it stores a whole array value), so yes when no
/// assignment reads an element after it may have been overwritten:
/// - every assignment that reads `acc` writes `acc` at exactly the index it reads (an
///   element-wise update), or
/// - every read and write of `acc` is at one and the same index, and no read follows the
///   first write, except within a writing assignment (a row loaded into registers, updated
///   there and stored back where it came from: each iteration of the loops around it reads
///   only the elements it writes, before writing them; loop variables are fresh, so one
///   index means the same loops).
pub fn in_place(code: &[Access], acc: &str) -> bool {
    let of_acc = |(array, _): &&(Rc<str>, Ix)| &**array == acc;
    let writes = |a: &Access| a.target.as_ref().is_some_and(|t| of_acc(&t));
    let element_wise = code.iter().all(|a| {
        let mut reads = a.reads.iter().filter(of_acc);
        match &a.target {
            Some((array, ix)) if &**array == acc => reads.all(|(_, r)| r == ix),
            _ => reads.next().is_none(),
        }
    });
    let first_write = code.iter().position(writes).unwrap_or(code.len());
    let mut indices = code
        .iter()
        .flat_map(|a| {
            a.target
                .iter()
                .filter(of_acc)
                .chain(a.reads.iter().filter(of_acc))
        })
        .map(|(_, ix)| ix);
    let one_index = indices
        .next()
        .is_none_or(|first| indices.all(|ix| ix == first));
    let reads_first = code[first_write..]
        .iter()
        .all(|a| writes(a) || !a.reads.iter().any(|r| of_acc(&r)));
    element_wise || (one_index && reads_first)
}

#[cfg(test)]
mod tests {
    use super::{in_place, Access, Ix};

    fn access(target: (&str, &str), reads: &[(&str, &str)]) -> Access {
        let load = |(a, i): (&str, &str)| (a.into(), Ix::var(i));
        Access {
            target: Some(load(target)),
            reads: reads.iter().map(|r| load(*r)).collect(),
        }
    }

    #[test]
    fn in_place_only_when_each_statement_reads_what_it_writes() {
        assert!(in_place(
            &[access(("acc", "i"), &[("acc", "i"), ("x", "i")])],
            "acc"
        ));
        // Reads another element (a transpose, a shift): not in place.
        assert!(!in_place(&[access(("acc", "i"), &[("acc", "j")])], "acc"));
        // Read into another buffer by one loop, written back by another (loop variables are
        // fresh: another name is another loop); the rule does not follow that.
        let copy = [
            access(("buf", "i"), &[("acc", "i")]),
            access(("acc", "j"), &[("buf", "j")]),
        ];
        assert!(!in_place(&copy, "acc"));
        // Another array whose name extends `acc` is not the accumulator.
        assert!(in_place(&[access(("acc2", "i"), &[("acc2", "j")])], "acc"));
        // A row loaded into registers, updated there and stored back where it came from.
        let row = [
            access(("r", "l"), &[("acc", "i")]),
            access(("r", "l"), &[("r", "l"), ("x", "k")]),
            access(("acc", "i"), &[("r", "l")]),
        ];
        assert!(in_place(&row, "acc"));
        // Stored back elsewhere (a shift of the rows), or read again after the store.
        let shifted = [
            row[0].clone(),
            row[1].clone(),
            access(("acc", "j"), &[("r", "l")]),
        ];
        assert!(!in_place(&shifted, "acc"));
        let reread = [row.to_vec(), vec![access(("s", "l"), &[("acc", "i")])]].concat();
        assert!(!in_place(&reread, "acc"));
    }
}
