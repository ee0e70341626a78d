//! The profile file: TOML, one profile per file. Keys are checked strictly
//! (an unknown key is an error) and every error names the file, the line and
//! the key. docs/profiles.md describes each key; in short:
//!
//! ```toml
//! name = "redis"
//! summary = "..."
//! tool = "Redis"                # report titles: "Redis 7.0.15 - <description>"
//! version = { command = "redis-server --version", regex = 'v=([0-9.]+)' }
//! requires = { redis-server = "redis-server", redis-benchmark = "redis-tools" }
//! packages = []                  # more Debian packages (headers, no program)
//! path = []                      # extra program directories, `*` allowed last
//! [files]                        # written into {dir} first (templates)
//! [service]                      # command, setup, ready, run_as, port, ready_timeout, stop_signal
//! # test defaults, each [[tests]] may override: description, command, setup,
//! # before_run, cleanup, reject, timeout, expected_time, warmup,
//! # min_samples, max_time,
//! # vars, [options.NAME], [[metrics]]
//! [[tests]]
//! id = "redis"
//! ```

use super::spec::{
    ALL_CPUS, MetricSpec, OptionSpec, Origin, Profile, ProfileTest, ServiceSpec, SourceKind,
    SourceSpec, StopSignal, VersionSpec,
};
use super::template::{self, Quote};
use crate::error::FormatError;
use kbench_model::{Direction, TestKey, TestSpec};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

/// Placeholders every template may use.
pub const BUILTIN_PLACEHOLDERS: &[&str] = &["dir", "cpus", "user"];
/// The placeholder of a profile with a service: the port it listens on.
pub const PORT: &str = "port";
/// The most warm-up runs a test may ask for: more is a mistake (a warm-up
/// that long belongs in `setup`).
pub const MAX_WARMUP: usize = 100;

