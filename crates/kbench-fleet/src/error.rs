//! Why a lab client operation failed. Each message names the server (or
//! the local thing) and says what to do; causes are kept as sources.

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
    #[error("{what}")]
    Answer {
        what: String,
        #[source]
        source: serde_json::Error,
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
    #[error("{doing}")]
    Io {
        doing: String,
        #[source]
        source: io::Error,
    },

    /// A job's local store.
    #[error(transparent)]
    Store(#[from] StoreError),

    /// Seeding a job's local store with what the server has of it.
    #[error("importing the server's samples of the job into its local store")]
    Seed(#[source] StoreError),
}

impl FleetError {
    /// An [`FleetError::Answer`]: `what` was asked, and the answer did not
    /// parse.
    pub(crate) fn answer(what: String) -> impl FnOnce(serde_json::Error) -> FleetError {
        move |source| FleetError::Answer { what, source }
    }

    /// The message followed by its causes, each after `": "`, as the
    /// binary prints an error (a failed job's message on the server).
    pub fn with_causes(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            text.push_str(&format!(": {error}"));
            cause = error.source();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_follow_the_message_as_anyhow_prints_them() {
        let error = FleetError::Io {
            doing: "cannot make the job's directory /w".into(),
            source: io::Error::other("disk full"),
        };
        assert_eq!(error.to_string(), "cannot make the job's directory /w");
        assert_eq!(
            error.with_causes(),
            "cannot make the job's directory /w: disk full"
        );
        let refused = FleetError::JobRefused("names[0] \"x\" is unknown".into());
        assert_eq!(
            refused.with_causes(),
            "the job was refused by this worker and nothing of it ran: names[0] \"x\" is unknown"
        );
    }
}
