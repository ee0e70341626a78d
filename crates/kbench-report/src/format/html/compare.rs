//! The compare page (`kbench compare SET --format html -o page.html`):
//! a summary card per compared identifier (geometric mean against the
//! baseline, verdict counts, level of analysis); the systems and their
//! differences; a
//! sortable, filterable table of every metric, rows coloured by their worst
//! verdict; per metric a bar chart of the means with 95 % CI whiskers and
//! the change against the baseline, and a box and strip plot of the raw
//! samples (at most [`MAX_POINTS`] dots per identifier).

use super::fragments::{count_item, number_attr};
use super::page::{page, systems_section};
use crate::format::svg::{self, MAX_POINTS, verdict_class};
use crate::format::{common, opening};
use crate::markup::{Markup, markup};
use kbench_analysis::comparison::{
    ComparisonReport, IdentifierResult, IdentifierSummary, MetricReport,
};
use kbench_analysis::number;
use kbench_stats::Verdict;

const COMPARE: &str = include_str!("compare.html");
/// How verdicts are decided (pages that compare).
const VERDICTS: &str = include_str!("verdicts.html");
/// The table's verdict filter (pages that compare).
const VERDICT_FILTER: &str = include_str!("verdict-filter.html");

/// The compare page, every metric on it.
pub fn compare_page(report: &ComparisonReport) -> String {
    let all = MetricPart {
        shown: (0..report.metrics.len()).collect(),
        pager: Markup::new(),
    };
    compare_page_part(report, &all)
}

/// The metrics one page of a comparison shows: the dashboard pages a
/// comparison of thousands of metrics (one page of ten thousand metrics
/// and their charts is tens of megabytes).
pub struct MetricPart {
    /// Indices into the report's metrics, in the order shown.
    pub shown: Vec<usize>,
    /// Above the table: where this part lies among the others ("metrics
    /// 201-400 of 10,000") with links to them; empty for a whole report.
    pub pager: Markup,
}

/// Whether a metric changed for some compared identifier: a regression or
/// an improvement.
pub fn changed(metric: &MetricReport) -> bool {
    matches!(
        worst(metric),
        Some(Verdict::Regression | Verdict::Improvement)
    )
}

/// The compare page with the metrics of `part` only. The lead, the summary
/// cards and the systems still describe the whole report.
pub fn compare_page_part(report: &ComparisonReport, part: &MetricPart) -> String {
    let compared = &report.identifiers[report.identifiers.len().min(1)..];
    let lead = format!(
        "{} metric{}; baseline {}; compared: {}; threshold {:.2} %",
        report.metrics.len(),
        if report.metrics.len() == 1 { "" } else { "s" },
        report.baseline,
        if compared.is_empty() {
            "none".to_string()
        } else {
            compared.join(", ")
        },
        report.threshold_pct
    );
    let heading = report
        .title
        .clone()
        .unwrap_or_else(|| format!("kbench compare: {}", report.result_set));
    let about = Markup::concat(
        report
            .description
            .iter()
            .flat_map(|d| d.split("\n\n"))
            .map(|paragraph| markup!("<p class=\"lead\">{{p}}</p>\n", p = paragraph)),
    );
    let body = markup!(
        COMPARE,
        heading = heading,
        about = about,
        lead = lead,
        rule = if compared.is_empty() {
            Markup::new()
        } else {
            markup!(VERDICTS, change = opening::CHANGE_RULE)
        },
        verdict_filter = Markup::raw(if compared.is_empty() {
            ""
        } else {
            VERDICT_FILTER
        }),
        systems = systems_section(&report.systems, &report.differences, &report.notes),
        baseline = report.baseline,
        summary = summary(report),
        head = table_head(report),
        pager = part.pager.clone(),
        rows = Markup::concat(part.shown.iter().map(|&i| table_row(i, &report.metrics[i]))),
        max_points = MAX_POINTS,
        charts = Markup::concat(part.shown.iter().map(|&i| chart_section(
            i,
            &report.metrics[i],
            report
        ))),
    );
    let footer = markup!(
        "<p>Result set {{set}}, compared with <code>kbench compare</code>. The table's and the charts&#39; numbers are those of the other formats (<code>--format json</code> has them all).</p>",
        set = report.result_set,
    );
    page(&heading, &body, &footer)
}

