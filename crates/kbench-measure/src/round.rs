//! A round starting, as a run's progress says it: "round 2 of 3" for a
//! fixed count; adaptive rounds have a minimum and a cap, and after the
//! minimum only the tests not yet precise go on, so the line says how many
//! instead of a count of rounds that is only a cap.

use std::fmt;

/// A round's start, for the observer of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundStart {
    /// From 0.
    pub round: u32,
    /// The rounds asked for, or the adaptive rounds' cap.
    pub rounds: u32,
    /// The adaptive rounds' minimum; `None` for a fixed count.
    pub min_rounds: Option<u32>,
    /// The tests this round measures.
    pub tests: usize,
    /// Whether it resumes a run left unfinished.
    pub resumed: bool,
}

impl RoundStart {
    /// Whether there is anything to say: several rounds, or a resumption.
    pub fn worth_saying(&self) -> bool {
        self.rounds > 1 || self.resumed
    }
}

impl fmt::Display for RoundStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let round = self.round + 1;
        match self.min_rounds {
            None => write!(f, "round {round} of {}", self.rounds)?,
            Some(min) => {
                write!(
                    f,
                    "round {round} (adaptive: at least {min}, at most {}",
                    self.rounds
                )?;
                match round > min {
                    true => write!(f, "; {} test(s) not yet precise)", self.tests)?,
                    false => write!(f, ")")?,
                }
            }
        }
        match self.resumed {
            true => write!(f, " (resuming an unfinished run)"),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_rounds_say_their_bounds_and_not_a_cap_as_a_count() {
        let start = |round, min_rounds, resumed| RoundStart {
            round,
            rounds: 100,
            min_rounds,
            tests: 4,
            resumed,
        };
        assert_eq!(start(0, None, false).to_string(), "round 1 of 100");
        assert_eq!(
            start(0, Some(5), false).to_string(),
            "round 1 (adaptive: at least 5, at most 100)"
        );
        assert_eq!(
            start(5, Some(5), true).to_string(),
            "round 6 (adaptive: at least 5, at most 100; 4 test(s) not yet precise) \
             (resuming an unfinished run)"
        );
        let one = RoundStart {
            rounds: 1,
            ..start(0, None, false)
        };
        assert!(!one.worth_saying() && start(0, None, true).worth_saying());
    }
}
