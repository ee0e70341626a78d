//! The lab's pages: every job, the workers, the saved bisections. The
//! job and worker tables are also the overview's.

use super::layout::{self, Page, Place, ago, document, respond, set_path, utc, utc_or_dash};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use kbench_report::markup;
use kbench_report::markup::Markup;
use kbench_store::{Job, JobState, SavedState, WorkerInfo};
use serde_json::Value;

/// `/jobs`: every job, newest first.
pub async fn jobs(State(state): State<AppState>) -> Page {
    let jobs = state.stores.with(|store| Ok(store.jobs()?)).await?;
    let main = markup!(
        "{{counts}}{{table}}",
        counts = state_counts(&jobs),
        table = jobs_table(&jobs, layout::now_ms()),
    );
    let lead = "Runs queued for the lab's workers, newest first";
    let html = document("Jobs", lead, &main, Place::Jobs, &Markup::new());
    Ok(respond(StatusCode::OK, html))
}

/// "3 queued, 1 running, ..." as a list of the states.
pub fn state_counts(jobs: &[Job]) -> Markup {
    let states = [
        JobState::Queued,
        JobState::Running,
        JobState::Done,
        JobState::Failed,
    ];
    let items = Markup::concat(states.into_iter().map(|s| {
        markup!(
            "<li><span class=\"state {{s}}\">{{s}}</span> <b>{{n}}</b></li>",
            s = s.as_str(),
            n = jobs.iter().filter(|j| j.state == s).count(),
        )
    }));
    markup!(
        "<ul class=\"counts\" id=\"job-states\">{{items}}</ul>\n",
        items = items
    )
}

/// The jobs as a table, one row each (`id="job-N"`, for links).
pub fn jobs_table(jobs: &[Job], now_ms: i64) -> Markup {
    if jobs.is_empty() {
        return Markup::raw(
            "<p class=\"empty\">No job yet: <code>kbench job submit</code> queues one.</p>\n",
        );
    }
    let rows = Markup::concat(jobs.iter().map(|job| {
        let spec = &job.spec;
        let lease = match (job.state, job.lease_expires_at_ms) {
            (JobState::Running, Some(until)) => format!(" (lease ends {})", ago(now_ms, until)),
            _ => String::new(),
        };
        markup!(
            "<tr id=\"job-{{id}}\"><td class=\"num\">{{id}}</td><td><span class=\"state {{state}}\">{{state}}</span>{{lease}}</td>\
             <td><a href=\"{{href}}\">{{set}}</a></td><td>{{identifier}}</td><td>{{names}}</td><td>{{kernel}}</td><td>{{tags}}</td>\
             <td class=\"num\">{{attempts}}</td><td>{{worker}}</td><td class=\"when\">{{submitted}}</td><td class=\"when\">{{started}}</td>\
             <td class=\"when\">{{finished}}</td><td>{{message}}</td></tr>\n",
            id = job.id.to_string(),
            state = job.state.as_str(),
            lease = lease,
            href = set_path(&spec.set, ""),
            set = spec.set,
            identifier = spec.identifier,
            names = spec.names.join(", "),
            kernel = spec.kernel.as_deref().unwrap_or("(host)"),
            tags = spec.tags.join(", "),
            attempts = job.attempts.to_string(),
            worker = job.worker.as_deref().unwrap_or(""),
            submitted = utc(job.submitted_at_ms),
            started = utc_or_dash(job.started_at_ms),
            finished = utc_or_dash(job.finished_at_ms),
            message = job.message.as_deref().unwrap_or(""),
        )
    }));
    markup!(
        "<div class=\"table-wrap\"><table class=\"list\" id=\"jobs-table\">\n<thead><tr><th scope=\"col\">Job</th><th scope=\"col\">State</th>\
         <th scope=\"col\">Result set</th><th scope=\"col\">Identifier</th><th scope=\"col\">Runs</th><th scope=\"col\">Kernel</th>\
         <th scope=\"col\">Tags</th><th scope=\"col\" class=\"num\">Attempts</th><th scope=\"col\">Worker</th><th scope=\"col\">Submitted</th>\
         <th scope=\"col\">Started</th><th scope=\"col\">Finished</th><th scope=\"col\">Message</th></tr></thead>\n<tbody>\n{{rows}}</tbody></table></div>\n",
        rows = rows,
    )
}

/// `/workers`: every worker seen, most recently seen first.
pub async fn workers(State(state): State<AppState>) -> Page {
    let workers = state.stores.with(|store| Ok(store.workers()?)).await?;
    let lead = "The machines that asked this lab for jobs, most recently seen first";
    let table = workers_table(&workers, layout::now_ms());
    let html = document("Workers", lead, &table, Place::Workers, &Markup::new());
    Ok(respond(StatusCode::OK, html))
}

/// The workers as a table: when each was last seen and the job it holds.
pub fn workers_table(workers: &[WorkerInfo], now_ms: i64) -> Markup {
    if workers.is_empty() {
        return Markup::raw(
            "<p class=\"empty\">No worker has asked for a job yet (<code>kbench worker</code>).</p>\n",
        );
    }
    let rows = Markup::concat(workers.iter().map(|w| {
        let job = match w.job {
            Some(id) => markup!(
                "<a href=\"/jobs#job-{{id}}\">job {{id}}</a>",
                id = id.to_string()
            ),
            None => Markup::raw("<span class=\"empty\">idle</span>"),
        };
        markup!(
            "<tr><td>{{name}}</td><td>{{tags}}</td><td class=\"when\" title=\"{{at}}\">{{ago}}</td><td>{{job}}</td></tr>\n",
            name = w.name,
            tags = w.tags.join(", "),
            at = utc(w.last_seen_ms),
            ago = ago(now_ms, w.last_seen_ms),
            job = job,
        )
    }));
    markup!(
        "<div class=\"table-wrap\"><table class=\"list\" id=\"workers-table\">\n<thead><tr><th scope=\"col\">Worker</th>\
         <th scope=\"col\">Tags</th><th scope=\"col\">Last seen</th><th scope=\"col\">Current job</th></tr></thead>\n\
         <tbody>\n{{rows}}</tbody></table></div>\n",
        rows = rows,
    )
}

