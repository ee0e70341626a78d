//! Running the tools kbench-vm drives (apt, dpkg-deb, mmdebstrap, mke2fs):
//! their output goes to the log, the tail of their stderr into the error.

use super::error::{Result, VmError};
use std::path::Path;
use std::process::{Command, Stdio};

/// The last lines of a failed tool's stderr an error keeps.
const STDERR_TAIL: usize = 20;

/// Runs a tool with no stdin, returning its stdout; its stderr goes to the
/// log (`-v`), or its tail into the error when it fails.
pub(crate) fn run(program: &str, args: &[&str], dir: Option<&Path>) -> Result<String> {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    tracing::info!("running {command:?}");
    let output = command
        .output()
        .map_err(VmError::os(format!("cannot run {program}")))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(VmError::Command(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            output.status,
            tail(&stderr, STDERR_TAIL)
        )));
    }
    tracing::info!("{program} said: {}", stderr.trim());
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The last `lines` lines of `text`, trimmed.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_keeps_the_tail_of_stderr() {
        let error = run("sh", &["-c", "seq 1 30 >&2; exit 3"], None).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.ends_with("\n30"), "{text}");
        assert!(
            text.contains("3): 11\n12\n") && !text.contains("\n10\n"),
            "{text}"
        );
        assert_eq!(
            run("sh", &["-c", "echo out; echo err >&2"], None).unwrap(),
            "out\n"
        );
    }
}
