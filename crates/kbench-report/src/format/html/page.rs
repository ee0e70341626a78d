//! What every kbench HTML page shares: the skeleton (head with the
//! colours, chart and page CSS, a content security policy that forbids
//! loading anything, the footer, the table script) and the systems section.
//! A page is a title, a body and footer lines; the compare page
//! (`super::compare::compare_page`) and the history page are each one function that
//! builds a body from its model and calls [`page`].

use crate::format::common;
use crate::format::csp;
use crate::format::systems::{self, system_facts};
use crate::markup::{Markup, markup};
use kbench_analysis::comparison::IdentifierSystem;
use kbench_analysis::header::Difference;
use std::sync::OnceLock;

const PAGE: &str = include_str!("page.html");
/// The content of the skeleton's `<style>` element: colours, chart and
/// page CSS.
pub const PAGE_STYLE: &str = concat!(
    "\n",
    include_str!("../svg/theme.css"),
    "\n",
    include_str!("../svg/chart.css"),
    "\n",
    include_str!("page.css"),
    "\n"
);
/// The content of the skeleton's `<script>` element: the table's sorting
/// and filtering.
pub const PAGE_SCRIPT: &str = include_str!("page.js");

/// The skeleton's Content-Security-Policy (also in its `<meta>` element):
/// its own style and script, nothing loaded, no form sent.
pub fn page_policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| csp::policy(&[PAGE_STYLE], &[PAGE_SCRIPT], "'none'"))
}

/// The skeleton's `<meta>` element holding [`page_policy`], exactly as in
/// the page (the dashboard takes it out and sends its policy as a header).
pub fn policy_meta() -> &'static str {
    static META: OnceLock<String> = OnceLock::new();
    META.get_or_init(|| {
        format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            page_policy()
        )
    })
}

/// The whole document: `body` (from a page template) inside the skeleton.
/// `footer` holds extra footer paragraphs (already markup).
pub fn page(title: &str, body: &Markup, footer: &Markup) -> String {
    markup!(
        PAGE,
        version = env!("CARGO_PKG_VERSION"),
        csp = Markup::raw(policy_meta()),
        title = title,
        style = Markup::raw(PAGE_STYLE),
        body = body,
        footer = footer,
        script = Markup::raw(PAGE_SCRIPT),
    )
    .into_string()
}

/// The systems: a table of headline facts per identifier (rows of facts
/// that differ highlighted), the differences between identifiers (any
/// fact) and the notes. Plain data in, so the history page can pass its
/// versions' systems.
pub fn systems_section(
    systems: &[IdentifierSystem],
    differences: &[Difference],
    notes: &[String],
) -> Markup {
    let per_system: Vec<Vec<(String, String)>> = systems.iter().map(system_facts).collect();
    let mut labels: Vec<String> = vec![];
    for facts in &per_system {
        for (label, _) in facts {
            if !labels.contains(label) {
                labels.push(label.clone());
            }
        }
    }
    let mut head = Markup::new();
    for system in systems {
        head.push(&markup!(
            "<th scope=\"col\">{{id}}</th>",
            id = system.identifier
        ));
    }
    let mut rows = Markup::new();
    for label in &labels {
        let differs = differences.iter().any(|d| &d.fact == label);
        let mut cells = Markup::new();
        for facts in &per_system {
            let value = facts
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, v)| v.as_str())
                .unwrap_or(if label == "Wrapper" { "none" } else { "" });
            cells.push(&markup!("<td>{{v}}</td>", v = value));
        }
        rows.push(&markup!(
            "<tr{{class}}><th scope=\"row\">{{label}}</th>{{cells}}</tr>\n",
            class = Markup::raw(if differs { " class=\"diff\"" } else { "" }),
            label = label,
            cells = cells,
        ));
    }
    let mut runs = Markup::new();
    for system in systems {
        let text = if system.snapshot.is_some() {
            common::runs_text(system.runs)
        } else {
            format!("{} (no system snapshot)", common::runs_text(system.runs))
        };
        runs.push(&markup!("<td>{{t}}</td>", t = text));
    }
    rows.push(&markup!(
        "<tr><th scope=\"row\">Runs</th>{{runs}}</tr>\n",
        runs = runs
    ));
    let mut out = markup!(
        "<section id=\"systems\">\n<h2>Systems</h2>\n<div class=\"table-wrap\"><table class=\"facts\">\n\
         <thead><tr><th scope=\"col\">Fact</th>{{head}}</tr></thead>\n<tbody>\n{{rows}}</tbody></table></div>\n",
        head = head,
        rows = rows,
    );
    let unrecorded = systems::unrecorded(systems);
    if let Some(sentence) = systems::sentence(systems.len(), &unrecorded, !differences.is_empty()) {
        out.push(&markup!("<p>{{s}}</p>\n", s = sentence));
    }
    if systems.len() > 1 && !differences.is_empty() {
        let mut items = Markup::new();
        for d in differences {
            let mut values = Markup::new();
            for (i, (name, value)) in d.values.iter().enumerate() {
                values.push(&markup!(
                    "{{sep}}<b>{{name}}</b> = {{value}}",
                    sep = Markup::raw(if i == 0 { "" } else { "; " }),
                    name = name,
                    value = systems::known(value),
                ));
            }
            items.push(&markup!(
                "<li><b>{{fact}}</b>: {{values}}</li>\n",
                fact = d.fact,
                values = values,
            ));
        }
        out.push(&markup!(
            "<h3>Differences between identifiers</h3>\n<ul class=\"diffs\">\n{{items}}</ul>\n",
            items = items,
        ));
    }
    out.push(&notes_list(notes));
    out.push(&Markup::raw("</section>\n"));
    out
}

