//! Placeholder: filled by the benchmark family's author.

use crate::BenchInfo;

pub const BENCHES: &[BenchInfo] = &[];