fn summary(report: &ComparisonReport) -> Markup {
    if report.summaries.is_empty() {
        return Markup::raw("<p>One identifier: nothing to compare against.</p>");
    }
    let threshold = report.threshold_pct / 100.0;
    let mut cards = Markup::new();
    for s in &report.summaries {
        let geo_class = match s.worse_fraction() {
            // Coloured only when decided metrics back it up.
            Some(w) if w <= -threshold && s.improvements > 0 => "geo better",
            Some(w) if w >= threshold && s.regressions > 0 => "geo worse",
            _ => "geo",
        };
        cards.push(&markup!(
            "<div class=\"card\"><div class=\"id\">{{id}}</div><p class=\"{{geo_class}}\">{{geo}}</p><div class=\"basis\">{{basis}}</div><ul class=\"counts\">{{counts}}</ul><div class=\"basis\">{{analysis}}</div></div>\n",
            id = s.identifier,
            geo_class = geo_class,
            geo = common::geomean_text(s),
            basis = common::geomean_basis(s),
            counts = counts(s),
            analysis = s.analysis.as_deref().unwrap_or_default(),
        ));
    }
    markup!("<div class=\"cards\">\n{{cards}}</div>", cards = cards)
}

fn counts(s: &IdentifierSummary) -> Markup {
    let items = [
        (
            Verdict::Regression,
            s.regressions,
            "regression",
            "regressions",
        ),
        (
            Verdict::Improvement,
            s.improvements,
            "improvement",
            "improvements",
        ),
        (Verdict::NoChange, s.no_change, "no change", "no change"),
        (
            Verdict::Inconclusive,
            s.inconclusive,
            "inconclusive",
            "inconclusive",
        ),
        (
            Verdict::CannotDecide,
            s.cannot_decide,
            "cannot decide",
            "cannot decide",
        ),
    ];
    Markup::concat(
        items
            .into_iter()
            .map(|(verdict, n, one, many)| count_item(verdict, n, if n == 1 { one } else { many })),
    )
}

fn table_head(report: &ComparisonReport) -> Markup {
    let mut head = Markup::raw(
        "<th scope=\"col\" data-key=\"test\" data-type=\"text\">Test</th>\
         <th scope=\"col\" data-key=\"unit\" data-type=\"text\">Unit</th>",
    );
    head.push(&markup!(
        "<th scope=\"col\" class=\"num\" data-key=\"b\" data-type=\"num\">{{b}} (baseline)</th>",
        b = report.baseline,
    ));
    for (i, name) in report.identifiers.iter().enumerate().skip(1) {
        head.push(&markup!(
            "<th scope=\"col\" class=\"num\" data-key=\"c{{i}}\" data-type=\"num\">{{name}}: {{change}} [95 % CI]</th>",
            i = i,
            name = name,
            change = opening::CHANGE_LABEL.to_lowercase(),
        ));
    }
    head
}

/// The worst verdict of a metric first: regression, improvement,
/// inconclusive, cannot decide, no change.
fn worst(metric: &MetricReport) -> Option<Verdict> {
    let rank = |v: &Verdict| match v {
        Verdict::Regression => 0,
        Verdict::Improvement => 1,
        Verdict::Inconclusive => 2,
        Verdict::CannotDecide => 3,
        Verdict::NoChange => 4,
    };
    metric
        .results
        .iter()
        .filter_map(|r| r.comparison.as_ref().map(|c| c.verdict))
        .min_by_key(rank)
}

