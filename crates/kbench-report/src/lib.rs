//! kbench's reports: what people already read, laid out from the models
//! of kbench-analysis. Every report kbench prints or serves goes through
//! one trait and one registry ([`format`]): `show`, `compare` (and by
//! factor), `history`, a bisection, the lab's job list and the list of
//! result sets.
//!
//! - [`format`]: [`format::Render`], the registry, and one file per
//!   format.
//! - [`printed`]: what `kbench compare` prints, built and laid out in one
//!   call.
//! - [`markup`]: the escaping templates of the HTML formats, which `kbench
//!   serve`'s dashboard uses too.

mod error;
pub mod format;
pub mod markup;
pub mod printed;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::Error;
