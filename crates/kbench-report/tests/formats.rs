//! Every `kbench compare` format rendered from one small hand-made result
//! set: "v5.8" (baseline), "PLU 0" (10 % slower on syscall-null, unchanged
//! elsewhere) and "PLU <b>1|x" (5 % faster mem-bw, a noisy 4-sample futex1,
//! no pipe-lat at all), measured together in one invocation (one round of
//! `kbench run --variant`), so their samples are compared as independent;
//! [`measured_apart`] is the same data from three invocations.

use kbench_analysis::comparison::{self, CompareRequest, ComparisonReport};
use kbench_analysis::thresholds::Thresholds;
use kbench_model::results::{IdentifierData, ResultSetData, RunId, RunInfo, RunRecord, RunStatus};
use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec};
use kbench_report::format::{self, Style};
use std::collections::BTreeMap;

const SLOW: &str = "PLU 0";
const ODD: &str = "PLU <b>1|x";

const SYSCALL: &str = "syscall-null";
const PIPE: &str = "pipe-lat[placement=cross]";
const MEMBW: &str = "mem-bw[op=rd,size=64]";
const FUTEX: &str = "futex1[mode=thread,tasks=2]";

fn key(text: &str) -> TestKey {
    TestKey::parse(text).unwrap()
}

/// 20 values around `base` with 0.2 % uniform noise; `stride` permutes the
/// same multiset (so two strides give identical distributions).
fn steady(base: f64, stride: usize) -> Vec<f64> {
    (0..20)
        .map(|i| {
            let j = (i * stride) % 20;
            base * (1.0 + 0.002 * (2.0 * j as f64 / 19.0 - 1.0))
        })
        .collect()
}

fn samples(values: Vec<f64>) -> Vec<Sample> {
    values
        .into_iter()
        .map(|value| Sample {
            value,
            iterations: 1,
            at_ms: 0,
            round: 0,
        })
        .collect()
}

fn snapshot(kernel: &str) -> SystemSnapshot {
    SystemSnapshot {
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        arch: "x86_64".into(),
        kernel_release: kernel.into(),
        cpu_model: "AMD EPYC 7B13".into(),
        cpus_online: 2,
        threads_per_core: 1,
        cpu_mhz: 2994.0,
        memory_total_kib: 8 * 1024 * 1024,
        work_dir: "/work".into(),
        work_dir_fs: "ext4".into(),
        virtualization: "kvm".into(),
        compiler: "rustc 1.95.0".into(),
        boot_id: "boot-1".into(),
        ..SystemSnapshot::default()
    }
}

fn identifier(
    name: &str,
    id: i64,
    kernel: &str,
    wrapper: Option<&str>,
    tests: Vec<(&str, Vec<f64>)>,
) -> IdentifierData {
    IdentifierData {
        sample_runs: Default::default(),
        name: name.to_string(),
        factors: Default::default(),
        runs: vec![RunRecord {
            id: RunId(id),
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: snapshot(kernel),
                wrapper: wrapper.map(String::from),
                pid: 7,
                ..RunInfo::default()
            },
            ended_at_ms: Some(0),
            outcomes: vec![],
        }],
        samples: tests
            .into_iter()
            .map(|(test, values)| (key(test), samples(values)))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn data(names: [&str; 3]) -> ResultSetData {
    let spec = |test: &str, unit: &str, direction| TestSpec {
        key: key(test),
        unit: unit.to_string(),
        direction,
    };
    let noisy_futex: Vec<f64> = [-1.0, -1.0 / 3.0, 1.0 / 3.0, 1.0]
        .iter()
        .map(|g| 2.0e6 * 0.98 * (1.0 + 0.03 * g))
        .collect();
    ResultSetData {
        name: "plu-test".into(),
        title: None,
        description: None,
        tests: vec![
            spec(SYSCALL, "ns", Direction::Lower),
            spec(PIPE, "us", Direction::Lower),
            spec(MEMBW, "MB/s", Direction::Higher),
            spec(FUTEX, "ops/s", Direction::Higher),
        ],
        identifiers: vec![
            identifier(
                names[0],
                1,
                "5.8.0",
                None,
                vec![
                    (SYSCALL, steady(100.0, 7)),
                    (PIPE, steady(5.0, 7)),
                    (MEMBW, steady(10_000.0, 7)),
                    (FUTEX, steady(2.0e6, 7)),
                ],
            ),
            identifier(
                names[1],
                2,
                "5.9.0-rc5-plu",
                None,
                vec![
                    (SYSCALL, steady(110.0, 3)),
                    (PIPE, steady(5.0, 3)),
                    (MEMBW, steady(10_000.0, 3)),
                    (FUTEX, steady(2.0e6, 3)),
                ],
            ),
            identifier(
                names[2],
                3,
                "5.9.0-rc5-plu",
                Some("taskset -c 1"),
                vec![
                    (SYSCALL, steady(100.0, 11)),
                    (MEMBW, steady(10_500.0, 11)),
                    (FUTEX, noisy_futex),
                ],
            ),
        ],
    }
}

fn report() -> ComparisonReport {
    compared(&data(["v5.8", SLOW, ODD]))
}

/// `data` compared against its first identifier at a 1 % threshold.
fn compared(data: &ResultSetData) -> ComparisonReport {
    comparison::build(
        data,
        &CompareRequest {
            baseline: None,
            identifiers: vec![],
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        },
    )
    .unwrap()
}

fn render(name: &str, report: &ComparisonReport, color: bool) -> String {
    format::by_name(name)
        .unwrap_or_else(|| panic!("no format {name}"))
        .render(
            report,
            Style {
                color,
                ..Style::default()
            },
        )
}

/// The lines of `text` from the one equal to `start` up to (not including)
/// the next one starting with `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != start)
        .skip(1)
        .take_while(|l| !l.starts_with(end))
        .collect()
}

