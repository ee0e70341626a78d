//! The config file, `$XDG_CONFIG_HOME/kbench/config.toml` (or
//! `KBENCH_CONFIG`): defaults for the flags a user repeats (the database,
//! the lab server and its token, sampling, thresholds). Flags beat the
//! environment, which beats the file, which beats the built-in defaults: a
//! file's value is handed to clap as the flag's environment variable when
//! that variable is not set, so clap applies the order and every command
//! sees one source of values.

use kbench_analysis::thresholds::{DEFAULT_THRESHOLD, Thresholds};
use kbench_measure::plan::{MAX_TIME, SHORT_ROUND, TARGET_CI_PERCENT};
use kbench_store::Location;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable that names another config file.
pub const CONFIG_ENV: &str = "KBENCH_CONFIG";

/// The file's keys, each the default of one flag.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// `--db`
    db: Option<String>,
    /// `--server` of run, vm run, push, job and worker
    server: Option<String>,
    /// A file holding the API token (`--token`); kept out of the config
    /// file itself so that the file can be shared.
    token_file: Option<PathBuf>,
    /// `--max-time` of run and vm
    max_time: Option<f64>,
    /// `--target-ci` of run and vm
    target_ci: Option<f64>,
    /// `--threshold` of compare and vm compare: the default percentage
    threshold: Option<f64>,
    /// Per-test thresholds: `"pipe-lat" = 3`, `"syscall-*" = 1`
    #[serde(default)]
    thresholds: BTreeMap<String, f64>,
}

/// Where a setting's value comes from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The environment variable, set by the user.
    Env(String),
    /// The config file.
    File(PathBuf),
    /// Nothing: the flag's own default applies.
    Default,
}

/// One setting: its effective value before any flag, and where from.
#[derive(Debug, Clone)]
pub struct Setting {
    pub key: &'static str,
    /// The environment variable clap reads the flag from.
    pub env: &'static str,
    /// `None` when the flag's built-in default applies.
    pub value: Option<String>,
    pub source: Source,
}

/// A setting as `kbench config show` prints it: the token only as "(set)".
#[derive(Debug, serde::Serialize)]
pub struct Shown<'a> {
    pub key: &'static str,
    pub env: &'static str,
    /// The value that applies before any flag: the one set, else the
    /// built-in default; `None` when there is neither (no server).
    pub value: Option<String>,
    pub source: &'a Source,
}

impl Setting {
    pub fn shown(&self) -> Shown<'_> {
        Shown {
            key: self.key,
            env: self.env,
            value: match (self.key, &self.value) {
                ("token_file", Some(_)) => Some("(set)".to_string()),
                (_, Some(value)) => Some(value.clone()),
                (key, None) => built_in(key),
            },
            source: &self.source,
        }
    }
}

/// The built-in default of a key, from the constants the commands use:
/// what applies when no flag, variable or file sets it; `None` for the
/// keys without one (server, token_file).
fn built_in(key: &str) -> Option<String> {
    match key {
        "db" => Some(Location::default_file().display().to_string()),
        "max_time" => Some(format!(
            "{} ({} in adaptive rounds and variants' blocks)",
            MAX_TIME.as_secs_f64(),
            SHORT_ROUND.as_secs_f64()
        )),
        "target_ci" => Some(TARGET_CI_PERCENT.to_string()),
        "thresholds" => Some(DEFAULT_THRESHOLD.to_string()),
        _ => None,
    }
}

/// What the config file and the environment say, before any flag.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The file read, when there is one.
    pub file: Option<PathBuf>,
    pub settings: Vec<Setting>,
}

impl Settings {
    /// The settings as `kbench config show` prints them: the file read (or
    /// why there is none), then each key with its value and its source.
    pub fn text(&self) -> String {
        let mut out = match (&self.file, path()) {
            (Some(file), _) => format!("config file: {}\n", file.display()),
            (None, Some((file, _))) => {
                format!("config file: none ({} does not exist)\n", file.display())
            }
            (None, None) => "config file: none (no HOME or XDG_CONFIG_HOME)\n".to_string(),
        };
        let shown: Vec<Shown> = self.settings.iter().map(Setting::shown).collect();
        let values = shown.iter().filter_map(|s| s.value.as_ref());
        let width = values.map(String::len).max().unwrap_or(0);
        for s in shown {
            let source = match s.source {
                Source::Env(variable) => format!("environment {variable}"),
                Source::File(_) => "config file".to_string(),
                Source::Default => "built-in default".to_string(),
            };
            let value = s.value.as_deref().unwrap_or("none");
            out.push_str(&format!("{:<11} {value:<width$} {source}\n", s.key));
        }
        out
    }
}

/// A config file that cannot be used: what, where and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {path}: {why}")]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "config file {path}: {why} (keys: db, server, token_file, max_time, target_ci, \
         threshold and a [thresholds] table; docs/install.md, \"Configuration\")"
    )]
    Invalid { path: PathBuf, why: String },
}

