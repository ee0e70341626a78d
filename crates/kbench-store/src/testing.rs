//! Test support for other crates' tests (feature `testing`, for
//! dev-dependencies only): a SQLite store in a temporary directory, and for
//! tests against a real PostgreSQL server, where the server is and a
//! database of a test's own that is dropped at the end.

/// A SQLite store in a fresh temporary directory (removed when the first
/// value is dropped).
pub fn temp_store() -> (tempfile::TempDir, crate::SqliteStore) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = crate::SqliteStore::open(&dir.path().join("results.db")).expect("a new store");
    (dir, store)
}

/// Names the test server's database URL (`.ci/postgres.sh` sets it).
pub const POSTGRES_ENV: &str = "KBENCH_TEST_POSTGRES_URL";

/// The test server's URL; `None` (the caller skips) when unset, except under
/// `CI=true`, where CI must exercise PostgreSQL and a missing server fails.
pub fn postgres_server() -> Option<String> {
    match std::env::var(POSTGRES_ENV) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but {POSTGRES_ENV} is unset: CI must test PostgreSQL (.ci/postgres.sh)")
        }
        _ => {
            eprintln!(
                "skipped: set {POSTGRES_ENV} (bash .ci/postgres.sh cargo test) to test PostgreSQL"
            );
            None
        }
    }
}

/// A database of its own on the test server, dropped (forcibly) when this is.
pub struct ThrowawayDatabase {
    server: String,
    name: String,
    /// The server's URL with the database name replaced: what `--db` is given.
    pub url: String,
}

impl ThrowawayDatabase {
    /// Creates `kbench_{tag}_{pid}_{n}` on the server at `server`.
    pub fn create(server: &str, tag: &str) -> ThrowawayDatabase {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("kbench_{tag}_{}_{n}", std::process::id());
        let mut admin = postgres::Client::connect(server, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", crate::redact(server)));
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .unwrap();
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let (scheme, rest) = server.split_once("://").expect("a postgres:// URL");
        let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let query = rest[host_end..]
            .find('?')
            .map_or("", |at| &rest[host_end + at..]);
        let url = format!("{scheme}://{}/{name}{query}", &rest[..host_end]);
        ThrowawayDatabase {
            server: server.to_string(),
            name,
            url,
        }
    }
}

impl ThrowawayDatabase {
    /// How many connections the server has open to this database now
    /// (`pg_stat_activity`).
    pub fn connections(&self) -> i64 {
        let mut client = postgres::Client::connect(&self.server, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", crate::redact(&self.server)));
        client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1",
                &[&self.name],
            )
            .unwrap()
            .get(0)
    }
}

impl Drop for ThrowawayDatabase {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.server, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP DATABASE {} WITH (FORCE)", self.name));
        }
    }
}

/// Runs `sql` (statements separated by `;`) on the database at `location`,
/// bypassing the store: for tests that damage rows on purpose, to show that
/// a read passes them over (or reports them).
pub fn execute(location: &crate::Location, sql: &str) {
    match location {
        crate::Location::Sqlite(path) => rusqlite::Connection::open(path)
            .and_then(|db| db.execute_batch(sql))
            .unwrap_or_else(|e| panic!("{sql} on {}: {e}", path.display())),
        crate::Location::Postgres(url) => url
            .config()
            .connect(postgres::NoTls)
            .and_then(|mut db| db.batch_execute(sql))
            .unwrap_or_else(|e| panic!("{sql} on {}: {e}", url.shown())),
    }
}