#[test]
fn the_fixture_has_the_intended_verdicts() {
    let r = report();
    let verdict = |metric: usize, id: usize| {
        r.metrics[metric].results[id]
            .comparison
            .as_ref()
            .map(|c| c.verdict.to_string())
    };
    assert_eq!(verdict(0, 1).as_deref(), Some("REGRESSION"));
    assert_eq!(verdict(1, 1).as_deref(), Some("NO CHANGE"));
    assert_eq!(verdict(2, 1).as_deref(), Some("NO CHANGE"));
    assert_eq!(verdict(3, 1).as_deref(), Some("NO CHANGE"));
    assert_eq!(verdict(0, 2).as_deref(), Some("NO CHANGE"));
    assert_eq!(verdict(1, 2), None);
    assert_eq!(verdict(2, 2).as_deref(), Some("IMPROVEMENT"));
    assert_eq!(verdict(3, 2).as_deref(), Some("INCONCLUSIVE"));
}

#[test]
fn every_format_is_registered_in_help_order() {
    let names: Vec<&str> = format::all().iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        [
            "bars",
            "table",
            "regressions",
            "markdown",
            "json",
            "csv",
            "html",
            "svg",
            "tap"
        ]
    );
    assert!(format::by_name("pie").is_none());
}

/// The verdict comes first, before the systems and the notes, and all
/// of those before the first metric: the counts per verdict of each
/// compared identifier, its worst regression with its change, the level
/// of analysis and how a change reads. Then the facts every identifier
/// shares once, and the ones that differ with each identifier's value.
#[test]
fn text_formats_open_with_the_verdict_then_the_systems() {
    let r = report();
    for name in ["bars", "table", "regressions"] {
        let text = render(name, &r, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "kbench compare: result set 'plu-test', 4 metrics; baseline 'v5.8', threshold 1.00 %",
                "Verdict against the baseline 'v5.8':"
            ],
            "{name}:\n{text}"
        );
        assert!(
            lines[2].starts_with(
                "  PLU 0 ...... 1 regression, 0 improvements, 3 no change, 0 inconclusive; \
                 3.13 % worse"
            ),
            "{name}:\n{text}"
        );
        assert_eq!(lines[3].trim(), "worst: syscall-null +10.0%", "{name}");
        assert!(lines[4].starts_with("  PLU <b>1|x . 0 regressions, 1 improvement"));
        assert_eq!(
            lines[5],
            "Analysis: compared as independent samples (Welch's t-test on logs)"
        );
        assert!(lines[6].starts_with("Change: current against baseline in %"));
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.starts_with(needle))
                .unwrap_or_else(|| panic!("{name}: no {needle:?} in\n{text}"))
        };
        assert!(text.contains(
            "\nSystem (shared): Processor: AMD EPYC 7B13 (2 Cores / 2 Threads) @ 2994 MHz, \
             Memory: 8.0 GiB, OS: Debian GNU/Linux 12 (bookworm), File-System: ext4 (/work), \
             Virtualization: kvm, Compiler: rustc 1.95.0\nRuns: 1 each\n"
        ));
        assert!(text.contains("Differences between identifiers:\n  Kernel: v5.8 = 5.8.0 (x86_64); PLU 0 = 5.9.0-rc5-plu (x86_64);"));
        assert!(text.contains("  Wrapper: v5.8 = none; PLU 0 = none; PLU <b>1|x = taskset -c 1"));
        assert!(text.contains("Notes:\n  - Some metrics were measured in one round"));
        assert!(!text.contains("identical systems"), "{name}");
        assert!(at("Analysis: ") < at("System (shared): ") && at("Runs: ") < at("Notes:"));
        let first_metric = lines
            .iter()
            .position(|l| l.contains("syscall-null") && !l.contains("worst:"))
            .unwrap();
        assert!(at("Notes:") < first_metric, "{name}:\n{text}");
    }
}

