//! Numbers as every report writes them: values with about four
//! significant digits, percentages, signed changes and p-values. Written
//! once here, for the renderers of kbench-report and for the words of the
//! models here (a bisection's log, notes).

/// A value with about four significant digits: 115.2, 43.92, 0.1150, 8693066.
pub fn value(v: f64) -> String {
    let magnitude = v.abs();
    if !v.is_finite() {
        return format!("{v}");
    }
    let decimals = if magnitude >= 1000.0 {
        0
    } else if magnitude >= 100.0 {
        1
    } else if magnitude >= 10.0 {
        2
    } else if magnitude >= 1.0 {
        3
    } else {
        4
    };
    format!("{v:.decimals$}")
}

/// A value with three decimals, as Linaro's reports write means, SDs and
/// intervals (2024031.020, 39.925), and at least four significant digits
/// below 1 (0.001234); "n/a" when it is not finite.
pub fn fixed(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let magnitude = v.abs();
    let decimals = if magnitude >= 1.0 || magnitude == 0.0 {
        3
    } else {
        (3.0 - magnitude.log10().floor()).min(12.0) as usize
    };
    format!("{v:.decimals$}")
}

/// A count per operation: a [`value`], or three significant digits with
/// an exponent below 0.001 (one page fault in 100,000 calls is 1.00e-5,
/// not 0.0000).
pub fn count(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.2e}")
    } else {
        value(v)
    }
}

/// A signed [`count`]: "+0.3100", "-1523", "+2.10e-5".
pub fn signed_count(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "+" };
    format!("{sign}{}", count(v.abs()))
}

/// A fraction as a signed or unsigned percentage with two decimals.
pub fn percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.2} %", fraction * 100.0)
    } else {
        "n/a".to_string()
    }
}

/// How [`signed`] writes a value that is not finite, such as the
/// unbounded confidence limit of a side with one observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unbounded {
    /// "n/a": plain text that must not look like a number.
    NotAvailable,
    /// "+inf" / "-inf": ASCII tables and markdown.
    Ascii,
    /// "+∞" / "−∞": pages and pictures.
    Symbol,
}

/// A signed number with `decimals` decimals and then `unit`: "+10.00",
/// "-3.1%", "+0.5 %". A value that is not finite is written as `unbounded`
/// says, without the unit (and NaN as the negative infinity).
pub fn signed(v: f64, decimals: usize, unit: &str, unbounded: Unbounded) -> String {
    if v.is_finite() {
        return format!("{v:+.decimals$}{unit}");
    }
    let positive = v > 0.0;
    match unbounded {
        Unbounded::NotAvailable => "n/a",
        Unbounded::Ascii if positive => "+inf",
        Unbounded::Ascii => "-inf",
        Unbounded::Symbol if positive => "+∞",
        Unbounded::Symbol => "−∞",
    }
    .to_string()
}

/// A p- or q-value: three decimals, or scientific below 0.001; "n/a"
/// when there is none (CANNOT DECIDE).
pub fn p_value(p: f64) -> String {
    if p.is_nan() {
        "n/a".to_string()
    } else if p == 0.0 {
        "0".to_string()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// A time (ms since the epoch, UTC) as its date: "2026-12-04" (the civil
/// calendar from days since 1970, Hinnant's `civil_from_days`).
pub fn date(at_ms: i64) -> String {
    let days = at_ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_from_epoch_milliseconds() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_796_342_400_000 + 86_399_999), "2026-12-04");
        assert_eq!(date(-1), "1969-12-31");
    }

    #[test]
    fn keeps_about_four_digits() {
        assert_eq!(value(115.234), "115.2");
        assert_eq!(value(43.9155), "43.92");
        assert_eq!(value(0.11503), "0.1150");
        assert_eq!(value(8693066.4), "8693066");
        assert_eq!(percent(0.0123), "1.23 %");
        assert_eq!(percent(f64::INFINITY), "n/a");
    }

    #[test]
    fn three_decimals_as_linaro() {
        assert_eq!(fixed(2024031.02), "2024031.020");
        assert_eq!(fixed(39.925), "39.925");
        assert_eq!(fixed(0.5), "0.5000");
        assert_eq!(fixed(0.001234), "0.001234");
        assert_eq!(fixed(0.0), "0.000");
        assert_eq!(fixed(f64::INFINITY), "n/a");
    }

    #[test]
    fn signs_and_infinities() {
        use Unbounded::*;
        assert_eq!(signed(10.0, 2, "", Ascii), "+10.00");
        assert_eq!(signed(-3.054, 2, "", Ascii), "-3.05");
        assert_eq!(signed(-100.0, 2, "", Ascii), "-100.00");
        assert_eq!(signed(10.0, 1, "%", NotAvailable), "+10.0%");
        assert_eq!(signed(-3.04, 1, "%", NotAvailable), "-3.0%");
        assert_eq!(signed(0.46, 1, " %", Symbol), "+0.5 %");
        assert_eq!(signed(f64::INFINITY, 2, "", Ascii), "+inf");
        assert_eq!(signed(f64::NEG_INFINITY, 1, "", Ascii), "-inf");
        assert_eq!(signed(f64::INFINITY, 1, "%", NotAvailable), "n/a");
        assert_eq!(signed(f64::INFINITY, 1, " %", Symbol), "+∞");
        assert_eq!(signed(f64::NEG_INFINITY, 1, " %", Symbol), "−∞");
        assert_eq!(signed(f64::NAN, 1, "", Ascii), "-inf");
    }

    #[test]
    fn p_values() {
        assert_eq!(p_value(0.0123), "0.012");
        assert_eq!(p_value(1.5e-7), "1.5e-7");
        assert_eq!(p_value(0.0), "0");
        assert_eq!(p_value(f64::NAN), "n/a");
    }
}
