//! Values as stored: JSON documents and integers, converted with a message
//! naming what they are.

use super::{Fail, Res};
use crate::StoreError;

/// `what` as JSON; `what` names it in the message ("run details").
pub(super) fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Res<String> {
    serde_json::to_string(value).map_err(|err| {
        Fail::Store(StoreError::Database(format!(
            "cannot encode {what} as JSON: {err}"
        )))
    })
}

/// Stored JSON read back; `what` names it in the message ("a run's notes").
pub(super) fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Res<T> {
    serde_json::from_str(text)
        .map_err(|err| Fail::Damaged(format!("{what} is not readable: {err}")))
}

pub(super) fn to_i64(what: &str, value: u64) -> Res<i64> {
    i64::try_from(value).map_err(|_| {
        Fail::Store(StoreError::Database(format!(
            "{what} {value} is too large to store (limit {})",
            i64::MAX
        )))
    })
}

/// Reads a stored integer into a narrower or unsigned type.
pub(super) fn narrow<T: TryFrom<i64>>(what: &str, value: i64) -> Res<T> {
    T::try_from(value).map_err(|_| Fail::Damaged(format!("{what} {value} is out of range")))
}
