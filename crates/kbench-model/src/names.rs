//! Checks on the text kbench stores and later prints: result set,
//! identifier and token names, and the parts of a test (benchmark id,
//! options, metric, unit).
//!
//! Such text reaches terminals, CSV files and web pages, so it must not hold
//! characters that act instead of showing: control characters (ESC starts a
//! terminal escape sequence, BEL rings, a newline forges a line), bidi
//! controls (U+202E shows "exe.txt" as "txt.exe") and the line and
//! paragraph separators.

use crate::{TestKey, TestSpec};

/// The longest result set or identifier name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 128;

/// The longest test name accepted, in characters: the text form
/// `bench[k=v,...]:metric` of its key.
pub const MAX_TEST_NAME_CHARS: usize = 128;

/// The longest unit accepted, in characters ("ns", "MB/s", "ops/s").
pub const MAX_UNIT_CHARS: usize = 32;

/// Checks a result set, identifier or token name: not empty, not only
/// blanks, at most [`MAX_NAME_CHARS`] characters, no control character, bidi
/// control or line separator. `what` names the thing in the message
/// ("identifier", "result set").
pub fn validate_name(what: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err(format!(
            "the {what} name is empty; give a short name such as \"6.18 stock\""
        ));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "the {what} name is {chars} characters long; the limit is {MAX_NAME_CHARS}"
        ));
    }
    check_chars(&format!("the {what} name"), name)
}

/// The longest result set title or description accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 4096;

/// Checks a result set's title or description: at most
/// [`MAX_TEXT_CHARS`] characters, nothing that acts instead of showing,
/// except line breaks where `lines` allows them (a description has
/// paragraphs; a title is one line).
pub fn validate_text(what: &str, text: &str, lines: bool) -> Result<(), String> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(format!(
            "the {what} is {chars} characters long; the limit is {MAX_TEXT_CHARS}"
        ));
    }
    if lines {
        text.split('\n')
            .try_for_each(|line| check_chars(&format!("a line of the {what}"), line))
    } else {
        check_chars(&format!("the {what}"), text)
    }
}

/// Reads a factor of a designed experiment, `NAME=LEVEL` (`kernel=patched`):
/// both parts as [`validate_id`] allows, so they read back from any list.
pub fn parse_factor(text: &str) -> Result<(String, String), String> {
    let Some((name, level)) = text.split_once('=') else {
        return Err(format!(
            "factor {text:?} is not NAME=LEVEL; write it as kernel=patched"
        ));
    };
    validate_id("the factor name", name)?;
    validate_id(&format!("the level of factor {name}"), level)?;
    Ok((name.to_string(), level.to_string()))
}

