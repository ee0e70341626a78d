//! The VM launcher and the runner's batched rounds against a fake qemu: shell
//! scripts that write a console line to the `-serial file:` log and print
//! canned agent events on stdout, as a guest's results channel would.

use super::*;
use crate::qemu::Machine;
use kbench_measure::runner::{self, RunRequest};
use kbench_model::{Direction, SystemSnapshot, TestKey};
use kbench_store::testing::temp_store;
use kbench_store::{Results, RunStatus, SqliteStore};
use std::sync::OnceLock;

fn key(name: &str) -> TestKey {
    TestKey::new(name)
}

fn event(event: &AgentEvent) -> String {
    serde_json::to_string(event).unwrap()
}

fn snapshot_event() -> String {
    event(&AgentEvent::Snapshot {
        snapshot: Box::new(SystemSnapshot {
            kernel_release: "6.1.0-fake".into(),
            virtualization: "qemu-tcg".into(),
            ..SystemSnapshot::default()
        }),
    })
}

/// Events of one test: start, `samples` samples, and the end when `ends`.
fn test_events(name: &str, samples: usize, ends: bool) -> Vec<String> {
    let mut lines = vec![event(&AgentEvent::TestStart {
        test: key(name),
        unit: "ns".into(),
        direction: Direction::Lower,
        iterations: 1000,
    })];
    for i in 0..samples {
        lines.push(event(&AgentEvent::Sample {
            metric: "value".into(),
            value: 100.0 + i as f64,
            iterations: 1000,
            at_ms: 1_700_000_000_000 + i as i64,
        }));
    }
    if ends {
        lines.push(event(&AgentEvent::TestEnd {
            target_met: true,
            stop: "CI within 1.0 %".into(),
        }));
    }
    lines
}

/// A fake qemu: finds its serial log, writes `console` there, prints
/// `stdout` lines, then runs `tail` (shell).
fn script(console: &str, stdout: &[String], tail: &str) -> String {
    format!(
        r#"#!/bin/sh
log=
prev=
for arg in "$@"; do
    if [ "$prev" = "-serial" ]; then
        case "$arg" in file:*) log="${{arg#file:}}" ;; esac
    fi
    prev="$arg"
done
printf '%s\n' '{console}' > "$log"
cat <<'EVENTS'
{}
EVENTS
{tail}
"#,
        stdout.join("\n")
    )
}

/// The fake qemus, written once (writing executables while other threads
/// spawn children can make exec fail with ETXTBSY).
fn fakes() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mut ok = vec![snapshot_event()];
        ok.extend(test_events("syscall-null", 3, true));
        ok.extend(test_events("syscall-read", 2, true));
        let mut dies = vec![snapshot_event()];
        dies.extend(test_events("syscall-null", 3, true));
        dies.extend(test_events("syscall-read", 1, false));
        let kvm = include_str!("../fixtures/qemu-kvm-msr.stderr");
        let scripts = [
            (
                "ok",
                script(
                    "[    0.000000] Linux version 6.1.0-fake",
                    &ok,
                    "echo '#kbench-guest-exit 0'",
                ),
            ),
            (
                "panic",
                script(
                    "[    2.100000] Kernel panic - not syncing: Attempted to kill init!",
                    &dies,
                    "exit 0",
                ),
            ),
            (
                "hang",
                script("[    0.500000] booting", &[], "exec sleep 30"),
            ),
            (
                "kvm",
                script("", &[], &format!("cat >&2 <<'ERR'\n{kvm}\nERR\nexit 134")),
            ),
            (
                "rest",
                script(
                    "booted",
                    &[vec![snapshot_event()], test_events("syscall-read", 2, true)].concat(),
                    "echo '#kbench-guest-exit 0'",
                ),
            ),
            (
                // A duet's guest: ready, then nothing until its start byte
                // (stdin at its end would make it fail).
                "gated",
                script(
                    "booted",
                    &[],
                    &format!(
                        "echo '#kbench-guest-ready'\nread -r go || exit 9\ncat <<'EVENTS'\n{}\nEVENTS\necho '#kbench-guest-exit 0'",
                        ok.join("\n")
                    ),
                ),
            ),
            (
                // Dies at boot the first time it runs, boots well after.
                "panics-once",
                script(
                    "[    2.433384] Kernel panic - not syncing: Fatal exception in interrupt",
                    &[],
                    &format!(
                        "if [ -e \"$0.booted\" ]; then\n  printf 'booted\\n' > \"$log\"\n  cat <<'EVENTS'\n{}\nEVENTS\n  echo '#kbench-guest-exit 0'\nelse\n  touch \"$0.booted\"\nfi",
                        ok.join("\n")
                    ),
                ),
            ),
            (
                "panics-at-boot",
                script(
                    "[    2.433384] Kernel panic - not syncing: Fatal exception in interrupt",
                    &[],
                    "exit 0",
                ),
            ),
            (
                "agent-fails",
                script("booted", &[snapshot_event()], "echo '#kbench-guest-exit 3'"),
            ),
        ];
        for (name, text) in scripts {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    })
    .path()
}

