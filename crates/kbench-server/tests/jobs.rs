//! The job queue over HTTP, in process on SQLite and on PostgreSQL when
//! `KBENCH_TEST_POSTGRES_URL` is set: submitting, listing, leasing with
//! tags, renewing, a lease that expires and is taken by a second worker,
//! finishing, the workers seen, and what is refused.

mod common;

use common::{Lab, json, on_both};
use kbench_fleet::client::Response;
use serde_json::Value;

fn spec(set: &str, identifier: &str, tags: &[&str]) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "set": set,
        "identifier": identifier,
        "names": ["quick"],
        "kernel": "debian:6.12",
        "tags": tags,
    }))
    .unwrap()
}

fn lease(lab: &Lab, worker: &str, tags: &[&str], seconds: u64) -> Response {
    let body = serde_json::json!({"worker": worker, "tags": tags, "lease_seconds": seconds});
    lab.post("/api/v1/jobs/lease", body.to_string().as_bytes())
}

fn renew(lab: &Lab, id: i64, worker: &str) -> Response {
    let body = serde_json::json!({"worker": worker, "lease_seconds": 60});
    lab.post(
        &format!("/api/v1/jobs/{id}/renew"),
        body.to_string().as_bytes(),
    )
}

fn finish(lab: &Lab, id: i64, worker: &str, ok: bool) -> Response {
    let body = serde_json::json!({"worker": worker, "ok": ok, "message": format!("by {worker}")});
    lab.post(
        &format!("/api/v1/jobs/{id}/finish"),
        body.to_string().as_bytes(),
    )
}

/// A POST as `token`.
fn post_as(lab: &Lab, path: &str, token: &str, body: &[u8]) -> Response {
    lab.send_as("POST", path, token, body)
}

fn jobs(lab: &Lab) -> Vec<Value> {
    let list = json(&lab.get("/api/v1/jobs"));
    assert_eq!(list["schema"], "kbench.jobs/1");
    list["jobs"].as_array().unwrap().clone()
}

#[test]
fn a_job_is_leased_renewed_lost_to_a_second_worker_and_finished() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let submitted = lab.post("/api/v1/jobs", &spec("lab", "6.18", &["kvm"]));
        assert_eq!(submitted.status, 201, "{submitted:?}");
        let job = json(&submitted);
        let id = job["id"].as_i64().unwrap();
        assert_eq!(job["state"], "queued");
        assert_eq!(job["spec"]["rounds"], 3, "the default");
        assert_eq!(job["spec"]["tags"], serde_json::json!(["kvm"]));
        let other = json(&lab.post("/api/v1/jobs", &spec("lab", "6.19", &[])));
        let listed = jobs(&lab);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0]["id"], other["id"], "newest first");
        assert_eq!(json(&lab.get(&format!("/api/v1/jobs/{id}"))), job);

        // A worker without the tag takes only the untagged job.
        let untagged = lease(&lab, "w-plain", &[], 60);
        assert_eq!(json(&untagged)["id"], other["id"]);
        let workers = json(&lab.get("/api/v1/workers"));
        assert_eq!(workers["workers"][0]["name"], "w-plain");
        assert_eq!(workers["workers"][0]["job"], other["id"]);
        assert_eq!(lease(&lab, "w-3", &[], 60).status, 204, "none left for it");

        let leased = lease(&lab, "w-1", &["kvm", "tcg"], 1);
        assert_eq!(leased.status, 200, "{leased:?}");
        let leased = json(&leased);
        assert_eq!(leased["id"], id);
        assert_eq!(leased["state"], "running");
        assert_eq!(leased["worker"], "w-1");
        assert_eq!(leased["attempts"], 1);
        assert_eq!(lease(&lab, "w-2", &["kvm"], 60).status, 204, "it is held");
        let renewed = renew(&lab, id, "w-1");
        assert_eq!(renewed.status, 200, "{renewed:?}");
        assert_eq!(json(&renewed), serde_json::json!({"renewed": true}));
        let stranger = renew(&lab, id, "w-2");
        assert_eq!(stranger.status, 409, "{stranger:?}");

        // w-1 renews for 1 s only, then goes silent: its lease runs out.
        let short = serde_json::json!({"worker": "w-1", "lease_seconds": 1});
        let cut = lab.post(
            &format!("/api/v1/jobs/{id}/renew"),
            short.to_string().as_bytes(),
        );
        assert_eq!(cut.status, 200, "{cut:?}");
        std::thread::sleep(std::time::Duration::from_millis(1300));
        let taken = lease(&lab, "w-2", &["kvm"], 60);
        assert_eq!(taken.status, 200, "{taken:?}");
        let taken = json(&taken);
        assert_eq!(taken["id"], id);
        assert_eq!(taken["worker"], "w-2");
        assert_eq!(taken["attempts"], 2);

        let lost = renew(&lab, id, "w-1");
        assert_eq!(lost.status, 409, "{lost:?}");
        let message = json(&lost)["error"].as_str().unwrap().to_string();
        assert!(
            message.contains("w-2") && message.contains("lease"),
            "{message}"
        );
        assert_eq!(finish(&lab, id, "w-1", true).status, 409, "w-1 lost it");
        assert_eq!(
            json(&lab.get(&format!("/api/v1/jobs/{id}")))["state"],
            "running",
            "the refused finish changed nothing"
        );

        // Seen at a later millisecond than w-1's refused calls.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let done = finish(&lab, id, "w-2", false);
        assert_eq!(done.status, 200, "{done:?}");
        let done = json(&done);
        assert_eq!(done["state"], "failed");
        assert_eq!(done["message"], "by w-2");
        assert!(done["finished_at_ms"].as_i64().is_some());
        assert_eq!(finish(&lab, id, "w-2", true).status, 409, "finished once");
        assert_eq!(renew(&lab, id, "w-2").status, 409);

        let workers = json(&lab.get("/api/v1/workers"));
        assert_eq!(workers["schema"], "kbench.workers/1");
        let workers = workers["workers"].as_array().unwrap();
        let mut names: Vec<&str> = workers
            .iter()
            .map(|w| w["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["w-1", "w-2", "w-3", "w-plain"]);
        for worker in workers.iter().filter(|w| w["name"] != "w-plain") {
            assert_eq!(worker["job"], Value::Null, "{worker}: holds no job now");
        }
        assert_eq!(workers[0]["name"], "w-2", "seen last");
        assert_eq!(workers[0]["tags"], serde_json::json!(["kvm"]));
    });
}