/// Reads one profile from `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str, origin: Origin) -> Result<Profile, FormatError> {
    let ctx = Ctx { text, file };
    let raw: ProfileFile = toml::from_str(text).map_err(|e| FormatError {
        file: file.to_string(),
        line: e.span().map(|span| line_of(text, span.start)),
        message: e.message().trim().to_string(),
    })?;
    build(raw, &ctx, origin)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Spanned<String>,
    #[serde(default)]
    summary: String,
    tool: Option<Spanned<String>>,
    version: Option<Spanned<VersionFile>>,
    #[serde(default)]
    requires: BTreeMap<String, String>,
    #[serde(default)]
    packages: Vec<String>,
    #[serde(default)]
    path: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, Spanned<String>>,
    service: Option<ServiceFile>,
    guest: Option<Spanned<super::guest::GuestFile>>,
    description: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    setup: Option<Spanned<String>>,
    before_run: Option<Spanned<String>>,
    cleanup: Option<Spanned<String>>,
    reject: Option<Spanned<String>>,
    timeout: Option<Spanned<f64>>,
    expected_time: Option<Spanned<f64>>,
    /// Any TOML value, checked by [`build_test`] so that a bad one is named.
    warmup: Option<Spanned<toml::Value>>,
    min_samples: Option<Spanned<usize>>,
    max_time: Option<Spanned<f64>>,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<OptionFile>>,
    #[serde(default)]
    metrics: Vec<Spanned<MetricFile>>,
    #[serde(default)]
    tests: Vec<Spanned<TestFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionFile {
    command: Spanned<String>,
    regex: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceFile {
    command: Spanned<String>,
    setup: Option<Spanned<String>>,
    ready: Option<Spanned<String>>,
    run_as: Option<String>,
    port: Option<u16>,
    ready_timeout: Option<Spanned<f64>>,
    #[serde(default)]
    stop_signal: StopSignalFile,
}

#[derive(Debug, Default, Deserialize)]
enum StopSignalFile {
    #[default]
    #[serde(rename = "TERM")]
    Term,
    #[serde(rename = "INT")]
    Int,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    id: Spanned<String>,
    description: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    setup: Option<Spanned<String>>,
    before_run: Option<Spanned<String>>,
    cleanup: Option<Spanned<String>>,
    reject: Option<Spanned<String>>,
    timeout: Option<Spanned<f64>>,
    expected_time: Option<Spanned<f64>>,
    /// Any TOML value, checked by [`build_test`] so that a bad one is named.
    warmup: Option<Spanned<toml::Value>>,
    min_samples: Option<Spanned<usize>>,
    max_time: Option<Spanned<f64>>,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<OptionFile>>,
    #[serde(default)]
    metrics: Vec<Spanned<MetricFile>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionFile {
    #[serde(default)]
    values: Vec<String>,
    pattern: Option<String>,
    range: Option<Vec<f64>>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    args: BTreeMap<String, String>,
    #[serde(default)]
    help: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricFile {
    name: Spanned<String>,
    unit: String,
    direction: Direction,
    regex: Option<Spanned<String>>,
    json: Option<Spanned<String>>,
    line: Option<Spanned<String>>,
    #[serde(default)]
    elapsed: bool,
    scale: Option<f64>,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    fallback: Vec<SourceFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFile {
    regex: Option<Spanned<String>>,
    json: Option<Spanned<String>>,
    line: Option<Spanned<String>>,
    #[serde(default)]
    elapsed: bool,
    scale: Option<f64>,
}

/// Where errors point.
struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn error(&self, span: Option<Range<usize>>, message: String) -> FormatError {
        FormatError {
            file: self.file.to_string(),
            line: span.map(|s| line_of(self.text, s.start)),
            message,
        }
    }

    fn at<T>(&self, spanned: &Spanned<T>, message: String) -> FormatError {
        self.error(Some(spanned.span()), message)
    }
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn build(raw: ProfileFile, ctx: &Ctx, origin: Origin) -> Result<Profile, FormatError> {
    check_id(ctx, &raw.name, "name")?;
    for name in raw.vars.keys() {
        check_placeholder_name(ctx, None, "vars", name)?;
    }
    let service = raw
        .service
        .as_ref()
        .map(|s| build_service(ctx, s))
        .transpose()?;
    let mut builtins: Vec<&str> = BUILTIN_PLACEHOLDERS.to_vec();
    if service.is_some() {
        builtins.push(PORT);
    }
    // Profile-level templates may use the built-ins, the profile's vars and
    // the options every test has (the profile's own).
    let shared = |name: &str| {
        builtins.contains(&name) || raw.vars.contains_key(name) || raw.options.contains_key(name)
    };
    for (path, content) in &raw.files {
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|p| p == "..") {
            return Err(ctx.at(
                content,
                format!("files: '{path}' must be a relative path inside the scratch directory"),
            ));
        }
        check_template(ctx, content, &shared, &format!("files.\"{path}\""))?;
    }
    if let Some(file) = &raw.service {
        check_template(ctx, &file.command, &shared, "service.command")?;
        for (what, text) in [
            ("service.setup", &file.setup),
            ("service.ready", &file.ready),
        ] {
            if let Some(text) = text {
                check_template(ctx, text, &shared, what)?;
            }
        }
    }
    if raw.tests.is_empty() {
        return Err(ctx.at(&raw.name, "the profile has no [[tests]]".to_string()));
    }
    let mut tests: Vec<ProfileTest> = Vec::new();
    for test in &raw.tests {
        let built = build_test(ctx, &raw, test.get_ref(), &builtins)?;
        if tests.iter().any(|t| t.id == built.id) {
            return Err(ctx.at(
                &test.get_ref().id,
                format!("tests: id '{}' is given twice", built.id),
            ));
        }
        tests.push(built);
    }
    for program in raw.requires.keys() {
        if program.is_empty() || program.contains(char::is_whitespace) {
            return Err(ctx.error(None, format!("requires: '{program}' is not a program name")));
        }
    }
    let tool = match &raw.tool {
        Some(tool) if tool.get_ref().trim().is_empty() => {
            return Err(ctx.at(tool, "tool: the tool's name is empty".to_string()));
        }
        Some(tool) => tool.get_ref().trim().to_string(),
        None => raw.name.get_ref().clone(),
    };
    Ok(Profile {
        name: raw.name.get_ref().clone(),
        summary: raw.summary.clone(),
        tool,
        version: raw
            .version
            .as_ref()
            .map(|v| build_version(ctx, v.get_ref()))
            .transpose()?,
        origin,
        requires: raw.requires.clone(),
        extra_packages: raw.packages.clone(),
        path: raw.path.clone(),
        files: raw
            .files
            .iter()
            .map(|(k, v)| (k.clone(), v.get_ref().clone()))
            .collect(),
        service,
        guest: match &raw.guest {
            Some(file) => super::guest::needs(file.get_ref()).map_err(|e| ctx.at(file, e))?,
            None => Default::default(),
        },
        tests,
    })
}

/// The version command takes no placeholders (it runs before anything is
/// set up); its regex needs a group around the version.
fn build_version(ctx: &Ctx, file: &VersionFile) -> Result<VersionSpec, FormatError> {
    let command = &file.command;
    if let Some(name) = template::placeholders(command.get_ref()).first() {
        return Err(ctx.at(
            command,
            format!(
                "version.command: {{{name}}}: the version command takes no placeholders (it runs \
                 before the test is set up); write {{{{ for a literal brace"
            ),
        ));
    }
    if command.get_ref().trim().is_empty() {
        return Err(ctx.at(command, "version.command is empty".to_string()));
    }
    check_regex(ctx, &file.regex, &|_| false, "version.regex", true)?;
    Ok(VersionSpec {
        command: file.command.get_ref().clone(),
        regex: file.regex.get_ref().clone(),
    })
}

fn build_service(ctx: &Ctx, file: &ServiceFile) -> Result<ServiceSpec, FormatError> {
    let ready_timeout = match &file.ready_timeout {
        Some(t) => seconds(ctx, t, "service.ready_timeout")?,
        None => Duration::from_secs(15),
    };
    if file.port == Some(0) {
        return Err(ctx.at(
            &file.command,
            "service.port 0 is not a port; leave `port` out to get a free one".to_string(),
        ));
    }
    Ok(ServiceSpec {
        command: file.command.get_ref().clone(),
        setup: file.setup.as_ref().map(|s| s.get_ref().clone()),
        ready: file.ready.as_ref().map(|s| s.get_ref().clone()),
        run_as: file.run_as.clone(),
        port: file.port,
        ready_timeout,
        stop_signal: match file.stop_signal {
            StopSignalFile::Term => StopSignal::Term,
            StopSignalFile::Int => StopSignal::Int,
        },
    })
}

fn build_test(
    ctx: &Ctx,
    profile: &ProfileFile,
    test: &TestFile,
    builtins: &[&str],
) -> Result<ProfileTest, FormatError> {
    check_id(ctx, &test.id, "id")?;
    let id = test.id.get_ref().clone();
    let what = |key: &str| format!("tests '{id}': {key}");
    // Options: the profile's, then the test's (which win).
    let mut options: BTreeMap<String, OptionSpec> = BTreeMap::new();
    for (name, option) in profile.options.iter().chain(test.options.iter()) {
        check_placeholder_name(ctx, Some(option.span()), "options", name)?;
        if builtins.contains(&name.as_str()) {
            return Err(ctx.at(
                option,
                format!("options: '{name}' is a built-in placeholder; pick another name"),
            ));
        }
        options.insert(name.clone(), build_option(ctx, name, option)?);
    }
    let mut vars = profile.vars.clone();
    vars.extend(test.vars.clone());
    for name in test.vars.keys() {
        check_placeholder_name(ctx, Some(test.id.span()), "vars", name)?;
    }
    if let Some(name) = vars.keys().find(|v| options.contains_key(*v)) {
        return Err(ctx.at(
            &test.id,
            format!("{}: '{name}' is both a var and an option", what("vars")),
        ));
    }
    let known = |name: &str| {
        builtins.contains(&name) || options.contains_key(name) || vars.contains_key(name)
    };
    let pick = |own: &Option<Spanned<String>>, shared: &Option<Spanned<String>>| {
        own.clone().or_else(|| shared.clone())
    };
    let command = pick(&test.command, &profile.command).ok_or_else(|| {
        ctx.at(
            &test.id,
            format!("{}: no command (here or at the top)", what("command")),
        )
    })?;
    check_template(ctx, &command, &known, &what("command"))?;
    let setup = pick(&test.setup, &profile.setup);
    let before_run = pick(&test.before_run, &profile.before_run);
    let cleanup = pick(&test.cleanup, &profile.cleanup);
    for (key, text) in [
        ("setup", &setup),
        ("before_run", &before_run),
        ("cleanup", &cleanup),
    ] {
        if let Some(text) = text {
            check_template(ctx, text, &known, &what(key))?;
        }
    }
    let description = pick(&test.description, &profile.description);
    if let Some(text) = &description {
        check_template(ctx, text, &known, &what("description"))?;
    }
    let reject = pick(&test.reject, &profile.reject);
    if let Some(text) = &reject {
        check_regex(ctx, text, &known, &what("reject"), false)?;
    }
    let timeout = match test.timeout.as_ref().or(profile.timeout.as_ref()) {
        Some(t) => Some(seconds(ctx, t, &what("timeout"))?),
        None => None,
    };
    let expected_time = match test
        .expected_time
        .as_ref()
        .or(profile.expected_time.as_ref())
    {
        Some(t) => seconds(ctx, t, &what("expected_time"))?,
        None => Duration::from_secs(1),
    };
    let max_time = match test.max_time.as_ref().or(profile.max_time.as_ref()) {
        Some(t) => Some(seconds(ctx, t, &what("max_time"))?),
        None => None,
    };
    let min_samples = test.min_samples.as_ref().or(profile.min_samples.as_ref());
    if let Some(m) = min_samples
        && *m.get_ref() == 0
    {
        return Err(ctx.at(m, format!("{}: must be at least 1", what("min_samples"))));
    }
    let warmup = match test.warmup.as_ref().or(profile.warmup.as_ref()) {
        None => 0,
        Some(w) => match w.get_ref().as_integer() {
            Some(n) if (0..=MAX_WARMUP as i64).contains(&n) => n as usize,
            _ => {
                let given = match w.get_ref() {
                    toml::Value::String(text) => format!("{text:?}"),
                    toml::Value::Integer(n) => n.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    other => format!("a {}", other.type_str()),
                };
                return Err(ctx.at(
                    w,
                    format!(
                        "{}: {given} is not a number of warm-up runs from 0 to {MAX_WARMUP} (runs \
                         before the timed ones, not recorded)",
                        what("warmup")
                    ),
                ));
            }
        },
    };
    let metric_files = if test.metrics.is_empty() {
        &profile.metrics
    } else {
        &test.metrics
    };
    if metric_files.is_empty() {
        return Err(ctx.at(
            &test.id,
            format!("{}: no [[metrics]] (here or at the top)", what("metrics")),
        ));
    }
    let mut metrics: Vec<MetricSpec> = Vec::new();
    for metric in metric_files {
        let built = build_metric(ctx, metric, &known, &id)?;
        if metrics.iter().any(|m| m.name == built.name) {
            return Err(ctx.at(
                &metric.get_ref().name,
                format!(
                    "{}: metric '{}' is given twice",
                    what("metrics"),
                    built.name
                ),
            ));
        }
        metrics.push(built);
    }
    if metrics[0].optional {
        return Err(ctx.at(
            &metric_files[0].get_ref().name,
            format!(
                "{}: the first metric is the main one and cannot be optional",
                what("metrics")
            ),
        ));
    }
    Ok(ProfileTest {
        description: description
            .map(|d| d.into_inner())
            .unwrap_or_else(|| id.clone()),
        id,
        vars,
        command: command.into_inner(),
        setup: setup.map(Spanned::into_inner),
        before_run: before_run.map(Spanned::into_inner),
        cleanup: cleanup.map(Spanned::into_inner),
        reject: reject.map(Spanned::into_inner),
        // Default: ten expected runs, at least a minute.
        timeout: timeout.unwrap_or_else(|| (expected_time * 10).max(Duration::from_secs(60))),
        expected_time,
        warmup,
        min_samples: min_samples.map(|m| *m.get_ref()),
        max_time,
        options,
        metrics,
    })
}

fn build_option(
    ctx: &Ctx,
    name: &str,
    option: &Spanned<OptionFile>,
) -> Result<OptionSpec, FormatError> {
    let file = option.get_ref();
    if let Some(pattern) = &file.pattern {
        regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
            ctx.at(
                option,
                format!("options.{name}: pattern does not compile: {e}"),
            )
        })?;
    }
    let range = match file.range.as_deref() {
        None => None,
        Some(&[low, high]) if low.is_finite() && high.is_finite() && low <= high => {
            Some((low, high))
        }
        Some(other) => {
            return Err(ctx.at(
                option,
                format!("options.{name}.range: {other:?} is not [lowest, highest]"),
            ));
        }
    };
    if file.values.is_empty() && file.pattern.is_none() && file.range.is_none() {
        return Err(ctx.at(
            option,
            format!(
                "options.{name}: give `values` (tested by default), or a `pattern` or `range` \
                 (values the user may set)"
            ),
        ));
    }
    for value in &file.values {
        if !valid_value(value) {
            return Err(ctx.at(
                option,
                format!("options.{name}: value '{value}' may not be empty or hold , = [ ] :"),
            ));
        }
    }
    let open = file.pattern.is_some() || file.range.is_some();
    for (key, map) in [("labels", &file.labels), ("args", &file.args)] {
        if !open && let Some(value) = map.keys().find(|v| !file.values.contains(v)) {
            return Err(ctx.at(
                option,
                format!("options.{name}.{key}: '{value}' is not one of the values"),
            ));
        }
    }
    let spec = OptionSpec {
        values: file.values.clone(),
        pattern: file.pattern.clone(),
        range,
        labels: file.labels.clone(),
        args: file.args.clone(),
        help: file.help.clone(),
    };
    // Defaults obey the range too (`cpus` stands for a count).
    if let Some(value) = spec
        .values
        .iter()
        .find(|v| *v != ALL_CPUS && spec.out_of_range(v).is_some())
    {
        return Err(ctx.at(
            option,
            format!(
                "options.{name}: value '{value}' is outside its range ({})",
                spec.allowed()
            ),
        ));
    }
    Ok(spec)
}

/// A metric's name: a lowercase letter or '_', then lowercase letters,
/// digits or '_'.
pub fn is_metric_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// What a test key's option value may hold.
pub fn valid_value(value: &str) -> bool {
    !value.trim().is_empty() && !value.contains([',', '=', '[', ']', ':'])
}

fn build_metric(
    ctx: &Ctx,
    metric: &Spanned<MetricFile>,
    known: &dyn Fn(&str) -> bool,
    test: &str,
) -> Result<MetricSpec, FormatError> {
    let file = metric.get_ref();
    let name = &file.name;
    let what = format!("tests '{test}': metric '{}'", name.get_ref());
    check_placeholder_name(ctx, Some(name.span()), "metrics", name.get_ref())?;
    if file.unit.trim().is_empty() {
        return Err(ctx.at(name, format!("{what}: unit is empty")));
    }
    let spec = TestSpec {
        key: TestKey::new(test).with_metric(name.get_ref()),
        unit: file.unit.clone(),
        direction: file.direction,
    };
    kbench_model::check_test_spec(&spec).map_err(|e| ctx.at(name, format!("{what}: {e}")))?;
    let main = SourceFile {
        regex: file.regex.clone(),
        json: file.json.clone(),
        line: file.line.clone(),
        elapsed: file.elapsed,
        scale: file.scale,
    };
    let mut sources = Vec::new();
    for source in std::iter::once(&main).chain(&file.fallback) {
        sources.push(build_source(ctx, name, source, known, &what)?);
    }
    Ok(MetricSpec {
        name: name.get_ref().clone(),
        unit: file.unit.clone(),
        direction: file.direction,
        sources,
        optional: file.optional,
    })
}

fn build_source(
    ctx: &Ctx,
    metric: &Spanned<String>,
    source: &SourceFile,
    known: &dyn Fn(&str) -> bool,
    what: &str,
) -> Result<SourceSpec, FormatError> {
    let scale = source.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ctx.at(metric, format!("{what}: scale must be a positive number")));
    }
    let kind = match (&source.regex, &source.json, &source.line, source.elapsed) {
        (Some(regex), None, None, false) => {
            check_regex(ctx, regex, known, what, true)?;
            SourceKind::Regex(regex.get_ref().clone())
        }
        (None, Some(path), None, false) => SourceKind::Json(template_unless(
            ctx,
            path,
            path.get_ref().split('.').any(str::is_empty),
            "json path",
            "has an empty step (write a.b.0.c)",
            known,
            what,
        )?),
        (None, None, Some(name), false) => SourceKind::Line(template_unless(
            ctx,
            name,
            name.get_ref().trim().is_empty() || name.get_ref().contains([':', '\n']),
            "line",
            "must name a `NAME: VALUE` line (not empty, no ':')",
            known,
            what,
        )?),
        (None, None, None, true) => SourceKind::Elapsed,
        _ => {
            return Err(ctx.at(
                metric,
                format!("{what}: give exactly one of regex, json, line or elapsed = true"),
            ));
        }
    };
    Ok(SourceSpec { kind, scale })
}

