//! Short arrays as whole-vector C statements on GCC vector types of the machine's width:
//! loads, broadcasts and arithmetic lane by lane as one statement, register accumulators
//! named by constants, aligned types where the address is, and a large output's vectors
//! stored past the cache.

use super::*;

impl Emitter {
    /// Writes a short array (4 to 64 elements, a power of two: a Rise vector, or a row held
    /// in vector registers) as C vector statements, one per machine vector of its lanes, when
    /// its lanes are contiguous in the destination and each lane reads either the same scalar
    /// or contiguous elements: `*(f32x8 *)&out[b] = acc5_0 + a[i] * *(f32x8 *)&p[c];`.
    /// Otherwise nothing is emitted and the caller writes lane by lane.
    pub(super) fn write_whole(&mut self, v: &Val, dest: &Val, len: i64) -> Result<bool> {
        let short = (4..=64).contains(&len) && len.count_ones() == 1;
        if !short || self.lowering == Lowering::Scalar {
            return Ok(false);
        }
        let lane = self.fresh("lane");
        let l = Ix::var(&lane);
        // Lanes are evaluated once to look at them; if they cannot be one statement, what
        // that emitted is taken back (a hoisted value stays: the prologue keeps it).
        let mark = self.mark();
        self.trips.push(len);
        self.ranges.insert(lane.clone(), (0, len - 1));
        let lanes = match (self.get(v, &l), self.get(dest, &l)) {
            (Ok(Val::Scalar(x)), Ok(Val::Scalar(d))) if self.body.len() == mark.body => {
                Some((x, d))
            }
            _ => None,
        };
        self.trips.pop();
        // Wider than a machine vector: one statement per machine vector of the lanes (GCC
        // splits a wider vector type itself, but moves its halves through the stack).
        let width = len.min(self.machine);
        let mut statements = vec![];
        let access = lanes.and_then(|(x, d)| {
            let Scalar::Load { array, ix } = &d else {
                return None;
            };
            let base = ix.unit_stride_base(&lane)?;
            for offset in (0..len).step_by(width as usize) {
                let at = base.add(&Ix::constant(offset));
                let (value, is_vector) = self.vectorise(&x, &lane, width, offset)?;
                let value = match is_vector {
                    true => value,
                    false => format!("(f32x{width}){{}} + {value}"),
                };
                let streamed = self.stream_output
                    && &**array == OUTPUT
                    && width == self.machine
                    && at.rem(width) == Ix::constant(0);
                statements.push(match streamed {
                    true => format!("rise_stream{width}(&{array}[{at}], {value});"),
                    false => format!("{} = {value};", self.vector_ref(array, &at, width)),
                });
                self.streams += usize::from(streamed);
            }
            self.lanewise.remove(&**array);
            Some(Access::new(&d, &x).with_lane(&lane))
        });
        let Some(access) = access else {
            self.rewind(&mark);
            return Ok(false);
        };
        self.widths.insert(width);
        for statement in &statements {
            self.line(statement);
        }
        self.remark_on_sets(&access);
        self.accesses.push(access);
        Ok(true)
    }

    /// `width` contiguous floats of `array` from `base`, as a C vector lvalue: a load or
    /// store, or one of a register accumulator's vector variables (`acc5_3`). Such a
    /// variable is named by a constant: an index that depends on loops is recorded in
    /// `unnamed` (the loops are then unrolled), one that does not line up with the vectors
    /// marks the accumulator as `spilled`.
    pub(super) fn vector_ref(&mut self, array: &str, base: &Ix, width: i64) -> String {
        let Some(&w) = self.registers.get(array) else {
            // GCC splits unaligned 256-bit stores in two for some CPUs (AMD Zen's
            // `-mavx256-split-unaligned-store`); aligned ones it does not.
            let aligned = self.aligned.contains(array) && 4 * width <= ALIGN;
            if aligned && base.rem(width) == Ix::constant(0) {
                self.aligned_widths.insert(width);
                return format!("*(f32x{width}a *)&{array}[{base}]");
            }
            return format!("*(f32x{width} *)&{array}[{base}]");
        };
        let vector = base.div(width);
        let aligned = w == width && base.rem(width) == Ix::constant(0);
        match vector.as_constant() {
            Some(c) if aligned => return format!("{array}_{c}"),
            _ if aligned => self.unnamed.push((array.to_string(), vector)),
            _ => self.spilled.push(array.to_string()),
        }
        format!("{array}_?")
    }

