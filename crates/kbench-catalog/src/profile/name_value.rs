//! `NAME: VALUE` lines: what a `kbench bisect --run` command prints, and
//! what `kbench run --command --metric NAME` reads (a profile metric's
//! `line` source). A line counts when its text after the first colon
//! begins with a number (a unit may follow); its name is the text before
//! the colon, trimmed. When several lines name a metric, the last counts.

/// Each `NAME: VALUE` line of `text`, in order: its name and its value's
/// text (a number).
pub fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|line| {
        let (name, rest) = line.split_once(':')?;
        let name = name.trim();
        let value = rest.split_whitespace().next()?;
        (!name.is_empty() && value.parse::<f64>().is_ok()).then_some((name, value))
    })
}

/// The value's text of the last line of `text` naming `name`.
pub fn last<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    lines(text)
        .filter(|&(found, _)| found == name)
        .last()
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_value_lines() {
        let out = "warming up\nops_per_sec: 1234.5 ops/s\nlatency: 3.5\nops_per_sec: 1300\n";
        assert_eq!(last(out, "ops_per_sec"), Some("1300"));
        assert_eq!(last(out, "latency"), Some("3.5"));
        assert_eq!(last(out, "throughput"), None);
        let names: Vec<&str> = lines(out).map(|(name, _)| name).collect();
        assert_eq!(names, ["ops_per_sec", "latency", "ops_per_sec"]);
    }

    #[test]
    fn only_lines_whose_value_is_a_number_count() {
        let out = "  lat ms : 7 ms\nurl: http://x\nempty:\n: 5\nt: -1\nops: 12ops\n";
        let found: Vec<(&str, &str)> = lines(out).collect();
        assert_eq!(found, [("lat ms", "7"), ("t", "-1")]);
    }
}