/// `text`, a template of `known` placeholders, unless `wrong`: then the
/// error "WHAT: KEY 'TEXT' PROBLEM".
fn template_unless(
    ctx: &Ctx,
    text: &Spanned<String>,
    wrong: bool,
    key: &str,
    problem: &str,
    known: &dyn Fn(&str) -> bool,
    what: &str,
) -> Result<String, FormatError> {
    if wrong {
        return Err(ctx.at(
            text,
            format!("{what}: {key} '{}' {problem}", text.get_ref()),
        ));
    }
    check_template(ctx, text, known, what)?;
    Ok(text.get_ref().clone())
}

fn check_regex(
    ctx: &Ctx,
    text: &Spanned<String>,
    known: &dyn Fn(&str) -> bool,
    what: &str,
    needs_group: bool,
) -> Result<(), FormatError> {
    check_template(ctx, text, known, what)?;
    let sample = template::render(text.get_ref(), Quote::Regex, &|_| Some("x".to_string()))
        .map_err(|e| ctx.at(text, format!("{what}: {e}")))?;
    let compiled = regex::Regex::new(&format!("(?m){sample}"))
        .map_err(|e| ctx.at(text, format!("{what}: regex does not compile: {e}")))?;
    if needs_group && compiled.captures_len() < 2 {
        return Err(ctx.at(
            text,
            format!("{what}: the regex needs a capture group around the number, e.g. ([0-9.]+)"),
        ));
    }
    Ok(())
}