/// The config file's path: `KBENCH_CONFIG`, else
/// `$XDG_CONFIG_HOME/kbench/config.toml`, else `~/.config/kbench/config.toml`;
/// `None` without a home.
pub fn path() -> Option<(PathBuf, bool)> {
    if let Some(path) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
        return Some((PathBuf::from(path), true));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some((base.join("kbench").join("config.toml"), false))
}

/// Reads the config file (a missing default file is no config; a missing
/// `KBENCH_CONFIG` file is an error) and says, for every key, the value
/// and its source. `env` reads a variable (the process's, in `load`).
pub fn settings(
    file: Option<(PathBuf, bool)>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Settings, ConfigError> {
    let (path, parsed) = match file {
        Some((path, named)) => match std::fs::read_to_string(&path) {
            Ok(text) => {
                let parsed = parse(&path, &text)?;
                (Some(path), parsed)
            }
            Err(e) if !named && not_ours(&path, &e) => (None, File::default()),
            Err(e) => {
                return Err(ConfigError::Unreadable {
                    why: format!("{e} (set {CONFIG_ENV} to a readable file, or unset it)"),
                    path,
                });
            }
        },
        None => (None, File::default()),
    };
    let from_file = |value: Option<String>| value.map(|v| (v, path.clone()));
    let token = match (&parsed.token_file, &path) {
        (Some(token_file), Some(config)) => Some(read_token(config, token_file)?),
        _ => None,
    };
    let entries: [(&'static str, &'static str, Option<String>); 6] = [
        ("db", "KBENCH_DB", parsed.db.clone()),
        ("server", "KBENCH_SERVER", parsed.server.clone()),
        ("token_file", "KBENCH_TOKEN", token),
        (
            "max_time",
            "KBENCH_MAX_TIME",
            parsed.max_time.map(|v| v.to_string()),
        ),
        (
            "target_ci",
            "KBENCH_TARGET_CI",
            parsed.target_ci.map(|v| v.to_string()),
        ),
        ("thresholds", "KBENCH_THRESHOLD", thresholds(&parsed)),
    ];
    let settings = entries
        .into_iter()
        .map(|(key, variable, value)| {
            let (value, source) = match (env(variable), from_file(value)) {
                (Some(set), _) => (Some(set), Source::Env(variable.to_string())),
                (None, Some((value, Some(file)))) => (Some(value), Source::File(file)),
                _ => (None, Source::Default),
            };
            Setting {
                key,
                env: variable,
                value,
                source,
            }
        })
        .collect();
    Ok(Settings {
        file: path,
        settings,
    })
}

/// Whether a default config path that cannot be read is no config at
/// all: it does not exist, or its directory is not this user's to enter
/// (another user's HOME, as under `runuser` or `setpriv`). A file in the
/// user's own directory that cannot be read is an error.
fn not_ours(path: &Path, error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{NotFound, PermissionDenied};
    let directory = path.parent().unwrap_or(Path::new("/"));
    error.kind() == NotFound
        || (error.kind() == PermissionDenied
            && std::fs::metadata(directory).is_err_and(|e| e.kind() == PermissionDenied))
}

fn parse(path: &Path, text: &str) -> Result<File, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        why,
    };
    let file: File = toml::from_str(text).map_err(|e| invalid(e.to_string().trim().to_string()))?;
    if let Some(text) = thresholds(&file) {
        Thresholds::parse(&text).map_err(|e| invalid(format!("thresholds: {e}")))?;
    }
    for (key, value) in [("max_time", file.max_time), ("target_ci", file.target_ci)] {
        if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(invalid(format!("{key} must be a positive number")));
        }
    }
    Ok(file)
}

/// `threshold` and `[thresholds]` as one `--threshold` value.
fn thresholds(file: &File) -> Option<String> {
    let mut items: Vec<String> = file.threshold.iter().map(f64::to_string).collect();
    items.extend(
        file.thresholds
            .iter()
            .map(|(pattern, percent)| format!("{pattern}={percent}")),
    );
    (!items.is_empty()).then(|| items.join(","))
}

/// The token in `token_file` (relative to the config file's directory).
fn read_token(config: &Path, token_file: &Path) -> Result<String, ConfigError> {
    let path = config.parent().unwrap_or(Path::new(".")).join(token_file);
    let token = std::fs::read_to_string(&path).map_err(|e| ConfigError::Invalid {
        path: config.to_path_buf(),
        why: format!("token_file {}: {e}", path.display()),
    })?;
    Ok(token.trim().to_string())
}

/// Reads the config file and hands each of its values to clap through the
/// flag's environment variable where the user has not set that variable.
/// Returns what `kbench config show` prints. Call first in `main`, while
/// the process has one thread (it sets environment variables).
pub fn load() -> Result<Settings, ConfigError> {
    let settings = settings(path(), |name| {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    })?;
    for setting in &settings.settings {
        if let (Source::File(_), Some(value)) = (&setting.source, &setting.value) {
            // SAFETY: called before any thread is started (see above).
            unsafe { std::env::set_var(setting.env, value) };
        }
    }
    Ok(settings)
}

#[cfg(test)]
mod tests;
