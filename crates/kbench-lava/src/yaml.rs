//! A job definition written as block YAML, the way LAVA's users read and
//! write them, its keys in the order given. Only writing is needed (LAVA
//! reads it), and a definition is maps, lists, strings, numbers and
//! booleans; a string is written plain when YAML cannot read it as
//! anything else, otherwise double-quoted with JSON's escapes, which are
//! YAML's too.

/// A YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Map(Vec<(String, Node)>),
    List(Vec<Node>),
    Text(String),
    Number(u64),
    Bool(bool),
}

/// A map's entries, in their order.
pub type Entries = Vec<(String, Node)>;

/// `pairs` as a map's entries, to add to before they become a [`Node::Map`].
pub fn entries<const N: usize>(pairs: [(&str, Node); N]) -> Entries {
    pairs
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}

/// A map of `pairs`, in their order.
pub fn map<const N: usize>(pairs: [(&str, Node); N]) -> Node {
    Node::Map(entries(pairs))
}

/// A string.
pub fn text(value: impl Into<String>) -> Node {
    Node::Text(value.into())
}

/// `value` as a block YAML document.
pub fn to_yaml(value: &Node) -> String {
    let mut out = String::new();
    block(value, 0, &mut out);
    out
}

fn block(value: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Node::Map(entries) if !entries.is_empty() => {
            for (key, item) in entries {
                out.push_str(&format!("{pad}{}:", quoted(key)));
                if nested(item) {
                    out.push('\n');
                    block(item, indent + 2, out);
                } else {
                    out.push_str(&format!(" {}\n", scalar(item)));
                }
            }
        }
        Node::List(items) if !items.is_empty() => {
            for item in items {
                if nested(item) {
                    // The item's first line follows the dash.
                    let mut inner = String::new();
                    block(item, indent + 2, &mut inner);
                    out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(item)));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

/// Whether `value` is written on lines of its own.
fn nested(value: &Node) -> bool {
    match value {
        Node::Map(entries) => !entries.is_empty(),
        Node::List(items) => !items.is_empty(),
        _ => false,
    }
}

fn scalar(value: &Node) -> String {
    match value {
        Node::Map(_) => "{}".to_string(),
        Node::List(_) => "[]".to_string(),
        Node::Text(text) => quoted(text),
        Node::Number(number) => number.to_string(),
        Node::Bool(value) => value.to_string(),
    }
}

/// `text` plain when it reads back as this string (words of letters,
/// digits and `_ - . /`, starting with a letter, and not one of YAML 1.1's
/// booleans or nulls), else double-quoted.
fn quoted(text: &str) -> String {
    const RESERVED: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let plain = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && !RESERVED.contains(&text.to_ascii_lowercase().as_str());
    match plain {
        true => text.to_string(),
        false => serde_json::Value::String(text.to_string()).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lists_and_quoted_strings() {
        let value = map([
            ("device_type", text("qemu")),
            (
                "timeouts",
                map([("job", map([("minutes", Node::Number(30))]))]),
            ),
            (
                "context",
                map([(
                    "extra_options",
                    Node::List(vec![text("-smp 2"), text("-append \"console=ttyS0\"")]),
                )]),
            ),
            (
                "actions",
                Node::List(vec![
                    map([(
                        "deploy",
                        map([("namespace", text("boot1")), ("to", text("tmpfs"))]),
                    )]),
                    map([(
                        "test",
                        map([(
                            "monitors",
                            Node::List(vec![map([
                                ("name", text("kbench")),
                                ("pattern", text("a (?P<x>\\S+)")),
                            ])]),
                        )]),
                    )]),
                ]),
            ),
            ("flag", text("yes")),
            ("install_overlay", Node::Bool(false)),
            ("empty", Node::List(vec![])),
            ("url", text("file:///tmp/a b")),
        ]);
        assert_eq!(
            to_yaml(&value),
            "device_type: qemu\n\
             timeouts:\n  job:\n    minutes: 30\n\
             context:\n  extra_options:\n    - \"-smp 2\"\n    - \"-append \\\"console=ttyS0\\\"\"\n\
             actions:\n\
             \x20 - deploy:\n      namespace: boot1\n      to: tmpfs\n\
             \x20 - test:\n      monitors:\n        - name: kbench\n          pattern: \"a (?P<x>\\\\S+)\"\n\
             flag: \"yes\"\n\
             install_overlay: false\n\
             empty: []\n\
             url: \"file:///tmp/a b\"\n"
        );
    }
}
