//! A comparison by factor (`compare --by`) in a text format: a header,
//! then per group a heading and the group's comparison, laid out by that
//! format's own comparison renderer. `json` writes the whole model
//! (`kbench.factors/1`) instead.

use super::render::{Render, Style};
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::factors::FactorReport;

/// How a group's heading is marked.
pub enum Heading {
    /// A line of `=` under it (the terminal formats).
    Underlined,
    /// `#` and `##` (markdown).
    Hashes,
}

/// The groups of a factor comparison, each laid out by `compare`.
pub struct Grouped {
    compare: &'static dyn Render<ComparisonReport>,
    heading: Heading,
}

impl Grouped {
    pub const fn new(compare: &'static dyn Render<ComparisonReport>, heading: Heading) -> Grouped {
        Grouped { compare, heading }
    }

    fn heading(&self, text: &str, level: &str) -> String {
        match self.heading {
            Heading::Hashes => format!("{level} {text}\n\n"),
            Heading::Underlined => format!("{text}\n{}\n\n", "=".repeat(text.chars().count())),
        }
    }
}

impl Render<FactorReport> for Grouped {
    fn render(&self, report: &FactorReport, style: Style) -> String {
        let mut out = String::new();
        let top = report.title.clone().unwrap_or_else(|| {
            format!(
                "kbench compare --by {}: result set '{}'",
                report.factor, report.result_set
            )
        });
        out.push_str(&self.heading(&top, "#"));
        for line in report.description.iter().flat_map(|d| d.lines()) {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&format!(
            "Effect of {} against {}={}, within each level of the other factors: {} group(s).\n",
            report.factor,
            report.factor,
            report.baseline_level,
            report.groups.len()
        ));
        for note in &report.notes {
            out.push_str(&format!("NOTE: {note}\n"));
        }
        for group in &report.groups {
            let compared: Vec<String> = group.comparison.identifiers[1..]
                .iter()
                .zip(&group.levels[1..])
                .map(|(name, level)| format!("{level} ('{name}')"))
                .collect();
            let title = format!(
                "{}: {} {} ('{}') -> {}",
                group.place(),
                report.factor,
                group.levels[0],
                group.comparison.baseline,
                compared.join(", ")
            );
            out.push('\n');
            out.push_str(&self.heading(&title, "##"));
            out.push_str(&self.compare.render(&group.comparison, style));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::format::{Style, find};
    use kbench_analysis::factors::{FactorReport, FactorRequest, SCHEMA, build};
    use kbench_analysis::fixtures;
    use kbench_analysis::thresholds::Thresholds;

    fn report() -> FactorReport {
        let request = FactorRequest {
            factor: "kernel".into(),
            baseline_level: None,
            baseline: None,
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        };
        build(&fixtures::factor_design(), &request).unwrap()
    }

    fn render(name: &str) -> String {
        let renderer = find::<FactorReport>(name).expect("a format of factors");
        renderer.render(&report(), Style::default())
    }

    #[test]
    fn text_formats_give_each_group_its_heading() {
        let text = render("bars");
        assert!(text.contains("cgroup=no: kernel stock ('stock') -> patched ('patched')"));
        assert!(text.contains("cgroup=yes: kernel stock ('stock-cg') -> patched ('patched-cg')"));
        assert!(text.contains("=====\n"), "{text}");
        let markdown = render("markdown");
        assert!(
            markdown.contains("\n## cgroup=yes: kernel stock"),
            "{markdown}"
        );
        let json: serde_json::Value = serde_json::from_str(&render("json")).unwrap();
        assert_eq!(json["schema"], SCHEMA);
        assert_eq!(json["groups"][1]["within"]["cgroup"], "yes");
    }

    #[test]
    fn the_picture_formats_do_not_lay_out_factors() {
        assert!(find::<FactorReport>("html").is_none());
        assert!(find::<FactorReport>("svg").is_none());
    }
}
