//! Ctrl-C while a search runs with the GIL released.
//!
//! Python handles a signal only when its main thread runs Python code, which a search does
//! only between iterations. While a search runs on the main thread, [`OnSigint`] puts a
//! handler of its own before Python's: it asks the search to stop at once (the request a
//! Stop button makes, honoured inside the iteration) and then calls Python's handler, which
//! marks the signal as pending, so that `KeyboardInterrupt` is raised once the search has
//! returned. Where Python does not handle SIGINT (it is ignored, or left to end the
//! process), nothing is installed.

use sketchlog::egraph::saturate::Cancel;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The stop request of the searches run on the main thread: one for the process, never
/// freed, so that a handler running on any thread may set it.
static MAIN_THREAD: OnceLock<Cancel> = OnceLock::new();
/// Python's handler, called after ours (a `sigaction`'s handler field, as an address).
static PYTHON: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
/// Whether Python's handler takes `siginfo` (`SA_SIGINFO`).
static PYTHON_SIGINFO: AtomicBool = AtomicBool::new(false);

fn on_main_thread() -> bool {
    // SAFETY: `getpid` and `gettid` have no preconditions.
    unsafe { libc::getpid() == libc::gettid() }
}

/// The stop request for a search about to run on this thread: on the main thread, the one
/// SIGINT makes while [`OnSigint`] lives (not yet made); elsewhere, a new one.
pub fn request() -> Cancel {
    if !on_main_thread() {
        return Cancel::default();
    }
    let cancel = MAIN_THREAD.get_or_init(Cancel::default);
    cancel.request().store(false, Ordering::SeqCst);
    cancel.clone()
}

extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // Only atomic loads and stores, and the call of Python's own handler: all
    // async-signal-safe.
    if let Some(cancel) = MAIN_THREAD.get() {
        cancel.request().store(true, Ordering::SeqCst);
    }
    let python = PYTHON.load(Ordering::SeqCst);
    if python.is_null() {
        return;
    }
    // SAFETY: the address is the handler of the action replaced, of the kind its flags say.
    unsafe {
        if PYTHON_SIGINFO.load(Ordering::SeqCst) {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(python);
            f(sig, info, context);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(python);
            f(sig);
        }
    }
}

/// SIGINT handled as the main thread's stop request ([`request`]), while this lives; then
/// Python's handler again.
pub struct OnSigint {
    previous: Option<libc::sigaction>,
}

impl OnSigint {
    /// Routes SIGINT to the main thread's stop request first, when called on the main thread
    /// and Python handles SIGINT there (and no search of this thread has done so already).
    pub fn install() -> OnSigint {
        if !on_main_thread()
            || MAIN_THREAD.get().is_none()
            || !PYTHON.load(Ordering::SeqCst).is_null()
        {
            return OnSigint { previous: None };
        }
        // SAFETY: reading the current action into a zeroed struct.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(libc::SIGINT, std::ptr::null(), &mut previous) } != 0
            || previous.sa_sigaction == libc::SIG_DFL
            || previous.sa_sigaction == libc::SIG_IGN
        {
            return OnSigint { previous: None };
        }
        PYTHON_SIGINFO.store(previous.sa_flags & libc::SA_SIGINFO != 0, Ordering::SeqCst);
        PYTHON.store(previous.sa_sigaction as *mut libc::c_void, Ordering::SeqCst);
        // SAFETY: an action with our handler, Python's mask and flags (and SA_SIGINFO).
        let mut ours: libc::sigaction = unsafe { std::mem::zeroed() };
        ours.sa_sigaction = on_sigint as *const () as usize;
        ours.sa_mask = previous.sa_mask;
        ours.sa_flags = previous.sa_flags | libc::SA_SIGINFO;
        if unsafe { libc::sigaction(libc::SIGINT, &ours, std::ptr::null_mut()) } != 0 {
            PYTHON.store(std::ptr::null_mut(), Ordering::SeqCst);
            return OnSigint { previous: None };
        }
        OnSigint {
            previous: Some(previous),
        }
    }
}

impl Drop for OnSigint {
    fn drop(&mut self) {
        if let Some(previous) = &self.previous {
            // SAFETY: restoring the action read in `install`.
            unsafe { libc::sigaction(libc::SIGINT, previous, std::ptr::null_mut()) };
            PYTHON.store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }
}
