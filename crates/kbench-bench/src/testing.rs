//! Test helpers shared by every family: test keys, measuring, bounds, and
//! the checks that a workload reaped its children and removed its files.

use crate::{BenchError, MIN_INTERVAL, OptionSpec, Options, TestKey, Workload, calibrate};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The timing tests pin threads, fork partners and load the memory bus:
/// they run one at a time, across the families that take this lock.
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The last temporary directory made on this thread, for the tests that
    /// check it is gone after the workload is dropped.
    pub(crate) static LAST_TEMP_DIR: std::cell::RefCell<Option<PathBuf>> =
        const { std::cell::RefCell::new(None) };
}

/// The test key of `id` with these options.
pub(crate) fn key(id: &str, options: &[(&str, &str)]) -> TestKey {
    let mut key = TestKey::new(id);
    for (k, v) in options {
        key.options.insert(k.to_string(), v.to_string());
    }
    key
}

/// `specs` resolved with these options given.
pub(crate) fn options(pairs: &[(&str, &str)], specs: &[OptionSpec]) -> Options {
    let given = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Options::resolve(specs, &given).unwrap()
}

/// The canonical test name of `id`: every option at its default.
pub(crate) fn canonical(id: &str) -> String {
    let info = crate::find(id).unwrap();
    info.resolve(&TestKey::new(id)).unwrap().0.test_name()
}

/// Resolves and prepares `id` with `options`.
pub(crate) fn prepare(id: &str, options: &[(&str, &str)]) -> Result<Box<dyn Workload>, BenchError> {
    let info = crate::find(id).unwrap();
    info.resolve(&key(id, options))
        .and_then(|(_, o)| info.prepare(&o))
}

/// The option that resolving or preparing `id` with `options` rejects.
pub(crate) fn invalid(id: &str, options: &[(&str, &str)]) -> String {
    match prepare(id, options) {
        Err(BenchError::InvalidOption { option, .. }) => option,
        Err(other) => panic!("{id}{options:?}: {other}"),
        Ok(_) => panic!("{id}{options:?} was accepted"),
    }
}

/// Resolves, prepares, calibrates and runs three intervals, one at a time
/// across the families that take [`serial`]; the values.
pub(crate) fn measure(id: &str, options: &[(&str, &str)]) -> Vec<f64> {
    let _serial = serial();
    let info = crate::find(id).expect("registered");
    let (canonical, opts) = info.resolve(&key(id, options)).expect("options resolve");
    let mut w = info
        .prepare(&opts)
        .unwrap_or_else(|e| panic!("{id}{options:?}: {e}"));
    let n = calibrate(&mut *w, MIN_INTERVAL).expect("calibrate");
    (0..3)
        .map(|_| {
            let interval = w.run(n).expect("run");
            assert!(interval.work > 0.0);
            let value = info.unit.value(interval);
            eprintln!(
                "{}: {value:.4} {} ({n} iterations)",
                canonical.test_name(),
                info.unit.label()
            );
            value
        })
        .collect()
}

/// Every value is finite, positive and within `low..=high`. Bounds are
/// generous: they catch unit mistakes and garbage, not regressions.
pub(crate) fn assert_within(id: &str, values: &[f64], low: f64, high: f64) {
    for &v in values {
        assert!(v.is_finite() && v > 0.0, "{id}: {v}");
        assert!(
            (low..=high).contains(&v),
            "{id}: {v} outside {low}..={high}"
        );
    }
}

/// [`measure`], then [`assert_within`]; the values.
pub(crate) fn assert_plausible(
    id: &str,
    options: &[(&str, &str)],
    low: f64,
    high: f64,
) -> Vec<f64> {
    let values = measure(id, options);
    assert_within(id, &values, low, high);
    values
}

/// Prepares the test `name` (e.g. `select[fds=1]`), calibrates it and runs
/// three intervals, each at least `MIN_INTERVAL / 5` long and of exactly
/// the calibrated count; asserts every value is within `low..high`. The
/// workload is dropped before this returns.
pub(crate) fn assert_calibrated(name: &str, low: f64, high: f64) {
    let key = TestKey::parse(name).unwrap();
    let info = crate::find(&key.benchmark).expect("benchmark is registered");
    let (_, options) = info.resolve(&key).expect("options resolve");
    let mut w = info.prepare(&options).expect("prepare");
    let n = calibrate(&mut *w, MIN_INTERVAL).expect("calibrate");
    let values: Vec<f64> = (0..3)
        .map(|_| {
            let interval = w.run(n).expect("run");
            // Calibration reached MIN_INTERVAL once; later intervals at
            // the same count vary with load (tests run in parallel).
            assert!(interval.elapsed >= MIN_INTERVAL / 5, "interval too short");
            assert_eq!(interval.work, n as f64);
            info.unit.value(interval)
        })
        .collect();
    drop(w);
    let unit = info.unit.label();
    for v in &values {
        assert!(
            v.is_finite() && *v > 0.0 && (low..high).contains(v),
            "{key}: {v} {unit} is outside {low}..{high}"
        );
    }
    eprintln!("{key}: {values:.1?} {unit}");
}

/// Whether a wait status says the process exited with status 0.
pub(crate) fn exited(status: Option<libc::c_int>) -> bool {
    matches!(status, Some(s) if libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0)
}

/// Whether the two-task benchmarks default to `placement=cross`.
pub(crate) fn two_cpus() -> bool {
    crate::shared::placement::default_placement() == "cross"
}

/// True when `pid` is no child of ours any more (reaped).
pub(crate) fn reaped(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: `status` is a valid int for waitpid to fill.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
}

/// The children of this process, from every thread's children list.
pub(crate) fn children() -> Vec<libc::pid_t> {
    let mut pids = vec![];
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        pids.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<libc::pid_t>().ok()),
        );
    }
    pids
}

/// Asserts that every pid in `pids` was reaped and is listed no more.
pub(crate) fn assert_gone(pids: &[libc::pid_t]) {
    let now = children();
    for &pid in pids {
        assert!(reaped(pid), "partner {pid} is still our child");
        assert!(!now.contains(&pid), "partner {pid} is still listed");
    }
}

/// The children list of the calling thread, if the kernel has one.
pub(crate) fn thread_children() -> std::io::Result<String> {
    std::fs::read_to_string("/proc/thread-self/children")
}

/// No child of this thread is left, zombie or running. `__WNOTHREAD`
/// keeps other test threads' children out of it (and unreaped).
pub(crate) fn assert_no_children() {
    let mut status = 0;
    // SAFETY: status is a valid c_int; WNOHANG never blocks.
    let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WNOTHREAD) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!((r, errno), (-1, Some(libc::ECHILD)), "a child is left");
    if let Ok(children) = thread_children() {
        assert_eq!(children.trim(), "", "children left: {children}");
    }
}

/// The temporary directory the last workload of this thread made is gone.
pub(crate) fn assert_temp_dir_gone() {
    let dir = LAST_TEMP_DIR
        .with(|last| last.borrow_mut().take())
        .expect("a temp dir was made");
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