fn image() -> Arc<GuestImage> {
    static IMAGE: OnceLock<Arc<GuestImage>> = OnceLock::new();
    IMAGE
        .get_or_init(|| {
            Arc::new(
                GuestImage::build(
                    &std::env::current_exe().unwrap(),
                    ImageArch::host(),
                    None,
                    &[],
                    false,
                )
                .unwrap(),
            )
        })
        .clone()
}

fn launcher(fake: &str, log_dir: &Path, timeout: Duration) -> VmLauncher {
    let spec = VmSpec {
        qemu: fakes().join(fake),
        kernel: KernelImage {
            path: PathBuf::from("/fake/vmlinuz"),
            arch: ImageArch::X86_64,
            release: Some("6.1.0-fake".into()),
            version: None,
        },
        machine: Machine {
            arch: ImageArch::X86_64,
            accel: Accel::Tcg,
            memory_mib: 256,
            cpus: 1,
            append: None,
            disk: None,
        },
        timeout,
        log_dir: log_dir.to_path_buf(),
    };
    VmLauncher::new(spec, image())
}

fn job() -> AgentJob {
    AgentJob {
        snapshot: true,
        tests: vec![key("syscall-null"), key("syscall-read")],
        plan: SamplingPlan::default(),
        tools: vec![],
    }
}

fn logs_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn streams_events_in_order_and_cleans_up() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("ok", logs.path(), Duration::from_secs(20));
    let mut stream = launcher.launch(&job()).unwrap();
    let mut events = vec![];
    while let Some(event) = stream.next_event() {
        events.push(event.unwrap());
    }
    stream.finish().unwrap();
    assert_eq!(events.len(), 1 + 5 + 4);
    assert!(matches!(events[0], AgentEvent::Snapshot { .. }));
    assert!(matches!(events[9], AgentEvent::TestEnd { .. }));
    assert!(logs_in(logs.path()).is_empty(), "a good boot keeps no log");
    let boots = launcher.boots();
    assert_eq!(boots.len(), 1);
    assert!(boots[0].agent.is_some() && boots[0].first_sample >= boots[0].agent);
}

#[test]
fn a_duet_guest_starts_on_the_signal_and_its_samples_take_the_hosts_time() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("gated", logs.path(), Duration::from_secs(20)).for_duet(0);
    let before = kbench_model::now_ms();
    let mut stream = launcher.launch(&job()).unwrap();
    stream.wait_until_ready().unwrap();
    stream.start();
    let mut samples = vec![];
    while let Some(event) = stream.next_event() {
        if let AgentEvent::Sample { at_ms, .. } = event.unwrap() {
            samples.push(at_ms);
        }
    }
    stream.finish().unwrap();
    assert_eq!(samples.len(), 5);
    // The guest's own stamps (2023) are replaced by the host's arrival time.
    assert!(
        samples.iter().all(|&at| at >= before),
        "{samples:?} vs {before}"
    );
}

#[test]
fn a_guest_that_dies_keeps_its_serial_log_and_says_so() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("panic", logs.path(), Duration::from_secs(20));
    let mut stream = launcher.launch(&job()).unwrap();
    while stream.next_event().is_some() {}
    let error = stream.finish().unwrap_err();
    let headline = error.to_string();
    assert!(headline.contains("kernel panic"), "{headline}");
    let kept = logs_in(logs.path());
    assert_eq!(kept.len(), 1);
    assert!(
        headline.contains(&kept[0].display().to_string()),
        "{headline}"
    );
    let full = format!("{error:#}");
    assert!(full.contains("Kernel panic - not syncing"), "{full}");
}

