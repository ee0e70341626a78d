//! The order of the commits within a block: random, so that no commit is
//! always measured first (or right after a build, or last before a spell),
//! and seeded, one stream per block, so that the orders are recorded by the
//! seed alone (kept in the state and the report) and a continued bisection
//! measures a block in the order it began it.

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): ten lines, and statistical quality to spare
/// for shuffling three items.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A fresh seed from the kernel's generator.
pub fn new_seed() -> std::io::Result<u64> {
    let id = kbench_model::random_id()?;
    Ok(u64::from_str_radix(&id[..16], 16).unwrap_or(0))
}

/// A permutation of `0..n` for block number `block` of the bisection
/// seeded `seed` (Fisher-Yates; the modulo bias is below 1e-18 for n <= 3).
pub fn block_order(seed: u64, block: u64, n: usize) -> Vec<usize> {
    let mut rng = SplitMix64(seed ^ block.wrapping_mul(0xd1b5_4a32_d192_ed03));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_fixed_by_seed_and_block_and_all_occur() {
        let mut seen = std::collections::BTreeMap::new();
        for block in 0..600 {
            let order = block_order(7, block, 3);
            assert_eq!(order, block_order(7, block, 3));
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2]);
            *seen.entry(order).or_insert(0) += 1;
        }
        // All 6 orders, each about 100 times.
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert!(seen.values().all(|&n| (60..140).contains(&n)), "{seen:?}");
        assert_ne!(
            (0..20).map(|b| block_order(7, b, 3)).collect::<Vec<_>>(),
            (0..20).map(|b| block_order(8, b, 3)).collect::<Vec<_>>()
        );
    }
}
