//! Number formatting shared by the text reports.

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

/// A fraction as a signed or unsigned percentage with two decimals.
pub fn percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.2} %", fraction * 100.0)
    } else {
        "n/a".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_about_four_digits() {
        assert_eq!(value(115.234), "115.2");
        assert_eq!(value(43.9155), "43.92");
        assert_eq!(value(0.11503), "0.1150");
        assert_eq!(value(8693066.4), "8693066");
        assert_eq!(percent(0.0123), "1.23 %");
        assert_eq!(percent(f64::INFINITY), "n/a");
    }
}
