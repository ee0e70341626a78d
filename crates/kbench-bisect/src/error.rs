//! The bisection's error. Its text is the whole message (what, where,
//! what to do), causes included, so it reads the same however it is
//! printed; [`BisectError::Interrupted`] is matched, never read from text.

use kbench_catalog::CatalogError;
use kbench_measure::MeasureError;
use kbench_store::StoreError;
use kbench_vm::kernel_image::ImageError;

/// What stopped a bisection, or kept it from starting.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The stop flag was raised (Ctrl-C); every sample so far is stored,
    /// and the state with it.
    #[error("interrupted; every sample so far is stored: run the same command again to continue")]
    Interrupted,
    /// The store refused or failed a read or a write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Launching a measurement failed (a VM guest that could not start).
    #[error(transparent)]
    Measure(#[from] MeasureError),
    /// A `--bench` name that does not resolve.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A kernel image that cannot be booted (the commit is skipped).
    #[error(transparent)]
    Image(#[from] ImageError),
    /// Setting up or booting a VM failed (qemu, the guest's image, the
    /// accelerator).
    #[error(transparent)]
    Vm(#[from] kbench_vm::VmError),
    /// A request, repository, result set or state that cannot be bisected,
    /// and what to do about it.
    #[error("{0}")]
    Invalid(String),
    /// A git command that failed, and what it said.
    #[error("{0}")]
    Git(String),
    /// An operating-system call that failed: what was being done, and how.
    #[error("{what}: {cause}")]
    Os { what: String, cause: std::io::Error },
    /// The bisection's state could not be written or read as JSON.
    #[error("{0}")]
    State(serde_json::Error),
    /// Where a nested error happened.
    #[error("{place}: {inner}")]
    In {
        place: String,
        inner: Box<BisectError>,
    },
}

impl BisectError {
    /// `self`, said to have happened at `place`.
    pub fn at(self, place: impl Into<String>) -> BisectError {
        BisectError::In {
            place: place.into(),
            inner: Box::new(self),
        }
    }

    /// Whether the stop flag is what ended the bisection, at any depth.
    pub fn is_interrupted(&self) -> bool {
        match self {
            BisectError::Interrupted => true,
            BisectError::In { inner, .. } => inner.is_interrupted(),
            _ => false,
        }
    }

    /// An OS error of `what` (a closure's result, for `map_err`).
    pub fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BisectError {
        let what = what.into();
        move |cause| BisectError::Os { what, cause }
    }
}

pub type Result<T, E = BisectError> = std::result::Result<T, E>;

/// Returns early with [`BisectError::Invalid`] and a formatted message.
macro_rules! invalid {
    ($($message:tt)*) => {
        return Err($crate::error::BisectError::Invalid(format!($($message)*)))
    };
}
pub(crate) use invalid;
