//! The machine the C is generated for: how wide its vector registers are and how many it
//! has. The vector lowering writes whole-vector statements of its width and keeps a
//! reduction's accumulator in its registers when it fits half of them.

use crate::rules::params::{native_lanes, native_registers, Params, LANES, REGISTERS};

/// A code generation target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Floats in one vector register (a power of two): 16 with AVX-512, 8 with AVX, 4
    /// otherwise.
    pub lanes: i64,
    /// Vector registers: 32 with AVX-512 (and on AArch64), 16 otherwise.
    pub registers: i64,
}

impl Target {
    /// The machine this runs on, for which the C is compiled with `-march=native`.
    pub fn native() -> Target {
        Target {
            lanes: native_lanes(),
            registers: native_registers(),
        }
    }

    /// The target that named sizes describe: `lanes` and `registers` (the machine's unless
    /// set, as by `--param lanes=8 --param registers=16` for AVX2, which the C compiler is
    /// then asked for with `-march=x86-64-v3`). An error names a width that is not a power of
    /// two, or too few registers.
    pub fn of(params: &Params) -> Result<Target, String> {
        let native = Target::native();
        let lanes = params.get(LANES).unwrap_or(native.lanes);
        let registers = params.get(REGISTERS).unwrap_or(native.registers);
        if lanes.count_ones() != 1 || lanes > 64 {
            return Err(format!(
                "`{LANES}` = {lanes}: the target's vector width is a power of two of floats, at most 64"
            ));
        }
        if registers < 4 {
            return Err(format!(
                "`{REGISTERS}` = {registers}: a target has at least 4 vector registers"
            ));
        }
        Ok(Target { lanes, registers })
    }

    /// The most floats a reduction's accumulator may hold in vector variables: half the
    /// registers, the rest left to its operands.
    pub fn register_floats(&self) -> i64 {
        self.lanes * self.registers / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_sizes_choose_the_target() {
        let avx2 = Params::given(&["lanes=8".into(), "registers=16".into()]).unwrap();
        let t = Target::of(&avx2).unwrap();
        assert_eq!((t.lanes, t.registers, t.register_floats()), (8, 16, 64));
        assert_eq!(Target::of(&Params::default()).unwrap(), Target::native());
        let odd = Params::given(&["lanes=12".into()]).unwrap();
        assert!(Target::of(&odd).unwrap_err().contains("power of two"));
        let few = Params::given(&["registers=2".into()]).unwrap();
        assert!(Target::of(&few).unwrap_err().contains("at least 4"));
    }
}