/// `/bisects`: the saved bisections with a summary of each state.
pub async fn bisects(State(state): State<AppState>) -> Page {
    let bisects = state.stores.with(|store| Ok(store.bisects()?)).await?;
    let main = if bisects.is_empty() {
        Markup::raw("<p class=\"empty\">No saved bisection (<code>kbench bisect</code>).</p>\n")
    } else {
        markup!(
            "<div class=\"table-wrap\"><table class=\"list\" id=\"bisects-table\">\n<thead><tr><th scope=\"col\">Bisection</th>\
             <th scope=\"col\">Updated</th><th scope=\"col\">State</th></tr></thead>\n<tbody>\n{{rows}}</tbody></table></div>\n",
            rows = Markup::concat(bisects.iter().map(bisect_row)),
        )
    };
    let lead = "Bisections kept in the store (kbench bisect), by name";
    let html = document("Bisections", lead, &main, Place::Bisects, &Markup::new());
    Ok(respond(StatusCode::OK, html))
}

fn bisect_row(bisect: &SavedState) -> Markup {
    markup!(
        "<tr><td>{{name}}</td><td class=\"when\">{{updated}}</td><td>{{summary}}</td></tr>\n",
        name = bisect.name,
        updated = utc(bisect.updated_at_ms),
        summary = bisect_summary(&bisect.state_json),
    )
}

/// A bisection's state (`kbench.bisect-state/1`, kbench-bisect's
/// `SavedState`) for people: good and bad commits, the metric, whether it
/// finished, the steps and skips, and the last step. Read field by field
/// so that the server does not depend on kbench-bisect and a state of another
/// version still shows what it can; a state that is not JSON is shown
/// (the start of it) as it is.
fn bisect_summary(state_json: &str) -> Markup {
    let Ok(state) = serde_json::from_str::<Value>(state_json) else {
        let start: String = state_json.chars().take(200).collect();
        return markup!(
            "<span class=\"empty\">not JSON:</span> <code>{{start}}</code>",
            start = start
        );
    };
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let fingerprint = &state["fingerprint"];
    let log = state["log"].as_array().map_or(&[][..], Vec::as_slice);
    let skipped = state["skipped"].as_object().map_or(0, |s| s.len());
    let last = log.last().map_or_else(Markup::new, |step| {
        markup!(
            "<br>Last step: {{phase}} at {{id}}: {{event}}{{detail}}",
            phase = text(&step["phase"]),
            id = text(&step["identifier"]),
            event = text(&step["event"]),
            detail = step["detail"]
                .as_str()
                .filter(|d| !d.is_empty())
                .map_or_else(String::new, |d| format!(" ({d})")),
        )
    });
    markup!(
        "<span class=\"state {{class}}\">{{status}}</span> good <code>{{good}}</code>, bad <code>{{bad}}</code>, \
         metric <code>{{metric}}</code> ({{better}} is better); {{steps}} step{{s}}, {{skipped}} skipped{{last}}",
        class = if state["finished"] == Value::Bool(true) {
            "done"
        } else {
            "running"
        },
        status = if state["finished"] == Value::Bool(true) {
            "finished"
        } else {
            "in progress"
        },
        good = text(&fingerprint["good"]),
        bad = text(&fingerprint["bad"]),
        metric = text(&fingerprint["metric"]),
        better = text(&fingerprint["better"]),
        steps = log.len(),
        s = if log.len() == 1 { "" } else { "s" },
        skipped = skipped,
        last = last,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bisection_state_reads_as_a_sentence() {
        let state = serde_json::json!({
            "schema": "kbench.bisect-state/1",
            "fingerprint": {"repo": "/src/linux", "good": "v6.17", "bad": "<b>v6.18</b>",
                "build": "make", "measure": "pipe-lat", "metric": "pipe-lat:value", "better": "lower"},
            "worktree": null,
            "skipped": {"abc123": "does not build"},
            "confirm_from": {},
            "log": [
                {"step": 1, "phase": "endpoints", "commit": "1", "identifier": "v6.17", "measurements": 3,
                 "measured_now": 3, "event": "like-good", "detail": ""},
                {"step": 2, "phase": "search", "commit": "2", "identifier": "g-4f2a", "measurements": 5,
                 "measured_now": 5, "event": "like-bad", "detail": "p = 0.001"}
            ],
            "finished": false
        });
        let summary = bisect_summary(&state.to_string());
        assert_eq!(
            summary.as_str(),
            "<span class=\"state running\">in progress</span> good <code>v6.17</code>, bad <code>&lt;b&gt;v6.18&lt;/b&gt;</code>, \
             metric <code>pipe-lat:value</code> (lower is better); 2 steps, 1 skipped\
             <br>Last step: search at g-4f2a: like-bad (p = 0.001)"
        );
        assert_eq!(
            bisect_summary("<script>").as_str(),
            "<span class=\"empty\">not JSON:</span> <code>&lt;script&gt;</code>"
        );
    }
}
