//! Timing generated C: a program checked against its meaning, then timed beside its scalar
//! lowering (the two in turn, run by run, in one process) and, where it computes a matrix
//! product, the reference GEMM, in interleaved rounds (program and scalar, reference,
//! program and scalar, ...; medians). What `bench-c` and the reproduction's tables time with.

use super::reference;
use super::run::{
    check, compile_with_scalar, COptions, Compiled, Expected, RoundLength, Validation,
};
use crate::error::Result;
use crate::rise::term::Term;
use std::rc::Rc;

/// The median of some measurements (the upper one of an even count; NaN when there are
/// none).
pub fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

/// How many interleaved rounds to time: `max`, or fewer once at least `min` have run and
/// every per-round ratio of the run ([`settled`]) agrees within [`SETTLED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounds {
    pub min: usize,
    pub max: usize,
}

impl Rounds {
    /// Always `n` rounds (at least one).
    pub fn exactly(n: usize) -> Rounds {
        Rounds { min: n, max: n }
    }

    /// At least three rounds, at most `max`: the reproduction's tables.
    pub fn up_to(max: usize) -> Rounds {
        Rounds {
            min: max.min(3),
            max,
        }
    }

    /// Whether to time another round after `done`, given each compared time's per-round
    /// ratios to the program's.
    pub fn more(&self, done: usize, ratios: &[&[f64]]) -> bool {
        done < self.min.max(1) || (done < self.max && !settled(ratios))
    }
}

/// How far apart a run's per-round ratios may lie, relative to their median, for the run
/// to stop before its most rounds.
pub const SETTLED: f64 = 0.05;

/// Whether each series of per-round ratios lies within [`SETTLED`] of its median (an empty
/// series does).
pub fn settled(ratios: &[&[f64]]) -> bool {
    ratios.iter().all(|r| {
        let m = median(r);
        r.iter().all(|x| (x - m).abs() <= SETTLED * m)
    })
}

/// A program's validated, timed runs, its scalar lowering's and, where it computes the
/// reference's product, the reference's times on the same inputs.
pub struct Measured {
    /// The first round's check (its inputs, output and error).
    pub check: Validation,
    /// Every timed run of every round, milliseconds.
    pub times_ms: Vec<f64>,
    pub gflops: f64,
    pub gbytes: f64,
    pub reference_ms: Option<Vec<f64>>,
    /// The scalar lowering's timed runs (validated as the program is).
    pub scalar_ms: Option<Vec<f64>>,
    /// Per round, the scalar lowering's median time over the program's.
    scalar_ratios: Vec<f64>,
    /// Per round, the reference's median time over the program's: the machine's speed
    /// drifts between rounds, so the ratio is the median of these.
    round_ratios: Vec<f64>,
    /// A peer's timed runs ([`measure_beside`]), and per round its median over the program's.
    pub peer_ms: Option<Vec<f64>>,
    peer_ratios: Vec<f64>,
}

impl Measured {
    pub fn median_ms(&self) -> f64 {
        median(&self.times_ms)
    }
    pub fn min_ms(&self) -> f64 {
        self.times_ms.iter().copied().fold(f64::INFINITY, f64::min)
    }
    /// The scalar lowering's median time.
    pub fn scalar_median_ms(&self) -> Option<f64> {
        self.scalar_ms.as_deref().map(median)
    }
    /// The scalar lowering's speed relative to this program's: the median of the rounds'
    /// ratios of its median time over the program's (below 1: the program is slower).
    pub fn scalar_ratio(&self) -> Option<f64> {
        self.scalar_ms.as_ref()?;
        Some(median(&self.scalar_ratios))
    }
    /// The peer's median time and this program's speed relative to it (the median of the
    /// rounds' ratios).
    pub fn peer(&self) -> Option<(f64, f64)> {
        let times = self.peer_ms.as_ref()?;
        Some((median(times), median(&self.peer_ratios)))
    }

