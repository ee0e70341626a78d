//! What kbench keeps of the processes it starts: the last lines of their
//! output for error messages, and no child left running. The launchers use
//! it, and so do kbench-vm's and kbench-bisect's commands.

use std::collections::VecDeque;
use std::process::Child;

/// Appends `line`, dropping the oldest to keep at most `max`.
pub fn push_bounded(tail: &mut VecDeque<String>, line: String, max: usize) {
    if tail.len() == max {
        tail.pop_front();
    }
    tail.push_back(line);
}

/// "; its last output:\n..." after a failure, or nothing without output.
pub fn last_output(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last output:\n{}", tail.join("\n"))
    }
}

/// Kills and reaps `child` unless it has ended.
pub fn kill_unless_ended(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
        let _ = child.wait();
    }
}
