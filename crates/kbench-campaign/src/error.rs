//! The campaign's error. Its text is the whole message (what, where, what
//! to do), causes included.

use kbench_store::StoreError;
use kbench_vm::kernel_image::ImageError;

/// What kept a campaign from starting or going on.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A kernel image that is not bootable on this machine.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A request the campaign refuses, or a state it cannot go on from,
    /// and what to do.
    #[error("{0}")]
    Invalid(String),
    /// An operating-system call that failed: what was being done, and how.
    #[error("{doing}: {error}")]
    Os {
        doing: String,
        error: std::io::Error,
    },
}

impl CampaignError {
    /// A closure mapping an `io::Error` to [`CampaignError::Os`] with what
    /// was being done.
    pub fn os(doing: impl Into<String>) -> impl FnOnce(std::io::Error) -> CampaignError {
        let doing = doing.into();
        move |error| CampaignError::Os { doing, error }
    }
}

pub type Result<T, E = CampaignError> = std::result::Result<T, E>;

/// Returns early with [`CampaignError::Invalid`] of a formatted message.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::error::CampaignError::Invalid(format!($($arg)*)))
    };
}
pub(crate) use refuse;
