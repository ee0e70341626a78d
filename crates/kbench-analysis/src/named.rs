//! Identifiers named at the start of a note, as every note of the models
//! names them: listed, or counted when the note holds for all of them.

/// "'a'", "'a' and 'b'", "'a', 'b' and 'c'"; "All 12 identifiers" when
/// they are all `of` of them (three or more).
pub fn identifiers(names: &[&str], of: usize) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.as_slice() {
        _ if names.len() == of && of >= 3 => format!("All {of} identifiers"),
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_listed_or_counted_when_all() {
        assert_eq!(identifiers(&["a"], 1), "'a'");
        assert_eq!(identifiers(&["a", "b"], 2), "'a' and 'b'");
        assert_eq!(identifiers(&["a", "b", "c"], 4), "'a', 'b' and 'c'");
        assert_eq!(identifiers(&["a", "b", "c"], 3), "All 3 identifiers");
    }
}