#[test]
fn bars_have_one_dotted_bar_per_identifier_and_marks_the_slow_one() {
    let text = render("bars", &report(), false);
    assert!(text.contains("\nsyscall-null\nns < Lower Is Better\n"));
    assert!(text.contains("\npipe-lat - placement: cross\nus < Lower Is Better\n"));
    assert!(text.contains("\nmem-bw - op: rd - size: 64\nMB/s > Higher Is Better\n"));
    let block = between(&text, "syscall-null", "pipe-lat");
    let bars: Vec<&str> = block.iter().copied().filter(|l| l.contains(" |")).collect();
    assert_eq!(bars.len(), 3, "{block:?}");
    assert!(
        bars[0].starts_with("v5.8 ....... 100.0 +-0.1% |="),
        "{}",
        bars[0]
    );
    assert!(
        bars[1].starts_with("PLU 0 ...... 110.0 +-0.1% |="),
        "{}",
        bars[1]
    );
    assert!(
        bars[2].starts_with("PLU <b>1|x . 100.0 +-0.1% |="),
        "{}",
        bars[2]
    );
    // The slower identifier has the longest bar, 50 '='.
    assert!(
        bars[1].ends_with(&format!("|{}  +10.0% REGRESSION", "=".repeat(50))),
        "{}",
        bars[1]
    );
    assert!(
        bars[0].ends_with(&format!("|{}", "=".repeat(45))),
        "{}",
        bars[0]
    );
    assert!(
        bars[2].ends_with(&format!("|{}       +0.0% no change", "=".repeat(45))),
        "{}",
        bars[2]
    );
    // One REGRESSION mark in the whole report, on that line.
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("REGRESSION")).collect();
    assert_eq!(marked, [bars[1]]);
    assert!(text.contains("  +5.0% IMPROVEMENT"));
    assert!(text.contains("% ? inconclusive (~"));
    assert!(text.contains("\nPLU <b>1|x . (no samples)\n"));
    // Four metrics x three identifiers: every line with a bar.
    assert_eq!(text.lines().filter(|l| l.contains(" |=")).count(), 11);
    // The verdict opens the report (its geometric means with their
    // basis) and its counts end it again, where the terminal is left.
    assert!(text.contains(
        "\n  PLU 0 ...... 1 regression, 0 improvements, 3 no change, 0 inconclusive; 3.13 % \
         worse (geometric mean of 3 metrics, 1 left out)\n"
    ));
    assert!(text.contains("; 0.96 % better (geometric mean of 3 metrics, 1 left out)\n"));
    assert!(text.ends_with(
        "\n\nSummary against the baseline 'v5.8':\n\
         PLU 0 ...... 1 regression, 0 improvements, 3 no change, 0 inconclusive; 3.13 % worse\n\
         PLU <b>1|x . 0 regressions, 1 improvement, 1 no change, 1 inconclusive; 0.96 % better\n"
    ));
    assert!(!text.contains('\x1b'));
    let colored = render("bars", &report(), true);
    assert!(colored.contains("+10.0% \x1b[31mREGRESSION\x1b[0m"));
    assert!(colored.contains("\x1b[32mIMPROVEMENT\x1b[0m"));
}

