//! The lab's job queue as `kbench job list` prints it: an aligned table,
//! the message last, on one line.

use kbench_model::lab::Job;

pub(super) fn table(jobs: &[Job]) -> String {
    let header = [
        "ID",
        "STATE",
        "SET",
        "IDENTIFIER",
        "NAMES",
        "KERNEL",
        "ATTEMPTS",
        "WORKER",
        "MESSAGE",
    ];
    let rows: Vec<[String; 9]> = jobs
        .iter()
        .map(|job| {
            [
                job.id.to_string(),
                job.state.as_str().to_string(),
                job.spec.set.clone(),
                job.spec.identifier.clone(),
                job.spec.names.join(" "),
                job.spec.kernel.clone().unwrap_or_else(|| "-".into()),
                job.attempts.to_string(),
                job.worker.clone().unwrap_or_else(|| "-".into()),
                job.message
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .collect::<Vec<_>>()
                    .join(" | "),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        text.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::format::{Render, Style, Text};
    use kbench_model::lab::{Job, JobSpec, JobState};

    #[test]
    fn the_table_aligns_columns_and_keeps_messages_on_one_line() {
        let job = Job {
            id: 7,
            spec: JobSpec {
                set: "lab".into(),
                identifier: "6.18".into(),
                names: vec!["syscall-null".into(), "pipe-lat".into()],
                kernel: None,
                rounds: 2,
                max_time: None,
                tags: vec![],
            },
            state: JobState::Failed,
            attempts: 2,
            worker: Some("w1".into()),
            token: Some("lab".into()),
            lease_expires_at_ms: None,
            submitted_at_ms: 0,
            started_at_ms: None,
            finished_at_ms: None,
            message: Some("exit status: 1\nno such test".into()),
        };
        let text = Text.render(&vec![job], Style::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("ID  STATE   SET  IDENTIFIER"),
            "{text}"
        );
        assert!(lines[1].starts_with("7   failed  lab  6.18"), "{text}");
        assert!(
            lines[1].ends_with("w1      exit status: 1 | no such test"),
            "{text}"
        );
    }
}
