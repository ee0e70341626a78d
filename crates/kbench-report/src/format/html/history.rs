//! The history page (`kbench history SET --format html -o series.html`):
//! the versions and the method; a summary (metrics with regressions,
//! improvements, no change) and the notes; the sortable, filterable table
//! of every metric (its change points, the largest change with its 95 %
//! CI, the last version's mean), rows coloured by their worst change; and
//! per metric a line over the versions with every change point marked.
//! The same skeleton, script and escaping as the compare page.

use super::fragments::{count_item, number_attr};
use super::page::{notes_list, page};
use crate::format::common;
use crate::format::svg::{self, ChangeMarker, LineChart, LinePoint, line_chart, verdict_class};
use crate::markup::{Markup, markup};
use kbench_analysis::history::{ChangeReport, HistoryReport, MetricHistory};
use kbench_analysis::number;
use kbench_stats::Verdict;

const HISTORY: &str = include_str!("history.html");

/// The history page.
pub fn history_page(report: &HistoryReport) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let lead = format!(
        "{} version{} in order: {}; {} metric{}, {} with change points; threshold {:.2} %",
        report.identifiers.len(),
        plural(report.identifiers.len()),
        report.identifiers.join(", "),
        report.metrics.len(),
        plural(report.metrics.len()),
        report.changed_metrics,
        report.threshold_pct
    );
    let body = markup!(
        HISTORY,
        set = report.result_set,
        lead = lead,
        counts = counts(report),
        notes = notes_list(&report.notes),
        last = report.identifiers.last().map_or("", String::as_str),
        rows = Markup::concat(report.metrics.iter().enumerate().map(|(i, m)| row(i, m))),
        charts = Markup::concat(
            report
                .metrics
                .iter()
                .enumerate()
                .map(|(i, m)| chart_section(i, m, &report.identifiers))
        ),
    );
    let footer = markup!(
        "<p>Result set {{set}}, read as a series with <code>kbench history</code>. The numbers are those of the other formats (<code>--format json</code> has them all).</p>",
        set = report.result_set,
    );
    page(
        &format!("kbench history: {}", report.result_set),
        &body,
        &footer,
    )
}

/// A metric's worst change (regression before improvement); NO CHANGE
/// without change points.
fn worst(metric: &MetricHistory) -> Verdict {
    let has = |v: Verdict| metric.changes.iter().any(|c| c.verdict == v);
    if has(Verdict::Regression) {
        Verdict::Regression
    } else if has(Verdict::Improvement) {
        Verdict::Improvement
    } else {
        Verdict::NoChange
    }
}

/// "regression improvement": the verdicts of a metric's changes for the
/// filter; "same" without any.
fn verdicts(metric: &MetricHistory) -> String {
    let mut names: Vec<&str> = vec![];
    for c in &metric.changes {
        let name = &verdict_class(Some(c.verdict))[2..];
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        names.push("same");
    }
    names.join(" ")
}

fn counts(report: &HistoryReport) -> Markup {
    let with = |v: Verdict| {
        report
            .metrics
            .iter()
            .filter(|m| m.changes.iter().any(|c| c.verdict == v))
            .count()
    };
    let same = report.metrics.len() - report.changed_metrics;
    let items = [
        (
            Verdict::Regression,
            with(Verdict::Regression),
            "with a regression",
        ),
        (
            Verdict::Improvement,
            with(Verdict::Improvement),
            "with an improvement",
        ),
        (Verdict::NoChange, same, "without a change"),
    ];
    Markup::concat(items.into_iter().map(|(verdict, n, what)| {
        let s = if n == 1 { "" } else { "s" };
        count_item(verdict, n, &format!("metric{s} {what}"))
    }))
}

/// "+10.0 % [+9.8, +10.2]".
fn change_text(c: &ChangeReport) -> (String, String) {
    (
        svg::bound(c.change_pct.point, " %"),
        format!(
            "[{}, {}]",
            svg::bound(c.change_pct.ci_low, ""),
            svg::bound(c.change_pct.ci_high, "")
        ),
    )
}

fn row(i: usize, metric: &MetricHistory) -> Markup {
    let at = Markup::concat(metric.changes.iter().map(|c| {
        markup!(
            "<span class=\"at {{class}}\">at {{id}}</span>",
            class = verdict_class(Some(c.verdict)),
            id = c.identifier,
        )
    }));
    let largest = metric.changes.iter().max_by(|a, b| {
        a.change_pct
            .point
            .abs()
            .total_cmp(&b.change_pct.point.abs())
    });
    let largest = match largest {
        None => Markup::raw("<td class=\"num chg\" data-label=\"Largest change\">none</td>"),
        Some(c) => {
            let (pct, ci) = change_text(c);
            markup!(
                "<td class=\"num chg {{class}}\" data-label=\"Largest change\" data-v=\"{{v}}\"><div><span class=\"pct\">{{pct}}</span> <span class=\"vd {{class}}\">{{verdict}}</span><span class=\"ci\">{{ci}}</span><span class=\"mean\">{{from}} → {{to}}</span></div></td>",
                class = verdict_class(Some(c.verdict)),
                v = number_attr(Some(c.change_pct.point)),
                pct = pct,
                verdict = c.verdict.to_string(),
                ci = ci,
                from = c.previous,
                to = c.identifier,
            )
        }
    };
    let last = metric.series.last();
    markup!(
        "<tr class=\"{{class}}\" data-i=\"{{i}}\" data-name=\"{{name}}\" data-verdicts=\"{{verdicts}}\" data-chart=\"m{{i}}\">\
         <td data-label=\"Test\"><a href=\"#m{{i}}\"><code>{{name}}</code></a></td>\
         <td data-label=\"Unit\"><div>{{unit}}<span class=\"dir\">{{dir}} is better</span></div></td>\
         <td class=\"num\" data-label=\"Change points\" data-v=\"{{n}}\"><div>{{n}}{{at}}</div></td>\
         {{largest}}\
         <td class=\"num\" data-label=\"{{last_id}} (last)\" data-v=\"{{last_v}}\">{{last}}</td></tr>\n",
        class = verdict_class(Some(worst(metric))),
        i = i,
        name = metric.test,
        verdicts = verdicts(metric),
        unit = metric.unit,
        dir = metric.direction.as_str(),
        n = metric.changes.len(),
        at = at,
        largest = largest,
        last_id = last.map_or("", |p| p.identifier.as_str()),
        last_v = number_attr(last.and_then(|p| p.summary.as_ref()).map(|s| s.mean)),
        last = last.map_or_else(String::new, |p| svg::mean_text(p.summary.as_ref())),
    )
}

