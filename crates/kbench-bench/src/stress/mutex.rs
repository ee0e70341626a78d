//! sysbench `mutex` style contention (`mutex-contend[threads=N]`).
//!
//! N threads share one `pthread_mutex_t` (the default, non-recursive type,
//! as sysbench uses) and one counter. One op is: lock, bump the counter
//! (a plain load and store: the mutex is what makes it correct), unlock,
//! then a fixed spin of `SPIN` `black_box` steps outside the lock, standing
//! in for sysbench's `mutex-loops` work between locks.
//!
//! Measured sysbench style, as a fixed amount of work: one iteration is one
//! op, and `run(n)` splits the `n` ops evenly over the N threads (the
//! remainder going to the first ones) and times from the release of the
//! threads until the last one is done. The measuring thread is thread 0;
//! the N-1 others are spawned at `prepare`, wait on a condition variable
//! between runs (no CPU) and are joined on drop. The counter is checked to
//! have grown by exactly `n` after each run. Nothing is pinned.

use crate::sys::os_error;
use crate::{BenchError, Interval, Options, Workload};
use std::cell::UnsafeCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// Spin steps between two ops of a thread.
const SPIN: u32 = 100;
/// The most threads.
pub(super) const MAX_THREADS: u64 = 1024;

/// The contended lock and what it protects.
struct Shared {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    /// Only written with the mutex held.
    counter: AtomicU64,
    /// Set when a pthread call failed in some thread.
    failed: AtomicBool,
}

// SAFETY: the pthread mutex is made to be shared between threads; it is only
// ever used through pthread_mutex_lock/unlock on its stable (Arc) address.
unsafe impl Sync for Shared {}

impl Shared {
    /// `ops` ops: lock, bump, unlock, spin.
    fn work(&self, ops: u64) {
        let mutex = self.mutex.get();
        for _ in 0..ops {
            // SAFETY: mutex is initialised and lives as long as self.
            if unsafe { libc::pthread_mutex_lock(mutex) } != 0 {
                self.failed.store(true, Ordering::Relaxed);
                return;
            }
            let count = self.counter.load(Ordering::Relaxed);
            self.counter.store(black_box(count + 1), Ordering::Relaxed);
            // SAFETY: this thread holds the mutex, locked just above.
            if unsafe { libc::pthread_mutex_unlock(mutex) } != 0 {
                self.failed.store(true, Ordering::Relaxed);
                return;
            }
            for step in 0..SPIN {
                black_box(step);
            }
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: no thread uses the mutex any more (all joined) and it is unlocked.
        unsafe { libc::pthread_mutex_destroy(self.mutex.get()) };
    }
}

/// The start gate of the helper threads.
#[derive(Default)]
struct GateState {
    /// Bumped to start a run.
    generation: u64,
    /// The ops of helper `i` (thread `i + 1`) in this run.
    shares: Vec<u64>,
    /// Helpers done with this run.
    finished: usize,
    stop: bool,
}

#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    start: Condvar,
    done: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(super) struct MutexContend {
    threads: u64,
    shared: Arc<Shared>,
    gate: Arc<Gate>,
    helpers: Vec<JoinHandle<()>>,
}

impl MutexContend {
    pub(super) fn new(options: &Options) -> Result<MutexContend, BenchError> {
        let threads = options.number("threads");
        let shared = Arc::new(Shared {
            mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            counter: AtomicU64::new(0),
            failed: AtomicBool::new(false),
        });
        let gate = Arc::new(Gate::default());
        gate.lock().shares = vec![0; threads as usize - 1];
        // Built before the spawns: on a failed spawn, dropping it stops and
        // joins the helpers already running.
        let mut w = MutexContend {
            threads,
            shared,
            gate,
            helpers: Vec::with_capacity(threads as usize - 1),
        };
        for index in 0..threads as usize - 1 {
            let (shared, gate) = (Arc::clone(&w.shared), Arc::clone(&w.gate));
            let helper = std::thread::Builder::new()
                .name(format!("kbench-mutex-{}", index + 1))
                .spawn(move || helper(index, &shared, &gate))
                .map_err(os_error("mutex-contend: spawn a thread"))?;
            w.helpers.push(helper);
        }
        Ok(w)
    }
}

/// Helper thread `index + 1`: one share of ops per generation, until stopped.
fn helper(index: usize, shared: &Shared, gate: &Gate) {
    let mut seen = 0;
    loop {
        let ops = {
            let mut state = gate.lock();
            while state.generation == seen && !state.stop {
                state = gate.start.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if state.stop {
                return;
            }
            seen = state.generation;
            state.shares[index]
        };
        shared.work(ops);
        let mut state = gate.lock();
        state.finished += 1;
        if state.finished == state.shares.len() {
            gate.done.notify_one();
        }
    }
}

impl Workload for MutexContend {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let (base, extra) = (iterations / self.threads, iterations % self.threads);
        let share = |thread: u64| base + u64::from(thread < extra);
        let before = self.shared.counter.load(Ordering::Acquire);
        let start = {
            let mut state = self.gate.lock();
            for (i, slot) in state.shares.iter_mut().enumerate() {
                *slot = share(i as u64 + 1);
            }
            state.finished = 0;
            state.generation += 1;
            let start = Instant::now();
            self.gate.start.notify_all();
            start
        };
        self.shared.work(share(0));
        {
            let mut state = self.gate.lock();
            while state.finished < state.shares.len() {
                state = self
                    .gate
                    .done
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
        let interval = Interval::since(start, iterations as f64);
        if self.shared.failed.load(Ordering::Relaxed) {
            return Err(BenchError::Os {
                what: "mutex-contend: pthread_mutex_lock/unlock".into(),
                error: std::io::Error::other("failed in a thread"),
            });
        }
        let done = self.shared.counter.load(Ordering::Acquire) - before;
        if done != iterations {
            return Err(BenchError::Os {
                what: "mutex-contend".into(),
                error: std::io::Error::other(format!(
                    "the counter grew by {done}, expected {iterations}: the mutex did not exclude"
                )),
            });
        }
        Ok(interval)
    }

    fn tasks(&self) -> u32 {
        self.threads as u32
    }
}

impl Drop for MutexContend {
    fn drop(&mut self) {
        self.gate.lock().stop = true;
        self.gate.start.notify_all();
        for helper in self.helpers.drain(..) {
            let _ = helper.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_is_counted_and_threads_are_joined() {
        let specs = crate::find("mutex-contend").unwrap().options;
        for threads in ["1", "3"] {
            let given = [("threads".to_string(), threads.to_string())].into();
            let mut w = MutexContend::new(&Options::resolve(specs, &given).unwrap()).unwrap();
            for n in [0, 1, 2, 1000, 1001] {
                let interval = w.run(n).unwrap();
                assert_eq!(interval.work, n as f64);
            }
            assert_eq!(w.shared.counter.load(Ordering::Acquire), 2004);
            let shared = Arc::clone(&w.shared);
            drop(w);
            // Every helper is joined: this is the last reference.
            assert_eq!(Arc::strong_count(&shared), 1);
        }
    }
}
