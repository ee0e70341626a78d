//! A fixed-seed pseudo-random sequence for the stressors that pick at
//! random (the madvise advice and page), reproducible from run to run.

/// The 64-bit xorshift* generator: a fixed-seed, reproducible sequence.
pub(super) struct XorShift(pub(super) u64);

impl XorShift {
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_is_fixed() {
        let mut a = XorShift(1);
        let mut b = XorShift(1);
        let first: Vec<u64> = (0..4).map(|_| a.next()).collect();
        assert_eq!(first, (0..4).map(|_| b.next()).collect::<Vec<_>>());
        assert_ne!(first[0], first[1]);
    }
}
