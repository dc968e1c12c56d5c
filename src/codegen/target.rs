//! The machine the C is generated for: how wide its vector registers are and how many it
//! has. The vector lowering writes whole-vector statements of its width and keeps a
//! reduction's accumulator in its registers when it fits half of them.

use crate::machine::{native_lanes, native_registers};
use crate::rules::params::{Params, LANES, REGISTERS};
use serde::{Deserialize, Serialize};

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
    /// set, as [`Isa::Avx2`] sets them for AVX2, which the C compiler is then asked for with
    /// `-march=x86-64-v3`). An error names a width that is not a power of two, or too few
    /// registers.
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

/// An instruction set to generate, compile and time the C for, the machine's own or an older
/// one it also runs (AVX2 code timed on an AVX-512 machine): its named sizes, the C
/// compiler's flag and Halide's target of the same.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Isa {
    /// This machine's (`-march=native`, Halide's host target).
    #[default]
    Native,
    /// x86-64 with AVX2 and FMA: 8 lanes, 16 registers (`-march=x86-64-v3`).
    Avx2,
    /// x86-64 with AVX-512: 16 lanes, 32 registers (`-march=x86-64-v4`).
    Avx512,
}

impl Isa {
    /// The named sizes it sets (`lanes`, `registers`), as `--param` gives them.
    pub fn params(self) -> Vec<String> {
        match self {
            Isa::Native => vec![],
            Isa::Avx2 => vec!["lanes=8".into(), "registers=16".into()],
            Isa::Avx512 => vec!["lanes=16".into(), "registers=32".into()],
        }
    }

    /// The C compiler's flag that targets it.
    pub fn cflags(self) -> &'static str {
        match self {
            Isa::Native => "-march=native",
            Isa::Avx2 => "-march=x86-64-v3",
            Isa::Avx512 => "-march=x86-64-v4",
        }
    }

    /// Halide's JIT target of the same instructions (`HL_JIT_TARGET`); `None` for its host.
    pub fn halide_target(self) -> Option<&'static str> {
        match self {
            Isa::Native => None,
            Isa::Avx2 => Some("x86-64-linux-avx-avx2-f16c-fma-sse41"),
            Isa::Avx512 => Some("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41"),
        }
    }

    /// The CPU features OpenCV's kernels are kept from (`OPENCV_CPU_DISABLE`), so that it
    /// dispatches no wider code than this; `None` to let it choose.
    pub fn opencv_disabled(self) -> Option<&'static str> {
        match self {
            Isa::Avx2 => Some("AVX512_SKX"),
            Isa::Native | Isa::Avx512 => None,
        }
    }

    /// Whether this machine runs its code: an error says which instructions it lacks.
    pub fn check_runs_here(self) -> Result<(), String> {
        match self.runs_here() {
            true => Ok(()),
            false => Err(format!("this machine does not run {} code", self.name())),
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn runs_here(self) -> bool {
        use std::arch::is_x86_feature_detected as has;
        match self {
            Isa::Native => true,
            Isa::Avx2 => has!("avx2") && has!("fma"),
            Isa::Avx512 => {
                has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl")
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn runs_here(self) -> bool {
        self == Isa::Native
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Native => "native",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
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

    #[test]
    fn an_instruction_set_names_its_sizes() {
        let avx2 = Params::given(&Isa::Avx2.params()).unwrap();
        assert_eq!(Target::of(&avx2).unwrap().lanes, 8);
        let avx512 = Params::given(&Isa::Avx512.params()).unwrap();
        assert_eq!(Target::of(&avx512).unwrap().registers, 32);
        assert_eq!(
            Target::of(&Params::given(&Isa::Native.params()).unwrap()).unwrap(),
            Target::native()
        );
        assert!(Isa::Native.check_runs_here().is_ok());
    }
}
