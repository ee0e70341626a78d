//! Taking turns: the agents of one interleaved block start at once and
//! measure one sample each in turn, passing a token round a ring of pipes.
//! Two variants' samples are then milliseconds apart rather than a round
//! apart, so the sub-second speed spells of a shared vCPU hit them alike.
//! On this project's machine, with both agents pinned to one CPU, the SD of
//! a block's log ratio between two identical processes fell from 10 % (one
//! round after the other) to 1.6 % (docs/sensitivity.md). Only the token's
//! holder runs; the others wait in read(2), off the CPU.
//!
//! The first agent of the ring leads: its own stopping rule ends the round
//! for all. It ends its test still holding the token, then passes LAST;
//! each follower takes that as its turn for its last sample, ends its test
//! and passes LAST on. So every agent of a block takes the same number of
//! samples, and no two ever run at once. A closed pipe (an agent that died)
//! reads as the end of the round.

use crate::error::{MeasureError, Result, invalid};
use crate::plan::StopReason;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::time::{Duration, Instant};

/// `IN OUT lead|follow`: the agent's ends of the ring, set by the parent.
pub const TURN_ENV: &str = "KBENCH_TURN";

const GO: u8 = b'g';
const LAST: u8 = b'l';

/// What a turn says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Go,
    /// The leader has ended: one more sample, then end.
    Last,
    /// The ring is broken: end now.
    Closed,
}

/// One agent's place in the ring.
#[derive(Debug)]
pub struct Turns {
    wait: File,
    pass: File,
    leads: bool,
    /// A follower has had LAST: its next stop ends its test.
    ending: bool,
    /// Time spent waiting for the token: not the agent's to measure in.
    waited: Duration,
}