/// Checks a push id, run uid or job tag: 1 to 128 of `A-Z a-z 0-9 - _ .`
/// (a UUID, a hash, a counter, a word), safe in URLs, lists and messages.
pub fn validate_id(what: &str, id: &str) -> Result<(), String> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > 128 || !id.chars().all(fine) {
        return Err(format!(
            "{what} {id:?} must be 1 to 128 letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(())
}

/// Checks a test before it is stored: its benchmark id, option keys and
/// values and metric (see [`TestKey::parse`], which applies the same checks)
/// and its unit. Every write path (local runs, import, push, live upload)
/// calls this, so what is stored can always be printed and read back.
///
/// Refused: an empty or blank-edged part, a control character, bidi control
/// or line separator anywhere, a key whose text form `bench[k=v,...]:metric`
/// does not read back as the same key (a `[`, `]`, `:`, `,` or `=` in the
/// wrong place), a test name over [`MAX_TEST_NAME_CHARS`] characters, and an
/// empty unit or one over [`MAX_UNIT_CHARS`] characters.
pub fn check_test_spec(spec: &TestSpec) -> Result<(), String> {
    check_key(&spec.key)?;
    let what = format!("the unit of test {}", spec.key);
    check_part(&what, &spec.unit)?;
    let chars = spec.unit.chars().count();
    if chars > MAX_UNIT_CHARS {
        return Err(format!(
            "{what} is {chars} characters long; the limit is {MAX_UNIT_CHARS} \
             (a unit is short: \"ns\", \"MB/s\", \"ops/s\")"
        ));
    }
    Ok(())
}

/// The checks of [`check_test_spec`] on the key alone.
pub(crate) fn check_key(key: &TestKey) -> Result<(), String> {
    check_parts(key)?;
    let text = key.to_string();
    let chars = text.chars().count();
    if chars > MAX_TEST_NAME_CHARS {
        return Err(format!(
            "the test name {} is {chars} characters long; the limit is \
             {MAX_TEST_NAME_CHARS}: use shorter option values or fewer options",
            shown(&text)
        ));
    }
    if TestKey::parse_text(&text).as_ref() != Ok(key) {
        return Err(format!(
            "the test {} (benchmark {}, options {}, metric {}) cannot be written as \
             bench[k=v,...]:metric and read back: a benchmark id holds '[' or ':', an option \
             name ',' or '=', a value ',' or the metric ':' or ']'; rename it",
            shown(&text),
            shown(&key.benchmark),
            shown(&key.options_text()),
            shown(&key.metric)
        ));
    }
    Ok(())
}

/// Each part of a key (benchmark id, option names and values, metric):
/// what [`TestKey::parse`] checks; the length is the store's limit.
pub(crate) fn check_parts(key: &TestKey) -> Result<(), String> {
    check_part("the benchmark id", &key.benchmark)?;
    for (name, value) in &key.options {
        check_part(&format!("option {name:?} of {}", key.benchmark), name)?;
        check_part(&format!("the value of option {name:?}"), value)?;
    }
    check_part("the metric", &key.metric)
}

/// One part of a test: not empty, no blanks at its ends, safe characters.
fn check_part(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if text.trim() != text {
        return Err(format!(
            "{what} {} begins or ends with a blank; remove it",
            shown(text)
        ));
    }
    check_chars(what, text)
}

/// `text` quoted and escaped for a message, cut after 40 characters.
pub(crate) fn shown(text: &str) -> String {
    const SHOWN: usize = 40;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
    }
}

/// Refuses a character that acts on a terminal or page instead of showing,
/// naming it and its position.
fn check_chars(what: &str, text: &str) -> Result<(), String> {
    match acting_char(text) {
        None => Ok(()),
        Some(holds) => Err(format!("{what} {} {holds}", shown(text))),
    }
}

/// "holds U+001B (a control character) at character 3; ..." for the first
/// character of `text` that acts instead of showing (counted from 1).
pub(crate) fn acting_char(text: &str) -> Option<String> {
    let (at, c) = text.chars().enumerate().find(|(_, c)| acts(*c))?;
    Some(format!(
        "holds U+{:04X} ({}) at character {}; use letters, digits, blanks and \
         punctuation only",
        u32::from(c),
        kind(c),
        at + 1
    ))
}

/// Bidi controls: the embeddings and overrides, the isolates and the marks.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn acts(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

fn kind(c: char) -> &'static str {
    if c.is_control() {
        "a control character"
    } else if is_bidi_control(c) {
        "a bidi control, which reorders the text around it"
    } else {
        "a line or paragraph separator"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    fn spec(key: &str, unit: &str) -> TestSpec {
        TestSpec {
            key: TestKey::parse(key).unwrap(),
            unit: unit.to_string(),
            direction: Direction::Lower,
        }
    }

    const ACTING: [char; 14] = [
        '\u{1b}', '\u{7}', '\n', '\r', '\t', '\u{85}', '\u{202E}', '\u{202A}', '\u{2066}',
        '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{2028}',
    ];

    #[test]
    fn factors_and_texts_are_checked() {
        assert_eq!(
            parse_factor("kernel=patched"),
            Ok(("kernel".into(), "patched".into()))
        );
        for bad in ["kernel", "=x", "kernel=", "ker nel=x", "k=a,b"] {
            assert!(parse_factor(bad).is_err(), "{bad}");
        }
        assert!(validate_text("description", "one\ntwo", true).is_ok());
        assert!(validate_text("title", "one\ntwo", false).is_err());
        assert!(validate_text("title", "a\u{1b}[31m", false).is_err());
        assert!(validate_text("title", &"x".repeat(MAX_TEXT_CHARS + 1), false).is_err());
    }

    #[test]
    fn names_refuse_acting_characters_with_code_and_position() {
        for c in ACTING.into_iter().chain(['\u{2029}']) {
            let err = validate_name("result set", &format!("ab{c}cd")).unwrap_err();
            let code = format!("U+{:04X}", u32::from(c));
            assert!(err.contains(&code), "{err}");
            assert!(err.contains("at character 3"), "{err}");
            assert!(
                !err.contains(c),
                "the message echoes the character raw: {err}"
            );
        }
        assert!(validate_name("identifier", "6.18 stock (rc2) ünïcode").is_ok());
    }

    #[test]
    fn test_parts_refuse_acting_characters() {
        for c in ACTING {
            let code = format!("U+{:04X}", u32::from(c));
            let inside = format!("a{c}b");
            let mut keys = vec![
                TestKey::new(&inside),
                TestKey::new("x").with_metric(&inside),
            ];
            for (k, v) in [(inside.as_str(), "v"), ("k", inside.as_str())] {
                let mut key = TestKey::new("x");
                key.options.insert(k.into(), v.into());
                keys.push(key);
            }
            for key in keys {
                let spec = TestSpec {
                    key,
                    unit: "ns".into(),
                    direction: Direction::Lower,
                };
                let err = check_test_spec(&spec).unwrap_err();
                assert!(err.contains(&code), "{err}");
            }
            for text in [
                format!("be{c}nch"),
                format!("bench[k{c}=v]"),
                format!("bench[k=v{c}]"),
                format!("bench:metric{c}"),
            ] {
                let err = TestKey::parse(&text).unwrap_err().to_string();
                assert!(err.contains(&code), "{err}");
            }
            let err = check_test_spec(&spec("x", &format!("n{c}s"))).unwrap_err();
            assert!(err.contains("the unit of test x"), "{err}");
        }
    }

    #[test]
    fn real_test_names_pass() {
        for (key, unit) in [
            ("syscall-null", "ns"),
            ("fio-randread[bs=4k,direct=1,engine=io_uring]:lat", "us"),
            ("kernel-build[src=/usr/src/linux-6.6,tasks=all]", "s"),
            ("futex1[mode=thread,tasks=2]:per_task", "ops/s"),
            ("b[a=1,c=x=y]", "MB/s"),
            ("redis[clients=50,test=get]", "requests per second"),
        ] {
            assert_eq!(check_test_spec(&spec(key, unit)), Ok(()), "{key}");
        }
    }

    #[test]
    fn test_name_length_is_capped() {
        let at_limit = format!("b[k={}]", "v".repeat(MAX_TEST_NAME_CHARS - 5));
        assert_eq!(at_limit.chars().count(), MAX_TEST_NAME_CHARS);
        assert!(check_test_spec(&spec(&at_limit, "ns")).is_ok());
        let over = format!("b[k={}]", "v".repeat(100_000));
        let err = check_test_spec(&spec(&over, "ns")).unwrap_err();
        assert!(err.contains("100005 characters long"), "{err}");
        assert!(err.len() < 300, "the message echoes the whole name: {err}");
        let metric = TestKey::new("b").with_metric(&"m".repeat(MAX_TEST_NAME_CHARS));
        assert!(check_key(&metric).unwrap_err().contains("the limit is 128"));
    }

    #[test]
    fn keys_that_do_not_read_back_are_refused() {
        let mut keys = vec![
            TestKey::new("a[b"),
            TestKey::new("a:b"),
            TestKey::new("a").with_metric("m:n"),
            TestKey::new("a").with_metric("m]"),
        ];
        for (k, v) in [("k=", "v"), ("k,j", "v"), ("k", "v,w")] {
            let mut key = TestKey::new("a");
            key.options.insert(k.into(), v.into());
            keys.push(key);
        }
        for key in keys {
            let err = check_key(&key).unwrap_err();
            assert!(err.contains("cannot be written"), "{key:?}: {err}");
        }
    }

    #[test]
    fn empty_or_blank_edged_parts_and_units_are_refused() {
        let mut key = TestKey::new("a");
        key.options.insert("k".into(), " 4k".into());
        assert!(
            check_key(&key)
                .unwrap_err()
                .contains("begins or ends with a blank")
        );
        assert!(
            check_key(&TestKey::new(""))
                .unwrap_err()
                .contains("is empty")
        );
        assert!(check_key(&TestKey::new("a").with_metric("")).is_err());
        assert!(check_test_spec(&spec("a", " ")).is_err());
        let err = check_test_spec(&spec("a", &"s".repeat(MAX_UNIT_CHARS + 1))).unwrap_err();
        assert!(err.contains("the limit is 32"), "{err}");
    }
}