fn chart_section(i: usize, metric: &MetricHistory, versions: &[String]) -> Markup {
    let points: Vec<Option<LinePoint>> = metric
        .series
        .iter()
        .map(|p| {
            p.summary.as_ref().map(|s| LinePoint {
                value: s.mean,
                ci_low: s.ci.ci_low,
                ci_high: s.ci.ci_high,
            })
        })
        .collect();
    let markers: Vec<ChangeMarker> = metric
        .changes
        .iter()
        .map(|c| ChangeMarker {
            index: c.index,
            verdict: c.verdict,
            change_pct: c.change_pct.point,
        })
        .collect();
    let chart = line_chart(&LineChart {
        versions,
        points: &points,
        changes: &markers,
        unit: &format!("{} ({} is better)", metric.unit, metric.direction.as_str()),
        label: &format!(
            "{}: mean per version with 95 % confidence interval and change points",
            metric.test
        ),
    });
    let changes = Markup::concat(metric.changes.iter().map(|c| {
        let (pct, ci) = change_text(c);
        markup!(
            "<li><span class=\"vd {{class}}\">{{verdict}}</span> {{from}} → {{to}}: <b>{{pct}}</b> {{ci}}, p = {{p}}</li>\n",
            class = verdict_class(Some(c.verdict)),
            verdict = c.verdict.to_string(),
            from = c.previous,
            to = c.identifier,
            pct = pct,
            ci = format!("95 % CI {ci}"),
            p = number::p_value(c.p_value),
        )
    }));
    markup!(
        "<section class=\"metric\" id=\"m{{i}}\">\n\
         <h3>{{readable}}</h3>\n\
         <p class=\"sub\"><code>{{test}}</code> · {{unit}} · {{count}} · <a href=\"#metrics-table\">table</a></p>\n\
         <figure class=\"line\"><figcaption>Mean and 95 % CI per version; change points dashed</figcaption>{{chart}}</figure>\n\
         {{changes}}</section>\n",
        i = i,
        readable = common::readable(&metric.key),
        test = metric.test,
        unit = common::unit_line(&metric.unit, metric.direction),
        count = match metric.changes.len() {
            0 => "no change point".to_string(),
            1 => "1 change point".to_string(),
            n => format!("{n} change points"),
        },
        chart = chart.inline(),
        changes = if changes.is_empty() {
            changes
        } else {
            markup!("<ul class=\"changes\">\n{{c}}</ul>\n", c = changes)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{history_data, history_request};
    use kbench_analysis::history;

    const EVIL: &str = "<script>alert(1)</script>";

    #[test]
    fn a_row_and_a_line_per_metric_with_the_change_marked() {
        let mut data = history_data();
        data.identifiers[4].name = EVIL.into();
        data.name = "set <&>".into();
        let report = history::build(&data, &history_request()).unwrap();
        let page = history_page(&report);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("<script").count(), 1, "only the page's script");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("<h1>kbench history: set &lt;&amp;&gt;</h1>"));
        let start = page.find("<tbody>\n").unwrap();
        let rows = &page[start..start + page[start..].find("</tbody>").unwrap()];
        assert_eq!(rows.matches("<tr ").count(), 2);
        assert!(rows.contains(
            "<tr class=\"v-regression\" data-i=\"0\" data-name=\"pipe-lat\" \
             data-verdicts=\"regression\" data-chart=\"m0\">"
        ));
        assert!(rows.contains(
            "<tr class=\"v-same\" data-i=\"1\" data-name=\"bw\" data-verdicts=\"same\" data-chart=\"m1\">"
        ));
        assert!(
            rows.contains("<span class=\"pct\">+10.0 %</span>"),
            "{rows}"
        );
        assert!(
            rows.contains("<span class=\"mean\">v2 → v3</span>"),
            "{rows}"
        );
        assert_eq!(page.matches("<section class=\"metric\"").count(), 2);
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 2);
        assert_eq!(page.matches("class=\"c-cp\"").count(), 1);
        assert!(
            page.contains("<li class=\"v-regression some\"><b>1</b> metric with a regression</li>")
        );
        assert!(page.contains("<li>bw: no samples in v5; left out of its series</li>"));
        // bw has no samples in the last version.
        assert!(rows.contains("data-label=\"v5 (last)\" data-v=\"\">no samples</td>"));
    }
}