fn check_template(
    ctx: &Ctx,
    text: &Spanned<String>,
    known: &dyn Fn(&str) -> bool,
    what: &str,
) -> Result<(), FormatError> {
    if let Some(name) = template::placeholders(text.get_ref())
        .into_iter()
        .find(|name| !known(name))
    {
        return Err(ctx.at(
            text,
            format!(
                "{what}: unknown placeholder {{{name}}} (known: the built-ins {{dir}} {{cpus}} \
                 {{user}}, {{port}} with a [service], and the test's options and vars; \
                 write {{{{ for a literal brace)"
            ),
        ));
    }
    Ok(())
}

fn check_id(ctx: &Ctx, id: &Spanned<String>, key: &str) -> Result<(), FormatError> {
    let text = id.get_ref();
    let ok = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ctx.at(
            id,
            format!("{key} '{text}' must be lowercase letters, digits, '-', '_' or '.'"),
        ))
    }
}

fn check_placeholder_name(
    ctx: &Ctx,
    span: Option<Range<usize>>,
    key: &str,
    name: &str,
) -> Result<(), FormatError> {
    if is_metric_name(name) {
        Ok(())
    } else {
        Err(ctx.error(
            span,
            format!("{key}: '{name}' must be lowercase letters, digits or '_'"),
        ))
    }
}

