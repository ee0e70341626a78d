//! Why a lab client operation failed. Each message names the server (or
//! the local thing), says what to do, and holds its causes in its text.

use kbench_store::StoreError;
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// What the user gave cannot be used: a server URL, a CA file, an API
    /// token, the job lease of the environment.
    #[error("{0}")]
    Setup(String),

    /// No answer from the server within the attempts allowed.
    #[error("{0}")]
    Unreachable(String),

    /// The server answered with a refusal or a status the call does not
    /// expect; nothing more was done.
    #[error("{0}")]
    Refused(String),

    /// The server's answer is not the document the call asked for.
    #[error("{what}: {cause}")]
    Answer {
        what: String,
        cause: serde_json::Error,
    },

    /// A request's body that cannot be written as JSON.
    #[error(transparent)]
    Encode(serde_json::Error),

    /// A job's child (`kbench ...`) did not give what the job needs.
    #[error("{0}")]
    Child(String),

    /// A leased job this worker does not run (its check failed): nothing
    /// of it ran.
    #[error("the job was refused by this worker and nothing of it ran: {0}")]
    JobRefused(String),

    /// Local I/O, `doing` says what (making a job's directory, starting
    /// its child).
    #[error("{doing}: {cause}")]
    Io { doing: String, cause: io::Error },

    /// A job's local store.
    #[error(transparent)]
    Store(#[from] StoreError),

    /// Seeding a job's local store with what the server has of it.
    #[error("importing the server's samples of the job into its local store: {0}")]
    Seed(StoreError),
}

impl FleetError {
    /// An [`FleetError::Answer`]: `what` was asked, and the answer did not
    /// parse.
    pub(crate) fn answer(what: String) -> impl FnOnce(serde_json::Error) -> FleetError {
        move |cause| FleetError::Answer { what, cause }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_follow_the_message_in_its_text() {
        let error = FleetError::Io {
            doing: "cannot make the job's directory /w".into(),
            cause: io::Error::other("disk full"),
        };
        assert_eq!(
            error.to_string(),
            "cannot make the job's directory /w: disk full"
        );
        let refused = FleetError::JobRefused("names[0] \"x\" is unknown".into());
        assert_eq!(
            refused.to_string(),
            "the job was refused by this worker and nothing of it ran: names[0] \"x\" is unknown"
        );
    }
}
