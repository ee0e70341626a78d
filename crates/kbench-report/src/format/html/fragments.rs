//! Markup both pages write: a verdict count of the summary, and a number
//! as the sort key of a table cell.

use crate::format::svg::verdict_class;
use crate::markup::{Markup, markup};
use kbench_stats::Verdict;

/// "<b>2</b> regressions" as a list item in the verdict's colour.
pub(super) fn count_item(verdict: Verdict, n: usize, what: &str) -> Markup {
    markup!(
        "<li class=\"{{class}}{{some}}\"><b>{{n}}</b> {{what}}</li>",
        class = verdict_class(Some(verdict)),
        some = if n > 0 { " some" } else { "" },
        n = n,
        what = what,
    )
}

/// A sort key: six significant digits ("1.00234e2"); empty when unknown.
pub(super) fn number_attr(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(String::new, |v| format!("{v:.5e}"))
}
