//! Remarks on what the C will cost that the program does not show.
//!
//! A loop that reads (or writes) one line of an array per iteration, each a multiple of the
//! level-1 data cache's way apart (4 KB on most cores: rows of 1024 or 4096 floats), fills
//! one of the cache's sets. With more iterations than the set has lines, and a loop around it
//! that uses the same lines again (the next floats of each row), every access misses: the
//! lines evict each other before they are used again. Which loops do that is the program's
//! decision (a block of rows reduced column by column) and the sizes', not the generator's,
//! so it says so, and names the schedule that avoids it (each line used whole before the
//! next), rather than changing the loops.

use super::reduction::Access;
use super::Emitter;

impl Emitter {
    /// Remarks on each write and read of `access` in memory whose lines, one per iteration
    /// of an enclosing loop, fall into one set of the level-1 data cache, more of them than
    /// it holds, while a loop around that one uses the same lines.
    pub(super) fn remark_on_sets(&mut self, access: &Access) {
        let l1 = self.l1;
        let loops: Vec<(&str, i64)> = (self.loop_vars.iter().zip(&self.trips))
            .filter_map(|(v, trips)| Some((v.as_deref()?, *trips)))
            .collect();
        let mut found = vec![];
        let writes = access.target.iter().map(|w| ("writes", w));
        for (verb, (array, ix)) in writes.chain(access.reads.iter().map(|r| ("reads", r))) {
            if self.registers.contains_key(&**array) {
                continue;
            }
            let bytes = |v: &str| 4 * ix.coefficient(v).abs();
            for (k, &(v, trips)) in loops.iter().enumerate() {
                let stride = bytes(v);
                let one_set = stride >= l1.line && stride % l1.way_bytes() == 0;
                let reuser = loops[..k]
                    .iter()
                    .find(|(u, _)| (1..l1.line).contains(&bytes(u)));
                if let Some((u, _)) = reuser.filter(|_| one_set && trips > l1.ways) {
                    found.push(format!(
                        "the loop over `{v}` {verb} `{array}` {stride} bytes apart, one line per \
                         iteration: its {trips} lines fall into one set of this machine's level-1 \
                         data cache, which holds {} lines a set ({} bytes apart share a set), so \
                         they evict each other before the loop around it {verb} them again; a \
                         stride that is not a multiple of {} bytes, or at most {} iterations, \
                         keeps them, and so does using each line whole before the next: the loop \
                         over `{u}` in chunks of a line inside this one (a reduction's, as \
                         rules/mv.rules' `reduce-seq-chunks<line>` makes it)",
                        l1.ways,
                        l1.way_bytes(),
                        l1.way_bytes(),
                        l1.ways,
                    ));
                }
            }
        }
        for remark in found {
            if !self.remarks.contains(&remark) {
                self.remarks.push(remark);
            }
        }
    }
}
