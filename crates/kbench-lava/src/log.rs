//! A LAVA job's log, read: the device's console lines in order, and
//! LAVA's own results (each action's, and the job's with its error).
//!
//! Three shapes are read, line by line, and may mix: `lava-run`'s
//! standard output (one JSON object per line, `{"dt": ..., "lvl": ...,
//! "msg": ...}`), a server's job log (`/api/v0.2/jobs/ID/logs/`, the same
//! objects as YAML list items, `- {...}`), and a plain serial log, whose
//! lines are all the console's. LAVA writes each entry as YAML in flow
//! style with every string double-quoted, which JSON reads unless a
//! string holds an escape only YAML has (`\e`, `\x1B`); such entries are
//! counted, not read. LAVA drops a line of a megabyte or more.

use serde::Deserialize;
use serde_json::Value;
use std::io::Read;

/// What a log says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LavaLog {
    /// The device's console, line by line.
    pub console: Vec<String>,
    /// LAVA's results, in order.
    pub results: Vec<LavaResult>,
    /// Log entries that could not be read (a YAML-only escape in a kernel
    /// message, say): how many.
    pub unreadable: usize,
}

/// One result LAVA recorded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LavaResult {
    pub definition: String,
    pub case: String,
    pub result: String,
    #[serde(default)]
    pub namespace: Option<String>,
    /// What went wrong, for a failed action or job.
    #[serde(default)]
    pub error_msg: Option<String>,
    #[serde(default)]
    pub error_type: Option<String>,
}

impl LavaResult {
    /// LAVA's own word on a failure: its error type and message.
    pub fn error(&self) -> Option<String> {
        let message = self.error_msg.as_deref()?.trim();
        Some(match &self.error_type {
            Some(kind) => format!("{kind} error: {message}"),
            None => message.to_string(),
        })
    }
}

/// Reads the log at `path` (`-`: standard input).
pub fn read_path(path: &std::path::Path) -> crate::Result<LavaLog> {
    let mut text = String::new();
    let done = match path.as_os_str() == "-" {
        true => std::io::stdin().read_to_string(&mut text),
        false => std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text)),
    };
    done.map_err(crate::LavaError::os(format!(
        "reading the LAVA log {}",
        path.display()
    )))?;
    Ok(read(&text))
}

/// Reads a log in any of its shapes.
pub fn read(text: &str) -> LavaLog {
    let mut log = LavaLog::default();
    for line in text.lines() {
        let entry = line.strip_prefix("- ").unwrap_or(line);
        if !entry.starts_with("{\"dt\"") {
            log.console.push(line.trim_end_matches('\r').to_string());
            continue;
        }
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(entry) else {
            log.unreadable += 1;
            continue;
        };
        match (object.get("lvl").and_then(Value::as_str), object.get("msg")) {
            (Some("target"), Some(Value::String(message))) => log.console.push(unescaped(message)),
            (Some("results"), Some(result)) => {
                match serde_json::from_value::<LavaResult>(result.clone()) {
                    Ok(result) => log.results.push(result),
                    Err(_) => log.unreadable += 1,
                }
            }
            _ => {}
        }
    }
    log
}

/// A console line as the device sent it, from LAVA's copy: LAVA's shell
/// logger (lava_dispatcher/shell.py, `ShellLogger.write`) puts a backslash
/// before every double quote, which is undone here (its other changes,
/// dropping carriage returns and escape characters, never touch a frame:
/// JSON escapes control characters).
fn unescaped(message: &str) -> String {
    message.replace("\\\"", "\"")
}

impl LavaLog {
    /// The job's failure, as LAVA says it (the `job` result's error).
    pub fn job_error(&self) -> Option<String> {
        self.results
            .iter()
            .rev()
            .find(|r| r.definition == "lava" && r.case == "job" && r.result == "fail")
            .map(|r| r.error().unwrap_or_else(|| "the job failed".to_string()))
    }

    /// The first action that failed in `namespace`, with LAVA's error.
    pub fn failed_action(&self, namespace: &str) -> Option<String> {
        self.results
            .iter()
            .find(|r| r.namespace.as_deref() == Some(namespace) && r.result == "fail")
            .map(|r| match r.error() {
                Some(error) => format!("{} failed: {error}", r.case),
                None => format!("{} failed", r.case),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as lava-run 2023.01 printed them here (a job whose kernel URL
    /// names no file), a server log's item, and a serial log's line.
    const LOG: &str = r#"{"dt": "2026-12-05T21:59:21.096967", "lvl": "results", "msg": {"case": "validate", "definition": "lava", "result": "fail"}}
{"dt": "2026-12-05T21:59:21.097757", "lvl": "error", "msg": "JobError: Your job cannot terminate cleanly."}
{"dt": "2026-12-05T21:59:21.097889", "lvl": "results", "msg": {"case": "job", "definition": "lava", "error_msg": "Invalid job data: [\"Image file '/tmp/lava/nope' does not exist or is not readable\"]\n", "error_type": "Job", "result": "fail"}}
- {"dt": "2026-12-05T21:54:00.851481", "lvl": "target", "msg": "kbench-results-begin"}
{"dt": "2026-12-05T22:19:09.935036", "lvl": "target", "msg": "kbench-frame 3 10 x {\\\"a\\\":\\\"\\\\\"\\\"}"}
{"dt": "2026-12-05T21:53:57.495722", "lvl": "results", "msg": {"case": "execute-qemu", "definition": "lava", "duration": "0.01", "level": "2.1.1", "namespace": "boot1", "result": "fail", "error_type": "Infrastructure", "error_msg": "qemu died"}}
[    0.000000] Linux version 6.1.0-57-cloud-amd64
{"dt": "2026-12-05T21:54:00.851481", "lvl": "target", "msg": "bad \e escape"}
"#;

    #[test]
    fn console_lines_results_and_errors() {
        let log = read(LOG);
        assert_eq!(
            log.console,
            [
                "kbench-results-begin",
                r#"kbench-frame 3 10 x {"a":"\""}"#,
                "[    0.000000] Linux version 6.1.0-57-cloud-amd64"
            ]
        );
        assert_eq!(log.results.len(), 3);
        assert_eq!(log.unreadable, 1);
        assert_eq!(
            log.job_error().unwrap(),
            "Job error: Invalid job data: [\"Image file '/tmp/lava/nope' does not exist or is not \
             readable\"]"
        );
        assert_eq!(
            log.failed_action("boot1").unwrap(),
            "execute-qemu failed: Infrastructure error: qemu died"
        );
        assert_eq!(log.failed_action("boot2"), None);
    }
}
