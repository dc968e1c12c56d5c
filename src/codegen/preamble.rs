//! The C a generated program starts with, before its function: the vector types it uses,
//! its large buffers, allocated once when the program is loaded, and the macros of its
//! streaming stores ([`streaming`]).
//!
//! Large buffers are where a program packs a matrix it reads many times (`parallel` copies
//! all of B, 4 MB at 1024^3, into blocks). Its kernel reads a block of that copy per tile,
//! far apart in memory from the last, so with 4 KB pages nearly every block costs a TLB
//! miss (on a virtual machine, a two-level page walk). The buffers are therefore aligned
//! to 2 MB and, where the kernel has transparent huge pages, advised onto them
//! (`madvise(MADV_HUGEPAGE)`): one TLB entry per 2 MB.

use std::collections::BTreeSet;
use std::fmt::Write;

/// Bytes in a huge page (x86-64 and AArch64 with 4 KB base pages): a buffer this large is
/// aligned to it and advised onto huge pages.
pub const HUGE_PAGE: i64 = 2 << 20;

/// The typedefs of the C vector types of the given widths (floats): `f32xW` unaligned,
/// `f32xWa` aligned to its size; both may alias the float arrays they are loaded from.
pub fn vector_types(widths: &BTreeSet<i64>, aligned: &BTreeSet<i64>) -> String {
    let mut c = String::new();
    for w in widths {
        let _ = writeln!(
            c,
            "typedef float f32x{w} __attribute__((vector_size({}), aligned(4), may_alias));",
            4 * w
        );
    }
    for w in aligned {
        let _ = writeln!(
            c,
            "typedef float f32x{w}a __attribute__((vector_size({0}), aligned({0}), may_alias));",
            4 * w
        );
    }
    if !c.is_empty() {
        c.push('\n');
    }
    c
}

/// The file-level buffers (name, floats): a pointer each, set by a constructor that runs
/// when the program is loaded, from [`allocator`] (`rise_buffer`, huge pages from
/// [`HUGE_PAGE`] bytes on): zeroed, at least 64-byte aligned and never freed, as a static
/// array would be. Per-thread buffers are `static __thread` pointers that each thread sets
/// the first time it needs one (`rise_thread_buffer`). A failed allocation ends the process
/// with a message.
pub fn buffers(buffers: &[(String, i64)], per_thread: &[(String, i64)]) -> String {
    if buffers.is_empty() && per_thread.is_empty() {
        return String::new();
    }
    let mut c = String::new();
    for (name, _) in buffers {
        let _ = writeln!(c, "static float *restrict {name};");
    }
    for (name, _) in per_thread {
        let _ = writeln!(c, "static __thread float *restrict {name};");
    }
    c.push('\n');
    c.push_str(&allocator("rise_buffer", HUGE_PAGE));
    c.push_str(OUT_OF_MEMORY);
    if !per_thread.is_empty() {
        c.push_str(
            "\nstatic float *rise_thread_buffer(size_t floats) {\n  float *p = rise_buffer(floats);\n  if (!p) rise_out_of_memory();\n  return p;\n}\n",
        );
    }
    if buffers.is_empty() {
        c.push('\n');
        return c;
    }
    c.push_str("\n__attribute__((constructor)) static void rise_buffers(void) {\n");
    for (name, floats) in buffers {
        let _ = writeln!(c, "  {name} = rise_buffer({floats});");
    }
    let names: Vec<&str> = buffers.iter().map(|(name, _)| name.as_str()).collect();
    let _ = write!(
        c,
        "  if (!{}) rise_out_of_memory();\n}}\n\n",
        names.join(" || !")
    );
    c
}

/// C for `rise_out_of_memory()`: a message, and the end of the process.
const OUT_OF_MEMORY: &str = r#"
static void rise_out_of_memory(void) {
  fputs("generated program: out of memory for its buffers\n", stderr);
  abort();
}
"#;

/// C for `static float *NAME(size_t floats)`: zeroed floats, 64-byte aligned (from `malloc`
/// a large array starts 16 bytes into a line, and half its 32-byte loads cross one), or
/// `NULL`. From `huge_from` bytes on, aligned to a huge page and advised onto huge pages
/// (`madvise(MADV_HUGEPAGE)`, where the system has it). The generated program's buffers and
/// the bench harness's arrays both come from it; it needs `stdlib.h`, `string.h` and
/// `sys/mman.h`.
pub fn allocator(name: &str, huge_from: i64) -> String {
    format!(
        r#"static float *{name}(size_t floats) {{
  size_t bytes = floats * sizeof(float), align = bytes >= {huge_from} ? {HUGE_PAGE} : 64;
  void *p = NULL;
  if (posix_memalign(&p, align, bytes + 64) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  if (align > 64) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return memset(p, 0, bytes);
}}
"#
    )
}

