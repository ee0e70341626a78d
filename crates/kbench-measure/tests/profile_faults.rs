//! Profile tests that go wrong, run as the agent runs them (user profiles
//! whose "tools" are shell one-liners): a tool that exits non-zero, output
//! the parser cannot read, a hung tool, a service that never comes up, a
//! port already taken, a missing program; and the cleanup after each.

use kbench_catalog::profile::Profiles;
use kbench_measure::plan::SamplingPlan;
use kbench_measure::profile::run_test;
use kbench_model::{AgentEvent, Direction, MAIN_METRIC, TestKey};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A profile "toy" around `tests` (TOML of [[tests]] and anything else).
fn toy(extra: &str) -> String {
    format!(
        r#"
name = "toy"
requires = {{ sh = "dash" }}
timeout = 1
[[metrics]]
name = "rate"
unit = "ops/s"
direction = "higher"
regex = '^rate: ([0-9.]+)'
[[metrics]]
name = "lat"
unit = "ms"
direction = "lower"
regex = '^lat: ([0-9.]+)'
optional = true
{extra}
"#
    )
}

struct Lab {
    _dir: tempfile::TempDir,
    /// Where scratch directories go (the agent's work directory).
    work: PathBuf,
    /// A place outside the scratch directory for markers.
    outside: PathBuf,
    profiles: Profiles,
}

fn lab(profile: &dyn Fn(&Path) -> String) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let outside = dir.path().join("outside");
    let profiles_dir = dir.path().join("profiles");
    for d in [&work, &outside, &profiles_dir] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(profiles_dir.join("toy.toml"), profile(&outside)).unwrap();
    let profiles = Profiles::load(&[profiles_dir]).unwrap();
    Lab {
        _dir: dir,
        work,
        outside,
        profiles,
    }
}

/// `min_samples` runs at least, `max_time` at most: the user chose them.
fn plan(min_samples: usize, max_time: Duration) -> SamplingPlan {
    SamplingPlan {
        min_samples,
        max_time,
        min_samples_chosen: true,
        max_time_chosen: true,
        ..SamplingPlan::default()
    }
}

impl Lab {
    /// Three runs at least, two seconds at most.
    fn run(&self, test: &str) -> Vec<AgentEvent> {
        self.run_with(test, &plan(3, Duration::from_secs(2)))
    }

    fn run_with(&self, test: &str, plan: &SamplingPlan) -> Vec<AgentEvent> {
        self.run_until(test, plan, &AtomicBool::new(false))
    }

    /// Runs `test` until it ends or `stop` is raised.
    fn run_until(&self, test: &str, plan: &SamplingPlan, stop: &AtomicBool) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        run_test(
            &self.profiles,
            &TestKey::parse(test).unwrap(),
            plan,
            &self.work,
            stop,
            &mut |event| {
                events.push(event);
                Ok(())
            },
        )
        .unwrap();
        events
    }

    /// Scratch directories left in the work directory.
    fn leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.work)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }

    fn pid_in(&self, file: &str) -> i32 {
        std::fs::read_to_string(self.outside.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .trim()
            .parse()
            .unwrap()
    }
}

/// Whether `pid` is a live process (a zombie awaiting its reaper is not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z"))
        .unwrap_or(false)
}

fn samples(events: &[AgentEvent], metric: &str) -> Vec<f64> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Sample {
                metric: m, value, ..
            } if m == metric => Some(*value),
            _ => None,
        })
        .collect()
}

fn last(events: &[AgentEvent]) -> &AgentEvent {
    events.last().expect("some event")
}

fn failed_reason(events: &[AgentEvent]) -> String {
    match last(events) {
        AgentEvent::Failed { reason, .. } => reason.clone(),
        other => panic!("expected a failure, got {other:?}\n{events:#?}"),
    }
}

