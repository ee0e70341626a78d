//! The checks of what is to be written, made before anything is: names,
//! titles, factors, ids and the rules of [`crate::validate`], each failing
//! as `Invalid` with what and where.

use super::{Fail, Res};
use crate::{Result, RunInfo, StoreError};
use kbench_model::validate_name;
use std::collections::BTreeMap;

/// A name of a result set, identifier, test, worker, token or bisection
/// (`kbench_model::validate_name`).
pub(super) fn check_name(what: &str, name: &str) -> Res<()> {
    validate_name(what, name).map_err(|msg| Fail::Store(StoreError::Invalid(msg)))
}

/// A rule of [`crate::validate`] applied on a write path: `Invalid`, with
/// `place` (what was being written) before what is wrong, and nothing
/// written.
pub(super) fn valid(check: Result<(), String>, place: impl FnOnce() -> String) -> Res<()> {
    check.map_err(|why| {
        Fail::Store(StoreError::Invalid(format!(
            "{}: {why}; nothing was stored",
            place()
        )))
    })
}

/// A push id, run uid or job tag: 1 to 128 of `A-Z a-z 0-9 - _ .` (a
/// UUID, a hash, a counter, a word), safe in URLs, lists and messages.
pub(super) fn check_id(what: &str, id: &str) -> Res<()> {
    kbench_model::validate_id(what, id).map_err(|msg| Fail::Store(StoreError::Invalid(msg)))
}

/// A run uid, when the run has one.
pub(super) fn check_uid(info: &RunInfo) -> Res<()> {
    info.uid
        .as_deref()
        .map_or(Ok(()), |uid| check_id("run uid", uid))
}

/// Every factor as `kbench_model::parse_factor` reads it.
pub(super) fn check_factors(levels: &BTreeMap<String, String>) -> Res<()> {
    for (name, level) in levels {
        kbench_model::parse_factor(&format!("{name}={level}"))
            .map_err(|msg| Fail::Store(StoreError::Invalid(msg)))?;
    }
    Ok(())
}

/// A title (one line) or description (lines), as `validate_text` allows.
pub(super) fn check_text(what: &str, text: Option<&str>, lines: bool) -> Res<()> {
    text.map_or(Ok(()), |text| {
        kbench_model::validate_text(what, text, lines)
            .map_err(|msg| Fail::Store(StoreError::Invalid(msg)))
    })
}
