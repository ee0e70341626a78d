//! The VM side's error. Its text is the whole message (what, where, what
//! to do), causes included, so it reads the same however it is printed;
//! [`VmError::Interrupted`] is matched, never read from text.

use super::kernel_image::ImageError;
use kbench_catalog::CatalogError;
use kbench_measure::MeasureError;
use kbench_store::StoreError;

/// What stopped a kernel fetch, a guest image, a boot or a `vm` command.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// The stop flag was raised (Ctrl-C) before anything was measured.
    #[error("interrupted before anything was measured")]
    Interrupted,
    /// A file that is not a bootable kernel image.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A run in a guest that could not start or ended badly, or a duet
    /// that cannot be.
    #[error(transparent)]
    Measure(#[from] MeasureError),
    /// The store refused or failed a read or a write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Test names that do not resolve.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A setting, kernel, program or file that cannot be used, and why.
    #[error("{0}")]
    Invalid(String),
    /// A program kbench ran (apt, dpkg-deb) that failed: its command line,
    /// status and stderr.
    #[error("{0}")]
    Command(String),
    /// An operating-system call that failed: what was being done, and how.
    #[error("{what}: {cause}")]
    Os { what: String, cause: std::io::Error },
    /// Where a nested error happened.
    #[error("{place}: {inner}")]
    In { place: String, inner: Box<VmError> },
}

impl VmError {
    /// `self`, said to have happened at `place`.
    pub fn at(self, place: impl Into<String>) -> VmError {
        VmError::In {
            place: place.into(),
            inner: Box::new(self),
        }
    }

    /// An OS error of `what` (a closure's result, for `map_err`).
    pub fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> VmError {
        let what = what.into();
        move |cause| VmError::Os { what, cause }
    }
}

pub type Result<T, E = VmError> = std::result::Result<T, E>;

/// Returns early with [`VmError::Invalid`] and a formatted message.
macro_rules! invalid {
    ($($message:tt)*) => {
        return Err($crate::error::VmError::Invalid(format!($($message)*)))
    };
}
pub(crate) use invalid;
