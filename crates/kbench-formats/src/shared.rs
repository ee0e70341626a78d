//! What the adapters share: test names made from another tool's names,
//! numbers checked as kbench stores them, raw values as rounds, and the
//! calendar times result files write.

use crate::{FormatError, Imported, ReadOptions};
use kbench_model::results::{RunInfo, RunStatus};
use kbench_model::{ImportedRecord, SystemSnapshot};
use kbench_store::exchange::{
    IdentifierEntry, RunEntry, SCHEMA, SampleEntry, SamplesFile, TestEntry,
};
use std::collections::BTreeMap;

/// A file that holds one run (hyperfine's, Google Benchmark's): its tests,
/// and one identifier of the run with its samples, the notes said of it
/// kept with the run and returned for the user.
pub fn one_run(
    tests: Vec<TestEntry>,
    identifier_name: &str,
    record: ImportedRecord,
    started_at_ms: i64,
    notes: Vec<String>,
    samples: BTreeMap<String, Vec<SampleEntry>>,
) -> Imported {
    let identifier = identifier(
        identifier_name,
        record,
        started_at_ms,
        notes.clone(),
        samples,
    );
    Imported {
        file: SamplesFile {
            title: None,
            description: None,
            schema: SCHEMA.to_string(),
            result_set: None,
            tests,
            identifiers: vec![identifier],
        },
        notes,
    }
}

/// An identifier of one imported run: its samples by test name, and what
/// the file said of it as the run's imported record.
pub fn identifier(
    name: &str,
    record: ImportedRecord,
    started_at_ms: i64,
    notes: Vec<String>,
    samples: BTreeMap<String, Vec<SampleEntry>>,
) -> IdentifierEntry {
    IdentifierEntry {
        name: name.to_string(),
        factors: BTreeMap::new(),
        runs: vec![RunEntry {
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: SystemSnapshot {
                    imported: Some(record),
                    ..SystemSnapshot::default()
                },
                notes,
                started_at_ms,
                ..RunInfo::default()
            },
            ended_at_ms: None,
            outcomes: vec![],
            samples,
        }],
        samples: BTreeMap::new(),
    }
}

/// `name` as a part of a kbench test name: the characters that structure
/// `bench[k=v,...]:metric` (`[ ] : , =`) become `_`, blanks at the ends go.
/// The original is kept in the imported record for export.
pub fn name_part(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            '[' | ']' | ':' | ',' | '=' => '_',
            c => c,
        })
        .collect()
}

/// The identifier a file without one goes under (`--identifier`).
pub fn required_identifier(options: &ReadOptions) -> Result<String, FormatError> {
    options.identifier.clone().ok_or_else(|| {
        FormatError::new(
            "the file",
            "names no identifier; give the one its samples go under with --identifier NAME",
        )
    })
}

/// A number from a result file's text: finite and above 0, as kbench
/// stores values (times, rates and sizes).
pub fn positive(text: &str, at: &str) -> Result<f64, FormatError> {
    match text.trim().parse::<f64>() {
        Ok(value) => positive_value(value, at),
        Err(_) => Err(FormatError::new(
            at,
            format!("{:?} is not a number", shorten(text)),
        )),
    }
}

/// A number from a result file: finite and above 0.
pub fn positive_value(value: f64, at: &str) -> Result<f64, FormatError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(FormatError::new(
            at,
            format!(
                "{value} is not above 0: kbench stores times, rates and sizes, which are positive"
            ),
        ))
    }
}

/// Raw values measured one per invocation: each is its own round, so
/// compare treats them as the unit of replication.
pub fn rounds(values: &[f64], at_ms: i64) -> Vec<SampleEntry> {
    values
        .iter()
        .enumerate()
        .map(|(round, &value)| SampleEntry {
            value,
            iterations: 1,
            at_ms,
            round: round as u32,
        })
        .collect()
}

/// `text` cut to 60 characters for a message.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// Milliseconds since the epoch of `YYYY-MM-DD HH:MM:SS` (PTS) or
/// `YYYY-MM-DDTHH:MM:SS` with an optional `Z` or `+HH:MM` offset (ISO 8601,
/// Google Benchmark). Without an offset the time is read as UTC.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, rest) = (text.get(..10)?, text.get(10..)?);
    let rest = rest.strip_prefix([' ', 'T'])?;
    let (clock, zone) = (rest.get(..8)?, rest.get(8..)?);
    let number = |s: &str| s.parse::<i64>().ok();
    let mut ymd = date.split('-').map(number);
    let (y, m, d) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let mut hms = clock.split(':').map(number);
    let (h, min, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let offset_s = match zone {
        "" | "Z" => 0,
        _ => {
            let sign = match zone.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let (oh, om) = zone.get(1..)?.split_once(':')?;
            sign * (number(oh)? * 3600 + number(om)? * 60)
        }
    };
    let seconds = days_from_civil(y, m, d) * 86_400 + h * 3600 + min * 60 + s - offset_s;
    Some(seconds * 1000)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC, as PTS writes its times.
pub fn format_time(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01; the inverse of
/// [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_write_back() {
        // 2026-12-01 18:50:09 UTC, checked with `date -u -d "2026-12-01 18:50:09" +%s`.
        let ms = parse_time("2026-12-01 18:50:09").unwrap();
        assert_eq!(ms, 1_796_151_009_000);
        assert_eq!(format_time(ms), "2026-12-01 18:50:09");
        assert_eq!(parse_time("2026-12-01T20:50:09+02:00"), Some(ms));
        assert_eq!(parse_time("2026-12-01T18:50:09Z"), Some(ms));
        assert_eq!(format_time(0), "1970-01-01 00:00:00");
        assert_eq!(format_time(951_782_400_000), "2000-02-29 00:00:00");
        for bad in [
            "",
            "2026-13-01 00:00:00",
            "2026-12-01",
            "yesterday",
            "2026-12-01 18:50:09+2",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_lose_only_structuring_characters() {
        assert_eq!(
            name_part(" BM_f<std::string>/threads:2 "),
            "BM_f<std__string>/threads_2"
        );
        assert_eq!(name_part("pts/redis-1.4.0"), "pts/redis-1.4.0");
    }

    #[test]
    fn numbers_must_be_positive_and_finite() {
        assert_eq!(positive(" 0.25 ", "x"), Ok(0.25));
        for bad in ["0", "-1", "NaN", "inf", "", "1,5", "12 ms"] {
            let err = positive(bad, "Value").unwrap_err();
            assert_eq!(err.at, "Value");
        }
    }
}
