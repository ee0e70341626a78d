//! What a bisection tells its user as it goes: the binary prints it on
//! stderr; tests drop it.

/// One message of a bisection's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// A step: what is built or measured now, and each line of the log.
    Step(&'a str),
    /// The search tests `commit`: `tested` commits (the endpoints among
    /// them) were decided before it, about `left` more (this one included)
    /// will be, halving the range.
    Testing {
        commit: &'a str,
        tested: usize,
        left: usize,
    },
    /// A choice made for the user ("the other --bench tests are not run").
    Note(&'a str),
    /// What makes the numbers less than they could be ("KVM was not used").
    Warning(&'a str),
}