    /// The reference's GFLOP/s (2 m n k per second) and this program's speed relative to it
    /// (the median of the rounds' ratios).
    pub fn reference(&self, exe: &Compiled) -> Option<(f64, f64)> {
        let times = self.reference_ms.as_ref()?;
        let ms = median(times);
        Some((exe.flops / (ms * 1e6), median(&self.round_ratios)))
    }
}

/// `program` (lowered, [`super::sequential`]) compiled at `sizes` with `opts` and in its
/// scalar lowering, with the interpreter's output of `meaning` (the program itself, or the
/// one it was optimised from) on the checking inputs: what [`measure`] takes.
pub fn compile_both(
    program: &Rc<Term>,
    meaning: &Rc<Term>,
    sizes: &[i64],
    opts: &COptions,
) -> Result<(Compiled, Compiled, Expected)> {
    let (exe, scalar) = compile_with_scalar(program, sizes, opts)?;
    let expected = Expected::of(&exe, meaning)?;
    Ok((exe, scalar, expected))
}

/// Checks `exe` (and its scalar lowering `scalar`, if given, in the same process) against its
/// program's meaning (`expected`), one run each: the program's check.
pub fn check_once(
    exe: &Compiled,
    scalar: Option<&Compiled>,
    expected: &Expected,
    opts: &COptions,
) -> Result<Validation> {
    let once = COptions {
        runs: 1,
        round: None,
        ..opts.clone()
    };
    match scalar {
        Some(scalar) => Ok(exe.check_beside(scalar, expected, &once)?.0),
        None => check(exe, expected, &once),
    }
}

/// Times `exe`, its scalar lowering `scalar` and the reference in interleaved `rounds` of
/// `opts.runs` runs each, or fewer for a slow program (a round of its runs lasts about
/// [`ROUND`]'s time, one run at least) and more for a fast one, having checked each against
/// its program's meaning (`expected`) in the first round (the outputs of its warm-up runs).
/// The program and its scalar lowering (one executable, [`compile_with_scalar`]) run in
/// turn, run by run, in one process ([`Compiled::time_beside`]).
pub fn measure(
    exe: &Compiled,
    scalar: Option<&Compiled>,
    expected: &Expected,
    opts: &COptions,
    rounds: Rounds,
) -> Result<Measured> {
    measure_beside(exe, scalar, expected, opts, rounds, None)
}

/// One round of a peer timed beside a program: the milliseconds of each run it timed.
pub type Peer<'a> = &'a mut dyn FnMut() -> Result<Vec<f64>>;

