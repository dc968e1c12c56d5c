//! Generated C as a function of this process: compiled into a shared library, loaded, and
//! called on slices of floats (what the Python package's kernels call on NumPy arrays).

use super::run::{build, COptions, Generated};
use crate::error::{Error, Result};
use crate::rise::term::Term;
use std::ffi::{c_int, c_void, CString};
use std::rc::Rc;

/// `sketchlog_entry(inputs, output, threads)`: the program called with an array of input
/// pointers, OpenMP's thread count set first (when positive).
type Entry = unsafe extern "C" fn(*const *const f32, *mut f32, c_int);

/// A program compiled at fixed sizes and loaded into this process (its code stays mapped
/// until the process ends, with the OpenMP runtime whose threads run it).
pub struct Kernel {
    library: *mut c_void,
    entry: Entry,
    inputs: Vec<usize>,
    output: usize,
    input_shapes: Vec<Vec<i64>>,
    output_shape: Vec<i64>,
    /// The program's C (without the entry point).
    pub c: String,
    /// The generator's remarks on it ([`crate::codegen::emit::Generated::remarks`]).
    pub remarks: Vec<String>,
    _dir: tempfile::TempDir,
}

// SAFETY: the library handle and the entry point are process-wide; the entry point keeps no
// state between calls (the program writes only its output and its own buffers).
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// Generates C for `program` at `sizes` (lowered as `opts` say), compiles it with
    /// `opts`' flags as a shared library and loads it.
    pub fn compile(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Kernel> {
        let generated = Generated::new(program, sizes, opts)?;
        let (inputs, output) = generated.counts();
        let dir = generated.dir.path();
        let (entry_c, library) = (dir.join("entry.c"), dir.join("program.so"));
        let entry = entry_point(generated.name, inputs.len());
        std::fs::write(&entry_c, entry).map_err(|e| Error::io(&entry_c, e))?;
        let shared = ["-shared", "-fPIC"];
        build(opts, &[&generated.source(), &entry_c], &library, &shared)?;
        let path = CString::new(library.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::bad_input("a temporary path with a NUL byte"))?;
        // SAFETY: dlopen and dlsym are given NUL-terminated strings; the library is the one
        // just built, whose constructors are OpenMP's and the C library's.
        let (handle, symbol) = unsafe {
            // Never unmapped (RTLD_NODELETE): OpenMP's worker threads outlive the kernel, and
            // unloading the OpenMP runtime under them would crash the process.
            let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
            let handle = libc::dlopen(path.as_ptr(), flags);
            if handle.is_null() {
                return Err(Error::internal(format!(
                    "the compiled kernel could not be loaded: {}",
                    dl_error()
                )));
            }
            (handle, libc::dlsym(handle, c"sketchlog_entry".as_ptr()))
        };
        if symbol.is_null() {
            // SAFETY: the handle was opened above and is not used again.
            unsafe { libc::dlclose(handle) };
            return Err(Error::internal("the compiled kernel has no entry point"));
        }
        Ok(Kernel {
            library: handle,
            // SAFETY: `sketchlog_entry` is defined by `entry_point` with this signature.
            entry: unsafe { std::mem::transmute::<*mut c_void, Entry>(symbol) },
            inputs,
            output,
            input_shapes: generated.input_shapes,
            output_shape: generated.output_shape,
            c: generated.code.c,
            remarks: generated.code.remarks,
            _dir: generated.dir,
        })
    }

    /// The shapes of the program's inputs and of its output (row-major floats).
    pub fn shapes(&self) -> (&[Vec<i64>], &[i64]) {
        (&self.input_shapes, &self.output_shape)
    }

    /// Runs the program on `inputs` into `output` on `threads` OpenMP threads (0: OpenMP's
    /// default): an error, and nothing run, when a length is not the program's.
    pub fn call(&self, inputs: &[&[f32]], output: &mut [f32], threads: usize) -> Result<()> {
        let lengths: Vec<usize> = inputs.iter().map(|x| x.len()).collect();
        if lengths != self.inputs {
            return Err(Error::bad_input(format!(
                "inputs of {lengths:?} floats for a kernel taking {:?}",
                self.inputs
            )));
        }
        if output.len() != self.output {
            return Err(Error::bad_input(format!(
                "an output of {} floats for a kernel writing {}",
                output.len(),
                self.output
            )));
        }
        let pointers: Vec<*const f32> = inputs.iter().map(|x| x.as_ptr()).collect();
        let threads = c_int::try_from(threads).unwrap_or(c_int::MAX);
        // SAFETY: every input holds the floats the program reads and the output the floats
        // it writes (checked above); the program reads its inputs and writes only its output.
        unsafe { (self.entry)(pointers.as_ptr(), output.as_mut_ptr(), threads) };
        Ok(())
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen, and no call into it outlives `self`.
        unsafe { libc::dlclose(self.library) };
    }
}

/// The C of `sketchlog_entry` for a program `name` of `inputs` arrays.
fn entry_point(name: &str, inputs: usize) -> String {
    let params = "const float *, ".repeat(inputs);
    let args: String = (0..inputs).map(|i| format!("in[{i}], ")).collect();
    format!(
        "#include <omp.h>\n\
         void {name}({params}float *);\n\
         void sketchlog_entry(const float *const *in, float *out, int threads) {{\n  \
           if (threads > 0) omp_set_num_threads(threads);\n  \
           {name}({args}out);\n\
         }}\n"
    )
}

/// The dynamic loader's last error.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next call.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_of_elementary_functions_computes_what_the_c_library_does() {
        let src = crate::source::Source::new(
            "k.rise",
            "def k = nfun n => fun (xs : n.f32) (ys : n.f32) => \
             mapPar (fun p => add (sinh (mul 2.0 (fst p))) (max (neg (snd p)) (sqrt (abs (fst p))))) (zip xs ys)",
        );
        let program = crate::rise::parse::parse_program(&src).unwrap();
        let term = crate::rise::infer::elaborate_def(&program, "k").unwrap();
        let k = Kernel::compile(
            &super::super::sequential(&term),
            &[100],
            &COptions::default(),
        )
        .unwrap();
        let xs: Vec<f32> = (0..100).map(|i| i as f32 / 50.0 - 1.0).collect();
        let ys: Vec<f32> = (0..100).map(|i| (i % 7) as f32 - 3.0).collect();
        let mut out = vec![0.0; 100];
        k.call(&[&xs, &ys], &mut out, 2).unwrap();
        for i in 0..100 {
            let expected = (2.0 * xs[i]).sinh() + (-ys[i]).max(xs[i].abs().sqrt());
            assert!(
                (out[i] - expected).abs() <= 1e-5 * expected.abs().max(1.0),
                "{i}"
            );
        }
        assert!(k.call(&[&xs], &mut out, 1).is_err());
        assert!(k.call(&[&xs, &ys], &mut out[..99], 1).is_err());
    }
}
