//! What a bisection tells its user as it goes: the binary prints it on
//! stderr; tests drop it.

/// One message of a bisection's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// A step: what is built or measured now, and each line of the log.
    Step(&'a str),
    /// A choice made for the user ("the other --bench tests are not run").
    Note(&'a str),
    /// What makes the numbers less than they could be ("KVM was not used").
    Warning(&'a str),
}
