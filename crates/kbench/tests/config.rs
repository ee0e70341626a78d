//! The config file and the one server flag: flags beat the environment,
//! which beats the file, which beats the defaults; `kbench config show`
//! says where each value comes from; `--server` (and KBENCH_SERVER) names
//! the lab server for every command, the old names hidden but accepted.

mod common;

use clap::CommandFactory;
use common::{json, kbench, succeeds, temp_db};
use std::path::Path;

/// Result set `set`: two identifiers measured apart in one run each,
/// "slow" 30 % slower on `lat` (lower is better): beyond what the default
/// drift between runs explains.
fn known(dir: &Path, db: &Path, set: &str) {
    let series = |base: f64| -> String {
        let values: Vec<String> = (0..12)
            .map(|i| {
                let wobble = [0.997, 1.003, 0.999, 1.001, 0.998, 1.002][i % 6];
                format!(r#"{{"value": {}, "round": {}}}"#, base * wobble, i % 3)
            })
            .collect();
        format!("[{}]", values.join(","))
    };
    let file = dir.join(format!("{set}.json"));
    let text = format!(
        r#"{{"schema": "kbench.samples/1", "result_set": "{set}",
            "tests": [{{"test": "lat", "unit": "us", "direction": "lower"}}],
            "identifiers": [{{"name": "base", "samples": {{"lat": {}}}}},
                            {{"name": "slow", "samples": {{"lat": {}}}}}]}}"#,
        series(10.0),
        series(13.0)
    );
    std::fs::write(&file, text).unwrap();
    succeeds(db, &["import", file.to_str().unwrap()]);
}