#[test]
fn a_guest_that_dies_before_its_agent_is_booted_once_more() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("panics-once", logs.path(), Duration::from_secs(20));
    let mut stream = launcher.launch(&job()).unwrap();
    let mut samples = 0;
    while let Some(event) = stream.next_event() {
        samples += usize::from(matches!(event.unwrap(), AgentEvent::Sample { .. }));
    }
    stream.finish().unwrap();
    assert_eq!(samples, 5, "the second boot's events, all of them");
    let boots = launcher.boots();
    assert_eq!(boots.len(), 2);
    assert_eq!(boots[0].agent, None);
    assert!(boots[1].agent.is_some());
    let first = boots[1].died_first.as_ref().expect("the first boot's log");
    let console = std::fs::read_to_string(first).unwrap();
    assert!(console.contains("Kernel panic"), "{console}");
    assert_eq!(
        logs_in(logs.path()),
        std::slice::from_ref(first),
        "only the failed boot's"
    );
    let note = crate::event::Note::Booted(boots[1].clone()).to_string();
    assert!(note.contains("booted it once more"), "{note}");
}

#[test]
fn a_guest_that_dies_at_every_boot_is_booted_twice_and_both_logs_are_named() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("panics-at-boot", logs.path(), Duration::from_secs(20));
    let mut stream = launcher.launch(&job()).unwrap();
    assert!(stream.next_event().is_none());
    let error = format!("{:#}", stream.finish().unwrap_err());
    assert_eq!(launcher.boots().len(), 2, "not a third time");
    let kept = logs_in(logs.path());
    assert_eq!(kept.len(), 2);
    for log in kept {
        assert!(error.contains(&log.display().to_string()), "{error}");
    }
    assert!(
        error.contains("died before its agent started too"),
        "{error}"
    );
}

#[test]
fn a_hung_guest_is_killed_at_the_timeout() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("hang", logs.path(), Duration::from_secs(1));
    let started = Instant::now();
    let mut stream = launcher.launch(&job()).unwrap();
    assert!(stream.next_event().is_none());
    let error = format!("{:#}", stream.finish().unwrap_err());
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(error.contains("sent nothing for 1 s"), "{error}");
    assert!(
        error.contains("booting"),
        "the log's tail is shown: {error}"
    );
}

#[test]
fn a_failing_agent_is_a_failure() {
    let logs = tempfile::tempdir().unwrap();
    let launcher = launcher("agent-fails", logs.path(), Duration::from_secs(20));
    let mut stream = launcher.launch(&job()).unwrap();
    while stream.next_event().is_some() {}
    let error = stream.finish().unwrap_err().to_string();
    assert!(error.contains("status 3"), "{error}");
}

#[test]
fn the_kvm_probe_reports_qemus_kvm_error() {
    let logs = tempfile::tempdir().unwrap();
    let why = launcher("kvm", logs.path(), Duration::from_secs(20))
        .probe_kvm()
        .unwrap_err();
    assert!(why.contains("failed to set MSR 0x10a"), "{why}");
    assert!(logs_in(logs.path()).is_empty(), "the probe keeps no log");
    assert!(
        launcher("ok", logs.path(), Duration::from_secs(20))
            .probe_kvm()
            .is_ok()
    );
}

#[test]
fn the_stop_flag_ends_a_boot() {
    let logs = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let launcher = launcher("hang", logs.path(), Duration::from_secs(60)).with_stop(stop.clone());
    let mut stream = launcher.launch(&job()).unwrap();
    stop.store(true, Ordering::SeqCst);
    let started = Instant::now();
    assert!(stream.next_event().is_none());
    assert!(stream.finish().is_err());
    assert!(started.elapsed() < Duration::from_secs(5));
}

fn request(identifier: &str) -> RunRequest {
    RunRequest {
        set: "vm".into(),
        identifier: identifier.into(),
        tests: vec![key("syscall-null"), key("syscall-read")],
        plan: SamplingPlan::default(),
        rounds: 1,
        adaptive: None,
        wrapper: Some("qemu -accel tcg".into()),
        notes: vec![crate::qemu::TCG_NOTE.into()],
        host: Some(SystemSnapshot {
            kernel_release: "host-release".into(),
            ..SystemSnapshot::default()
        }),
        keep_going: false,
        replayed: None,
    }
}

fn execute(
    store: &mut SqliteStore,
    launcher: &VmLauncher,
    identifier: &str,
) -> kbench_measure::Result<runner::RunSummary> {
    runner::execute(
        store,
        launcher,
        &request(identifier),
        &mut |_| {},
        &AtomicBool::new(false),
    )
}

