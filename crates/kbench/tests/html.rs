//! The html and svg formats as a reader sees them: a result set imported
//! from a `kbench.samples/1` file (one identifier named `<script>...`, one
//! test named `<img onerror=...>`, a regression on one metric), rendered by
//! `kbench compare --format html` and opened in headless Chromium (Debian's
//! `chromium`, installed by .ci/run). Checked: no console message, no
//! request that the page makes, one table row per metric, the regression
//! row coloured as one, the hostile names shown as text, the script's
//! filter and sort, a screenshot that is not blank. Without Chromium the
//! test is skipped with a message, except in CI (CI=true), where it fails.

mod common;

use common::{assert_success, kbench, succeeds, temp_db};
use kbench_report::testing::{Visit, scatter, visit};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const EVIL_ID: &str = "<script>alert(1)</script>";
const EVIL_TEST: &str = "<img src=x onerror=alert(2)>";
/// Light theme colours of page.css / theme.css that the screenshot must show.
const REGRESSION_ROW_BG: [u8; 3] = [0xff, 0xeb, 0xe9];
const REGRESSION_RED: [u8; 3] = [0xcf, 0x22, 0x2e];

/// Chromium's path, or `None` (with a message) when it is missing outside CI.
fn chromium() -> Option<PathBuf> {
    kbench_report::testing::chromium("headless Chromium checks of the html report")
}

/// `metrics` as (test, unit, direction, level) measured by `identifiers`
/// as (name, per-metric factor): `per_side` samples in 3 rounds with a
/// fixed +-0.5 % scatter, all measured together in one invocation (so
/// compared as independent rounds, not as runs measured apart).
fn samples_file(
    metrics: &[(String, &str, &str, f64)],
    identifiers: &[(&str, Vec<f64>)],
    per_side: usize,
) -> String {
    let mut noise = scatter();
    let ids: Vec<Value> = identifiers
        .iter()
        .map(|(name, factors)| {
            let samples: serde_json::Map<String, Value> = metrics
                .iter()
                .zip(factors)
                .map(|((test, _, _, level), factor)| {
                    let values: Vec<Value> = (0..per_side)
                        .map(|i| {
                            json!({
                                "value": level * factor * (1.0 + 0.005 * noise()),
                                "round": i % 3,
                                "at_ms": i,
                            })
                        })
                        .collect();
                    (test.clone(), Value::Array(values))
                })
                .collect();
            // One run of one invocation for all: measured together, as
            // one round of `kbench run --variant` stores them.
            let run = json!({
                "status": "complete",
                "info": {"snapshot": {"boot_id": "boot-1"}, "pid": 7},
                "samples": samples,
            });
            json!({ "name": name, "runs": [run], "samples": {} })
        })
        .collect();
    let tests: Vec<Value> = metrics
        .iter()
        .map(|(test, unit, direction, _)| json!({"test": test, "unit": unit, "direction": direction}))
        .collect();
    json!({
        "schema": "kbench.samples/1",
        "result_set": "pictures",
        "tests": tests,
        "identifiers": ids,
    })
    .to_string()
}

fn import(db: &Path, dir: &Path, file: &str) {
    let path = dir.join("samples.json");
    std::fs::write(&path, file).unwrap();
    succeeds(db, &["import", path.to_str().unwrap()]);
}

fn compare(db: &Path, args: &[&str]) {
    let out = kbench(db).arg("compare").args(args).output().unwrap();
    assert_success(&out, &format!("kbench compare {args:?} failed: "));
}

/// The `<tr ...>` start tags of the metrics table's body, in DOM order.
fn rows(dom: &str) -> Vec<&str> {
    let body = dom
        .split("<table id=\"metrics\"")
        .nth(1)
        .and_then(|t| t.split("<tbody>").nth(1))
        .and_then(|t| t.split("</tbody>").next())
        .expect("the metrics table has a body");
    body.match_indices("<tr ")
        .map(|(i, _)| &body[i..i + body[i..].find('>').unwrap() + 1])
        .collect()
}