fn config(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_config_file_gives_defaults_that_env_and_flags_override() {
    let (dir, db) = temp_db();
    known(dir.path(), &db, "known");
    std::fs::write(dir.path().join("token"), "kb_secret_value\n").unwrap();
    let file = config(
        dir.path(),
        "server = \"http://127.0.0.1:9\"\ntoken_file = \"token\"\nthreshold = 1\n\
         [thresholds]\nlat = 40\n",
    );
    let gate = |extra: &[&str]| {
        kbench(&db)
            .env("KBENCH_CONFIG", &file)
            .args([
                "compare",
                "known",
                "--fail-on-regression",
                "--format",
                "json",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // The file's 40 % band for lat: no regression.
    let out = gate(&[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out.stdout)["metrics"][0]["threshold_pct"], 40.0);
    // The flag beats the file.
    assert_eq!(gate(&["--threshold", "1"]).status.code(), Some(1));
    // The environment beats the file.
    let out = kbench(&db)
        .env("KBENCH_CONFIG", &file)
        .env("KBENCH_THRESHOLD", "2")
        .args(["compare", "known", "--fail-on-regression"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    let shown = kbench(&db)
        .env("KBENCH_CONFIG", &file)
        .env("KBENCH_SERVER", "http://10.0.0.1:8080")
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    let shown = json(&shown.stdout);
    assert_eq!(shown["file"], file.to_str().unwrap());
    let setting = |key: &str| {
        shown["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == key)
            .unwrap()
            .clone()
    };
    assert_eq!(setting("server")["value"], "http://10.0.0.1:8080");
    assert_eq!(setting("server")["source"]["env"], "KBENCH_SERVER");
    assert_eq!(setting("thresholds")["value"], "1,lat=40");
    assert_eq!(
        setting("thresholds")["source"]["file"],
        file.to_str().unwrap()
    );
    assert_eq!(setting("token_file")["value"], "(set)");
    assert_eq!(setting("max_time")["source"], "default");
    // KBENCH_DB is set by the test helper: the environment.
    assert_eq!(setting("db")["source"]["env"], "KBENCH_DB");
    let text = kbench(&db)
        .env("KBENCH_CONFIG", &file)
        .args(["config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(!text.contains("kb_secret_value"), "{text}");
    assert!(text.contains("config file"), "{text}");
}

#[test]
fn the_database_comes_from_the_file_unless_env_or_flag_say_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (in_file, in_env, in_flag) = (
        dir.path().join("file.db"),
        dir.path().join("env.db"),
        dir.path().join("flag.db"),
    );
    for (db, set) in [(&in_file, "file"), (&in_env, "env"), (&in_flag, "flag")] {
        known(dir.path(), db, set);
    }
    let file = config(
        dir.path(),
        &format!("db = {:?}\n", in_file.to_str().unwrap()),
    );
    let sets = |command: &mut assert_cmd::Command| {
        let out = command.args(["show", "--json"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out.stdout)["result_sets"][0]["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut plain = kbench(&in_env);
    plain.env_remove("KBENCH_DB").env("KBENCH_CONFIG", &file);
    let mut env = kbench(&in_env);
    env.env("KBENCH_CONFIG", &file);
    let mut flag = kbench(&in_env);
    flag.env("KBENCH_CONFIG", &file).arg("--db").arg(&in_flag);
    let shown = [sets(&mut plain), sets(&mut env), sets(&mut flag)];
    assert_eq!(shown, ["file", "env", "flag"]);
}

#[test]
fn a_bad_config_file_is_refused_naming_it() {
    let (dir, db) = temp_db();
    let file = config(dir.path(), "colour = \"red\"\n");
    let out = kbench(&db)
        .env("KBENCH_CONFIG", &file)
        .args(["list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.toml") && stderr.contains("colour"),
        "{stderr}"
    );
    let missing = kbench(&db)
        .env("KBENCH_CONFIG", dir.path().join("none.toml"))
        .args(["list"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn one_server_flag_and_its_variable_for_every_command() {
    let (dir, db) = temp_db();
    known(dir.path(), &db, "s");
    // Nothing listens on port 9: each command fails reaching the server it
    // was given, which shows where the URL came from.
    let unreachable = "http://127.0.0.1:9";
    for (args, env) in [
        (
            vec!["push", "s", "--server", unreachable, "--token", "t"],
            false,
        ),
        (
            vec!["push", "s", "--to", unreachable, "--token", "t"],
            false,
        ),
        (vec!["push", "s", "--token", "t"], true),
        (vec!["job", "list", "--server", unreachable], false),
        (vec!["job", "list"], true),
    ] {
        let mut command = kbench(&db);
        if env {
            command.env("KBENCH_SERVER", unreachable);
        }
        let out = command.args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot reach") && stderr.contains("127.0.0.1:9"),
            "{args:?}: {stderr}"
        );
    }
    // The old names work (above) but are not offered: hidden aliases.
    let mut cli = kbench_cli::Cli::command();
    cli.build();
    for (path, old) in [
        (["push"].as_slice(), "to"),
        (&["run"], "upload"),
        (&["vm", "run"], "upload"),
    ] {
        let command = path
            .iter()
            .fold(&cli, |command, name| command.find_subcommand(name).unwrap());
        let server = command
            .get_arguments()
            .find(|a| a.get_long() == Some("server"))
            .unwrap_or_else(|| panic!("{path:?} has --server"));
        assert_eq!(
            server.get_env(),
            Some(std::ffi::OsStr::new("KBENCH_SERVER"))
        );
        let aliases: Vec<&str> = server.get_all_aliases().unwrap_or_default();
        assert_eq!(aliases, [old], "{path:?}");
        let visible = server.get_visible_aliases().unwrap_or_default();
        assert!(visible.is_empty(), "{path:?}: hidden, not {visible:?}");
    }
}

/// Without a config file or a variable, `config show` prints the value
/// each key has by default (no "-"): the database file, the sampling
/// defaults `run --help` states, the threshold `compare --help` states.
#[test]
fn config_show_prints_the_built_in_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let shown = kbench("unused.db")
        .env_remove("KBENCH_DB")
        .env("XDG_DATA_HOME", dir.path())
        .args(["config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    let value = |key: &str| {
        let line = text.lines().find(|l| l.starts_with(&format!("{key} ")));
        let line = line.unwrap_or_else(|| panic!("no {key} in {text}"));
        assert!(line.ends_with(" built-in default"), "{line}");
        let value = line[key.len()..].trim_start();
        value
            .trim_end_matches("built-in default")
            .trim_end()
            .to_string()
    };
    let db = dir.path().join("kbench/results.db");
    assert_eq!(value("db"), db.display().to_string());
    assert_eq!(
        (value("server"), value("token_file")),
        ("none".into(), "none".into())
    );
    let help = |path: &[&str], long: &str| {
        let mut command = kbench_cli::Cli::command();
        for name in path {
            command = command.find_subcommand(name).unwrap().clone();
        }
        let arg = command.get_arguments().find(|a| a.get_long() == Some(long));
        let arg = arg.unwrap().clone();
        let default = arg
            .get_default_values()
            .first()
            .map(|v| v.to_string_lossy().into_owned());
        (arg.get_help().unwrap().to_string(), default)
    };
    assert_eq!(Some(value("target_ci")), help(&["run"], "target-ci").1);
    assert_eq!(Some(value("thresholds")), help(&["compare"], "threshold").1);
    // "1 (0.2 in adaptive rounds ...)" as --max-time's help says them.
    let max_time = value("max_time");
    let (fixed, short) = max_time.split_once(" (").unwrap();
    let (short, _) = short.split_once(' ').unwrap();
    let stated = help(&["run"], "max-time").0;
    let stated = stated.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        stated.contains(&format!("[default: {short} in"))
            && stated.contains(&format!(", {fixed} with --rounds")),
        "{max_time} against {stated}"
    );
    assert!(!text.contains(" - "), "no placeholder: {text}");
}