    /// `width` contiguous floats of `array` from `base`, read as a C vector: as
    /// [`Emitter::vector_ref`], except that a window of a ring in registers that straddles
    /// two of its vectors is a shuffle of the two (`__builtin_shufflevector`), and one whose
    /// place depends on a loop is `unnamed` (the loop is then unrolled).
    fn vector_read(&mut self, array: &str, base: &Ix, width: i64) -> String {
        let ring = self.rings.contains(array) && self.registers.get(array) == Some(&width);
        if !ring || base.rem(width) == Ix::constant(0) {
            return self.vector_ref(array, base, width);
        }
        let Some(c) = base.as_constant() else {
            self.unnamed.push((array.to_string(), base.clone()));
            return format!("{array}_?");
        };
        let (a, o) = (c.div_euclid(width), c.rem_euclid(width));
        let lanes: Vec<String> = (o..o + width).map(|l| l.to_string()).collect();
        format!(
            "__builtin_shufflevector({array}_{a}, {array}_{}, {})",
            a + 1,
            lanes.join(", ")
        )
    }

    /// The lanes `x` (with lane variable `lane`) as one C expression, and whether it is a
    /// vector (else a scalar, the same in every lane); `None` if a lane reads elements that
    /// are not contiguous.
    /// `offset`: the first lane's number (a chunk of a wider statement).
    pub(super) fn vectorise(
        &mut self,
        x: &Scalar,
        lane: &str,
        width: i64,
        offset: i64,
    ) -> Option<(String, bool)> {
        match x {
            Scalar::Code(c) => Some((c.to_string(), false)),
            Scalar::Index(ix) => (!ix.mentions(lane)).then(|| (ix.to_string(), false)),
            Scalar::Load { array, ix } if !ix.mentions(lane) => {
                if self.registers.contains_key(&**array) {
                    self.spilled.push(array.to_string());
                }
                Some((x.to_string(), false))
            }
            Scalar::Load { array, .. } if self.lanewise.contains(&**array) => None,
            Scalar::Load { array, ix } => {
                let base = ix.unit_stride_base(lane)?.add(&Ix::constant(offset));
                Some((format!("({})", self.vector_read(array, &base, width)), true))
            }
            Scalar::Op(op, a, b) => {
                let (a, va) = self.vectorise(a, lane, width, offset)?;
                let (b, vb) = self.vectorise(b, lane, width, offset)?;
                Some((format!("({a} {op} {b})"), va || vb))
            }
            // C's vector extensions have neither: a scalar the same in every lane, or none.
            Scalar::Select(c, a, b) => {
                let mut scalar = |x| match self.vectorise(x, lane, width, offset)? {
                    (x, false) => Some(x),
                    (_, true) => None,
                };
                let (c, a, b) = (scalar(c)?, scalar(a)?, scalar(b)?);
                Some((format!("({c} ? {a} : {b})"), false))
            }
            Scalar::Cast(ty, a) => match self.vectorise(a, lane, width, offset)? {
                (a, false) => Some((format!("(({ty}){a})"), false)),
                (_, true) => None,
            },
            Scalar::Call(name, args) => {
                let mut scalar = vec![];
                for a in args {
                    match self.vectorise(a, lane, width, offset)? {
                        (a, false) => scalar.push(a),
                        (_, true) => return None,
                    }
                }
                Some((format!("{name}({})", scalar.join(", ")), false))
            }
        }
    }
}