fn seconds(ctx: &Ctx, value: &Spanned<f64>, what: &str) -> Result<Duration, FormatError> {
    let v = *value.get_ref();
    if v.is_finite() && v > 0.0 && v <= 7.0 * 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(ctx.at(
            value,
            format!("{what}: {v} is not a number of seconds above 0 (at most a week)"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "toy"
summary = "a toy"
requires = { sh = "dash" }
command = "echo {word} {n}"
expected_time = 0.5
[options.word]
values = ["a", "b"]
labels = { a = "Alpha" }
[options.n]
values = ["1"]
pattern = "[0-9]+"
[[metrics]]
name = "speed"
unit = "ops/s"
direction = "higher"
regex = '^{word} ([0-9]+)$'
[[metrics]]
name = "time"
unit = "s"
direction = "lower"
elapsed = true
[[tests]]
id = "toy-one"
description = "Word: {word}"
[[tests]]
id = "toy-two"
timeout = 5
"#;

    fn parse_text(text: &str) -> Result<Profile, FormatError> {
        parse(text, "toy.toml", Origin::Builtin)
    }

    #[test]
    fn reads_a_profile_with_defaults() {
        let profile = parse_text(GOOD).unwrap();
        assert_eq!(profile.name, "toy");
        assert_eq!(profile.tests.len(), 2);
        let one = &profile.tests[0];
        assert_eq!(one.options.len(), 2);
        assert_eq!(one.metrics[0].name, "speed");
        assert_eq!(one.timeout, Duration::from_secs(60));
        assert_eq!(profile.tests[1].timeout, Duration::from_secs(5));
        assert_eq!(profile.tests[1].description, "toy-two");
        assert_eq!(profile.packages(), ["dash"]);
        assert_eq!(
            profile.tool, "toy",
            "the tool defaults to the profile's name"
        );
        assert_eq!(profile.version, None);
    }

    #[test]
    fn a_metric_read_from_a_name_value_line() {
        let line =
            |name: &str| GOOD.replace("regex = '^{word} ([0-9]+)$'", &format!("line = \"{name}\""));
        let profile = parse_text(&line("{word}_ops")).unwrap();
        assert_eq!(
            profile.tests[0].metrics[0].sources[0].kind,
            SourceKind::Line("{word}_ops".into())
        );
        assert_error(&line("a: b"), 17, &["line 'a: b'", "NAME: VALUE"]);
        assert_error(&line("{nothing}"), 17, &["nothing"]);
    }

    #[test]
    fn reads_the_tool_and_its_version_command() {
        let text = GOOD.replace(
            "summary = \"a toy\"",
            "summary = \"a toy\"\ntool = \"Toy Box\"\n\
             version = { command = \"toy --version\", regex = 'toy v([0-9.]+)' }",
        );
        let profile = parse_text(&text).unwrap();
        assert_eq!(profile.tool, "Toy Box");
        assert_eq!(
            profile.version,
            Some(VersionSpec {
                command: "toy --version".into(),
                regex: "toy v([0-9.]+)".into(),
            })
        );
    }

    #[test]
    fn ranges_are_read_and_bad_ones_name_the_line_and_key() {
        let with = |range: &str| {
            GOOD.replace(
                "pattern = \"[0-9]+\"",
                &format!("pattern = \"[0-9]+\"\n{range}"),
            )
        };
        let profile = parse_text(&with("range = [1, 64]")).unwrap();
        assert_eq!(profile.tests[0].options["n"].range, Some((1.0, 64.0)));
        assert_error(
            &with("range = [64, 1]"),
            10,
            &["options.n.range", "[64.0, 1.0]"],
        );
        assert_error(&with("range = [1]"), 10, &["options.n.range", "[1.0]"]);
        assert_error(
            &with("range = \"1-64\""),
            13,
            &["\"1-64\"", "expected a sequence"],
        );
        assert_error(
            &with("range = [2, 64]"),
            10,
            &["options.n", "'1'", "outside its range", "from 2 to 64"],
        );
    }

    #[test]
    fn bad_tool_and_version_keys_name_the_line_and_key() {
        let with = |tool: &str| GOOD.replace("summary = \"a toy\"", tool);
        assert_error(&with("tool = \" \""), 3, &["tool", "empty"]);
        assert_error(
            &with("version = { command = \"toy -V\", regex = 'toy v[0-9.]+' }"),
            3,
            &["version.regex", "capture group"],
        );
        assert_error(
            &with("version = { command = \"toy -V\", regex = 'v([0-9.]+' }"),
            3,
            &["version.regex", "does not compile"],
        );
        assert_error(
            &with("version = { command = \"toy -V {dir}\", regex = 'v([0-9.]+)' }"),
            3,
            &["version.command", "{dir}", "no placeholders"],
        );
        assert_error(&with("version = { command = \"toy -V\" }"), 3, &["regex"]);
        assert_error(
            &with("version = { command = \"toy -V\", regex = 'v([0-9.]+)', colour = 1 }"),
            3,
            &["colour"],
        );
    }

    /// (text change, expected line, words the message must hold)
    fn assert_error(text: &str, line: usize, words: &[&str]) {
        let error = parse_text(text).unwrap_err();
        let message = error.to_string();
        assert_eq!(error.line, Some(line), "{message}");
        assert!(message.contains("toy.toml"), "{message}");
        for word in words {
            assert!(message.contains(word), "'{word}' missing from: {message}");
        }
    }

    #[test]
    fn syntax_errors_and_unknown_keys_name_file_line_and_key() {
        assert_error(
            &GOOD.replace("summary = \"a toy\"", "summary = \"a toy"),
            3,
            &[],
        );
        assert_error(
            &GOOD.replace("timeout = 5", "timeout = 5\ncolour = \"red\""),
            29,
            &["colour"],
        );
        assert_error(
            &GOOD.replace("unit = \"s\"", "unit = \"s\"\nscael = 2"),
            21,
            &["scael"],
        );
        assert_error(
            &GOOD.replace("direction = \"lower\"", "direction = \"down\""),
            21,
            &["down"],
        );
    }

    #[test]
    fn semantic_errors_name_the_line_and_key() {
        assert_error(
            &GOOD.replace("echo {word} {n}", "echo {wrod}"),
            5,
            &["command", "{wrod}"],
        );
        assert_error(
            &GOOD.replace("'^{word} ([0-9]+)$'", "'^{word} [0-9]+$'"),
            17,
            &["speed", "capture group"],
        );
        assert_error(
            &GOOD.replace("'^{word} ([0-9]+)$'", "'^{word} ([0-9]+$'"),
            17,
            &["speed", "does not compile"],
        );
        assert_error(
            &GOOD.replace("id = \"toy-two\"", "id = \"toy-one\""),
            27,
            &["twice"],
        );
        assert_error(
            &GOOD.replace("timeout = 5", "timeout = -1"),
            28,
            &["timeout"],
        );
        assert_error(
            &GOOD.replace("elapsed = true", "elapsed = true\njson = \"a.b\""),
            19,
            &["exactly one"],
        );
        assert_error(
            &GOOD.replace("elapsed = true", "elapsed = true\nline = \"t\""),
            19,
            &["exactly one of regex, json, line or elapsed"],
        );
        assert_error(
            &GOOD.replace("name = \"toy\"", "name = \"Toy Box\""),
            2,
            &["name"],
        );
    }
}
