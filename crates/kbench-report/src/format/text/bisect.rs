//! The report of a bisection for people (`kbench bisect` without
//! `--json`): the culprit (or its candidates), the change measured afresh,
//! the endpoints, the cost, the skips and notes, and the log.
//!
//! Never coloured.

use kbench_analysis::bisect::{BisectReport, CacheUse, change_text};
use kbench_model::Direction;

pub(super) fn text(report: &BisectReport) -> String {
    let mut out = String::new();
    let first = &report.first_bad;
    if report.candidates.len() > 1 {
        out.push_str(&format!(
            "The first bad commit is one of {} (commits between were skipped):\n",
            report.candidates.len()
        ));
        for c in &report.candidates {
            out.push_str(&format!("  {} {}\n", c.hash, c.subject));
        }
    } else {
        out.push_str(&format!(
            "First bad commit: {} {}\n",
            first.hash, first.subject
        ));
    }
    for line in report.diffstat.lines() {
        out.push_str(&format!("  | {}\n", line.trim_start()));
    }
    out.push_str(&format!(
        "Parent (last like good): {} {}\n",
        report.parent.hash, report.parent.subject
    ));
    out.push_str(&format!(
        "Change of '{}' ({}, {} is better) at the culprit, measured afresh: {}{}\n",
        report.metric,
        report.unit,
        match report.better {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
        },
        change_text(&report.change, "against the parent"),
        if report.confirmed {
            " (confirmed)"
        } else {
            " (NOT confirmed)"
        }
    ));
    out.push_str(&format!(
        "Endpoints: {}\n",
        change_text(&report.reference, "bad against good")
    ));
    if let Some(rebuild) = &report.rebuild {
        out.push_str(&format!(
            "A/A rebuild of good ({}): {}\n",
            if rebuild.identical {
                "byte-identical images, so boots alone"
            } else {
                "the images differ"
            },
            change_text(&rebuild.change, "against its first build")
        ));
    }
    out.push_str(&format!("Analysis: {}\n", report.reference.analysis));
    out.push_str(&format!("One measurement: {}\n", report.method.measurement));
    if let Some(build) = &report.method.build {
        out.push_str(&format!("Builds: {build}\n"));
    }
    if !report.builds.is_empty() {
        let seconds: f64 = report.builds.iter().map(|b| b.seconds).sum();
        let cache =
            report
                .builds
                .iter()
                .filter_map(|b| b.ccache)
                .fold(CacheUse::default(), |all, c| CacheUse {
                    hits: all.hits + c.hits,
                    misses: all.misses + c.misses,
                });
        out.push_str(&format!(
            "Built: {} kernels in {:.1} min; {}\n",
            report.builds.len(),
            seconds / 60.0,
            cache.text()
        ));
    }
    out.push_str(&format!(
        "Cost: {} blocks (orders seeded {}), {} measurements ({} samples) on {} of {} commits \
         ({} taken now, {} builds now); measuring every commit in blocks at the starting count \
         would take {}\n",
        report.blocks,
        report.seed,
        report.measurements,
        report.samples,
        report.commits_measured,
        report.commits + 1,
        report.measurements_now,
        report.builds_now,
        report.every_commit_measurements
    ));
    out.push_str(&format!("Time: {:.1} min\n", report.elapsed_s / 60.0));
    for s in &report.skipped {
        let reason = s.reason.lines().next().unwrap_or("");
        out.push_str(&format!("Skipped {}: {reason}\n", s.commit.identifier));
    }
    for note in &report.notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out.push_str("Log:\n");
    for entry in &report.log {
        out.push_str(&format!("  {}\n", entry.line()));
    }
    out.push_str(&format!(
        "Samples are in result set '{}': kbench compare '{}' --baseline '{}' '{}'\n",
        report.result_set, report.result_set, report.parent.identifier, first.identifier
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Render, Style, Text};
    use kbench_analysis::bisect::{
        BuildRecord, CommitRef, LogEntry, Method, Phase, RebuildCheck, SCHEMA, SkippedCommit,
        StepCosts,
    };
    use kbench_stats::bisection::{ANALYSIS, BlockedChange};
    use kbench_stats::{Estimate, Verdict};

    fn commit(digit: &str, subject: &str) -> CommitRef {
        let hash = digit.repeat(40);
        CommitRef {
            identifier: format!("{} {subject}", &hash[..12]),
            hash,
            subject: subject.to_string(),
        }
    }

    fn change(point: f64, ci_low: f64, ci_high: f64, verdict: Verdict) -> BlockedChange {
        let pct = Estimate {
            point,
            ci_low,
            ci_high,
            n: 8,
        };
        BlockedChange {
            analysis: ANALYSIS,
            better: Direction::Lower,
            blocks: 8,
            ratio: pct,
            change_pct: pct,
            p_value: 0.0078125,
            verdict,
        }
    }

    /// Skipped commits make the culprit one of the candidates; an
    /// unbounded limit reads "n/a"; a skip shows the first line of its
    /// reason.
    #[test]
    fn the_report_for_people() {
        let (good, parent) = (commit("0", "start"), commit("5", "tune five"));
        let (skipped, culprit) = (commit("6", "tune six"), commit("7", "tune seven"));
        let report = BisectReport {
            schema: SCHEMA,
            result_set: "bisect-ops".into(),
            metric: "ops".into(),
            unit: "ns".into(),
            better: Direction::Lower,
            good,
            bad: commit("c", "end"),
            commits: 12,
            reference: change(9.99, 9.74, 10.27, Verdict::Regression),
            first_bad: culprit.clone(),
            parent: parent.clone(),
            candidates: vec![skipped.clone(), culprit.clone()],
            change: change(9.76, 9.49, f64::INFINITY, Verdict::Regression),
            confirmed: false,
            skipped: vec![SkippedCommit {
                commit: skipped,
                reason: "fails to build: 'make' ended with exit status: 1\nerror".into(),
            }],
            blocks: 40,
            seed: 7,
            measurements: 104,
            measurements_now: 16,
            samples: 104,
            samples_now: 16,
            builds_now: 2,
            commits_measured: 5,
            every_commit_measurements: 280,
            resumed: true,
            method: Method {
                measurement: "one boot".into(),
                build: Some("make tinyconfig".into()),
            },
            builds: vec![BuildRecord {
                identifier: "777777777777-build".into(),
                seconds: 90.0,
                ok: true,
                ccache: Some(CacheUse {
                    hits: 90,
                    misses: 10,
                }),
                log: "/logs/777777777777-build.log".into(),
            }],
            rebuild: Some(RebuildCheck {
                identical: true,
                change: change(0.1, -0.5, 0.6, Verdict::NoChange),
            }),
            diffstat: " kernel/sys.c | 2 ++\n 1 file changed, 2 insertions(+)".into(),
            elapsed_s: 1230.0,
            notes: vec!["look at the log".into()],
            log: vec![LogEntry {
                step: 1,
                phase: Phase::Confirm,
                commit: culprit.hash.clone(),
                identifier: culprit.identifier.clone(),
                measurements: 16,
                blocks: Some(8),
                measured_now: 0,
                event: "NOT confirmed: REGRESSION".into(),
                state: None,
                decided_by: None,
                position: None,
                change_pct: None,
                detail: "against 555555555555".into(),
                costs: Some(StepCosts {
                    builds_s: vec![],
                    measurements_s: vec![6.0, 7.0, 6.5],
                }),
            }],
        };
        assert_eq!(
            Text.render(&report, Style::default()),
            "The first bad commit is one of 2 (commits between were skipped):
  6666666666666666666666666666666666666666 tune six
  7777777777777777777777777777777777777777 tune seven
  | kernel/sys.c | 2 ++
  | 1 file changed, 2 insertions(+)
Parent (last like good): 5555555555555555555555555555555555555555 tune five
Change of 'ops' (ns, lower is better) at the culprit, measured afresh: +9.76 % [95 % CI +9.49, \
n/a] against the parent, p = 7.81e-3, REGRESSION (8 blocks) (NOT confirmed)
Endpoints: +9.99 % [95 % CI +9.74, +10.27] bad against good, p = 7.81e-3, REGRESSION (8 blocks)
A/A rebuild of good (byte-identical images, so boots alone): +0.10 % [95 % CI -0.50, +0.60] \
against its first build, p = 7.81e-3, NO CHANGE (8 blocks)
Analysis: blocked: Hodges-Lehmann shift of per-block log ratios, Wilcoxon signed-rank CI and p
One measurement: one boot
Builds: make tinyconfig
Built: 1 kernels in 1.5 min; 90 of 100 compilations from ccache (90.0 %)
Cost: 40 blocks (orders seeded 7), 104 measurements (104 samples) on 5 of 13 commits (16 taken \
now, 2 builds now); measuring every commit in blocks at the starting count would take 280
Time: 20.5 min
Skipped 666666666666 tune six: fails to build: 'make' ended with exit status: 1
Note: look at the log
Log:
  [ 1] confirm 777777777777 tune seven: NOT confirmed: REGRESSION [8 blocks, 16 measurements \
(from the store); 3 measured, median 6.5 s each]: against 555555555555
Samples are in result set 'bisect-ops': kbench compare 'bisect-ops' --baseline '555555555555 \
tune five' '777777777777 tune seven'
"
        );
    }
}