fn assert_quiet(visit: &Visit, what: &str) {
    assert!(
        visit.console.is_empty(),
        "{what}: console messages:\n{}",
        visit.console.join("\n")
    );
    assert!(
        visit.requests.is_empty(),
        "{what}: the page made requests: {:?}",
        visit.requests
    );
}

/// Decodes an RGB(A) PNG: (width, height, RGB pixels).
fn pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// Screenshot checks: the size asked for, not one colour, and `colours`
/// each covering at least its pixel count.
fn assert_picture(path: &Path, width: u32, colours: &[([u8; 3], usize, &str)]) {
    let (w, h, px) = pixels(path);
    assert_eq!(w, width, "{}", path.display());
    assert!(h >= 600, "{}: {h} px high", path.display());
    let background = px[0];
    let ink = px.iter().filter(|p| **p != background).count();
    assert!(
        ink * 50 > px.len(),
        "{}: only {ink} of {} pixels differ from the background: blank",
        path.display(),
        px.len()
    );
    for (colour, at_least, what) in colours {
        let n = px.iter().filter(|p| *p == colour).count();
        assert!(
            n >= *at_least,
            "{}: {n} pixels of {what} {colour:02x?}, expected at least {at_least}",
            path.display()
        );
    }
}

/// A 1280-wide screenshot of `url` into `dir/file`, checked: the browser
/// quiet (`what` names it), the regression row tinted and at least `red`
/// pixels of regression red (badge, bar).
fn desktop_screenshot(
    browser: &Path,
    dir: &Path,
    url: &str,
    file: &str,
    what: &str,
    red: usize,
) -> PathBuf {
    let shot = dir.join(file);
    let desk = visit(
        browser,
        url,
        &[
            "--window-size=1280,2000",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert_quiet(&desk, what);
    assert_picture(
        &shot,
        1280,
        &[
            (REGRESSION_ROW_BG, 5_000, "regression row background"),
            (REGRESSION_RED, red, "regression red"),
        ],
    );
    shot
}

/// Copies `files` into the directory $KBENCH_KEEP_SCREENSHOTS names, if any.
fn keep_screenshots(files: &[&Path]) {
    if let Some(keep) = std::env::var_os("KBENCH_KEEP_SCREENSHOTS") {
        for file in files {
            std::fs::copy(file, Path::new(&keep).join(file.file_name().unwrap())).unwrap();
        }
    }
}

/// The harness itself must see a console message and a request: a page
/// that makes both.
fn check_the_checks(browser: &Path, dir: &Path) {
    let canary = dir.join("canary.html");
    std::fs::write(
        &canary,
        "<!DOCTYPE html><title>canary</title><img src=\"http://example.invalid/x.png\">\
         <script>console.error(\"canary\")</script>",
    )
    .unwrap();
    let url = format!("file://{}", canary.display());
    let visit = visit(browser, &url, &["--dump-dom"]);
    assert!(
        visit.console.iter().any(|l| l.contains("canary")),
        "console messages are not seen: {:?}",
        visit.console
    );
    assert!(
        visit.requests.iter().any(|u| u.contains("example.invalid")),
        "a page's requests are not seen: {:?}",
        visit.requests
    );
}

#[test]
fn the_page_opens_quietly_and_shows_what_it_should() {
    let Some(browser) = chromium() else {
        return;
    };
    let (dir, db) = temp_db();
    let dir = dir.path();
    check_the_checks(&browser, dir);

    let metrics: Vec<(String, &str, &str, f64)> = vec![
        ("syscall-null".into(), "ns", "lower", 100.0),
        ("pipe-lat[placement=cross]".into(), "us", "lower", 5.0),
        ("mem-bw[op=rd,size=64]".into(), "MB/s", "higher", 10_000.0),
        (EVIL_TEST.into(), "ms", "lower", 3.0),
        (
            "futex1[mode=thread,tasks=2]:per_task".into(),
            "ops/s",
            "higher",
            2.0e6,
        ),
        ("ctxsw[procs=8,size=16]".into(), "us", "lower", 2.5),
    ];
    // "slow" is 10 % slower on syscall-null only.
    let identifiers = [
        ("base", vec![1.0; 6]),
        ("slow", vec![1.10, 1.0, 1.0, 1.0, 1.0, 1.0]),
        (EVIL_ID, vec![1.0; 6]),
    ];
    import(&db, dir, &samples_file(&metrics, &identifiers, 30));
    let page = dir.join("page.html");
    compare(
        &db,
        &["pictures", "--format", "html", "-o", page.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for needle in ["http://", "https://", "src=\"", "@import", "url("] {
        assert!(!html.contains(needle), "the page holds {needle}");
    }
    let url = format!("file://{}", page.display());

    // As loaded: quiet, the script ran, a row per metric, one regression.
    let loaded = visit(&browser, &url, &["--dump-dom"]);
    assert_quiet(&loaded, "page");
    let dom = &loaded.stdout;
    assert!(
        dom.contains("<div class=\"controls\" id=\"controls\">"),
        "the script did not run"
    );
    assert!(dom.contains("<span id=\"f-count\" aria-live=\"polite\">6 of 6 metrics</span>"));
    let rows = rows(dom);
    assert_eq!(rows.len(), metrics.len(), "{rows:#?}");
    let regressions: Vec<&&str> = rows
        .iter()
        .filter(|r| r.contains("class=\"v-regression\""))
        .collect();
    assert_eq!(regressions.len(), 1, "{rows:#?}");
    assert!(regressions[0].contains("data-name=\"syscall-null\""));
    // Hostile names are text: escaped in the DOM, no element made of them.
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!dom.contains("<img"), "an <img> was injected");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(dom.contains("&lt;img src=x onerror=alert(2)&gt;"));

    // The filter and sort, through the address's fragment.
    let filtered = visit(&browser, &format!("{url}#v=regression"), &["--dump-dom"]);
    assert_quiet(&filtered, "filtered page");
    let rows = self::rows(&filtered.stdout);
    let shown: Vec<&&str> = rows.iter().filter(|r| !r.contains(" hidden")).collect();
    assert_eq!(shown.len(), 1, "{rows:#?}");
    assert!(shown[0].contains("data-name=\"syscall-null\""));
    assert!(filtered.stdout.contains(">1 of 6 metrics<"));
    // The charts of the metrics filtered out are hidden too.
    let sections: Vec<&str> = filtered
        .stdout
        .match_indices("<section class=\"metric\"")
        .map(|(i, _)| &filtered.stdout[i..i + filtered.stdout[i..].find('>').unwrap()])
        .collect();
    assert_eq!(sections.len(), metrics.len());
    let visible: Vec<&&str> = sections.iter().filter(|s| !s.contains("hidden")).collect();
    assert_eq!(
        visible,
        [&"<section class=\"metric\" id=\"m0\""],
        "{sections:#?}"
    );
    let sorted = visit(&browser, &format!("{url}#sort=c1-desc"), &["--dump-dom"]);
    assert_quiet(&sorted, "sorted page");
    let rows = self::rows(&sorted.stdout);
    assert!(rows[0].contains("data-name=\"syscall-null\""), "{rows:#?}");
    assert!(sorted.stdout.contains("aria-sort=\"descending\""));

    // Screenshots, desktop and phone: not blank; the regression row tinted
    // and the regression red (badge, bar) visible on the desktop one.
    let shot = desktop_screenshot(&browser, dir, &url, "page.png", "desktop screenshot", 300);
    let phone_shot = dir.join("phone.png");
    visit(
        &browser,
        &url,
        &[
            "--window-size=390,1600",
            &format!("--screenshot={}", phone_shot.display()),
        ],
    );
    assert_picture(&phone_shot, 390, &[]);
    keep_screenshots(&[&shot, &phone_shot, &page]);
}

#[test]
fn one_metric_as_svg_for_a_mail() {
    let Some(browser) = chromium() else {
        return;
    };
    let (dir, db) = temp_db();
    let dir = dir.path();
    let metrics: Vec<(String, &str, &str, f64)> = vec![
        ("pipe-lat".into(), "us", "lower", 5.0),
        ("pipe-lat[placement=cross]".into(), "us", "lower", 6.0),
    ];
    let identifiers = [("base", vec![1.0, 1.0]), (EVIL_ID, vec![1.08, 1.0])];
    import(&db, dir, &samples_file(&metrics, &identifiers, 24));

    // --metric must pick one metric; its whole name does among longer ones.
    for args in [
        vec!["pictures", "--format", "svg"],
        vec!["pictures", "--format", "svg", "--metric", "lat["],
        vec!["pictures", "--format", "svg", "--metric", "pipe"],
    ] {
        let out = kbench(&db).arg("compare").args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        if args.len() == 5 && args[4] == "lat[" {
            assert!(out.status.success(), "{args:?}: {text}");
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains("--format svg draws one metric"), "{text}");
    }
    let svg = dir.join("pipe.svg");
    compare(
        &db,
        &[
            "pictures",
            "--format",
            "svg",
            "--metric",
            "pipe-lat",
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<title>pipe-lat — kbench compare pictures</title>"));
    assert!(text.contains("REGRESSION"));
    assert!(!text.contains("<script"));

    let url = format!("file://{}", svg.display());
    let loaded = visit(&browser, &url, &["--dump-dom"]);
    assert_quiet(&loaded, "svg");
    // An XML error would replace the document with a parser error page.
    assert!(!loaded.stdout.contains("parsererror"), "{}", loaded.stdout);
    assert!(
        loaded
            .stdout
            .contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    let shot = dir.join("svg.png");
    visit(
        &browser,
        &url,
        &[
            "--window-size=520,700",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert_picture(&shot, 520, &[(REGRESSION_RED, 300, "regression red")]);
}

#[test]
fn two_hundred_metrics_of_five_identifiers_under_2_mb() {
    let (dir, db) = temp_db();
    let dir = dir.path();
    let metrics: Vec<(String, &str, &str, f64)> = (0..200)
        .map(|i| {
            let (unit, direction) = if i % 3 == 0 {
                ("MB/s", "higher")
            } else {
                ("ns", "lower")
            };
            (
                format!("bench-{}[mode=thread,size={}]", i % 37, i * 64),
                unit,
                direction,
                10.0 + f64::from(i) * 7.3,
            )
        })
        .collect();
    let names = [
        "6.18.0",
        "6.18.0+plu",
        "6.18.0+plu-v2",
        "6.19.0-rc2",
        "6.19.0-rc2+plu-v2",
    ];
    let identifiers: Vec<(&str, Vec<f64>)> = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let factors = (0..200)
                .map(|i| if k > 0 && i % 17 == k { 1.05 } else { 1.0 })
                .collect();
            (*name, factors)
        })
        .collect();
    import(&db, dir, &samples_file(&metrics, &identifiers, 60));
    let page = dir.join("big.html");
    compare(
        &db,
        &["pictures", "--format", "html", "-o", page.to_str().unwrap()],
    );
    let size = std::fs::metadata(&page).unwrap().len();
    eprintln!("200 metrics x 5 identifiers, 60 samples each: {size} bytes");
    assert!(size < 2_000_000, "{size} bytes");

    let Some(browser) = chromium() else {
        return;
    };
    let url = format!("file://{}", page.display());
    let loaded = visit(&browser, &url, &["--dump-dom"]);
    assert_quiet(&loaded, "large page");
    assert_eq!(rows(&loaded.stdout).len(), 200);
    assert_eq!(loaded.stdout.matches("<svg class=\"chart\"").count(), 400);
}

#[test]
fn the_history_page_draws_a_line_per_metric_with_its_change_points() {
    let Some(browser) = chromium() else {
        return;
    };
    let (dir, db) = temp_db();
    let dir = dir.path();
    let metrics: Vec<(String, &str, &str, f64)> = vec![
        ("syscall-null".into(), "ns", "lower", 100.0),
        ("pipe-lat[placement=cross]".into(), "us", "lower", 5.0),
        ("mem-bw[op=rd,size=64]".into(), "MB/s", "higher", 10_000.0),
        (
            "futex1[mode=thread,tasks=2]:per_task".into(),
            "ops/s",
            "higher",
            2.0e6,
        ),
    ];
    // Six versions; syscall-null is 10 % slower from the fourth on, which
    // is the one with the hostile name.
    let versions = ["6.10", "6.11", "6.12", EVIL_ID, "6.14", "6.15"];
    let identifiers: Vec<(&str, Vec<f64>)> = versions
        .iter()
        .enumerate()
        .map(|(v, name)| {
            let step = if v >= 3 { 1.10 } else { 1.0 };
            (*name, vec![step, 1.0, 1.0, 1.0])
        })
        .collect();
    import(&db, dir, &samples_file(&metrics, &identifiers, 24));
    let page = dir.join("series.html");
    let out = kbench(&db)
        .args(["history", "pictures", "--format", "html", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert_success(&out, "kbench history failed: ");
    assert!(out.stdout.is_empty(), "-o: nothing on stdout");
    let html = std::fs::read_to_string(&page).unwrap();
    for needle in ["http://", "https://", "src=\"", "@import", "url("] {
        assert!(!html.contains(needle), "the page holds {needle}");
    }
    let url = format!("file://{}", page.display());

    let loaded = visit(&browser, &url, &["--dump-dom"]);
    assert_quiet(&loaded, "history page");
    let dom = &loaded.stdout;
    assert!(
        dom.contains("<div class=\"controls\" id=\"controls\">"),
        "the script did not run"
    );
    assert!(dom.contains(">4 of 4 metrics<"), "{dom}");
    let rows = rows(dom);
    assert_eq!(rows.len(), metrics.len(), "{rows:#?}");
    let regressions: Vec<&&str> = rows
        .iter()
        .filter(|r| r.contains("class=\"v-regression\""))
        .collect();
    assert_eq!(regressions.len(), 1, "{rows:#?}");
    assert!(regressions[0].contains("data-name=\"syscall-null\""));
    assert!(regressions[0].contains("data-verdicts=\"regression\""));
    assert_eq!(
        rows.iter()
            .filter(|r| r.contains("class=\"v-same\""))
            .count(),
        3,
        "{rows:#?}"
    );
    // One line chart per metric, one change point (red), where it happened.
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), metrics.len());
    assert_eq!(dom.matches("class=\"c-cp\"").count(), 1);
    assert!(dom.contains("<g class=\"v-regression\"><title>change point between 6.12 and &lt;script&gt;alert(1)&lt;/script&gt;: +10."));
    // The hostile version name is text, in the lead, the table and the charts.
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(dom.contains(
        "in order: 6.10, 6.11, 6.12, &lt;script&gt;alert(1)&lt;/script&gt;, 6.14, 6.15;"
    ));
    assert!(dom.contains(
        "<span class=\"at v-regression\">at &lt;script&gt;alert(1)&lt;/script&gt;</span>"
    ));

    // The verdict filter of the compare page works here too.
    let filtered = visit(&browser, &format!("{url}#v=regression"), &["--dump-dom"]);
    assert_quiet(&filtered, "filtered history page");
    let rows = self::rows(&filtered.stdout);
    let shown: Vec<&&str> = rows.iter().filter(|r| !r.contains(" hidden")).collect();
    assert_eq!(shown.len(), 1, "{rows:#?}");
    assert!(shown[0].contains("data-name=\"syscall-null\""));

    let shot = desktop_screenshot(
        &browser,
        dir,
        &url,
        "history.png",
        "history screenshot",
        100,
    );
    keep_screenshots(&[&shot, &page]);
}
