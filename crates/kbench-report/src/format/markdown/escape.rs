//! Escaping of user strings (identifier, test and result set names,
//! system facts) in markdown, for the comparison and the history alike.

/// Escapes markdown-significant characters of a user string for inline
/// text and table cells; line breaks become spaces.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown() {
        assert_eq!(escape("PLU <b>1|x"), "PLU \\<b\\>1\\|x");
        assert_eq!(escape("a_b*c[d]"), "a\\_b\\*c\\[d\\]");
        assert_eq!(escape("two\nlines"), "two lines");
        assert_eq!(escape("v5.8"), "v5.8");
    }
}
