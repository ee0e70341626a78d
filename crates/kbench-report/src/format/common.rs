//! Pieces the text formats share: verdict marks and their colours,
//! readable test names, changes and other numbers, and padding.

use super::render::Style;
use kbench_analysis::apart_notes::unit_word;
use kbench_analysis::comparison::{IdentifierResult, IdentifierSummary};
use kbench_analysis::number::{self, Unbounded};
use kbench_model::{Direction, MAIN_METRIC, TestKey};
use kbench_stats::{Analysis, Comparison, Verdict, Warning};

/// Width of a string in characters (names may hold any Unicode).
pub(super) fn width(text: &str) -> usize {
    text.chars().count()
}

/// `text` left-aligned in `width` characters.
pub(super) fn left(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(self::width(text));
    format!("{text}{}", " ".repeat(pad))
}

/// `text` right-aligned in `width` characters.
pub(super) fn right(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(self::width(text));
    format!("{}{text}", " ".repeat(pad))
}

/// `name` padded with dots to `width` + 2 characters, OpenBenchmarking style:
/// `v5.8 ............. ` / `Default PLU 1000 . `.
pub(super) fn dotted(name: &str, width: usize) -> String {
    let dots = width.saturating_sub(self::width(name)) + 1;
    format!("{name} {}", ".".repeat(dots))
}

/// "1 run", "3 runs".
pub(super) fn runs_text(runs: usize) -> String {
    format!("{runs} run{}", if runs == 1 { "" } else { "s" })
}

/// The set's title and description as the text reports open with them,
/// then an empty line; nothing when the set has neither.
pub(crate) fn title_lines(title: Option<&str>, description: Option<&str>) -> Vec<String> {
    let mut lines: Vec<String> = title.into_iter().map(str::to_string).collect();
    lines.extend(
        description
            .into_iter()
            .flat_map(str::lines)
            .map(str::to_string),
    );
    if !lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// "pipe-lat - placement: cross", "futex1 - mode: thread - tasks: 2 -
/// metric: per_task": the test with its options made readable.
pub(super) fn readable(key: &TestKey) -> String {
    let mut parts = vec![key.benchmark.clone()];
    parts.extend(key.options.iter().map(|(k, v)| format!("{k}: {v}")));
    if key.metric != MAIN_METRIC {
        parts.push(format!("metric: {}", key.metric));
    }
    parts.join(" - ")
}

/// "us < Lower Is Better", "MB/s > Higher Is Better", as OpenBenchmarking writes it.
pub(super) fn unit_line(unit: &str, direction: Direction) -> String {
    let arrow = match direction {
        Direction::Lower => '<',
        Direction::Higher => '>',
    };
    format!("{unit} {arrow} {}", direction.phrase())
}

/// The verdict as the bar report marks it.
pub(super) fn mark(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "REGRESSION",
        Verdict::Improvement => "IMPROVEMENT",
        Verdict::NoChange => "no change",
        Verdict::Inconclusive => "? inconclusive",
        Verdict::CannotDecide => "CANNOT DECIDE",
    }
}

/// `text` in red for a regression and green for an improvement when
/// colour is on; unchanged otherwise.
pub(super) fn paint(text: &str, verdict: Option<Verdict>, style: Style) -> String {
    let code = match verdict {
        _ if !style.color => None,
        Some(Verdict::Regression) => Some("31"),
        Some(Verdict::Improvement) => Some("32"),
        _ => None,
    };
    match code {
        Some(code) => format!("\x1b[{code}m{text}\x1b[0m"),
        None => text.to_string(),
    }
}

/// A change as the text formats write it, by the convention of every
/// format ([`super::opening::CHANGE_RULE`]): the change the verdict
/// decides on, in percent with one decimal, + for a higher value:
/// "+10.0%", "-31.2%"; "n/a" when unbounded.
pub(super) fn change_text(c: &Comparison) -> String {
    number::signed(c.change_pct.point, 1, "%", Unbounded::NotAvailable)
}