/// "regression same": the verdict classes of a metric, for the filter.
fn verdicts(metric: &MetricReport) -> String {
    let mut names: Vec<&str> = vec![];
    for r in &metric.results {
        if let Some(c) = &r.comparison {
            let name = &verdict_class(Some(c.verdict))[2..];
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.join(" ")
}

fn table_row(i: usize, metric: &MetricReport) -> Markup {
    let baseline = &metric.results[0];
    let mut cells = markup!(
        "<td data-label=\"Test\"><a href=\"#m{{i}}\"><code>{{test}}</code></a></td>\
         <td data-label=\"Unit\"><div>{{unit}}<span class=\"dir\">{{dir}} is better</span></div></td>\
         <td class=\"num\" data-label=\"{{b}} (baseline)\" data-v=\"{{v}}\">{{mean}}</td>",
        test = metric.test,
        i = i,
        unit = metric.unit,
        dir = metric.direction.as_str(),
        b = baseline.identifier,
        v = number_attr(baseline.summary.as_ref().map(|s| s.mean)),
        mean = svg::mean_text(baseline.summary.as_ref()),
    );
    for result in &metric.results[1..] {
        cells.push(&change_cell(result));
    }
    let worst = worst(metric);
    markup!(
        "<tr class=\"{{class}}\" data-i=\"{{i}}\" data-name=\"{{name}}\" data-verdicts=\"{{verdicts}}\" data-chart=\"m{{i}}\">{{cells}}</tr>\n",
        class = verdict_class(worst),
        i = i,
        name = metric.test,
        verdicts = verdicts(metric),
        cells = cells,
    )
}

fn change_cell(result: &IdentifierResult) -> Markup {
    let Some(c) = &result.comparison else {
        return markup!(
            "<td class=\"num chg v-none\" data-label=\"{{id}}\"><div>{{mean}}<span class=\"ci\">not compared</span></div></td>",
            id = result.identifier,
            mean = svg::mean_text(result.summary.as_ref()),
        );
    };
    let class = verdict_class(Some(c.verdict));
    let ci = format!(
        "[{}, {}]",
        svg::bound(c.change_pct.ci_low, ""),
        svg::bound(c.change_pct.ci_high, "")
    );
    markup!(
        "<td class=\"num chg {{class}}\" data-label=\"{{id}}\" data-v=\"{{v}}\"><div><span class=\"pct\">{{pct}}</span> <span class=\"vd {{class}}\">{{verdict}}</span><span class=\"ci\">{{ci}}</span><span class=\"mean\">{{mean}}</span></div></td>",
        class = class,
        id = result.identifier,
        v = number_attr(Some(c.change_pct.point)),
        pct = svg::bound(c.change_pct.point, " %"),
        verdict = c.verdict.to_string(),
        ci = ci,
        mean = svg::mean_text(result.summary.as_ref()),
    )
}

fn chart_section(i: usize, metric: &MetricReport, report: &ComparisonReport) -> Markup {
    let bars = svg::metric_bars(metric);
    let samples = svg::metric_samples(metric);
    markup!(
        "<section class=\"metric\" id=\"m{{i}}\">\n\
         <h3>{{readable}}</h3>\n\
         <p class=\"sub\"><code>{{test}}</code> · {{unit}} · <a href=\"#metrics-table\">table</a></p>\n\
         <div class=\"charts\">\n\
         <figure><figcaption>Mean and 95 % CI; change against {{baseline}}</figcaption>{{bars}}</figure>\n\
         <figure><figcaption>Raw samples</figcaption>{{samples}}</figure>\n\
         </div>\n{{warnings}}{{why}}</section>\n",
        i = i,
        test = metric.test,
        // A profile test's tool and version, as PTS titles it, when known.
        readable = metric
            .title
            .clone()
            .unwrap_or_else(|| common::readable(&metric.key)),
        unit = common::unit_line(&metric.unit, metric.direction),
        baseline = report.baseline,
        bars = bars.inline(),
        samples = samples.inline(),
        warnings = warnings(metric),
        why = why_tables(metric),
    )
}

/// Under the charts, per REGRESSION or IMPROVEMENT, the counters and
/// monitors that moved significantly with it (largest first), each with its
/// means and the difference per operation with its 95 % CI.
fn why_tables(metric: &MetricReport) -> Markup {
    let mut tables = Markup::new();
    for result in &metric.results[1..] {
        let (Some(comparison), Some(explanation)) = (&result.comparison, &result.explanation)
        else {
            continue;
        };
        if !matches!(
            comparison.verdict,
            Verdict::Regression | Verdict::Improvement
        ) {
            continue;
        }
        let rows = Markup::concat(explanation.why(comparison.verdict).iter().map(|c| {
            markup!(
                "<tr><td>{{label}}</td><td>{{unit}}</td><td>{{a}}</td><td>{{b}}</td><td>{{d}} [{{low}}, {{high}}]</td><td>{{q}}</td></tr>\n",
                label = c.label,
                unit = c.unit,
                a = number::count(c.baseline_mean),
                b = number::count(c.current_mean),
                d = number::signed_count(c.difference.point),
                low = number::signed_count(c.difference.ci_low),
                high = number::signed_count(c.difference.ci_high),
                q = number::p_value(c.q_value),
            )
        }));
        let missing = explanation.unavailable.join("; ");
        tables.push(&markup!(
            "<table class=\"why\"><caption>Why <b>{{id}}</b> moved: counters and monitors that changed the same way{{missing}}</caption>\n             <thead><tr><th>counter or monitor</th><th>unit</th><th>baseline</th><th>{{id}}</th><th>difference [95 % CI]</th><th>q</th></tr></thead>\n             <tbody>{{rows}}</tbody></table>\n",
            id = result.identifier,
            missing = if missing.is_empty() { String::new() } else { format!(" ({missing})") },
            rows = if rows.is_empty() {
                markup!("<tr><td colspan=\"6\">none moved significantly</td></tr>")
            } else {
                rows
            },
        ));
    }
    tables
}

/// The metric's warnings per compared identifier ("one round" is a page
/// note), and for INCONCLUSIVE what would decide it.
fn warnings(metric: &MetricReport) -> Markup {
    let mut items = Markup::new();
    for result in &metric.results[1..] {
        let texts = common::warning_texts(result, |w| w);
        if !texts.is_empty() {
            items.push(&markup!(
                "<li><b>{{id}}</b>: {{text}}</li>",
                id = result.identifier,
                text = texts.join("; "),
            ));
        }
    }
    if items.is_empty() {
        items
    } else {
        markup!("<ul class=\"warnings\">{{items}}</ul>\n", items = items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Html, Render, Style, Svg};
    use kbench_analysis::comparison::{self, CompareRequest};
    use kbench_analysis::thresholds::Thresholds;
    use kbench_model::results::{IdentifierData, ResultSetData};
    use kbench_model::{Direction, Sample, TestKey, TestSpec};

    const EVIL_ID: &str = "<script>alert(1)</script>";
    const EVIL_TEST: &str = "<img src=x onerror=alert(2)>";

    /// `metrics` tests measured by `identifiers` identifiers, `samples`
    /// values each in 3 rounds; the second identifier is 5 % slower on the
    /// first metric (lower is better), everything else equal.
    fn data(metrics: usize, identifiers: &[&str], samples: usize) -> ResultSetData {
        let tests: Vec<TestSpec> = (0..metrics)
            .map(|m| TestSpec {
                key: TestKey::parse(&if m == 1 {
                    EVIL_TEST.to_string()
                } else {
                    format!("bench-{m}[size={}]", m * 16)
                })
                .unwrap(),
                unit: if m % 2 == 0 { "ns" } else { "MB/s" }.into(),
                direction: if m % 2 == 0 {
                    Direction::Lower
                } else {
                    Direction::Higher
                },
            })
            .collect();
        let ids = identifiers
            .iter()
            .enumerate()
            .map(|(i, name)| IdentifierData {
                sample_runs: Default::default(),
                name: name.to_string(),
                factors: Default::default(),
                runs: vec![],
                samples: tests
                    .iter()
                    .enumerate()
                    .map(|(m, spec)| {
                        let base = 100.0 * (m + 1) as f64;
                        let level = if m == 0 && i == 1 { base * 1.05 } else { base };
                        let values = (0..samples)
                            .map(|s| Sample {
                                // A fixed scatter of +-0.5 %, different per identifier.
                                value: level
                                    * (1.0
                                        + 0.005
                                            * (((s * 7919 + i * 104_729 + m * 31) % 1000) as f64
                                                / 500.0
                                                - 1.0)),
                                iterations: 1,
                                at_ms: s as i64,
                                round: (s % 3) as u32,
                            })
                            .collect();
                        (spec.key.clone(), values)
                    })
                    .collect(),
            })
            .collect();
        ResultSetData {
            name: "set <&>".into(),
            title: None,
            description: None,
            tests,
            identifiers: ids,
        }
    }

    fn report(data: &ResultSetData) -> ComparisonReport {
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

    /// The `<tbody>` of the metrics table.
    fn tbody(page: &str) -> &str {
        let start = page.find("<tbody>\n<tr class=").expect("metrics rows");
        &page[start..start + page[start..].find("</tbody>").unwrap()]
    }

    #[test]
    fn user_strings_are_text_and_rows_match_metrics() {
        let data = data(4, &["base", EVIL_ID, "third"], 12);
        let report = report(&data);
        assert_eq!(
            report.metrics[0].results[1]
                .comparison
                .as_ref()
                .unwrap()
                .verdict,
            Verdict::Regression
        );
        let page = Html.render(&report, Style::default());
        assert_eq!(page.matches("<script").count(), 1, "only the page's script");
        assert!(!page.contains("<img"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("&lt;img src=x onerror=alert(2)&gt;"));
        assert!(page.contains("<h1>kbench compare: set &lt;&amp;&gt;</h1>"));
        let rows = tbody(&page);
        assert_eq!(rows.matches("<tr ").count(), 4);
        assert_eq!(rows.matches("<tr class=\"v-regression\"").count(), 1);
        assert!(rows.starts_with("<tbody>\n<tr class=\"v-regression\" data-i=\"0\""));
        assert_eq!(page.matches("<section class=\"metric\"").count(), 4);
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 8);
        // Two compared identifiers: two change columns and two summary cards.
        assert_eq!(page.matches("data-key=\"c").count(), 2);
        assert_eq!(page.matches("<div class=\"card\">").count(), 2);
        assert!(page.contains("<li class=\"v-regression some\"><b>1</b> regression</li>"));
        // The verdict first: the summary before the systems; the change
        // labelled as every format labels it.
        let at = |needle: &str| page.find(needle).unwrap();
        assert!(at("<section id=\"summary\">") < at("<section id=\"systems\">"));
        assert!(page.contains(": change, % (+ = higher value) [95 % CI]</th>"));
        assert!(page.contains("compared as independent samples"));
    }

    #[test]
    fn a_titled_metric_is_headed_by_its_tool_and_version() {
        let data = data(2, &["base", "other"], 12);
        let mut report = report(&data);
        let plain = Html.render(&report, Style::default());
        report.metrics[0].title = Some("Redis 7.0.15 - Test: <GET>".into());
        let page = Html.render(&report, Style::default());
        assert!(page.contains("<h3>Redis 7.0.15 - Test: &lt;GET&gt;</h3>"));
        // The title replaces that metric's heading; the other keeps its own.
        assert!(!plain.contains("Redis 7.0.15"));
        assert_eq!(page.matches("<h3>").count(), plain.matches("<h3>").count());
    }

    #[test]
    fn the_svg_is_one_metric_with_both_charts() {
        let data = data(2, &["base", EVIL_ID], 12);
        let report = report(&data);
        let svg = Svg.render(&report, Style::default());
        assert!(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns="));
        assert!(svg.contains("<rect class=\"c-bar v-regression\""));
        assert_eq!(svg.matches("<rect class=\"c-box\"").count(), 2);
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn two_hundred_metrics_of_five_identifiers_stay_under_2_mb() {
        let ids = [
            "6.18.0",
            "6.18.0+plu",
            "6.18.0+plu-v2",
            "6.19.0-rc2",
            "6.19.0-rc2+plu-v2",
        ];
        let data = data(200, &ids, 90);
        let page = Html.render(&report(&data), Style::default());
        println!(
            "200 metrics x 5 identifiers, 90 samples each: {} bytes",
            page.len()
        );
        assert!(page.len() < 2_000_000, "{} bytes", page.len());
        assert_eq!(tbody(&page).matches("<tr ").count(), 200);
    }
}