#[test]
fn job_routes_refuse_bad_requests_and_write_nothing() {
    on_both(|location| {
        let lab = Lab::start(location, 4096);
        let body = spec("lab", "6.18", &[]);
        for token in ["", "kbt_wrong"] {
            for (path, body) in [
                ("/api/v1/jobs", body.as_slice()),
                (
                    "/api/v1/jobs/lease",
                    br#"{"worker": "w", "lease_seconds": 5}"#,
                ),
            ] {
                let refused = lab.send_as("POST", path, token, body);
                assert_eq!(refused.status, 401, "{path}: {refused:?}");
            }
        }
        assert!(jobs(&lab).is_empty(), "nothing written");
        let workers = json(&lab.get("/api/v1/workers"));
        assert_eq!(workers["workers"], serde_json::json!([]), "no worker seen");

        let text = String::from_utf8(body.clone()).unwrap();
        for (bad, named) in [
            (text.replace("\"names\"", "\"nmaes\""), "nmaes"),
            (text.replace("\"tags\":[]", "\"tags\":[1]"), "tags[0]"),
            (text.replace("[\"quick\"]", "[]"), "names"),
            ("{".to_string(), "EOF"),
        ] {
            let refused = lab.post("/api/v1/jobs", bad.as_bytes());
            assert_eq!(refused.status, 400, "{bad}: {refused:?}");
            assert!(
                json(&refused)["error"].as_str().unwrap().contains(named),
                "{refused:?}"
            );
        }
        let big = spec("lab", &"x".repeat(5000), &[]);
        assert_eq!(lab.post("/api/v1/jobs", &big).status, 413);
        let forever = br#"{"worker": "w", "lease_seconds": 0}"#;
        let refused = lab.post("/api/v1/jobs/lease", forever);
        assert_eq!(refused.status, 400, "{refused:?}");
        assert!(refused.body.contains("lease_seconds"), "{refused:?}");
        assert!(jobs(&lab).is_empty(), "nothing written");

        assert_eq!(lab.get("/api/v1/jobs/99").status, 404);
        let not_a_number = lab.get("/api/v1/jobs/abc");
        assert_eq!(not_a_number.status, 400, "{not_a_number:?}");
        json(&not_a_number);
        assert_eq!(renew(&lab, 99, "w").status, 404);
        assert_eq!(finish(&lab, 99, "w", true).status, 404);
    });
}

