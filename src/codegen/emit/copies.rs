//! Copies, written in the order the memory system wants: a transposing copy in blocks of a
//! cache line, a copy of rows in the order its source lies in memory. Only for plain copies
//! of loads between different arrays, whose order does not matter.

use super::*;

impl Emitter {
    /// Writes a copy that transposes (`d[i][j] = s[j][i]`: contiguous along `j` in the
    /// destination, along `i` in the source, rows of the source far apart) in blocks of
    /// [`LINE`] rows: `for ib { for j { for ii < LINE { d[ib LINE + ii][j] = ... } } }`, so that
    /// each line of the source read is used whole while it is in the cache (copied row by row,
    /// each element read is a line of its own, and rows 4 KB apart evict each other). Only for
    /// plain copies of loads between different arrays, whose order does not matter; otherwise
    /// nothing is emitted.
    pub(super) fn write_transposed(&mut self, v: &Val, dest: &Val, len: i64) -> Result<bool> {
        if len % LINE != 0 || len == LINE || !matches!(v, Val::Array { .. }) {
            return Ok(false);
        }
        // Probed with variables no C code names (taken back: not fresh names).
        let (i, j) = ("@row", "@col");
        // Element `j` of row `i` of the value and of the destination, and the rows' length.
        let element = |em: &mut Self, i: &Ix, j: &Ix| -> Result<Option<(i64, Val, Val)>> {
            let (row, to) = (em.get(v, i)?, em.get(dest, i)?);
            let Val::Array {
                len, vector: false, ..
            } = row
            else {
                return Ok(None);
            };
            Ok(Some((len, em.get(&row, j)?, em.get(&to, j)?)))
        };
        let inner = self.probe(|em| {
            let Some((inner, x, d)) = element(em, &Ix::var(i), &Ix::var(j))? else {
                return Ok(None);
            };
            let transposes = copied(x, d).is_some_and(|(from, to)| {
                to.unit_stride_base(j).is_some()
                    && from.unit_stride_base(i).is_some()
                    && from.coefficient(j) >= LINE
            });
            Ok(transposes.then_some(inner))
        });
        let Some(inner) = inner.filter(|&n| n > 1) else {
            return Ok(false);
        };
        let block = self.open_loop(len / LINE, None);
        let j = self.open_loop(inner, None);
        let within = self.open_loop(LINE, None);
        let i = block.scale(LINE).add(&within);
        let Some((_, x, d)) = element(self, &i, &j)? else {
            unreachable!("the probe saw an array of scalars");
        };
        self.write(x, d)?;
        for _ in 0..3 {
            self.close_loop();
        }
        Ok(true)
    }

    /// Writes a copy of rows (`d[o][n][l] = s[..]`: each row `l` contiguous in both arrays,
    /// whole cache lines) with the loops over `o` and `n` exchanged when the source is read
    /// in address order so (its rows `n` further apart than its rows `o`): `for n { for o {
    /// row } }`, the outer loop keeping the parallel pragma. A read that misses waits for
    /// memory, a store does not (it is buffered), so reads in order matter more than writes
    /// in order: `parallel` packs B's column blocks (`o`) by reading 128 bytes of each of
    /// B's 1,024 rows (`n`), each row on a page of its own. Only for plain copies of loads
    /// between different arrays, whose order does not matter; otherwise nothing is emitted.
    pub(super) fn write_in_source_order(
        &mut self,
        v: &Val,
        dest: &Val,
        len: i64,
        pragma: Option<&str>,
    ) -> Result<bool> {
        // Probed with variables no C code names (taken back: not fresh names).
        let (outer, inner, lane) = ("@o", "@n", "@lane");
        // Row `n` of element `o` of the value and of the destination, and the lengths of
        // the elements and of the rows.
        let rows = |em: &mut Self, o: &Ix, n: &Ix| -> Result<Option<(i64, i64, Val, Val)>> {
            let (x, to) = (em.get(v, o)?, em.get(dest, o)?);
            let Val::Array { len: rows_len, .. } = x else {
                return Ok(None);
            };
            let (row, to) = (em.get(&x, n)?, em.get(&to, n)?);
            let Val::Array { len: row_len, .. } = row else {
                return Ok(None);
            };
            Ok(Some((rows_len, row_len, row, to)))
        };
        let rows_len = self.probe(|em| {
            let (o, n, l) = (Ix::var(outer), Ix::var(inner), Ix::var(lane));
            let Some((rows_len, row_len, row, to)) = rows(em, &o, &n)? else {
                return Ok(None);
            };
            let (x, d) = (em.get(&row, &l)?, em.get(&to, &l)?);
            // Rows `n` at most a row apart are read in order already.
            let out_of_order = copied(x, d).is_some_and(|(from, to)| {
                row_len % LINE == 0
                    && from.unit_stride_base(lane).is_some()
                    && to.unit_stride_base(lane).is_some()
                    && from.coefficient(inner) > from.coefficient(outer).max(row_len)
            });
            Ok(out_of_order.then_some(rows_len))
        });
        let Some(rows_len) = rows_len.filter(|&n| n > 1) else {
            return Ok(false);
        };
        let n = self.open_loop(rows_len, pragma);
        let o = self.open_loop(len, None);
        let Some((_, _, row, to)) = rows(self, &o, &n)? else {
            unreachable!("the probe saw arrays of rows");
        };
        self.write(row, to)?;
        self.close_loop();
        self.close_loop();
        Ok(true)
    }

    /// What `look` finds at a value, when looking emitted no code (it evaluates elements at
    /// index variables no C code names); whatever it emitted is taken back either way.
    pub(super) fn probe<T>(
        &mut self,
        look: impl FnOnce(&mut Self) -> Result<Option<T>>,
    ) -> Option<T> {
        let mark = self.mark();
        let found = look(self).ok().flatten();
        let found = found.filter(|_| self.body.len() == mark.body);
        self.rewind(&mark);
        found
    }
}

/// The source's and the destination's indices when writing `x` to `d` is a plain copy: a
/// load stored into another array.
fn copied(x: Val, d: Val) -> Option<(Ix, Ix)> {
    match (x, d) {
        (
            Val::Scalar(Scalar::Load { array: a, ix: from }),
            Val::Scalar(Scalar::Load { array: b, ix: to }),
        ) if a != b => Some((from, to)),
        _ => None,
    }
}

/// Floats in a cache line: the block of a transposing copy ([`Emitter::write_transposed`]).
const LINE: i64 = 16;
