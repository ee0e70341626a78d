//! Where results are kept: `--db` / `KBENCH_DB` is a file path (SQLite) or
//! a `postgres://` / `postgresql://` URL (PostgreSQL). Everything that reads
//! that text is here: telling the two apart, the default file, hiding a
//! URL's password in messages, and the PostgreSQL connection settings.

use crate::{Database, PostgresStore, Result, SqliteStore, StoreError};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// A result database: a SQLite file or a PostgreSQL database.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(PostgresUrl),
}

impl Location {
    /// A path, or a `postgres://` / `postgresql://` URL (the scheme in any
    /// case). Another `scheme://` is refused rather than taken for a
    /// relative path.
    pub fn parse(text: impl AsRef<OsStr>) -> Result<Location> {
        let text = text.as_ref();
        let Some(utf8) = text.to_str() else {
            return Ok(Location::Sqlite(PathBuf::from(text)));
        };
        match url_scheme(utf8) {
            None => Ok(Location::Sqlite(PathBuf::from(text))),
            Some(scheme)
                if scheme.eq_ignore_ascii_case("postgres")
                    || scheme.eq_ignore_ascii_case("postgresql") =>
            {
                PostgresUrl::parse(utf8).map(Location::Postgres)
            }
            Some(scheme) => Err(StoreError::Open {
                db: redact(utf8),
                reason: format!(
                    "kbench keeps results in a SQLite file (give its path) or in PostgreSQL \
                     (give a postgres:// URL); {scheme}:// is neither"
                ),
            }),
        }
    }

    /// `--db`'s value when given, else `$KBENCH_DB`, else the default file
    /// ([`Location::default_file`]). An empty value counts as none.
    pub fn resolve(given: Option<&OsStr>) -> Result<Location> {
        Self::resolve_from(given, |name| std::env::var_os(name))
    }

    fn resolve_from(
        given: Option<&OsStr>,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Location> {
        let var = |name: &str| var(name).filter(|value| !value.is_empty());
        match given.filter(|text| !text.is_empty()) {
            Some(text) => Location::parse(text),
            None => match var("KBENCH_DB") {
                Some(text) => Location::parse(text),
                None => Ok(Location::Sqlite(default_file_from(var))),
            },
        }
    }

    /// `$XDG_DATA_HOME/kbench/results.db`, else
    /// `$HOME/.local/share/kbench/results.db` (`kbench/results.db` in the
    /// current directory when not even `HOME` is set).
    pub fn default_file() -> PathBuf {
        default_file_from(|name| std::env::var_os(name).filter(|value| !value.is_empty()))
    }

    /// The directory for files kept beside the results (VM console logs):
    /// the SQLite file's, or the default file's for PostgreSQL.
    pub fn data_dir(&self) -> PathBuf {
        let file = match self {
            Location::Sqlite(path) => path.clone(),
            Location::Postgres(_) => Self::default_file(),
        };
        file.parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    }

    /// The `--db` another process (a boot hook) opens the same store with:
    /// the file's absolute path, or the whole URL, password included.
    pub fn to_arg(&self) -> String {
        match self {
            Location::Sqlite(path) => std::path::absolute(path)
                .unwrap_or_else(|_| path.clone())
                .to_string_lossy()
                .into_owned(),
            Location::Postgres(url) => url.url.clone(),
        }
    }

    /// Opens (creating and migrating as needed) the store.
    pub fn open(&self) -> Result<Box<dyn Database>> {
        Ok(self.open_send()?)
    }

    /// Opens a store that must exist already (the reading commands): a
    /// missing SQLite file is an `Open` error saying how to make one, and
    /// nothing is created.
    pub fn open_existing(&self) -> Result<Box<dyn Database>> {
        Ok(self.open_with(Opening::EXISTING)?)
    }

    /// [`Location::open`] for a store handed between threads (`kbench
    /// serve` runs store calls on tokio's blocking pool).
    pub fn open_send(&self) -> Result<Box<dyn Database + Send>> {
        self.open_with(Opening::LOCAL)
    }

    /// Opens the store as `opening` says (PostgreSQL reads only what
    /// concerns it: a database there always exists before kbench connects).
    pub fn open_with(&self, opening: Opening) -> Result<Box<dyn Database + Send>> {
        Ok(match self {
            Location::Sqlite(path) => Box::new(SqliteStore::open_with(path, opening)?),
            Location::Postgres(url) => Box::new(PostgresStore::connect(url)?),
        })
    }
}

/// How a SQLite file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    /// Create a missing file and its directories; when false a missing
    /// file is an `Open` error and nothing is created.
    pub create: bool,
    /// Run SQLite's `quick_check` over an existing file first. It reads
    /// the whole file: a server checks once, at its first connection, not
    /// at each connection of its pool.
    pub check: bool,
    /// `synchronous=FULL`: every commit is on disk when it returns, so it
    /// survives an OS crash or a power cut. Without it (NORMAL, in WAL
    /// mode) a commit survives a killed process, but an OS crash may lose
    /// the last transactions before it.
    pub durable: bool,
}

