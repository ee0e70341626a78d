//! Practical thresholds per metric for `compare` (the CI gate): a default
//! and rules by test name, `--threshold 2,pipe-lat=3,syscall-*=1` or a
//! config file's `[thresholds]` table. A noisy metric gets a wider band
//! than a quiet one, in one comparison and one FDR family.

use kbench_model::TestKey;

/// `--threshold`'s default: this percentage for every metric.
pub const DEFAULT_THRESHOLD: &str = "1";

/// The default threshold and the per-test rules, as fractions (0.01 = 1 %).
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub default: f64,
    /// (pattern, fraction) in the order given: the first match wins.
    pub rules: Vec<(String, f64)>,
}

impl Thresholds {
    /// The same threshold for every metric.
    pub fn uniform(fraction: f64) -> Thresholds {
        Thresholds {
            default: fraction,
            rules: Vec::new(),
        }
    }

    /// A `--threshold` value: comma-separated items, each a percentage
    /// (the default for metrics no rule matches; [`DEFAULT_THRESHOLD`]
    /// when none is given) or `PATTERN=PERCENT`, where `*` in PATTERN
    /// matches any text.
    pub fn parse(text: &str) -> Result<Thresholds, String> {
        let mut thresholds = Thresholds::default();
        let mut default_given = false;
        for item in items(text) {
            match item.rsplit_once('=') {
                Some((pattern, percent)) => {
                    let pattern = pattern.trim();
                    if pattern.is_empty() {
                        return Err(format!(
                            "'{item}' has no test name before '=' (write e.g. pipe-lat=3)"
                        ));
                    }
                    let percent =
                        threshold_percent(percent).map_err(|e| format!("{pattern}: {e}"))?;
                    thresholds
                        .rules
                        .push((pattern.to_string(), percent / 100.0));
                }
                None if default_given => {
                    return Err(format!(
                        "'{text}' gives the default twice (one plain percentage, the rest \
                         TEST=PERCENT)"
                    ));
                }
                None => {
                    thresholds.default = threshold_percent(item)? / 100.0;
                    default_given = true;
                }
            }
        }
        Ok(thresholds)
    }

    /// The threshold of `test`: the first rule whose pattern matches its
    /// name (`pipe-lat[placement=cross]`, with `:metric` for a secondary
    /// metric) or its benchmark id (`pipe-lat`), else the default.
    pub fn of(&self, test: &TestKey) -> f64 {
        let name = test.to_string();
        self.rules
            .iter()
            .find(|(pattern, _)| matches(pattern, &name) || matches(pattern, &test.benchmark))
            .map_or(self.default, |(_, fraction)| *fraction)
    }
}

impl Default for Thresholds {
    /// [`DEFAULT_THRESHOLD`] for every metric.
    fn default() -> Thresholds {
        let percent = threshold_percent(DEFAULT_THRESHOLD).expect("the default is a percentage");
        Thresholds::uniform(percent / 100.0)
    }
}

/// The comma-separated items of `text`, trimmed; a comma inside a test's
/// brackets (`ctxsw[procs=8,size=16]=3`) does not separate.
fn items(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(text[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(text[start..].trim());
    items
}

/// A practical threshold given in percent, checked: a number from 0 to
/// below 100. For a flag's value parser, and each `--threshold` rule.
pub fn threshold_percent(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(percent) if (0.0..100.0).contains(&percent) => Ok(percent),
        _ => Err(format!("{text} must be a percentage from 0 to below 100")),
    }
}

/// Whether `text` matches `pattern` whole, `*` matching any run of
/// characters (none included).
fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, middle)) = middle.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> TestKey {
        TestKey::parse(text).unwrap()
    }

    #[test]
    fn a_plain_percentage_is_the_default_for_all() {
        let t = Thresholds::parse("2.5").unwrap();
        assert_eq!(t, Thresholds::uniform(0.025));
        assert_eq!(t.of(&key("pipe-lat")), 0.025);
    }

    #[test]
    fn rules_by_name_or_benchmark_first_match_wins() {
        let t = Thresholds::parse("pipe-lat=3, syscall-*=1.5,2,*=4").unwrap();
        assert_eq!(t.default, 0.02);
        assert_eq!(t.of(&key("pipe-lat[placement=cross]")), 0.03);
        assert_eq!(t.of(&key("syscall-null")), 0.015);
        assert_eq!(t.of(&key("mem-bw")), 0.04, "the catch-all rule");
        let no_catch_all = Thresholds::parse("pipe-lat=3").unwrap();
        assert_eq!(no_catch_all.of(&key("mem-bw")), 0.01, "the default default");
        let options = Thresholds::parse("pipe-lat[placement=same]=5").unwrap();
        assert_eq!(options.of(&key("pipe-lat[placement=same]")), 0.05);
        assert_eq!(options.of(&key("pipe-lat[placement=cross]")), 0.01);
        let two = Thresholds::parse("ctxsw[procs=8,size=16]=3,2").unwrap();
        assert_eq!(two.of(&key("ctxsw[procs=8,size=16]")), 0.03);
        assert_eq!(two.of(&key("ctxsw[procs=2,size=16]")), 0.02);
    }

    #[test]
    fn percentages_are_from_0_to_below_100() {
        assert_eq!(threshold_percent("2.5"), Ok(2.5));
        assert_eq!(threshold_percent("0"), Ok(0.0));
        for bad in ["100", "-1", "NaN", "inf", "two"] {
            let error = threshold_percent(bad).unwrap_err();
            assert_eq!(
                error,
                format!("{bad} must be a percentage from 0 to below 100")
            );
        }
    }

    #[test]
    fn wildcards() {
        assert!(matches("*", ""));
        assert!(matches("syscall-*", "syscall-"));
        assert!(matches("*-lat", "pipe-lat"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXcYYb"));
        assert!(!matches("ab*ba", "aba"), "the ends may not overlap");
        assert!(!matches("pipe", "pipe-lat"), "whole names only");
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        for (text, says) in [
            ("150", "from 0 to below 100"),
            ("abc", "abc must be a percentage"),
            ("pipe-lat=x", "pipe-lat: x must be"),
            ("=3", "no test name"),
            ("1,2", "default twice"),
            ("pipe-lat=-1", "from 0 to below 100"),
        ] {
            let error = Thresholds::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
