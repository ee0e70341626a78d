//! The empty SIGUSR1 handler the signal benchmarks catch with, installed
//! once for all of them ([`Sigusr1Guard`]), and whether the calling thread
//! blocks SIGUSR1.

use crate::BenchError;
use libc::c_int;
use std::sync::Mutex;

extern "C" fn empty_handler(_: c_int) {}

/// The action every signal benchmark installs: the empty handler,
/// SA_RESTART (so a stray SIGUSR1 never fails another thread's blocking
/// call).
pub(crate) fn empty_action() -> libc::sigaction {
    // SAFETY: sigaction is a plain C struct; all zeroes is SIG_DFL, no flags.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = empty_handler as extern "C" fn(c_int) as libc::sighandler_t;
    sa.sa_flags = libc::SA_RESTART;
    // SAFETY: sa.sa_mask is a valid sigset_t we own.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    sa
}

/// How many live workloads use the empty SIGUSR1 handler, and the action to
/// restore when the last of them is dropped. Signal actions are per process,
/// so concurrent workloads (tests run in threads) must not restore the
/// original action under each other's feet.
static SIGUSR1_USERS: Mutex<(usize, Option<libc::sigaction>)> = Mutex::new((0, None));

/// Keeps the empty SIGUSR1 handler installed while alive. Every benchmark
/// that needs a SIGUSR1 handler (`sig-install`, `sig-catch`, will-it-scale
/// `signal1`) takes this guard rather than install and restore its own.
pub(crate) struct Sigusr1Guard;

impl Sigusr1Guard {
    pub(crate) fn acquire() -> Result<Sigusr1Guard, BenchError> {
        let mut users = SIGUSR1_USERS.lock().unwrap_or_else(|e| e.into_inner());
        if users.0 == 0 {
            let sa = empty_action();
            // SAFETY: both structs are valid; the handler is async-signal-safe.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            if unsafe { libc::sigaction(libc::SIGUSR1, &sa, &mut old) } != 0 {
                return Err(BenchError::last_os("install a SIGUSR1 handler"));
            }
            users.1 = Some(old);
        }
        users.0 += 1;
        Ok(Sigusr1Guard)
    }
}

impl Drop for Sigusr1Guard {
    fn drop(&mut self) {
        let mut users = SIGUSR1_USERS.lock().unwrap_or_else(|e| e.into_inner());
        users.0 -= 1;
        if users.0 == 0
            && let Some(old) = users.1.take()
        {
            // SAFETY: old is the action sigaction returned to us.
            unsafe { libc::sigaction(libc::SIGUSR1, &old, std::ptr::null_mut()) };
        }
    }
}

/// Whether the calling thread blocks SIGUSR1 (a signal it sends itself
/// would then never be caught).
pub(crate) fn sigusr1_blocked() -> Result<bool, BenchError> {
    // SAFETY: sigset_t is a plain C struct; it is filled in below.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new set only reads the current mask into `mask`.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask) };
    if r != 0 {
        return Err(BenchError::Os {
            what: "read the signal mask".into(),
            error: std::io::Error::from_raw_os_error(r),
        });
    }
    // SAFETY: mask is a valid, initialised sigset_t.
    Ok(unsafe { libc::sigismember(&mask, libc::SIGUSR1) } == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_handler_is_restored_after_the_last_user() {
        let guard = Sigusr1Guard::acquire().unwrap();
        assert!(SIGUSR1_USERS.lock().unwrap().0 >= 1);
        drop(guard);
        // Other tests may hold the handler concurrently: check only when the
        // count (held locked) says nobody does.
        let users = SIGUSR1_USERS.lock().unwrap();
        if users.0 == 0 {
            // SAFETY: sigaction is a plain C struct; filled in below.
            let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: a null new action only reads the current one.
            unsafe { libc::sigaction(libc::SIGUSR1, std::ptr::null(), &mut now) };
            assert_ne!(
                now.sa_sigaction, empty_handler as extern "C" fn(c_int) as libc::sighandler_t,
                "the empty handler outlived its last user"
            );
        }
    }
}
