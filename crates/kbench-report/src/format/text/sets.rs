//! The result sets of a store, as `kbench show` without a set lists them:
//! a line per set (its identifiers, tests and samples), or how to make one
//! when there is none.

use kbench_analysis::show::SetList;
use kbench_model::results::ResultSetSummary;

pub(super) fn text(list: &SetList) -> String {
    if list.result_sets.is_empty() {
        return "No result sets yet; `kbench run` makes one.\n".to_string();
    }
    let line = |s: &ResultSetSummary| {
        format!(
            "{:<24} {} identifier(s): {}; {} test(s), {} sample(s)\n",
            s.name,
            s.identifiers.len(),
            s.identifiers.join(", "),
            s.tests,
            s.samples
        )
    };
    list.result_sets.iter().map(line).collect()
}

#[cfg(test)]
mod tests {
    use crate::format::{Style, find};
    use kbench_analysis::show::SetList;
    use kbench_model::results::ResultSetSummary;

    fn render(list: &SetList, name: &str) -> String {
        find::<SetList>(name)
            .expect("a format of the set list")
            .render(list, Style::default())
    }

    #[test]
    fn the_set_list_has_a_line_per_set_or_says_how_to_make_one() {
        assert_eq!(
            render(&SetList::new(vec![]), "text"),
            "No result sets yet; `kbench run` makes one.\n"
        );
        let set = ResultSetSummary {
            name: "plu".into(),
            title: None,
            identifiers: vec!["stock".into(), "patched".into()],
            tests: 3,
            samples: 120,
            created_at_ms: 0,
        };
        let list = SetList::new(vec![set]);
        assert_eq!(
            render(&list, "text"),
            format!(
                "{:<24} 2 identifier(s): stock, patched; 3 test(s), 120 sample(s)\n",
                "plu"
            )
        );
        let json: serde_json::Value = serde_json::from_str(&render(&list, "json")).unwrap();
        assert_eq!(json["schema"], "kbench.sets/1");
    }
}