#[test]
fn table_has_the_lmbench_sections_and_a_row_per_identifier() {
    let text = render("table", &report(), false);
    let processes = "Processor, Processes - times in microseconds - smaller is better";
    let latencies = "*Local* Communication latencies in microseconds - smaller is better";
    let bandwidths = "*Local* Communication bandwidths in MB/s - bigger is better";
    for title in [
        processes,
        latencies,
        bandwidths,
        "Other metrics - means in the stored unit, marks as above",
    ] {
        assert!(text.lines().any(|l| l == title), "missing {title}:\n{text}");
    }
    // No ctxsw, file or VM metric: those sections are dropped.
    assert!(!text.contains("Context switching"));
    assert!(!text.contains("File & VM"));
    let legend = text.replace("\n  ", " ");
    assert!(legend.contains(
        "marks against the baseline 'v5.8': * REGRESSION, + IMPROVEMENT, ? INCONCLUSIVE"
    ));
    assert!(
        legend.contains("Under each compared row, its change, %: the change of the stored metric")
    );
    let section = between(&text, processes, "Columns:");
    // Two header lines, three identifiers, and a line of changes under
    // each of the two compared.
    assert_eq!(
        section.iter().filter(|l| l.starts_with('|')).count(),
        7,
        "{section:?}"
    );
    let changes: Vec<&&str> = section
        .iter()
        .filter(|l| l.starts_with("|   change, % "))
        .collect();
    assert_eq!(changes.len(), 2, "{section:?}");
    assert!(changes[0].ends_with("|       | +10.0%  |"), "{section:?}");
    assert!(changes[1].ends_with("|  +0.0%  |"), "{section:?}");
    assert!(section[0].starts_with("+-") && section[0].ends_with("-+"));
    assert!(section[1].starts_with("| identifier ") && section[1].contains("|   Mhz |"));
    assert!(section[2].ends_with("|    call |"));
    // ns shown in microseconds; the slow identifier marked.
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("| v5.8 ") && l.ends_with("| 2994  | 0.1000  |")),
        "{section:?}"
    );
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("| PLU 0 ") && l.ends_with("| 0.1100* |")),
        "{section:?}"
    );
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("| PLU <b>1|x ") && l.ends_with("| 0.1000  |")),
        "{section:?}"
    );
    assert!(text.contains("Columns: null call = syscall-null (ns, shown in us)"));
    let bw = between(&text, bandwidths, "Columns:");
    assert!(
        bw.iter()
            .any(|l| l.starts_with("| PLU <b>1|x ") && l.ends_with("| 10500+ |")),
        "{bw:?}"
    );
    // pipe-lat: the third identifier has an empty cell.
    let lat = between(&text, latencies, "Columns:");
    assert!(
        lat.iter()
            .any(|l| l.starts_with("| PLU <b>1|x ") && l.ends_with("|        |")),
        "{lat:?}"
    );
    // futex1 is in no lmbench section: listed under Other metrics.
    let other = between(
        &text,
        "Other metrics - means in the stored unit, marks as above",
        "\u{0}",
    );
    let futex: Vec<&&str> = other
        .iter()
        .filter(|l| l.starts_with("| futex1[mode=thread,tasks=2] "))
        .collect();
    assert_eq!(futex.len(), 1, "{other:?}");
    assert!(
        futex[0].contains("| ops/s |   2000000  | 2000000  |   1960000? |")
            && futex[0].ends_with("? |"),
        "{}",
        futex[0]
    );
    let under = other
        .iter()
        .position(|l| l.starts_with("| futex1"))
        .map(|i| other[i + 1])
        .unwrap();
    assert!(
        under.starts_with("|   change, % ") && under.ends_with("|   +0.0%  |     -2.0%  |"),
        "{under}"
    );
    assert!(other[1].contains("|       v5.8 |") && other[2].contains("(baseline)"));
    let colored = render("table", &report(), true);
    assert!(colored.contains("\x1b[31m0.1100*\x1b[0m"));
}

#[test]
fn regressions_list_the_regressed_metric_per_block() {
    let text = render("regressions", &report(), false);
    assert!(text.contains("\n=== PLU 0 vs baseline v5.8 ===\n1 regression, 0 improvements, 3 no change, 0 inconclusive; 3.13 % worse"));
    let first = between(&text, "=== PLU 0 vs baseline v5.8 ===", "=== ");
    let regressions = between(&first.join("\n"), "Regressions", "Improvements")
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let regressions: Vec<&str> = regressions
        .iter()
        .map(String::as_str)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(regressions.len(), 3, "{regressions:?}");
    assert_eq!(
        regressions[0]
            .split(" | ")
            .map(str::trim)
            .collect::<Vec<_>>(),
        [
            "Benchmark/Test/Metric, Units",
            "Baseline Mean",
            "Current Mean",
            "Change, % (+ = higher value)",
            "CI of change, %",
            "Diff, % (+ = worse)",
            "SD",
            "Samples",
            "Confidence interval",
            "p",
            "q",
            "Verdict"
        ]
    );
    let row: Vec<&str> = regressions[2].split(" | ").map(str::trim).collect();
    // A time up 10 %: the change is +10, and so is Linaro's Diff (worse).
    assert_eq!(
        row[..4],
        ["syscall-null, ns", "100.000", "110.000", "+10.000"]
    );
    assert_eq!(row[5], "+10.000");
    assert_eq!(row[7], "20 / 20");
    // The baseline mean's CI, in ns.
    let (low, high) = row[8].split_once(" / ").unwrap();
    let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
    assert!(low < 100.0 && high > 100.0 && high < 101.0, "{}", row[8]);
    let (low, high) = row[4].split_once(" / ").unwrap();
    let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
    assert!(
        low > 9.5 && low < 10.0 && high > 10.0 && high < 10.5,
        "{}",
        row[4]
    );
    assert_eq!(row[11], "REGRESSION");
    let first = first.join("\n");
    assert!(!first.contains("pipe-lat") && !first.contains("mem-bw") && !first.contains("futex1"));
    assert!(first.contains("Improvements\n  none\n"));
    assert!(first.contains("Inconclusive (need more samples)\n  none\n"));
    assert!(first.contains("No change: 3 metrics (the change's CI within +-1.00 %)."));
    let second: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("=== PLU <b>1|x vs"))
        .collect();
    let second = second.join("\n");
    assert!(second.contains("Regressions\n  none\n"));
    assert!(
        second.contains("\nmem-bw[op=rd,size=64], MB/s "),
        "{second}"
    );
    // 5 % more MB/s: the value went up, so the change is +5; better, so
    // Linaro's Diff is negative.
    let membw: Vec<&str> = second
        .lines()
        .find(|l| l.starts_with("mem-bw"))
        .unwrap()
        .split(" | ")
        .map(str::trim)
        .collect();
    assert_eq!((membw[3], membw[5]), ("+5.000", "-5.000"), "{second}");
    assert!(second.contains("| IMPROVEMENT"));
    let header = second
        .lines()
        .skip_while(|l| *l != "Inconclusive (need more samples)")
        .nth(1)
        .unwrap();
    assert_eq!(
        header.split(" | ").map(str::trim).collect::<Vec<_>>(),
        [
            "Benchmark/Test/Metric, Units",
            "Baseline Mean",
            "Current Mean",
            "Change, % (+ = higher value)",
            "CI of change, %",
            "Diff, % (+ = worse)",
            "Samples",
            "Confidence interval",
            "p",
            "q",
            "MDE, %",
            "Needed per side"
        ]
    );
    assert!(
        second.contains(
            "|                       -2.024 |   -5.97 / +2.08 |              +2.000 |  20 / 4 |"
        ),
        "{second}"
    );
    assert!(second.contains("\n      ! too few samples: 20 vs 4, at least 5 needed\n"));
    assert!(
        second.contains("\nfutex1[mode=thread], ops/s\n  - futex1-tasks-2 "),
        "{second}"
    );
    assert!(second.contains(
        "* the index after a test name is its task/thread/process/instance count option."
    ));
    assert!(
        second.contains(
            "Not compared: 1 metric: pipe-lat[placement=cross] (no samples in PLU <b>1|x)."
        )
    );
    assert!(!text.contains('\x1b'));
    assert!(render("regressions", &report(), true).contains("\x1b[31mREGRESSION\x1b[0m"));
}

