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