impl Opening {
    /// `kbench run`, `import` and the other writing commands: created when
    /// missing, checked, synchronous=NORMAL.
    pub const LOCAL: Opening = Opening {
        create: true,
        check: true,
        durable: false,
    };
    /// The reading commands (`show`, `compare`, `export`, `history`...):
    /// not created, and not checked whole, as `quick_check` would read
    /// the whole file to answer a question about two identifiers (a
    /// damaged page they read is still an error, SQLite's "malformed").
    pub const EXISTING: Opening = Opening {
        create: false,
        check: false,
        ..Opening::LOCAL
    };
    /// `kbench serve`'s first connection: what it acknowledges survives an
    /// OS crash. The pool's further connections add `check: false`.
    pub const SERVER: Opening = Opening {
        create: true,
        check: true,
        durable: true,
    };
}

/// The path, or the URL without its password.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(url.shown()),
        }
    }
}

fn default_file_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    // The XDG spec says to ignore a relative XDG_DATA_HOME.
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_default();
    data.join("kbench").join("results.db")
}

/// The scheme of `scheme://...` (RFC 3986 letters), if the text is a URL.
fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some(scheme)
}

/// The URL with its password (in the user part or a `password=` query
/// parameter) replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{hosts}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// How long connecting may take unless the URL says (`connect_timeout=`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A checked PostgreSQL URL (libpq's form: `postgres://user:password@host:
/// port/database?options`), shown everywhere without its password.
#[derive(Clone, PartialEq)]
pub struct PostgresUrl {
    url: String,
    shown: String,
}

impl PostgresUrl {
    /// Checks the URL's syntax (nothing is connected to). A bad one is an
    /// `Open` error naming it without its password.
    pub fn parse(url: &str) -> Result<PostgresUrl> {
        // The library reads the scheme in lower case only.
        let url = match url.split_once("://") {
            Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
            None => url.to_string(),
        };
        let url = url.as_str();
        let shown = redact(url);
        // The library's messages name the faulty option, not its value.
        postgres::Config::from_str(url).map_err(|err| StoreError::Open {
            db: shown.clone(),
            reason: format!(
                "it is not a valid PostgreSQL URL ({err}); write \
                 postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            ),
        })?;
        Ok(PostgresUrl {
            url: url.to_string(),
            shown,
        })
    }

    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The connection settings, with kbench's defaults where the URL says
    /// nothing: a 10 s connect timeout and application_name `kbench`.
    pub(crate) fn config(&self) -> postgres::Config {
        let mut config = postgres::Config::from_str(&self.url).expect("checked by parse");
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("kbench");
        }
        config
    }
}

/// Never prints the password.
impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl").field(&self.shown).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    fn file(path: &str) -> Location {
        Location::Sqlite(PathBuf::from(path))
    }

    #[test]
    fn default_prefers_flag_then_kbench_db_then_xdg_then_home() {
        let all = [
            ("KBENCH_DB", "/x/my.db"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        let resolve = |given: Option<&str>, vars| {
            Location::resolve_from(given.map(OsStr::new), env(vars)).unwrap()
        };
        assert_eq!(resolve(Some("/flag.db"), &all), file("/flag.db"));
        assert_eq!(resolve(Some(""), &all), file("/x/my.db"));
        assert_eq!(resolve(None, &all), file("/x/my.db"));
        assert_eq!(resolve(None, &all[1..]), file("/xdg/kbench/results.db"));
        assert_eq!(
            resolve(None, &all[2..]),
            file("/home/u/.local/share/kbench/results.db")
        );
        let relative_xdg = [("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")];
        assert_eq!(
            resolve(None, &relative_xdg),
            file("/home/u/.local/share/kbench/results.db")
        );
        assert_eq!(resolve(None, &[]), file("kbench/results.db"));
        let url = [("KBENCH_DB", "postgres://k@h/db")];
        assert!(matches!(resolve(None, &url), Location::Postgres(_)));
    }

    #[test]
    fn urls_and_paths_are_told_apart() {
        for text in [
            "postgres://kbench@localhost/kbench",
            "postgresql://u:pw@127.0.0.1:5433/db?connect_timeout=3",
            "POSTGRES://u@h/db",
        ] {
            assert!(
                matches!(Location::parse(text), Ok(Location::Postgres(_))),
                "{text}"
            );
        }
        for text in [
            "results.db",
            "/tmp/a b/r.db",
            "dir:with:colons/r.db",
            "./postgres/x.db",
        ] {
            assert_eq!(Location::parse(text).unwrap(), file(text));
        }
        let err = Location::parse("mysql://root:secret@h/db").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("mysql://root:***@h/db") && !text.contains("secret"),
            "{text}"
        );
        let err = Location::parse("postgres://u:secret@h:notaport/db").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        assert!(
            !text.contains("secret") && text.contains("u:***@h"),
            "{text}"
        );
    }

    #[test]
    fn passwords_are_hidden() {
        let cases = [
            ("postgres://u:pw@h:5432/db", "postgres://u:***@h:5432/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?password=pw&sslmode=disable",
                "postgres://h/db?password=***&sslmode=disable",
            ),
            ("postgres://u:p%40ss@h", "postgres://u:***@h"),
            ("postgres://u:a@b@h/db", "postgres://u:***@h/db"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact(url), shown);
        }
        let url = PostgresUrl::parse("postgres://u:pw@h/db").unwrap();
        assert_eq!(format!("{url:?}"), "PostgresUrl(\"postgres://u:***@h/db\")");
        assert_eq!(
            Location::Postgres(url.clone()).to_string(),
            "postgres://u:***@h/db"
        );
        assert!(url.config().get_connect_timeout().is_some());
    }
}