#[test]
fn markdown_escapes_user_strings_and_keeps_tables_square() {
    let text = render("markdown", &report(), true);
    assert!(!text.contains('\x1b'));
    assert!(text.starts_with("# kbench compare: plu-test\n"));
    assert!(text.contains("PLU \\<b\\>1\\|x"));
    assert!(!text.contains("PLU <b>1|x"));
    assert!(
        text.contains("| Fact | v5.8 | PLU 0 | PLU \\<b\\>1\\|x |\n| --- | --- | --- | --- |\n")
    );
    assert!(text.contains("| Processor | AMD EPYC 7B13 (2 Cores / 2 Threads) @ 2994 MHz |"));
    assert!(
        text.contains("- **Kernel**: v5.8: 5.8.0 (x86\\_64); PLU 0: 5.9.0-rc5-plu (x86\\_64);")
    );
    assert!(text.contains("| PLU 0 | 3.13 % worse | 3 | 1 | 1 | 0 | 3 | 0 |"));
    let syscall = text
        .lines()
        .find(|l| l.starts_with("| syscall-null |"))
        .unwrap();
    assert!(
        syscall.starts_with(
            "| syscall-null | ns | lower | 100.0 ± 0.1 % | 110.0 ± 0.1 % | +10.0 % \\[+9."
        ),
        "{syscall}"
    );
    assert!(syscall.contains("| **REGRESSION** |"));
    assert!(text.contains("| futex1\\[mode=thread,tasks=2\\] | ops/s | higher |"));
    // Every row of a table has as many unescaped '|' as its header.
    let pipes = |l: &str| l.replace("\\|", "").matches('|').count();
    let mut expected = None;
    for line in text.lines() {
        if line.starts_with('|') {
            let n = pipes(line);
            assert_eq!(*expected.get_or_insert(n), n, "{line}");
        } else {
            expected = None;
        }
    }
}

#[test]
fn json_parses_back_with_its_schema() {
    let text = render("json", &report(), true);
    assert!(!text.contains('\x1b'));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["schema"], "kbench.compare/1");
    assert_eq!(value["identifiers"][2], ODD);
    assert_eq!(value["metrics"].as_array().unwrap().len(), 4);
    assert_eq!(
        value["metrics"][0]["results"][1]["comparison"]["verdict"],
        "regression"
    );
    assert_eq!(value["summaries"][0]["regressions"], 1);

    // One sample: an unbounded CI, written as null.
    let mut one = data(["a", "b", "c"]);
    for id in &mut one.identifiers {
        for samples in id.samples.values_mut() {
            samples.truncate(1);
        }
    }
    let report = compared(&one);
    let value: serde_json::Value = serde_json::from_str(&render("json", &report, false)).unwrap();
    let result = &value["metrics"][0]["results"][1];
    assert!(result["summary"]["ci"]["ci_low"].is_null());
    assert!(result["comparison"]["ratio"]["ci_high"].is_null());
}