/// Declarations that let the C compiler call vector versions of the `<math.h>` functions
/// `used` (glibc's libmvec, which [`super::run`] links) in loops it vectorises: OpenMP's
/// `declare simd` for each function libmvec has on this machine's glibc. Elsewhere, none.
pub fn vector_math(used: &std::collections::BTreeSet<&'static str>) -> String {
    let available = libmvec_functions();
    let mut c = String::new();
    for f in used.iter().filter(|f| available.contains(f)) {
        let params = if *f == "powf" {
            "float, float"
        } else {
            "float"
        };
        let _ = writeln!(
            c,
            "#pragma omp declare simd notinbranch\nfloat {f}({params});"
        );
    }
    c
}

/// The `float` functions glibc's libmvec has for this target (those since glibc 2.22, and
/// the hyperbolic functions and `tanf` since 2.35); none off x86-64 Linux with glibc.
pub fn libmvec_functions() -> &'static [&'static str] {
    const SINCE_2_22: &[&str] = &["sinf", "cosf", "expf", "logf", "powf"];
    const SINCE_2_35: &[&str] = &[
        "sinf", "cosf", "expf", "logf", "powf", "tanf", "sinhf", "coshf", "tanhf",
    ];
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        let minor = version
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("2.")?.split('.').next()?.parse::<u32>().ok());
        match minor {
            Some(m) if m >= 35 => SINCE_2_35,
            Some(m) if m >= 22 => SINCE_2_22,
            _ => &[],
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu")))]
    {
        let _ = (SINCE_2_22, SINCE_2_35);
        &[]
    }
}

/// The headers the preamble's code needs.
pub fn includes(buffers: bool) -> String {
    let mut c = String::from("#include <stdlib.h>\n#include <math.h>\n");
    if buffers {
        c.push_str("#include <stdio.h>\n#include <string.h>\n#include <sys/mman.h>\n");
    }
    c.push('\n');
    c
}

/// An output of this many bytes or more is stored past the cache where whole aligned
/// vectors of it are stored: more than a core's private cache holds (2 MB covers the L2 of
/// current x86 and Arm server cores), so keeping it there only evicts what the program
/// still reads.
pub const STREAMED_OUTPUT_BYTES: i64 = 2 << 20;

/// The statement that opens a function with streaming stores: they need their address
/// aligned to the vector, so they are used only when the caller's output is 64-byte aligned.
pub const OUTPUT_ALIGNED: &str = "  const int rise_out_aligned = (size_t)out % 64 == 0;\n";

/// `rise_streamW(p, v)`, which stores the `W`-float vector `v` at `p` in the output, and
/// `rise_fence()`, which a thread runs after its last such store.
///
/// With `past_cache` (the program never reads its output back), on x86 with the vector
/// width's instruction set, the store is non-temporal when the output is aligned: a
/// streaming store writes a whole cache line without first reading it in (an ordinary store
/// of a line that is not cached reads it from memory), and does not evict the data the
/// program reads from the cache. Such stores are weakly ordered, hence the fence: an
/// `sfence` in each thread before its parallel region ends. Elsewhere both are plain.
pub fn streaming(width: i64, past_cache: bool) -> String {
    let plain = format!("#define rise_stream{width}(p, v) (*(f32x{width} *)(p) = (v))\n");
    let intrinsic = match width {
        16 => Some(("__AVX512F__", "_mm512_stream_ps", "__m512")),
        8 => Some(("__AVX__", "_mm256_stream_ps", "__m256")),
        4 => Some(("__SSE__", "_mm_stream_ps", "__m128")),
        _ => None,
    };
    let Some((feature, store, ty)) = intrinsic.filter(|_| past_cache) else {
        return format!("{plain}#define rise_fence() ((void)0)\n\n");
    };
    format!(
        "/* Whole cache lines of the output, which the program never reads back, stored past the cache. */
#if defined(__x86_64__) && defined({feature})
#include <immintrin.h>
#define rise_stream{width}(p, v) \\
  (rise_out_aligned ? {store}((p), ({ty})(v)) : (void)(*(f32x{width} *)(p) = (v)))
#define rise_fence() _mm_sfence()
#else
{plain}#define rise_fence() ((void)0)
#endif

"
    )
}