/// [`measure`], with `peer`'s rounds interleaved too (after the program's and the reference's
/// in each round).
pub fn measure_beside(
    exe: &Compiled,
    scalar: Option<&Compiled>,
    expected: &Expected,
    opts: &COptions,
    rounds: Rounds,
    mut peer: Option<Peer>,
) -> Result<Measured> {
    let timed = COptions {
        round: Some(ROUND),
        ..opts.clone()
    };
    let mut checked: Option<Validation> = None;
    let mut product = None;
    let mut times_ms = vec![];
    let mut reference_ms = vec![];
    let mut scalar_ms = vec![];
    let mut round_ratios = vec![];
    let mut peer_ms = vec![];
    let mut peer_ratios = vec![];
    let mut scalar_ratios = vec![];
    let mut done = 0;
    while rounds.more(done, &[&scalar_ratios, &round_ratios, &peer_ratios]) {
        done += 1;
        let round = match (scalar, &checked) {
            (Some(scalar), None) => {
                let (ours, theirs) = exe.check_beside(scalar, expected, &timed)?;
                scalar_ratios.push(theirs.median_ms / ours.median_ms);
                scalar_ms.extend(theirs.times_ms);
                checked.insert(ours).times_ms.clone()
            }
            (Some(scalar), Some(_)) => {
                let (ours, theirs) = exe.time_beside(scalar, expected, &timed)?;
                scalar_ratios.push(median(&theirs) / median(&ours));
                scalar_ms.extend(theirs);
                ours
            }
            (None, None) => checked
                .insert(check(exe, expected, &timed)?)
                .times_ms
                .clone(),
            (None, Some(_)) => exe.time(expected, &timed)?,
        };
        let checked = checked.as_ref().expect("checked in the first round");
        let product =
            *product.get_or_insert_with(|| as_product(exe, expected, checked, opts.tolerance));
        if let Some(sizes) = product {
            let (a, b) = (&expected.inputs[0], &expected.inputs[1]);
            let reference = reference::time(a, b, sizes, opts.threads, opts.runs);
            round_ratios.push(median(&reference) / median(&round));
            reference_ms.extend(reference);
        }
        if let Some(peer) = peer.as_mut() {
            let theirs = peer()?;
            peer_ratios.push(median(&theirs) / median(&round));
            peer_ms.extend(theirs);
        }
        times_ms.extend(round);
    }
    let checked = checked.expect("a first round");
    let ms = median(&times_ms);
    Ok(Measured {
        gflops: checked.gflops * checked.median_ms / ms,
        gbytes: checked.gbytes * checked.median_ms / ms,
        check: checked,
        times_ms,
        reference_ms: product.flatten().map(|_| reference_ms),
        scalar_ms: scalar.map(|_| scalar_ms),
        scalar_ratios,
        round_ratios,
        peer_ms: peer.map(|_| peer_ms),
        peer_ratios,
    })
}

/// The sizes (m, n, k) when the program's output is the product of its two inputs (an
/// m x k matrix and a k x n one, n = 1 for a vector): decided by computing the reference's
/// product on the run's inputs, not by the program's shape alone.
fn as_product(
    exe: &Compiled,
    expected: &Expected,
    check: &Validation,
    tolerance: f64,
) -> Option<(usize, usize, usize)> {
    let (inputs, output) = exe.shapes();
    let [a, b] = inputs else { return None };
    let [m, k] = a.as_slice() else { return None };
    let (m, k) = (*m as usize, *k as usize);
    let b_len: i64 = b.iter().product();
    let n = b_len as usize / k.max(1);
    let out_len = output.iter().product::<i64>() as usize;
    if k == 0 || n * k != b_len as usize || out_len != m * n {
        return None;
    }
    let c = reference::product(&expected.inputs[0], &expected.inputs[1], (m, n, k), 1);
    let agrees = c
        .iter()
        .zip(&check.output)
        .all(|(r, x)| ((x - r).abs() / r.abs().max(1.0)) as f64 <= tolerance);
    agrees.then_some((m, n, k))
}

/// A round of a program's timed runs: about a second, one run at least; a fast program's at
/// least 20 ms (a round of a few runs of a tenth of a millisecond is as much the threads'
/// wake-up as the program), in at most 100 runs unless more are asked for.
pub const ROUND: RoundLength = RoundLength {
    ms: 1000.0,
    shortest_ms: 20.0,
    most: 100,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_stop_early_only_when_every_ratio_agrees() {
        let rounds = Rounds::up_to(5);
        let (steady, drifting) = ([1.50, 1.52, 1.49], [1.50, 1.70, 1.49]);
        assert!(rounds.more(2, &[&steady[..2]]), "at least three");
        assert!(!rounds.more(3, &[&steady]), "settled after three");
        assert!(rounds.more(3, &[&steady, &drifting]), "one series drifts");
        assert!(!rounds.more(5, &[&drifting]), "at most five");
        assert!(
            Rounds::exactly(4).more(3, &[&steady]),
            "bench-c's rounds are all run"
        );
        assert!(!Rounds::exactly(4).more(4, &[&drifting]));
        assert_eq!(Rounds::up_to(2), Rounds { min: 2, max: 2 });
    }
}
