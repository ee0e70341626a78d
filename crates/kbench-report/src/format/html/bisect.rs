//! The bisection page (`kbench bisect ... --html report.html`): the
//! culprit with its subject and diffstat, the change measured afresh
//! against its parent, the endpoints and the A/A rebuild, every step with
//! its CI, decision and cost, and the builds with their ccache hits and
//! logs. The same skeleton and escaping as the compare page.

use super::page::{notes_list, page};
use crate::format::svg::verdict_class;
use crate::markup::{Markup, markup};
use kbench_analysis::bisect::{BisectReport, LogEntry, change_text};
use kbench_stats::Estimate;
use kbench_stats::bisection::BlockedChange;

const BISECT: &str = include_str!("bisect.html");

/// The bisection page.
pub fn bisect_page(report: &BisectReport) -> String {
    let lead = format!(
        "{} commits after {} up to {}, in result set {}; {:.1} min",
        report.commits,
        report.good.identifier,
        report.bad.identifier,
        report.result_set,
        report.elapsed_s / 60.0
    );
    let culprit = if report.candidates.len() > 1 {
        let items = Markup::concat(report.candidates.iter().map(|c| {
            markup!(
                "<li><code>{{hash}}</code> {{subject}}</li>",
                hash = c.hash,
                subject = c.subject
            )
        }));
        markup!(
            "<p>The first bad commit is one of these (commits between were skipped):</p><ul>{{items}}</ul>",
            items = items,
        )
    } else {
        markup!(
            "<p class=\"culprit\">First bad commit: <code>{{hash}}</code> <strong>{{subject}}</strong></p>",
            hash = report.first_bad.hash,
            subject = report.first_bad.subject,
        )
    };
    let confirmed = if report.confirmed {
        "confirmed in fresh blocks"
    } else {
        "NOT confirmed in fresh blocks"
    };
    let mut changes = vec![change_item(
        &format!("culprit against its parent, {confirmed}"),
        &report.change,
    )];
    changes.push(change_item(
        "bad against good (the endpoints)",
        &report.reference,
    ));
    if let Some(rebuild) = &report.rebuild {
        let what = if rebuild.identical {
            "A/A: good rebuilt from scratch against its first build (byte-identical images: boots alone)"
        } else {
            "A/A: good rebuilt from scratch against its first build (the images differ)"
        };
        changes.push(change_item(what, &rebuild.change));
    }
    let cost = format!(
        "{} blocks (orders seeded {}), {} measurements on {} of {} commits, {} builds now; every \
         commit in blocks would take {} measurements.",
        report.blocks,
        report.seed,
        report.measurements,
        report.commits_measured,
        report.commits + 1,
        report.builds_now,
        report.every_commit_measurements
    );
    let body = markup!(
        BISECT,
        metric = report.metric,
        lead = lead,
        measurement = report.method.measurement,
        culprit = culprit,
        diffstat = report.diffstat,
        parent = report.parent.identifier,
        notes = notes_list(&report.notes),
        changes = Markup::concat(changes),
        cost = cost,
        steps = Markup::concat(report.log.iter().map(step_row)),
        method = report.method.build.as_deref().unwrap_or("Built by the --build command."),
        builds = Markup::concat(report.builds.iter().map(|b| {
            markup!(
                "<tr><td><code>{{name}}</code>{{failed}}</td><td class=\"num\">{{secs}} s</td><td>{{cache}}</td><td><code>{{log}}</code></td></tr>\n",
                name = b.identifier,
                failed = if b.ok { "" } else { " (failed)" },
                secs = format!("{:.0}", b.seconds),
                cache = b.ccache.map_or_else(|| "not used".to_string(), |c| c.text()),
                log = b.log,
            )
        })),
    );
    let footer = markup!(
        "<p>Samples are in result set {{set}}; <code>kbench bisect --json</code> has every number.</p>",
        set = report.result_set,
    );
    page(&format!("kbench bisect: {}", report.metric), &body, &footer)
}

/// A list item: what was compared, the change with its CI, the verdict.
fn change_item(what: &str, change: &BlockedChange) -> Markup {
    markup!(
        "<li class=\"{{class}}\"><span class=\"vd {{class}}\">{{verdict}}</span> {{what}}: {{change}}</li>\n",
        class = verdict_class(Some(change.verdict)),
        verdict = change.verdict.to_string(),
        what = what,
        change = change_text(change, ""),
    )
}

/// "+4.87 % [+3.90, +5.80]".
fn pct(e: &Estimate) -> String {
    format!("{:+.2} % [{:+.2}, {:+.2}]", e.point, e.ci_low, e.ci_high)
}

fn step_row(entry: &LogEntry) -> Markup {
    markup!(
        "<tr><td class=\"num\">{{step}}</td><td>{{phase}}</td><td><code>{{commit}}</code></td><td>{{event}}<div class=\"detail\">{{detail}}</div></td><td class=\"num\">{{change}}</td><td class=\"num\">{{blocks}}</td><td>{{cost}}</td></tr>\n",
        step = entry.step,
        phase = entry.phase.to_string(),
        commit = entry.identifier,
        event = entry.event,
        detail = entry.detail,
        change = entry.change_pct.as_ref().map(pct).unwrap_or_default(),
        blocks = entry.blocks.map(|b| b.to_string()).unwrap_or_default(),
        cost = entry.costs.as_ref().map(|c| c.text()).unwrap_or_default(),
    )
}