/// The CI half-width of a mean relative to it: "+-0.3%"; "+-n/a" when
/// unbounded (one observation).
pub(super) fn ci_text(relative_half_width: f64) -> String {
    if relative_half_width.is_finite() {
        format!("+-{:.1}%", relative_half_width * 100.0)
    } else {
        "+-n/a".to_string()
    }
}

/// "2.35 % better", "10.00 % worse": the geometric mean as
/// [`IdentifierSummary::worse_fraction`] reads it, so that with one metric
/// it is that metric's change.
pub(super) fn geomean_text(summary: &IdentifierSummary) -> String {
    let text = match summary.worse_fraction() {
        Some(w) if w.is_finite() && w > 0.0 => format!("{} worse", number::percent(w)),
        Some(w) if w.is_finite() => format!("{} better", number::percent(w.abs())),
        _ => return "n/a (no metric measured by every identifier)".to_string(),
    };
    if summary.regressions + summary.improvements + summary.no_change == 0 {
        // A mean of changes none of which is decided is noise, not a result.
        format!("{text} (within noise: no metric is decided)")
    } else {
        text
    }
}

/// "1 regression, 0 improvements, 2 no change, 1 inconclusive", and ",
/// 1 cannot decide" when any metric cannot be decided.
pub(super) fn counts_text(summary: &IdentifierSummary) -> String {
    let mut text = format!(
        "{} regression{}, {} improvement{}, {} no change, {} inconclusive",
        summary.regressions,
        if summary.regressions == 1 { "" } else { "s" },
        summary.improvements,
        if summary.improvements == 1 { "" } else { "s" },
        summary.no_change,
        summary.inconclusive
    );
    if summary.cannot_decide > 0 {
        text.push_str(&format!(", {} cannot decide", summary.cannot_decide));
    }
    text
}

/// "geometric mean of 3 metrics, 1 left out".
pub(super) fn geomean_basis(summary: &IdentifierSummary) -> String {
    format!(
        "geometric mean of {} metric{}, {} left out",
        summary.metrics_used,
        if summary.metrics_used == 1 { "" } else { "s" },
        summary.metrics_left_out
    )
}

/// `text` split into lines of at most `limit` characters at spaces, the
/// continuation lines indented by `indent`.
pub(super) fn wrap(text: &str, limit: usize, indent: &str) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && width(&line) + 1 + width(word) > limit {
            lines.push(std::mem::take(&mut line));
            line.push_str(indent);
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        lines.push(line);
    }
    lines
}

/// A compared result's warnings (each through `warning`) except "one round"
/// (a note), and for INCONCLUSIVE what would decide it; empty when not compared.
pub(super) fn warning_texts(
    result: &IdentifierResult,
    warning: impl Fn(String) -> String,
) -> Vec<String> {
    let Some(c) = &result.comparison else {
        return vec![];
    };
    let mut texts: Vec<String> = c
        .warnings
        .iter()
        .filter(|w| !matches!(w, Warning::OneRound { .. }))
        .map(|w| warning(w.to_string()))
        .collect();
    if c.verdict == Verdict::Inconclusive {
        if let Some(mde) = c.mde_pct {
            texts.push(format!("detectable change at these samples: {mde:.2} %"));
        }
        if let Some(text) = needed_text(result) {
            texts.push(text);
        }
    }
    texts
}

/// Why a CANNOT DECIDE metric cannot be decided, in a few words: "no
/// spread", "one observation", "rounds against one round".
pub(super) fn undecided_reason(c: &Comparison) -> Option<&'static str> {
    c.warnings.iter().find_map(|w| match w {
        Warning::NoSpread => Some("no spread"),
        Warning::SingleObservation { .. } => Some("one observation"),
        Warning::MixedRounds { .. } => Some("rounds against one round"),
        _ => None,
    })
}