impl Turns {
    /// The place `kbench run` gave this agent, if it gave one.
    pub fn from_env() -> Result<Option<Turns>> {
        let Some(value) = std::env::var_os(TURN_ENV) else {
            return Ok(None);
        };
        let text = value.to_string_lossy();
        let parts: Vec<&str> = text.split(' ').collect();
        let [wait, pass, role] = parts[..] else {
            invalid!("{TURN_ENV}='{text}' is not 'IN OUT lead|follow'");
        };
        let leads = match role {
            "lead" => true,
            "follow" => false,
            _ => invalid!("{TURN_ENV}='{text}': the role must be lead or follow"),
        };
        let fd = |s: &str| -> Result<File> {
            let fd: RawFd = s.parse().map_err(|_| {
                MeasureError::Invalid(format!("{TURN_ENV}='{text}': '{s}' is not a descriptor"))
            })?;
            // Claimed once, and only when open: a wrapper that closed it
            // would otherwise make this agent wait for ever.
            // SAFETY: F_SETFD only sets the close-on-exec flag.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
                invalid!(
                    "{TURN_ENV}: descriptor {fd} is not open (did the wrapper close it?): {}",
                    io::Error::last_os_error()
                );
            }
            // SAFETY: the descriptor is open, was handed to this process for
            // this use, and nothing else in it owns it.
            Ok(unsafe { File::from_raw_fd(fd) })
        };
        Ok(Some(Turns {
            wait: fd(wait)?,
            pass: fd(pass)?,
            leads,
            ending: false,
            waited: Duration::ZERO,
        }))
    }

    /// Waits for this agent's first turn; `false` when the block ended
    /// before it (an agent before this one failed).
    pub fn begin(&mut self) -> io::Result<bool> {
        Ok(self.take()? == Token::Go)
    }

    /// Between two samples: `wants` is this agent's own stopping rule.
    /// The leader keeps the token when it wants to stop (it passes LAST
    /// once its test has ended). Otherwise the token goes round; a follower
    /// stops after the sample it took on LAST, keeping the token too.
    pub fn between(&mut self, wants: Option<StopReason>) -> io::Result<Option<StopReason>> {
        if self.leads && wants.is_some() {
            return Ok(wants);
        }
        if self.ending {
            return Ok(Some(StopReason::BlockEnded));
        }
        self.pass_token(GO)?;
        Ok(match self.take()? {
            Token::Go => None,
            Token::Last => {
                self.ending = true;
                None
            }
            Token::Closed => Some(StopReason::BlockEnded),
        })
    }

    /// Passes LAST on, once this agent's test has ended.
    pub fn end(&mut self) -> io::Result<()> {
        self.pass_token(LAST)
    }

    /// How long this agent has waited for its turns so far.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    fn take(&mut self) -> io::Result<Token> {
        let started = Instant::now();
        let mut byte = [0u8];
        let read = loop {
            match self.wait.read(&mut byte) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.waited += started.elapsed();
        Ok(match (read, byte[0]) {
            (1, GO) => Token::Go,
            (1, LAST) => Token::Last,
            _ => Token::Closed,
        })
    }

    fn pass_token(&mut self, token: u8) -> io::Result<()> {
        match self.pass.write_all(&[token]) {
            // The next agent has ended: there is no one left to pass to.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// The parent's side of one agent's place: its two ends, handed to the
/// agent's process by [`Seat::hand_to`] and closed in the parent when the
/// seat is dropped (after the launch), so a dead agent reads as closed.
#[derive(Debug)]
pub struct Seat {
    wait: OwnedFd,
    pass: OwnedFd,
    leads: bool,
}

impl Seat {
    /// Lets `command`'s process inherit the two ends and tells it where
    /// they are.
    pub fn hand_to(&self, command: &mut Command) {
        let (wait, pass) = (self.wait.as_raw_fd(), self.pass.as_raw_fd());
        let role = if self.leads { "lead" } else { "follow" };
        command.env(TURN_ENV, OsString::from(format!("{wait} {pass} {role}")));
        // SAFETY: runs between fork and exec and only calls fcntl, which is
        // async-signal-safe, on two descriptors this process owns.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(move || {
                for fd in [wait, pass] {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

/// A ring of `n` seats, the first one leading and holding the first token.
pub fn ring(n: usize) -> io::Result<Vec<Seat>> {
    let mut readers = vec![];
    let mut writers = vec![];
    for _ in 0..n {
        let (reader, writer) = io::pipe()?;
        readers.push(OwnedFd::from(reader));
        writers.push(OwnedFd::from(writer));
    }
    File::from(writers[0].try_clone()?).write_all(&[GO])?;
    // Seat i waits on pipe i and passes into pipe i + 1.
    writers.rotate_left(1);
    Ok(readers
        .into_iter()
        .zip(writers)
        .enumerate()
        .map(|(i, (wait, pass))| Seat {
            wait,
            pass,
            leads: i == 0,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent's side from a seat, as the agent would claim it.
    fn claim(seat: Seat) -> Turns {
        Turns {
            wait: File::from(seat.wait),
            pass: File::from(seat.pass),
            leads: seat.leads,
            ending: false,
            waited: Duration::ZERO,
        }
    }

    #[test]
    fn every_agent_of_a_ring_takes_as_many_turns_as_the_leader() {
        let agents: Vec<Turns> = ring(3).unwrap().into_iter().map(claim).collect();
        let log = std::sync::Arc::new(std::sync::Mutex::new(vec![]));
        let threads: Vec<_> = agents
            .into_iter()
            .enumerate()
            .map(|(i, mut turns)| {
                let log = log.clone();
                std::thread::spawn(move || {
                    assert!(turns.begin().unwrap());
                    let mut samples = 0;
                    loop {
                        log.lock().unwrap().push(i);
                        samples += 1;
                        // Followers' own rules want more: the leader decides.
                        let wants = (samples == if i == 0 { 4 } else { 2 })
                            .then_some(StopReason::TimeBudget);
                        if turns.between(wants).unwrap().is_some() {
                            break;
                        }
                    }
                    // The end of the test, still in this agent's turn.
                    log.lock().unwrap().push(10 + i);
                    turns.end().unwrap();
                    samples
                })
            })
            .collect();
        let samples: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(samples, vec![4, 4, 4]);
        // One at a time, in ring order, each ending in its own turn.
        let mut expected = [0, 1, 2].repeat(3);
        expected.extend([0, 10, 1, 11, 2, 12]);
        assert_eq!(*log.lock().unwrap(), expected);
    }

    #[test]
    fn a_closed_ring_ends_the_round() {
        let mut seats = ring(2).unwrap();
        let follower = seats.pop().unwrap();
        let leader = seats.pop().unwrap();
        let mut leader = claim(leader);
        let mut follower = claim(follower);
        assert!(leader.begin().unwrap());
        drop(leader);
        // The leader is gone without a word: its follower must not wait.
        assert!(!follower.begin().unwrap());
        assert_eq!(follower.end().ok(), Some(()));
    }
}
