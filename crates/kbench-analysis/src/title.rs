//! A test's title as PTS gives a result ("Redis 7.0.15 - Test: GET -
//! Parallel Connections: 50"), for profile tests: the tool, its version and
//! the test's description, as each identifier's newest run that ran the
//! test recorded them ([`kbench_model::ToolRecord`]). The version is no
//! part of the test's key: identifiers measured with two versions compare
//! as one test, and the title names both ("Redis 7.0.15 / 7.2.4 - ...").

use kbench_model::results::IdentifierData;
use kbench_model::{TestKey, ToolRecord};

/// The title of `key` over `identifiers`; `None` for tests no run recorded
/// a tool for (built-ins, results imported without one).
pub fn title<'a>(
    key: &TestKey,
    identifiers: impl IntoIterator<Item = &'a IdentifierData>,
) -> Option<String> {
    let name = key.test_name();
    let records: Vec<&ToolRecord> = identifiers
        .into_iter()
        .filter_map(|id| {
            id.runs
                .iter()
                .rev()
                .find_map(|run| run.info.snapshot.tools.get(&name))
        })
        .collect();
    let first = records.first()?;
    let mut versions: Vec<&str> = Vec::new();
    for record in &records {
        let version = record.version.as_deref().unwrap_or("(version unknown)");
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    let combined = ToolRecord {
        version: Some(versions.join(" / ")),
        ..(*first).clone()
    };
    Some(combined.title())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};

    fn identifier(name: &str, version: Option<&str>) -> IdentifierData {
        let mut info = RunInfo::default();
        info.snapshot.tools.insert(
            "redis[clients=50,test=get]".into(),
            ToolRecord {
                tool: "Redis".into(),
                version: version.map(str::to_string),
                description: "Test: GET - Parallel Connections: 50".into(),
            },
        );
        IdentifierData {
            name: name.into(),
            factors: Default::default(),
            runs: vec![RunRecord {
                id: RunId(1),
                status: RunStatus::Complete,
                info,
                ended_at_ms: None,
                outcomes: vec![],
            }],
            samples: Default::default(),
            sample_runs: Default::default(),
        }
    }

    #[test]
    fn names_the_tool_its_versions_and_the_description() {
        let key = TestKey::parse("redis[clients=50,test=get]:latency").unwrap();
        let one = [
            identifier("a", Some("7.0.15")),
            identifier("b", Some("7.0.15")),
        ];
        assert_eq!(
            title(&key, &one).unwrap(),
            "Redis 7.0.15 - Test: GET - Parallel Connections: 50"
        );
        let two = [identifier("a", Some("7.0.15")), identifier("b", None)];
        assert_eq!(
            title(&key, &two).unwrap(),
            "Redis 7.0.15 / (version unknown) - Test: GET - Parallel Connections: 50"
        );
        assert_eq!(title(&TestKey::new("syscall-null"), &one), None);
    }
}
