//! The machine the command runs on, as rules' named sizes and the code generator see it: the
//! width of its vector registers, how many it has, and its level-1 data cache.

pub mod cache;

/// The number of 32-bit lanes in this machine's widest vector registers: 16 with AVX-512,
/// 8 with AVX, otherwise 4 (SSE, NEON).
pub fn native_lanes() -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 16;
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return 8;
        }
    }
    4
}

/// The number of this machine's vector registers: 32 with AVX-512 (and on AArch64),
/// otherwise 16 (AVX, SSE on x86-64).
pub fn native_registers() -> i64 {
    if cfg!(target_arch = "aarch64") {
        return 32;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        return 32;
    }
    16
}

/// The number of 32-bit floats in a line of this machine's level-1 data cache (16 in a line
/// of 64 bytes).
pub fn native_line() -> i64 {
    (cache::Cache::l1_data().line / 4).max(1)
}
