//! Placeholders in profile templates: `{name}` where name is a letter or
//! `_` followed by letters, digits or `_`; `{{` is a literal `{`. Any other
//! brace is literal, so shell code, nginx configs and regex counts (`\d{2}`)
//! need no escaping.

/// How a value is written into the text around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// As is (files, JSON paths, descriptions).
    Raw,
    /// One shell word (commands run by `sh -c`).
    Shell,
    /// Matching itself literally (regexes).
    Regex,
}

/// The placeholder names in `text`, in order, with repeats.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    walk(text, |piece| {
        if let Piece::Placeholder(name) = piece {
            names.push(name);
        }
    });
    names
}

/// What a placeholder is filled with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fill {
    /// A value, quoted for its context.
    Value(String),
    /// Text written by the profile's author (an option's `args`), put in
    /// as is: `-p`, nothing, `--tree-method avl`.
    Verbatim(String),
}

/// `text` with every placeholder replaced by `lookup(name)`, quoted per
/// `quote`; a name `lookup` does not know is an error naming it.
pub fn render(
    text: &str,
    quote: Quote,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    render_filled(text, quote, &|name| lookup(name).map(Fill::Value))
}

/// [`render`] where some placeholders are filled verbatim.
pub fn render_filled(
    text: &str,
    quote: Quote,
    lookup: &dyn Fn(&str) -> Option<Fill>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut unknown: Option<String> = None;
    walk(text, |piece| match piece {
        Piece::Text(t) => out.push_str(t),
        Piece::Placeholder(name) => match lookup(name) {
            Some(Fill::Value(value)) => out.push_str(&quoted(&value, quote)),
            Some(Fill::Verbatim(text)) => out.push_str(&text),
            None => {
                unknown.get_or_insert_with(|| name.to_string());
            }
        },
    });
    match unknown {
        Some(name) => Err(format!("unknown placeholder {{{name}}}")),
        None => Ok(out),
    }
}

fn quoted(value: &str, quote: Quote) -> String {
    match quote {
        Quote::Raw => value.to_string(),
        Quote::Regex => regex::escape(value),
        Quote::Shell => shell_word(value),
    }
}

/// `value` as one shell word: bare when it holds only safe characters,
/// else in single quotes.
pub fn shell_word(value: &str) -> String {
    let safe = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

enum Piece<'a> {
    Text(&'a str),
    Placeholder(&'a str),
}

fn walk<'a>(text: &'a str, mut visit: impl FnMut(Piece<'a>)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'{') {
            visit(Piece::Text(&text[start..=i]));
            i += 2;
            start = i;
            continue;
        }
        let name_len = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let name = &text[i + 1..i + 1 + name_len];
        let is_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if is_name && bytes.get(i + 1 + name_len) == Some(&b'}') {
            visit(Piece::Text(&text[start..i]));
            visit(Piece::Placeholder(name));
            i += name_len + 2;
            start = i;
        } else {
            i += 1;
        }
    }
    visit(Piece::Text(&text[start..]));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "bs" => Some("4k".into()),
            "dir" => Some("/tmp/a b".into()),
            "test" => Some("get.x".into()),
            _ => None,
        }
    }

    #[test]
    fn finds_placeholders_and_leaves_other_braces() {
        let text = "events { worker_connections 64; } {bs} ${HOME} \\d{2} {{x}} {1a}";
        assert_eq!(placeholders(text), ["bs", "HOME"]);
        assert_eq!(placeholders("awk 'BEGIN{{print}'"), Vec::<&str>::new());
    }

    #[test]
    fn renders_per_context() {
        assert_eq!(
            render("fio --bs={bs} --directory={dir}", Quote::Shell, &lookup).unwrap(),
            "fio --bs=4k --directory='/tmp/a b'"
        );
        assert_eq!(
            render("^\"{test}\",\"([0-9.]+)\"", Quote::Regex, &lookup).unwrap(),
            "^\"get\\.x\",\"([0-9.]+)\""
        );
        assert_eq!(
            render("a {{b}} c", Quote::Raw, &lookup).unwrap(),
            "a {b}} c"
        );
        let verbatim = render_filled("hackbench {ipc} -g 4", Quote::Shell, &|_| {
            Some(Fill::Verbatim(String::new()))
        })
        .unwrap();
        assert_eq!(verbatim, "hackbench  -g 4");
        let error = render("x {nope} {bs}", Quote::Raw, &lookup).unwrap_err();
        assert!(error.contains("{nope}"), "{error}");
    }

    #[test]
    fn quotes_shell_words() {
        assert_eq!(shell_word("plain-1.0"), "plain-1.0");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("a;rm -rf /"), "'a;rm -rf /'");
    }
}
