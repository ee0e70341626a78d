use super::*;

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn value<'a>(settings: &'a Settings, key: &str) -> (&'a Option<String>, &'a Source) {
    let setting = settings.settings.iter().find(|s| s.key == key).unwrap();
    (&setting.value, &setting.source)
}

#[test]
fn the_environment_beats_the_file_which_beats_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "s3cret\n").unwrap();
    let path = write(
        dir.path(),
        "db = \"/data/kbench.db\"\nserver = \"http://lab:8080\"\ntoken_file = \"token\"\n\
         max_time = 2.5\nthreshold = 2\n[thresholds]\n\"pipe-lat\" = 3\n\"syscall-*\" = 1\n",
    );
    let env = |name: &str| (name == "KBENCH_SERVER").then(|| "http://other:9".to_string());
    let settings = settings(Some((path.clone(), false)), env).unwrap();
    assert_eq!(settings.file.as_ref(), Some(&path));
    let file = Source::File(path.clone());
    assert_eq!(
        value(&settings, "db"),
        (&Some("/data/kbench.db".into()), &file)
    );
    let server = value(&settings, "server");
    assert_eq!(
        server,
        (
            &Some("http://other:9".into()),
            &Source::Env("KBENCH_SERVER".into())
        )
    );
    assert_eq!(
        value(&settings, "token_file"),
        (&Some("s3cret".into()), &file)
    );
    assert_eq!(value(&settings, "max_time").0.as_deref(), Some("2.5"));
    assert_eq!(value(&settings, "target_ci"), (&None, &Source::Default));
    // One --threshold value, in the parser's syntax.
    let thresholds = value(&settings, "thresholds").0.clone().unwrap();
    assert_eq!(thresholds, "2,pipe-lat=3,syscall-*=1");
    let parsed = Thresholds::parse(&thresholds).unwrap();
    assert_eq!(parsed.default, 0.02);
    // The token is never shown.
    let token = settings
        .settings
        .iter()
        .find(|s| s.key == "token_file")
        .unwrap();
    assert_eq!(token.shown().value.as_deref(), Some("(set)"));
}

/// Without a file or a variable, each key shows the built-in default a
/// command uses, from the same constants.
#[test]
fn defaults_are_shown_as_the_commands_use_them() {
    let none = settings(None, |_| None).unwrap();
    let shown = |key: &str| {
        let setting = none.settings.iter().find(|s| s.key == key).unwrap();
        assert_eq!(setting.source, Source::Default, "{key}");
        setting.shown().value
    };
    let plan = kbench_measure::plan::SamplingPlan::default();
    let db = kbench_store::Location::default_file();
    assert_eq!(shown("db"), Some(db.display().to_string()));
    let target: f64 = shown("target_ci").unwrap().parse().unwrap();
    assert_eq!(target / 100.0, plan.target_ci);
    let thresholds = Thresholds::parse(&shown("thresholds").unwrap()).unwrap();
    assert_eq!(thresholds, Thresholds::default());
    let max_time = shown("max_time").unwrap();
    let first: f64 = max_time.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(first, plan.max_time.as_secs_f64(), "{max_time}");
    assert!(max_time.contains("(0.2 in adaptive rounds"), "{max_time}");
    assert_eq!((shown("server"), shown("token_file")), (None, None));
}

#[test]
fn no_file_is_no_config_unless_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.toml");
    let none = settings(Some((missing.clone(), false)), |_| None).unwrap();
    assert!(none.file.is_none());
    assert!(none.settings.iter().all(|s| s.source == Source::Default));
    let error = settings(Some((missing, true)), |_| None)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("none.toml") && error.contains("KBENCH_CONFIG"),
        "{error}"
    );
}

#[test]
fn bad_files_say_where_and_what() {
    let dir = tempfile::tempdir().unwrap();
    for (text, says) in [
        ("colour = 1\n", "unknown field `colour`"),
        ("db = 3\n", "invalid type"),
        ("max_time = -1\n", "max_time must be a positive number"),
        (
            "[thresholds]\n\"pipe-lat\" = 150\n",
            "thresholds: pipe-lat: 150 must be",
        ),
        ("token_file = \"missing\"\n", "token_file"),
        ("db = \"unclosed\n", "config.toml"),
    ] {
        let path = write(dir.path(), text);
        let error = settings(Some((path, false)), |_| None)
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{text:?}: {error}");
        assert!(error.contains("config.toml"), "names the file: {error}");
    }
}