/// What would decide an INCONCLUSIVE result: "~21 samples per side would
/// decide" (in rounds when measured in rounds: the stats count rounds
/// then), or measured apart, its plan: "~6 alternating runs per side
/// would decide; more rounds per run would not help". `None` when nothing says.
pub fn needed_text(result: &IdentifierResult) -> Option<String> {
    let c = result.comparison.as_ref()?;
    if let (Some(plan), Analysis::Levels { unit, .. }) = (&c.plan, c.analysis) {
        let unit = unit_word(unit);
        let units = match plan.units_per_side {
            Some(n) => format!("~{n} alternating {unit}s per side would decide"),
            None => format!("no practical number of {unit}s decides it"),
        };
        let rounds = match (plan.more_rounds_help, plan.rounds_per_unit) {
            (true, Some(r)) => format!("{r} rounds per {unit} are worth having"),
            (true, None) => format!("more rounds per {unit} help"),
            (false, _) => format!("more rounds per {unit} would not help"),
        };
        return Some(format!("{units}; {rounds}"));
    }
    let what = if result.rounds > 1 {
        "rounds"
    } else {
        "samples"
    };
    c.samples_needed
        .map(|n| format!("~{n} {what} per side would decide"))
}

/// How many of the counters and monitors that moved a `why:` line names.
const WHY_SHOWN: usize = 6;

/// For a REGRESSION or IMPROVEMENT, what moved with it: "why: context
/// switches/op +1.000 [+0.9800, +1.020], cpu migrations/op +0.3100 [...];
/// instructions/op n/a (no PMU)". `None` for other verdicts, or when the
/// test recorded no counter or monitor.
pub(super) fn why_text(result: &IdentifierResult) -> Option<String> {
    let verdict = result.comparison.as_ref()?.verdict;
    let explanation = result.explanation.as_ref()?;
    if !matches!(verdict, Verdict::Regression | Verdict::Improvement) {
        return None;
    }
    let why = explanation.why(verdict);
    let mut moved: Vec<String> = why
        .iter()
        .take(WHY_SHOWN)
        .map(|c| {
            format!(
                "{} {} [{}, {}]",
                c.label,
                number::signed_count(c.difference.point),
                number::signed_count(c.difference.ci_low),
                number::signed_count(c.difference.ci_high)
            )
        })
        .collect();
    if why.len() > WHY_SHOWN {
        moved.push(format!("{} more (--format json)", why.len() - WHY_SHOWN));
    }
    let mut text = if explanation.changes.is_empty() {
        "why: counters and monitors not compared (fewer than 2 rounds a side)".to_string()
    } else if moved.is_empty() {
        "why: no counter or monitor moved significantly with it".to_string()
    } else {
        format!("why: {}", moved.join(", "))
    };
    for missing in &explanation.unavailable {
        text.push_str("; ");
        text.push_str(missing);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_by_characters() {
        assert_eq!(dotted("v5.8", 16), "v5.8 .............");
        assert_eq!(dotted("Default PLU 1000", 16), "Default PLU 1000 .");
        assert_eq!(right("ü1", 4), "  ü1");
        assert_eq!(left("ü1", 4), "ü1  ");
    }

    #[test]
    fn readable_names_and_numbers() {
        let key = TestKey::parse("futex1[mode=thread,tasks=2]:per_task").unwrap();
        assert_eq!(
            readable(&key),
            "futex1 - mode: thread - tasks: 2 - metric: per_task"
        );
        assert_eq!(ci_text(0.0031), "+-0.3%");
        assert_eq!(ci_text(f64::INFINITY), "+-n/a");
        assert_eq!(unit_line("ns", Direction::Lower), "ns < Lower Is Better");
    }

    #[test]
    fn colours_only_when_asked() {
        let on = Style {
            color: true,
            ..Style::default()
        };
        assert_eq!(
            paint("x", Some(Verdict::Regression), on),
            "\x1b[31mx\x1b[0m"
        );
        assert_eq!(
            paint("x", Some(Verdict::Improvement), on),
            "\x1b[32mx\x1b[0m"
        );
        assert_eq!(paint("x", Some(Verdict::NoChange), on), "x");
        assert_eq!(paint("x", Some(Verdict::Regression), Style::default()), "x");
    }

    #[test]
    fn wraps_at_spaces() {
        let lines = wrap("aaa bbb ccc ddd", 8, "  ");
        assert_eq!(lines, vec!["aaa bbb", "  ccc", "  ddd"]);
    }
}
