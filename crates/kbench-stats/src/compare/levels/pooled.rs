//! A variance estimate pooled over groups, with its degrees of freedom:
//! what the rounds, the units and the drift's estimate share.

use crate::Samples;

/// A variance estimate with its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pooled {
    pub(crate) variance: f64,
    pub(crate) df: f64,
}

impl Pooled {
    /// Groups' variances pooled by their degrees of freedom (count - 1),
    /// over the groups of at least two values; `None` without any.
    pub(crate) fn of<'a>(groups: impl Iterator<Item = &'a Samples>) -> Option<Pooled> {
        let (squares, df) = groups
            .filter_map(|g| Some((g.variance()?, (g.len() - 1) as f64)))
            .fold((0.0, 0.0), |(squares, df), (variance, dfg)| {
                (squares + variance * dfg, df + dfg)
            });
        (df > 0.0).then(|| Pooled {
            variance: squares / df,
            df,
        })
    }
}