/// The fixture's data as three invocations in three boots, one after the
/// other: two kernels measured apart, one run each.
fn measured_apart() -> ComparisonReport {
    let mut apart = data(["v5.8", SLOW, ODD]);
    for (i, id) in apart.identifiers.iter_mut().enumerate() {
        let run = &mut id.runs[0];
        run.info.snapshot.boot_id = format!("boot-{i}");
        run.info.pid = 100 + i as u32;
        run.info.started_at_ms = 60_000 * i as i64;
        run.ended_at_ms = Some(60_000 * i as i64 + 30_000);
    }
    compared(&apart)
}

/// One run each: the 10 % slower syscall-null is within what the default
/// drift explains, so INCONCLUSIVE with the plan of alternating runs; the
/// text names the drift, the json carries level, components and plan.
#[test]
fn measured_apart_one_run_each_is_decided_with_the_drift() {
    let report = measured_apart();
    let syscall = report.metrics[0].results[1].comparison.as_ref().unwrap();
    assert_eq!(syscall.verdict.to_string(), "INCONCLUSIVE");
    let plan = syscall.plan.expect("a plan");
    let units = plan.units_per_side.expect("reachable");
    assert!((2..=10).contains(&units), "{units}");
    let bars = render("bars", &report, false);
    assert!(
        bars.contains("measured apart (1 and 1 runs)")
            && bars.contains("the default run drift, 3.5 %"),
        "{bars}"
    );
    assert!(
        bars.contains(&format!("{units} alternating runs per side would decide")),
        "{bars}"
    );
    let value: serde_json::Value = serde_json::from_str(&render("json", &report, false)).unwrap();
    let c = &value["metrics"][0]["results"][1]["comparison"];
    assert_eq!(c["analysis"]["kind"], "levels");
    assert_eq!(c["analysis"]["unit"], "run");
    assert_eq!(c["analysis"]["design"], "one_each");
    assert_eq!(c["components"]["drift"]["source"]["kind"], "default");
    assert!(c["components"]["df"].as_f64().unwrap() > 5.0);
    assert_eq!(c["plan"]["units_per_side"], units);
    // The unchanged pipe-lat: no practical number of runs rules out 1 %,
    // said once.
    let once: Vec<&String> = report
        .notes
        .iter()
        .filter(|n| n.contains("cannot be decided within 30 runs per side"))
        .collect();
    assert_eq!(once.len(), 1, "{:?}", report.notes);
}

/// A minimal RFC 4180 reader for the test.
fn records(text: &str) -> Vec<Vec<String>> {
    let mut records = vec![];
    let mut record = vec![];
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    records
}

#[test]
fn csv_has_a_row_per_metric_and_identifier() {
    let text = render("csv", &report(), true);
    assert!(!text.contains('\x1b'));
    assert!(text.starts_with(
        "result_set,test,benchmark,options,metric,unit,direction,identifier,is_baseline,n,rounds,\
         mean,median,sd,ci_low,ci_high,change_pct,change_ci_low,change_ci_high,p_value,q_value,verdict,explained_by\r\n"
    ));
    assert_eq!(text.matches("\r\n").count(), 1 + 4 * 3);
    // The options of futex1 hold a comma: quoted.
    assert!(text.contains(
        "plu-test,\"futex1[mode=thread,tasks=2]\",futex1,\"mode=thread,tasks=2\",value,ops/s,higher,"
    ));
    let rows = records(&text);
    assert_eq!(rows.len(), 13);
    assert!(rows.iter().all(|r| r.len() == 23), "{rows:?}");
    let slow = &rows[2];
    assert_eq!(
        slow[1..11],
        [
            "syscall-null",
            "syscall-null",
            "",
            "value",
            "ns",
            "lower",
            SLOW,
            "false",
            "20",
            "1"
        ]
    );
    let change: f64 = slow[16].parse().unwrap();
    assert!((change - 10.0).abs() < 1e-9, "{change}");
    assert_eq!(slow[21], "regression");
    let baseline = &rows[1];
    assert_eq!(baseline[8], "true");
    assert!(baseline[16..].iter().all(String::is_empty), "{baseline:?}");
    // The third identifier has no pipe-lat: empty cells, n included.
    let missing = &rows[6];
    assert_eq!((missing[1].as_str(), missing[7].as_str()), (PIPE, ODD));
    assert!(missing[9].is_empty() && missing[11].is_empty() && missing[21].is_empty());

    // A name with a comma and a quote is quoted, the quote doubled.
    let odd = compared(&data(["base", "say \"hi\", ok", "c"]));
    let text = render("csv", &odd, false);
    assert!(text.contains(",\"say \"\"hi\"\", ok\",false,"));
    assert_eq!(records(&text)[2][7], "say \"hi\", ok");
}