#[test]
fn a_good_run_sends_one_sample_per_metric_with_their_units() {
    let lab =
        lab(&|_| toy("[[tests]]\nid = \"toy-ok\"\ncommand = \"echo 'rate: 10'; echo 'lat: 2.5'\""));
    let events = lab.run("toy-ok");
    match &events[0] {
        AgentEvent::TestStart {
            test,
            unit,
            direction,
            ..
        } => {
            assert_eq!(test.to_string(), "toy-ok");
            assert_eq!((unit.as_str(), *direction), ("ops/s", Direction::Higher));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        events[1],
        AgentEvent::Metric {
            metric: "lat".into(),
            unit: "ms".into(),
            direction: Direction::Lower
        }
    );
    assert_eq!(samples(&events, MAIN_METRIC), [10.0, 10.0, 10.0]);
    assert_eq!(samples(&events, "lat"), [2.5, 2.5, 2.5]);
    assert!(
        matches!(
            last(&events),
            AgentEvent::TestEnd {
                target_met: true,
                ..
            }
        ),
        "{events:#?}"
    );
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_tool_that_exits_non_zero_fails_with_its_last_lines() {
    let lab = lab(&|_| {
        toy(
            "[[tests]]\nid = \"toy-crash\"\ncommand = \"echo step 1; echo 'error: disk on fire' >&2; exit 2\"",
        )
    });
    let reason = failed_reason(&lab.run("toy-crash"));
    assert!(reason.contains("3 runs in a row failed"), "{reason}");
    assert!(reason.contains("exited with status 2"), "{reason}");
    assert!(
        reason.contains("step 1") && reason.contains("error: disk on fire"),
        "{reason}"
    );
    assert!(lab.leftovers().is_empty());
}

#[test]
fn output_the_parser_cannot_read_fails_showing_the_lines_searched() {
    let lab = lab(&|_| {
        toy("[[tests]]\nid = \"toy-garbled\"\ncommand = \"echo 'speed = 10 ops'; echo done\"")
    });
    let reason = failed_reason(&lab.run("toy-garbled"));
    assert!(reason.contains("metric 'rate'"), "{reason}");
    assert!(
        reason.contains("no line of the output matches /^rate: ([0-9.]+)/"),
        "{reason}"
    );
    assert!(
        reason.contains("the 2 lines searched") && reason.contains("speed = 10 ops"),
        "{reason}"
    );
}

#[test]
fn a_hung_run_is_killed_at_the_timeout_and_sampling_goes_on() {
    let lab = lab(&|outside| {
        toy(&format!(
            "[[tests]]\nid = \"toy-hang-once\"\ntimeout = 0.5\n\
             command = \"if [ -e hung-once ]; then echo 'rate: 5'; else touch hung-once; sleep 30 & echo $! > {}/sleep.pid; wait; fi\"",
            outside.display()
        ))
    });
    let started = Instant::now();
    let events = lab.run("toy-hang-once");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(samples(&events, MAIN_METRIC).len() >= 3, "{events:#?}");
    match last(&events) {
        AgentEvent::TestEnd { stop, .. } => {
            assert!(stop.contains("runs failed, the last: run 1"), "{stop}");
            assert!(stop.contains("timeout and was killed"), "{stop}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !alive(lab.pid_in("sleep.pid")),
        "the hung tool's process is gone"
    );
    assert!(lab.leftovers().is_empty());
}

#[test]
fn a_tool_that_always_hangs_fails_the_test_after_three_timeouts() {
    let lab = lab(&|_| toy("[[tests]]\nid = \"toy-hang\"\ntimeout = 0.3\ncommand = \"sleep 30\""));
    let reason = failed_reason(&lab.run("toy-hang"));
    assert!(reason.contains("3 runs in a row failed"), "{reason}");
    assert!(
        reason.contains("still running after the 300ms timeout"),
        "{reason}"
    );
}

#[test]
fn a_service_that_never_listens_fails_within_its_ready_timeout() {
    let lab = lab(&|outside| {
        toy(&format!(
            "[service]\ncommand = \"sh -c 'echo $$ > {}/service.pid; echo warming up; exec sleep 30'\"\n\
             ready_timeout = 0.5\n[[tests]]\nid = \"toy-deaf\"\ncommand = \"echo 'rate: {{port}}'\"",
            outside.display()
        ))
    });
    let started = Instant::now();
    let reason = failed_reason(&lab.run("toy-deaf"));
    assert!(started.elapsed() < Duration::from_secs(8));
    assert!(
        reason.contains("did not accept connections on 127.0.0.1:"),
        "{reason}"
    );
    assert!(
        reason.contains("within 500ms") && reason.contains("warming up"),
        "{reason}"
    );
    assert!(!alive(lab.pid_in("service.pid")));
    assert!(lab.leftovers().is_empty());
}

#[test]
fn a_port_already_taken_is_reported() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let lab = lab(&|_| {
        toy(&format!(
            "[service]\ncommand = \"sleep 30\"\nport = {port}\n[[tests]]\nid = \"toy-taken\"\ncommand = \"echo 'rate: 1'\""
        ))
    });
    let reason = failed_reason(&lab.run("toy-taken"));
    assert!(
        reason.contains(&format!("port {port} on 127.0.0.1 is already in use")),
        "{reason}"
    );
    assert!(lab.leftovers().is_empty());
}

#[test]
fn the_service_and_scratch_files_are_removed_and_placeholders_filled() {
    let lab = lab(&|outside| {
        toy(&format!(
            r#"
[service]
command = "sh -c 'echo $$ > {out}/service.pid; exec sleep 60'"
ready = "test -s {out}/service.pid"
[files]
"conf/app.conf" = "listen {{port}}"
[options.mode]
values = ["fast"]
args = {{ fast = "--fast --really" }}
[[tests]]
id = "toy-service"
command = "test -d {{dir}} && grep -q 'listen {{port}}' conf/app.conf && echo {{mode}} > {out}/args && echo 'rate: {{port}}'"
"#,
            out = outside.display()
        ))
    });
    let events = lab.run("toy-service[mode=fast]");
    let rates = samples(&events, MAIN_METRIC);
    assert_eq!(rates.len(), 3, "{events:#?}");
    assert!(rates[0] > 0.0, "the port reached the command");
    assert_eq!(
        std::fs::read_to_string(lab.outside.join("args")).unwrap(),
        "--fast --really\n"
    );
    assert!(!alive(lab.pid_in("service.pid")), "the service is stopped");
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_service_that_dies_during_the_test_fails_it_with_its_output() {
    let lab = lab(&|_| {
        toy(&format!(
            "[service]\ncommand = \"sh -c 'touch alive; echo segfault at 0 >&2; sleep 0.3; rm alive'\"\nready = \"true\"\n\
             [[tests]]\nid = \"toy-dies\"\ncommand = \"sleep 0.5; test -e {}/alive && echo 'rate: 1'\"",
            "{dir}"
        ))
    });
    let reason = failed_reason(&lab.run("toy-dies"));
    assert!(
        reason.contains("the service exited") && reason.contains("segfault at 0"),
        "{reason}"
    );
}

#[test]
fn a_missing_program_skips_naming_its_package() {
    let lab = lab(&|_| {
        toy("[[tests]]\nid = \"toy-absent\"\ncommand = \"kbench-no-such-tool\"").replace(
            "sh = \"dash\"",
            "kbench-no-such-tool = \"kbench-toy-tools\"",
        )
    });
    let events = lab.run("toy-absent");
    assert!(
        matches!(events[0], AgentEvent::TestStart { .. }),
        "{events:#?}"
    );
    match last(&events) {
        AgentEvent::Skip { reason, .. } => {
            assert!(
                reason.contains("kbench-no-such-tool (package kbench-toy-tools)"),
                "{reason}"
            );
            assert!(reason.contains("kbench install toy"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_option_without_default_must_be_given() {
    let lab = lab(&|_| {
        toy(
            "[options.src]\npattern = \".+\"\nhelp = \"a source tree\"\n[[tests]]\nid = \"toy-src\"\ncommand = \"ls {src} && echo 'rate: 1'\"",
        )
    });
    match last(&lab.run("toy-src")) {
        AgentEvent::Skip { reason, .. } => {
            assert!(
                reason.contains("needs option src (a source tree)"),
                "{reason}"
            );
            assert!(reason.contains("toy-src[src=...]"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let events = lab.run(&format!("toy-src[src={}]", lab.outside.display()));
    assert_eq!(samples(&events, MAIN_METRIC).len(), 3);
}

#[test]
fn slow_runs_stop_before_overrunning_the_budget() {
    // 1 s per run, a 3.5 s budget, at least 2: the fourth run would end at
    // 4 s, past the budget, so there are three (the 0.5 s of slack absorbs
    // the shell's start-up on a loaded machine).
    // Values alternate 10, 20, 10... (a counter kept outside the scratch
    // directory), so the CI target never ends it. The runs' timeout is
    // 3 s: a 1 s run must not race the toy's 1 s timeout.
    let lab = lab(&|outside| {
        toy(&format!(
            "[[tests]]\nid = \"toy-slow\"\ntimeout = 3\ncommand = \"n=$(cat {o}/n 2>/dev/null || echo 0); echo $((n + 1)) > {o}/n; sleep 1; echo rate: $((n % 2 * 10 + 10))\"",
            o = outside.display()
        ))
    });
    let plan = plan(2, Duration::from_millis(3500));
    let started = Instant::now();
    let events = lab.run_with("toy-slow", &plan);
    // Three runs end by ~3.5 s; a fourth would end at >= 4 s (and the
    // count below would be 4).
    assert!(
        started.elapsed() < Duration::from_millis(4500),
        "ran past the budget: {:?}",
        started.elapsed()
    );
    assert_eq!(samples(&events, MAIN_METRIC).len(), 3, "{events:#?}");
}

#[test]
fn a_raised_stop_flag_leaves_the_test_unfinished_and_cleans_up() {
    let lab = lab(&|_| toy("[[tests]]\nid = \"toy-nap\"\ncommand = \"sleep 0.2; echo rate: 1\""));
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let events = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            stop.store(true, Ordering::SeqCst);
        });
        lab.run_until("toy-nap", &plan(100, Duration::from_secs(30)), &stop)
    });
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the stop flag did not end the test: {:?}",
        started.elapsed()
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::TestEnd { .. } | AgentEvent::Failed { .. })),
        "an interrupted test gets no end event, so a resumed run measures it again: {events:#?}"
    );
    assert!(!samples(&events, MAIN_METRIC).is_empty(), "{events:#?}");
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}
