//! Serde for floats that may be infinite.
//!
//! JSON has no infinity: serde_json writes `inf` as `null` and then refuses
//! to read it back. An unbounded confidence limit is written as `null` and
//! read back as the matching infinity, so estimates round-trip. A value
//! that does not exist (NaN: no test was made) is `null` too.

use serde::{Deserialize, Deserializer, Serializer};

fn write<S: Serializer>(value: f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() {
        serializer.serialize_f64(value)
    } else {
        serializer.serialize_none()
    }
}

fn read<'de, D: Deserializer<'de>>(deserializer: D, missing: f64) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(missing))
}

/// A lower bound: `null` means minus infinity.
pub mod lower {
    use super::*;

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        write(*value, serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        read(deserializer, f64::NEG_INFINITY)
    }
}

/// An upper bound: `null` means plus infinity.
pub mod upper {
    use super::*;

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        write(*value, serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        read(deserializer, f64::INFINITY)
    }
}

/// A value that may not exist: NaN is written as `null` and read back.
pub mod missing {
    use super::*;

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        write(*value, serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        read(deserializer, f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, UnitDeserializer};

    #[test]
    fn a_missing_value_reads_back_as_nan() {
        let read = missing::deserialize(UnitDeserializer::<Error>::new()).unwrap();
        assert!(read.is_nan());
    }
}