/// Names a spreadsheet would run as formulas are text cells (a leading
/// `'`); negative numbers stay numbers.
#[test]
fn csv_names_cannot_be_formulas() {
    let names = ["=HYPERLINK(\"http://x\")", "-O2 build", "@SUM(A1)"];
    let report = compared(&data(names));
    let rows = records(&render("csv", &report, false));
    for name in names {
        let quoted = format!("'{name}");
        assert!(rows.iter().any(|r| r[7] == quoted), "{name}: {rows:?}");
        assert!(
            !rows.iter().any(|r| r[7] == name),
            "{name} left as a formula"
        );
    }
    let negative: Vec<&String> = rows[1..]
        .iter()
        .flat_map(|r| &r[11..21])
        .filter(|cell| cell.starts_with('-'))
        .collect();
    assert!(!negative.is_empty(), "a negative change in the data");
    assert!(
        negative.iter().all(|c| c.parse::<f64>().is_ok()),
        "{negative:?}"
    );
}

#[test]
fn one_identifier_renders_without_comparisons() {
    let mut single = data(["v5.8", SLOW, ODD]);
    single.identifiers.truncate(1);
    let report = compared(&single);
    for f in format::all() {
        let text = f.render(&report, Style::default());
        // The pictures' style sheets name every verdict's class: what they
        // show must not.
        let text = if ["html", "svg"].contains(&f.name()) {
            shown_text(&text)
        } else {
            text
        };
        assert!(
            !text.to_uppercase().contains("REGRESSION"),
            "{}:\n{text}",
            f.name()
        );
    }
    // The verdict's place says there is nothing to compare.
    for name in ["bars", "table", "regressions"] {
        let text = render(name, &report, false);
        assert_eq!(
            text.lines().nth(1),
            Some("One identifier ('v5.8'): nothing to compare against."),
            "{name}:\n{text}"
        );
    }
    assert!(render("table", &report, false).contains("| v5.8       | 2994  | 0.1000  |"));
    let regressions = render("regressions", &report, false);
    assert!(!regressions.contains("===") && !regressions.contains("Diff, %"));
}

/// The text an HTML or SVG document shows: without style sheets, scripts
/// and tags.
fn shown_text(document: &str) -> String {
    let mut text = document.to_string();
    for element in ["style", "script"] {
        while let Some(start) = text.find(&format!("<{element}")) {
            let end = text[start..]
                .find(&format!("</{element}>"))
                .map_or(text.len(), |e| start + e + element.len() + 3);
            text.replace_range(start..end, "");
        }
    }
    let mut shown = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => shown.push(c),
            _ => {}
        }
    }
    shown
}

/// `--metric` only chooses what is shown: the Benjamini-Hochberg family is
/// every metric of the comparison (issue 19). The old code adjusted
/// syscall-null's p over the one metric shown (q = p) instead of all four.
#[test]
fn metric_filter_keeps_the_fdr_family() {
    let set = data(["v5.8", SLOW, ODD]);
    let all = compared(&set);
    let shown = comparison::build(
        &set,
        &CompareRequest {
            baseline: None,
            identifiers: vec![],
            threshold: Thresholds::uniform(0.01),
            metric_filter: Some("syscall".into()),
            calibrations: vec![],
        },
    )
    .unwrap();
    assert_eq!(shown.metrics.len(), 1);
    let q = |report: &ComparisonReport| {
        let metric = report.metrics.iter().find(|m| m.test == SYSCALL).unwrap();
        metric.results[1].comparison.as_ref().unwrap().q_value
    };
    assert_eq!(q(&shown), q(&all));
    let p = all.metrics[0].results[1]
        .comparison
        .as_ref()
        .unwrap()
        .p_value;
    assert!(q(&all) > p, "q is adjusted over all four metrics");
}

/// The fixture with metrics no test can decide against SLOW: pipe-lat
/// constant on both sides (2 + 2 equal values), mem-bw one sample, futex1
/// measured in 3 rounds by the baseline and in one by the others.
fn undecidable() -> ComparisonReport {
    let mut set = data(["v5.8", SLOW, ODD]);
    let [base, slow, _] = &mut set.identifiers[..] else {
        unreachable!()
    };
    base.samples.insert(key(PIPE), samples(vec![5.0, 5.0]));
    slow.samples.insert(key(PIPE), samples(vec![6.0, 6.0]));
    slow.samples.insert(key(MEMBW), samples(vec![10_000.0]));
    for (i, sample) in base
        .samples
        .get_mut(&key(FUTEX))
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        sample.round = (i % 3) as u32;
    }
    compared(&set)
}

