//! Benjamini-Hochberg false discovery rate control (Benjamini and Hochberg,
//! "Controlling the False Discovery Rate", JRSS B 57, 1995): step-up
//! adjusted p-values, q_(i) = min over j >= i of m p_(j) / j, capped at 1
//! (as R's `p.adjust(method = "BH")`). Calling every metric with q < 0.05 a
//! discovery keeps the expected share of false discoveries at 5 %; when no
//! metric truly changed, it keeps the chance of any false alarm at 5 %.

/// q-values in the order of `p_values` (each in [0, 1]).
pub fn benjamini_hochberg(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p_values[i] * m as f64 / (rank + 1) as f64);
        q[i] = running;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector() {
        // Sorted 0.005 0.01 0.03 0.04 0.5 -> 5p/i 0.025 0.025 0.05 0.05 0.5.
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005, 0.5]);
        let expected = [0.025, 0.05, 0.05, 0.025, 0.5];
        for (got, want) in q.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{q:?}");
        }
    }

    #[test]
    fn step_up_lowers_a_q_to_a_later_one() {
        // R: p.adjust(c(0.02, 0.03), "BH") == c(0.03, 0.03).
        assert_eq!(benjamini_hochberg(&[0.02, 0.03]), vec![0.03, 0.03]);
    }

    #[test]
    fn single_and_empty() {
        assert_eq!(benjamini_hochberg(&[0.2]), vec![0.2]);
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[1.0, 1.0]), vec![1.0, 1.0]);
    }
}