/// The notes under a heading; nothing without notes.
pub(super) fn notes_list(notes: &[String]) -> Markup {
    if notes.is_empty() {
        return Markup::new();
    }
    let items = Markup::concat(notes.iter().map(|n| markup!("<li>{{n}}</li>\n", n = n)));
    markup!(
        "<h3>Notes</h3>\n<ul class=\"notes\">\n{{items}}</ul>\n",
        items = items
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::svg::{CHART_CSS, THEME_CSS};

    #[test]
    fn the_skeleton_loads_nothing_and_escapes_the_title() {
        let html = page(
            "<script>alert(1)</script>",
            &Markup::raw("<p>body</p>"),
            &Markup::new(),
        );
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"));
        assert_eq!(
            html.matches("<script").count(),
            1,
            "only the page's own script"
        );
        assert!(html.contains("default-src 'none'"));
        // The policy allows the page's own style and script by hash, and
        // no other inline code.
        assert!(html.contains(policy_meta()) && !html.contains("unsafe-inline"));
        let inside = |open: &str, close: &str| {
            let start = html.find(open).unwrap() + open.len();
            html[start..start + html[start..].find(close).unwrap()].to_string()
        };
        let style = csp::hash_source(&inside("<style>", "</style>"));
        let script = csp::hash_source(&inside("<script>", "</script>"));
        assert!(page_policy().contains(&format!("style-src {style}; script-src {script};")));
        for needle in ["http://", "https://", "src=", "@import", "url(", "<link"] {
            assert!(!html.contains(needle), "{needle}");
        }
        // The inline script and styles cannot end their element early.
        for text in [PAGE_SCRIPT, PAGE_STYLE] {
            assert!(!text.contains("</") && !text.contains("<!--"));
        }
        // The standalone SVG embeds the CSS in XML: no markup characters.
        for text in [THEME_CSS, CHART_CSS] {
            assert!(!text.contains('<') && !text.contains('&'));
        }
    }

    #[test]
    fn a_history_like_page_is_a_body_of_line_charts() {
        use crate::format::svg::{ChangeMarker, LineChart, LinePoint, line_chart};
        use kbench_stats::Verdict;
        let versions: Vec<String> = [
            "6.10",
            "6.11",
            "6.12",
            "6.13",
            "<b>6.14</b>",
            "6.15",
            "6.16",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let level = [5.0, 5.02, 4.99, 5.51, 5.49, 5.5, 5.0];
        let points: Vec<Option<LinePoint>> = level
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (i != 5).then_some(LinePoint {
                    value: *v,
                    ci_low: v * 0.995,
                    ci_high: v * 1.005,
                })
            })
            .collect();
        let changes = [
            ChangeMarker {
                index: 3,
                verdict: Verdict::Regression,
                change_pct: 10.2,
            },
            ChangeMarker {
                index: 6,
                verdict: Verdict::Improvement,
                change_pct: -9.1,
            },
        ];
        let chart = line_chart(&LineChart {
            versions: &versions,
            points: &points,
            changes: &changes,
            unit: "us (lower is better)",
            label: "pipe-lat over versions",
        });
        let body = markup!(
            "<main><section class=\"metric\" id=\"m0\"><h3>{{name}}</h3><figure>{{chart}}</figure></section></main>",
            name = "pipe-lat[placement=cross]",
            chart = chart.inline(),
        );
        let html = page("kbench history: lkml-26", &body, &Markup::new());
        assert_eq!(html.matches("<svg class=\"chart\"").count(), 1);
        assert_eq!(html.matches("class=\"c-cp\"").count(), 2);
        assert!(html.contains("&lt;b&gt;6.14&lt;/b&gt;") && !html.contains("<b>6.14"));
    }
}
