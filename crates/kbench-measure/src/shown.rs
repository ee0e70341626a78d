//! `kbench run --show-output`: the agent passes each profile command's
//! output on, marked line by line on its stderr, and the launcher prints
//! the marked lines on kbench's stderr instead of keeping them for error
//! messages (the agent's stdout carries its events).

/// Set for the agent by `kbench run --show-output`: the agent passes each
/// profile command's output on ([`show_output`]).
pub const SHOW_OUTPUT_ENV: &str = "KBENCH_SHOW_OUTPUT";
/// Marks a line of a command's output in the agent's stderr.
const OUTPUT_MARK: &str = "kbench-output| ";

/// In the agent: the output of a profile command, marked line by line on
/// stderr for the launcher to show, when `kbench run --show-output` asked.
pub fn show_output(stdout: &str, stderr: &str) {
    if std::env::var_os(SHOW_OUTPUT_ENV).is_none() {
        return;
    }
    let mut shown = String::new();
    for line in stdout.lines().chain(stderr.lines()) {
        shown.push_str(OUTPUT_MARK);
        shown.push_str(line);
        shown.push('\n');
    }
    eprint!("{shown}");
}

/// In the launcher: the text of a line the agent marked as output.
pub fn unmark(line: &str) -> Option<&str> {
    line.strip_prefix(OUTPUT_MARK)
}