#[test]
fn a_batched_round_is_one_boot_with_the_guests_snapshot_and_the_hosts() {
    let (dir, mut store) = temp_store();
    let launcher = launcher("ok", dir.path(), Duration::from_secs(20));
    let summary = execute(&mut store, &launcher, "A").unwrap();
    assert_eq!(summary.samples, 5);
    assert_eq!(summary.outcomes.len(), 2);
    assert_eq!(launcher.boots().len(), 1, "one boot for the whole round");
    execute(&mut store, &launcher, "A").unwrap();
    let data = store.load("vm").unwrap();
    let a = &data.identifiers[0];
    assert_eq!(a.runs.len(), 2);
    let run = &a.runs[0];
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.info.snapshot.kernel_release, "6.1.0-fake");
    assert_eq!(
        run.info.host.as_ref().unwrap().kernel_release,
        "host-release"
    );
    assert_eq!(run.info.notes, vec![crate::qemu::TCG_NOTE.to_string()]);
    let samples = &a.samples[&key("syscall-null")];
    let rounds: Vec<u32> = samples.iter().map(|s| s.round).collect();
    assert_eq!(rounds, [0, 0, 0, 1, 1, 1]);
}

#[test]
fn a_guest_that_dies_mid_round_fails_the_run_and_keeps_its_samples() {
    let (dir, mut store) = temp_store();
    let dying = launcher("panic", dir.path(), Duration::from_secs(20));
    let error = format!("{:#}", execute(&mut store, &dying, "B").unwrap_err());
    assert!(error.contains("marked failed"), "{error}");
    assert!(error.contains("Kernel panic"), "{error}");
    let data = store.load("vm").unwrap();
    let b = &data.identifiers[0];
    assert_eq!(b.runs[0].status, RunStatus::Failed);
    assert_eq!(b.samples[&key("syscall-null")].len(), 3);
    assert_eq!(b.samples[&key("syscall-read")].len(), 1);
    let failed = b.runs[0]
        .outcomes
        .iter()
        .find(|o| o.test == key("syscall-read"))
        .unwrap();
    assert!(failed.detail.contains("kernel panic"), "{failed:?}");
    // A failed run is not resumed: the next one is a new round.
    let good = launcher("ok", dir.path(), Duration::from_secs(20));
    execute(&mut store, &good, "B").unwrap();
    let data = store.load("vm").unwrap();
    assert_eq!(data.identifiers[0].runs.len(), 2);
}

#[test]
fn a_guest_that_never_reaches_the_agent_stores_nothing() {
    let (dir, mut store) = temp_store();
    let hung = launcher("hang", dir.path(), Duration::from_secs(1));
    let error = format!("{:#}", execute(&mut store, &hung, "C").unwrap_err());
    assert!(error.contains("nothing was measured"), "{error}");
    assert!(error.contains("serial log kept at"), "{error}");
    assert!(store.load("vm").is_err(), "no run, no result set");
}

#[test]
fn an_interrupted_batched_round_resumes_with_the_tests_left() {
    let (dir, mut store) = temp_store();
    let stop = AtomicBool::new(false);
    let summary = runner::execute(
        &mut store,
        &launcher("ok", dir.path(), Duration::from_secs(20)),
        &request("D"),
        &mut |event| {
            if matches!(event, runner::RunEvent::TestEnded { .. }) {
                stop.store(true, Ordering::SeqCst);
            }
        },
        &stop,
    )
    .unwrap();
    assert!(summary.interrupted);
    assert_eq!(summary.outcomes.len(), 1);
    // The resumed round boots once more, for syscall-read only, in a run
    // and a round of its own (a round is one invocation); the interrupted
    // run keeps what it measured.
    let rest = launcher("rest", dir.path(), Duration::from_secs(20));
    let summary = execute(&mut store, &rest, "D").unwrap();
    assert_eq!(summary.outcomes.len(), 1);
    assert_eq!(summary.outcomes[0].test, key("syscall-read"));
    let data = store.load("vm").unwrap();
    let d = &data.identifiers[0];
    let statuses: Vec<RunStatus> = d.runs.iter().map(|run| run.status).collect();
    assert_eq!(statuses, [RunStatus::Interrupted, RunStatus::Complete]);
    assert_eq!(d.runs_of_samples(&key("syscall-read")), [1, 1]);
    assert!(d.samples[&key("syscall-read")].iter().all(|s| s.round == 1));
    assert!(
        d.runs_of_samples(&key("syscall-null"))
            .iter()
            .all(|&run| run == 0)
    );
}
