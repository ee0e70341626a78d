//! The order of a campaign's boots: rounds in which each kernel boots
//! once, in a random order per round (for two kernels, each pair AB or BA),
//! from a recorded seed. Alternating keeps slow drift of the machine off
//! the difference; the random order within a round keeps a fixed
//! "second boot of the pair" effect off it.

/// Kernel indices, one per boot: `rounds` rounds of `kernels` kernels.
pub fn order(kernels: usize, rounds: u32, rng: &mut fastrand::Rng) -> Vec<usize> {
    let mut boots = Vec::new();
    for _ in 0..rounds {
        let mut round: Vec<usize> = (0..kernels).collect();
        rng.shuffle(&mut round);
        boots.extend(round);
    }
    boots
}

/// The generator of a campaign with `seed` that has planned `rounds`
/// rounds already, so that extending it goes on where the plan stopped.
pub fn resumed(seed: u64, kernels: usize, rounds: u32) -> fastrand::Rng {
    let mut rng = fastrand::Rng::with_seed(seed);
    order(kernels, rounds, &mut rng);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_round_boots_every_kernel_once_and_the_seed_repeats_it() {
        let boots = order(2, 50, &mut fastrand::Rng::with_seed(7));
        assert_eq!(boots.len(), 100);
        for pair in boots.chunks(2) {
            assert!(pair == [0, 1] || pair == [1, 0], "{pair:?}");
        }
        // Both orders occur: the pairs are randomised, not fixed.
        let first_a = boots.chunks(2).filter(|p| p[0] == 0).count();
        assert!(
            (10..=40).contains(&first_a),
            "{first_a} of 50 pairs start with A"
        );
        assert_eq!(order(2, 50, &mut fastrand::Rng::with_seed(7)), boots);
    }

    #[test]
    fn extending_goes_on_as_a_longer_plan_would() {
        let long = order(3, 6, &mut fastrand::Rng::with_seed(11));
        let mut rng = resumed(11, 3, 4);
        assert_eq!(order(3, 2, &mut rng), long[12..]);
    }
}
