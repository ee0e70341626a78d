//! The Phoronix Test Suite's result file, `composite.xml`, against PTS's
//! published schema (result-file.xsd): read into kbench's samples, and a
//! result set written back as one.

mod read;
mod schema;
mod write;

pub use read::read;
pub use write::{Export, write};