#[test]
fn undecidable_metrics_are_cannot_decide_in_every_format() {
    let r = undecidable();
    let comparison = |metric: usize| r.metrics[metric].results[1].comparison.as_ref().unwrap();
    assert_eq!(comparison(0).verdict.to_string(), "REGRESSION");
    for metric in 1..4 {
        let c = comparison(metric);
        assert_eq!(
            c.verdict.to_string(),
            "CANNOT DECIDE",
            "{}",
            r.metrics[metric].test
        );
        assert!(c.p_value.is_nan() && c.q_value.is_nan());
    }
    assert_eq!(r.summaries[0].cannot_decide, 3);
    assert_eq!(r.summaries[0].regressions, 1);
    assert!(r.has_regression());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("not compared (CANNOT DECIDE)"))
    );

    let bars = render("bars", &r, false);
    assert!(bars.contains("+20.0% CANNOT DECIDE (no spread)"), "{bars}");
    assert!(bars.contains("+0.0% CANNOT DECIDE (one observation)"));
    assert!(bars.contains("-0.0% CANNOT DECIDE (rounds against one round)"));
    assert!(
        bars.contains("1 regression, 0 improvements, 0 no change, 0 inconclusive, 3 cannot decide")
    );
    let regressions = render("regressions", &r, false);
    let section = between(&regressions, "Cannot decide", "No change");
    assert!(
        section
            .iter()
            .any(|l| l.contains("| n/a ") && l.contains("CANNOT DECIDE")),
        "{regressions}"
    );
    assert!(regressions.contains("cannot decide: all observations are equal within each side"));
    assert!(regressions.contains("measure the current with `kbench run --rounds 3`"));
    assert!(render("table", &r, false).contains('!'));
    let markdown = render("markdown", &r, false);
    assert!(markdown.contains("| Cannot decide |") && markdown.contains("| CANNOT DECIDE |"));
    assert!(
        markdown.contains("cannot decide: one observation (current)"),
        "{markdown}"
    );
    let html = render("html", &r, false);
    assert!(html.contains("v-undecided") && shown_text(&html).contains("3 cannot decide"));

    let value: serde_json::Value = serde_json::from_str(&render("json", &r, false)).unwrap();
    let c = &value["metrics"][1]["results"][1]["comparison"];
    assert_eq!(c["verdict"], "cannot_decide");
    assert!(c["p_value"].is_null() && c["q_value"].is_null() && c["p_welch"].is_null());
    assert_eq!(c["warnings"][0]["kind"], "no_spread");
    assert_eq!(value["summaries"][0]["cannot_decide"], 3);
    let csv = records(&render("csv", &r, false));
    let pipe = csv
        .iter()
        .find(|row| row[1] == PIPE && row.contains(&SLOW.to_string()))
        .unwrap();
    let verdict = pipe.len() - 2;
    assert_eq!(pipe[verdict], "cannot_decide");
    assert_eq!(pipe[verdict - 1], "", "no q-value: an empty cell");
    assert_eq!(
        pipe[verdict + 1],
        "",
        "nothing explains an undecided metric"
    );
}

/// A 20 % slower result with one more context switch per operation
/// (kbench-analysis' fixture): every format that shows verdicts says why.
#[test]
fn a_regression_is_explained_in_every_format() {
    let request = CompareRequest {
        baseline: None,
        identifiers: vec![],
        threshold: Thresholds::uniform(0.01),
        metric_filter: None,
        calibrations: vec![],
    };
    let report =
        comparison::build(&kbench_analysis::fixtures::explained_regression(), &request).unwrap();
    let render = |name: &str| {
        format::by_name(name)
            .unwrap()
            .render(&report, Style::default())
    };
    for name in ["bars", "regressions"] {
        let text = render(name);
        assert!(
            text.contains("why: context switches/op +1.000 [+"),
            "{name}:\n{text}"
        );
    }
    assert!(render("html").contains("<table class=\"why\">"));
    assert!(render("csv").contains(",regression,perf.context_switches_per_op=1"));
    let json: serde_json::Value = serde_json::from_str(&render("json")).unwrap();
    let changes = &json["metrics"][0]["results"][1]["explanation"]["changes"];
    assert_eq!(changes[0]["metric"], "perf.context_switches_per_op");
    assert_eq!(changes[0]["significant"], true);
}

#[test]
fn tap_has_a_plan_and_fails_only_the_regression() {
    let text = render("tap", &report(), false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "TAP version 13");
    let points = &lines[2..];
    assert_eq!(lines[1], format!("1..{}", points.len()));
    let failed: Vec<&&str> = points.iter().filter(|l| l.starts_with("not ok")).collect();
    assert_eq!(failed.len(), 1, "{text}");
    assert!(
        failed[0].contains(&format!("{SYSCALL} {SLOW} against v5.8: +10."))
            && failed[0].ends_with("REGRESSION"),
        "{text}"
    );
    // ODD has no pipe-lat: that point is skipped, not failed.
    let skipped: Vec<&&str> = points.iter().filter(|l| l.contains("# SKIP")).collect();
    assert_eq!(skipped.len(), 1, "{text}");
    assert!(
        skipped[0].starts_with("ok ") && skipped[0].contains(ODD),
        "{text}"
    );
}