#[test]
fn job_names_holding_sql_or_html_are_stored_as_text() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let set = "<script>alert(1)</script>";
        let identifier = "'; DROP TABLE jobs; --";
        let submitted = lab.post("/api/v1/jobs", &spec(set, identifier, &[]));
        assert_eq!(submitted.status, 201, "{submitted:?}");
        let listed = jobs(&lab);
        assert_eq!(listed[0]["spec"]["set"], set);
        assert_eq!(listed[0]["spec"]["identifier"], identifier);
        let worker = "<b>w</b>'; --";
        let leased = lease(&lab, worker, &[], 60);
        assert_eq!(leased.status, 200, "{leased:?}");
        assert_eq!(json(&leased)["worker"], worker);
    });
}

/// Any token could once submit, push, lease, and finish another worker's
/// job (token B finished, as failed, a job leased by token A's worker).
/// Now each route needs its scope (403 naming it, nothing done) and a
/// lease belongs to the token that took it.
#[test]
fn tokens_act_within_their_scopes_and_on_their_own_leases() {
    use kbench_store::Scope;
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let pusher = lab.token_with("pusher", &[Scope::Push]);
        let a = lab.token_with("worker-a", &[Scope::Work]);
        let b = lab.token_with("worker-b", &[Scope::Work]);
        let lease_body =
            |worker: &str| serde_json::json!({"worker": worker, "lease_seconds": 60}).to_string();
        // A push-only token queues nothing and leases nothing.
        let submitted = post_as(&lab, "/api/v1/jobs", &pusher, &spec("s", "i", &[]));
        assert_eq!(submitted.status, 403, "{submitted:?}");
        assert!(submitted.body.contains("needs 'submit'"), "{submitted:?}");
        assert!(jobs(&lab).is_empty());
        let leased = post_as(
            &lab,
            "/api/v1/jobs/lease",
            &pusher,
            lease_body("p").as_bytes(),
        );
        assert_eq!(leased.status, 403, "{leased:?}");
        // A work-only token pushes nothing.
        let pushed = lab.push_as("lab", &a, "p1", &common::document(&["x"]));
        assert_eq!(pushed.status, 403, "{pushed:?}");
        assert_eq!(lab.samples("lab"), 0);

        let created = lab.post("/api/v1/jobs", &spec("s", "i", &[]));
        assert_eq!(created.status, 201, "{created:?}");
        let id = json(&created)["id"].as_i64().unwrap();
        let taken = post_as(&lab, "/api/v1/jobs/lease", &a, lease_body("w-a").as_bytes());
        assert_eq!(taken.status, 200, "{taken:?}");
        assert_eq!(json(&taken)["token"], "worker-a");
        // Token B cannot finish, renew or take over A's lease or its name.
        let end = serde_json::json!({"worker": "w-a", "ok": false, "message": "stolen"});
        let stolen = post_as(
            &lab,
            &format!("/api/v1/jobs/{id}/finish"),
            &b,
            end.to_string().as_bytes(),
        );
        assert_eq!(stolen.status, 403, "{stolen:?}");
        let renewed = post_as(
            &lab,
            &format!("/api/v1/jobs/{id}/renew"),
            &b,
            lease_body("w-a").as_bytes(),
        );
        assert_eq!(renewed.status, 403, "{renewed:?}");
        let named = post_as(&lab, "/api/v1/jobs/lease", &b, lease_body("w-a").as_bytes());
        assert_eq!(named.status, 403, "{named:?}");
        let job = json(&lab.get(&format!("/api/v1/jobs/{id}")));
        assert_eq!(
            (job["state"].as_str(), job["message"].as_str()),
            (Some("running"), None)
        );
        // A's own token ends it.
        let done = post_as(
            &lab,
            &format!("/api/v1/jobs/{id}/finish"),
            &a,
            serde_json::json!({"worker": "w-a", "ok": true})
                .to_string()
                .as_bytes(),
        );
        assert_eq!(done.status, 200, "{done:?}");
    });
}