/// The body with each register accumulator that is set to zero and, on the next line of
/// the same block, to itself plus a value, set to that value at once:
/// `acc5_0 = (f32x8){} + 0.0f;` then `acc5_0 = ((acc5_0) + (E));` becomes
/// `acc5_0 = (E);`. The C compiler keeps such an addition of zero (`-0.0 + 0.0` is
/// `+0.0`), one instruction per vector where a short reduction is unrolled (a window of a
/// ring in registers); without it only the sign of a zero can differ.
pub(super) fn fold_zero_starts(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut lines = body.lines().peekable();
    while let Some(line) = lines.next() {
        match lines.peek().and_then(|next| folded_start(line, next)) {
            Some(folded) => {
                out.push_str(&folded);
                lines.next();
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `zero` and `next` as one line, if they are a zero start and its first addition.
fn folded_start(zero: &str, next: &str) -> Option<String> {
    let code = zero.trim_start();
    let indent = &zero[..zero.len() - code.len()];
    let (var, rhs) = code.split_once(" = ")?;
    let width = rhs.strip_prefix("(f32x")?.strip_suffix("){} + 0.0f;")?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let identifier = |s: &str| s.chars().all(word);
    if var.is_empty() || !identifier(var) || width.is_empty() || !identifier(width) {
        return None;
    }
    let value = next
        .strip_prefix(indent)?
        .strip_prefix(&format!("{var} = (({var}) + ("))?
        .strip_suffix("));")?;
    let balanced = value.chars().try_fold(0usize, |depth, c| match c {
        '(' => Some(depth + 1),
        ')' => depth.checked_sub(1),
        _ => Some(depth),
    }) == Some(0);
    let reads_var = value.match_indices(var).any(|(at, _)| {
        let before = value[..at].chars().next_back();
        let after = value[at + var.len()..].chars().next();
        ![before, after].into_iter().flatten().any(word)
    });
    (balanced && !reads_var).then(|| format!("{indent}{var} = ({value});"))
}

#[cfg(test)]
mod tests {
    use super::fold_zero_starts;

    #[test]
    fn a_zero_start_and_its_first_addition_become_one_assignment() {
        let body = "  f32x8 acc5_0;\n  acc5_0 = (f32x8){} + 0.0f;\n  acc5_0 = ((acc5_0) + (__builtin_shufflevector(r_0, r_1, 7, 8, 9, 10, 11, 12, 13, 14)));\n  acc5_0 = ((acc5_0) + (r_1));\n";
        assert_eq!(
            fold_zero_starts(body),
            "  f32x8 acc5_0;\n  acc5_0 = (__builtin_shufflevector(r_0, r_1, 7, 8, 9, 10, 11, 12, 13, 14));\n  acc5_0 = ((acc5_0) + (r_1));\n"
        );
    }

    #[test]
    fn other_zero_starts_stay() {
        for body in [
            // The addition is in a loop (another block).
            "  acc5_0 = (f32x8){} + 0.0f;\n  for (long i = 0; i < 3; i++) {\n    acc5_0 = ((acc5_0) + (x));\n  }\n",
            "  acc5_0 = (f32x8){} + 0.0f;\n    acc5_0 = ((acc5_0) + (x));\n",
            // The value reads the accumulator itself, or another one is added to.
            "  acc5_0 = (f32x8){} + 0.0f;\n  acc5_0 = ((acc5_0) + ((acc5_0) * (y)));\n",
            "  acc5_0 = (f32x8){} + 0.0f;\n  acc5_1 = ((acc5_1) + (x));\n",
            // An array's vector, or a start that is not zero.
            "  *(f32x8 *)&acc5[0] = (f32x8){} + 0.0f;\n  *(f32x8 *)&acc5[0] = ((*(f32x8 *)&acc5[0]) + (x));\n",
            "  acc5_0 = (f32x8){} + 1.0f;\n  acc5_0 = ((acc5_0) + (x));\n",
            // Not one operand.
            "  acc5_0 = (f32x8){} + 0.0f;\n  acc5_0 = ((acc5_0) + (x) * (y));\n",
        ] {
            assert_eq!(fold_zero_starts(body), body, "{body}");
        }
    }
}
