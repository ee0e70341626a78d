//! The built-in profiles' parsers on real output of each tool, captured from
//! the Debian 12 versions (fixtures/profiles/, README.md there says how),
//! and on output of other versions whose format changed.

use kbench_catalog::profile::Profiles;
use kbench_catalog::profile::parse::{Parser, RunOutput};
use std::collections::BTreeMap;
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/profiles")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The parser of profile test `id` with these option values.
fn parser(profiles: &Profiles, id: &str, options: &[(&str, &str)]) -> Parser {
    let (_, test) = profiles
        .test(id)
        .unwrap_or_else(|| panic!("no profile test {id}"));
    let values: BTreeMap<String, String> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Parser::new(&test.metrics, test.reject.as_deref(), &|name| {
        values.get(name).or_else(|| test.vars.get(name)).cloned()
    })
    .unwrap()
}

/// Reads `file` (as stdout; stress-ng's goes to stderr) with test `id`.
fn read(id: &str, options: &[(&str, &str)], file: &str) -> Result<Vec<(String, f64)>, String> {
    let profiles = Profiles::builtin();
    let text = fixture(file);
    let output = if id == "stress-ng" {
        RunOutput {
            stderr: text,
            ..RunOutput::default()
        }
    } else {
        RunOutput {
            stdout: text,
            ..RunOutput::default()
        }
    };
    parser(&profiles, id, options).read(&output)
}

fn assert_values(id: &str, options: &[(&str, &str)], file: &str, expected: &[(&str, f64)]) {
    let values = read(id, options, file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let names: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
    let wanted: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, wanted, "{file}: metrics read");
    for ((name, value), (_, want)) in values.iter().zip(expected) {
        assert!(
            (value - want).abs() <= want.abs() * 1e-9,
            "{file}: {name} = {value}, expected {want}"
        );
    }
}

#[test]
fn fio_json_of_fio_3_and_fio_2() {
    // fio 3.33 (Debian 12): bw_bytes and lat_ns.
    assert_values(
        "fio-randread",
        &[],
        "fio-3.33-randread-libaio-direct.json",
        &[
            ("iops", 82282.858571),
            ("bw", 337.030588),
            ("lat", 194.160055397),
        ],
    );
    assert_values(
        "fio-write",
        &[],
        "fio-3.33-write-io_uring-buffered.json",
        &[
            ("iops", 66191.904048),
            ("bw", 8675.905247),
            ("lat", 238.376531801),
        ],
    );
    // fio 2: bandwidth only in KiB/s, latencies in microseconds.
    assert_values(
        "fio-randread",
        &[],
        "fio-2.2.10-randread.json",
        &[("iops", 32768.0), ("bw", 134.217728), ("lat", 486.1)],
    );
    // Error lines printed before the document (axboe/fio#731).
    assert_values(
        "fio-randread",
        &[],
        "fio-3.12-error-lines-before-json.json",
        &[("iops", 5120.0), ("bw", 20.97152), ("lat", 3120.0005)],
    );
}

#[test]
fn redis_benchmark_csv_of_redis_5_6_and_7() {
    assert_values(
        "redis",
        &[("test", "lpush")],
        "redis-7.0.15-lpush.csv",
        &[("rps", 106609.80), ("latency", 0.245)],
    );
    assert_values(
        "redis",
        &[("test", "sadd")],
        "redis-6.2.4-warning.csv",
        &[("rps", 91743.12), ("latency", 0.289)],
    );
    // Redis 5: no latency column; the optional metric is left out.
    assert_values(
        "redis",
        &[("test", "get")],
        "redis-5.0-csv.txt",
        &[("rps", 104166.67)],
    );
    assert_values(
        "redis",
        &[("test", "lpop")],
        "redis-5.0-csv.txt",
        &[("rps", 103092.78)],
    );
}

#[test]
fn wrk_requests_and_latency_in_any_unit() {
    assert_values(
        "nginx",
        &[],
        "wrk-4.1.0-nginx-1.22.1-c100.txt",
        &[("rps", 85868.62), ("latency", 1180.0)],
    );
    assert_values(
        "nginx",
        &[],
        "wrk-4.1.0-nginx-1.22.1-c20.txt",
        &[("rps", 50976.47), ("latency", 757.95)],
    );
    // Error responses are counted as requests by wrk: not a measurement.
    let error = read("nginx", &[], "wrk-4.1.0-404.txt").unwrap_err();
    assert!(error.contains("Non-2xx or 3xx responses: 83719"), "{error}");
}

#[test]
fn stress_ng_metrics_brief_across_versions() {
    let context = [("stressor", "context")];
    // 0.15.06 (Debian 12): "metrc:" lines.
    assert_values(
        "stress-ng",
        &context,
        "stress-ng-0.15.06-context.txt",
        &[("bogo_ops", 9409.41), ("cpu_rate", 4717.70)],
    );
    // Before 0.15: "info:" lines.
    assert_values(
        "stress-ng",
        &context,
        "stress-ng-0.13.05-context.txt",
        &[("bogo_ops", 9379.02), ("cpu_rate", 4761.42)],
    );
    // 0.16 and later: CPU % and RSS columns appended; --timestamp.
    assert_values(
        "stress-ng",
        &context,
        "stress-ng-0.17.06-context.txt",
        &[("bogo_ops", 10208.77), ("cpu_rate", 5130.65)],
    );
    assert_values(
        "stress-ng",
        &context,
        "stress-ng-0.17.06-timestamp-context.txt",
        &[("bogo_ops", 10030.11), ("cpu_rate", 5066.67)],
    );
    // The miscellaneous metrics lines of a stressor are not its bogo ops.
    assert_values(
        "stress-ng",
        &[("stressor", "vm-splice")],
        "stress-ng-0.15.06-vm-splice.txt",
        &[("bogo_ops", 983319.34), ("cpu_rate", 492813.46)],
    );
    assert_values(
        "stress-ng",
        &[("stressor", "tree")],
        "stress-ng-0.15.06-tree.txt",
        &[("bogo_ops", 24.17), ("cpu_rate", 12.13)],
    );
    // Another stressor's output does not match, and says what it searched.
    let error = read(
        "stress-ng",
        &[("stressor", "fork")],
        "stress-ng-0.15.06-context.txt",
    )
    .unwrap_err();
    assert!(
        error.contains("metric 'bogo_ops'") && error.contains("lines searched"),
        "{error}"
    );
    assert!(error.contains("successful run completed"), "{error}");
}

#[test]
fn sysbench_1_0_and_0_4() {
    assert_values(
        "sysbench-cpu",
        &[],
        "sysbench-1.0.20-cpu.txt",
        &[("events", 10570.14)],
    );
    assert_values(
        "sysbench-memory",
        &[],
        "sysbench-1.0.20-memory.txt",
        &[("bandwidth", 7939.37)],
    );
    // 0.4: "MB/sec".
    assert_values(
        "sysbench-memory",
        &[],
        "sysbench-0.4.12-memory.txt",
        &[("bandwidth", 1987.37)],
    );
    assert_values(
        "sysbench-mutex",
        &[],
        "sysbench-1.0.20-mutex.txt",
        &[("time", 0.1309)],
    );
    assert_values(
        "sysbench-threads",
        &[],
        "sysbench-1.0.20-threads.txt",
        &[("time", 0.2336)],
    );
}

#[test]
fn hackbench_of_rt_tests_and_the_classic_one() {
    assert_values(
        "hackbench",
        &[],
        "hackbench-2.40-pipe-process.txt",
        &[("time", 0.326)],
    );
    assert_values(
        "hackbench",
        &[],
        "hackbench-2.40-socket-thread.txt",
        &[("time", 0.684)],
    );
    assert_values(
        "hackbench",
        &[],
        "hackbench-classic.txt",
        &[("time", 0.566)],
    );
}

#[test]
fn perf_bench() {
    assert_values(
        "perf-bench-sched-pipe",
        &[],
        "perf-6.1-sched-pipe.txt",
        &[("latency", 44.206820), ("ops", 22620.0)],
    );
    assert_values(
        "perf-bench-sched-messaging",
        &[],
        "perf-6.1-sched-messaging.txt",
        &[("time", 0.498)],
    );
    assert_values(
        "perf-bench-futex-wake",
        &[],
        "perf-6.1-futex-wake.txt",
        &[("wake", 0.0811)],
    );
    assert_values(
        "perf-bench-futex-hash",
        &[],
        "perf-6.1-futex-hash.txt",
        &[("ops", 3042560.0)],
    );
    assert_values(
        "perf-bench-syscall-basic",
        &[],
        "perf-6.1-syscall-basic.txt",
        &[("latency", 0.127164), ("ops", 7863873.0)],
    );
}

#[test]
fn iperf3_json_and_its_errors() {
    assert_values(
        "iperf3-tcp",
        &[],
        "iperf3-3.12-tcp.json",
        &[("throughput", 17.059953349081802)],
    );
    assert_values(
        "iperf3-udp",
        &[],
        "iperf3-3.12-udp.json",
        &[
            ("throughput", 11.836686242063243),
            ("lost", 64.96822690638562),
        ],
    );
    // iperf3 3.1: UDP has no sum_received; the sum is used.
    assert_values(
        "iperf3-udp",
        &[],
        "iperf3-3.1.3-udp.json",
        &[("throughput", 7.1580432256), ("lost", 3.90625)],
    );
    // 3.12 exits 0 after a failed test with -J; the document says why.
    let error = read("iperf3-tcp", &[], "iperf3-3.12-refused.json").unwrap_err();
    assert!(error.contains("Connection refused"), "{error}");
}

#[test]
fn pgbench_of_postgresql_15_and_13() {
    assert_values(
        "pgbench",
        &[],
        "pgbench-15.18-read-only.txt",
        &[("tps", 38524.440159), ("latency", 0.260)],
    );
    assert_values(
        "pgbench",
        &[],
        "pgbench-15.18-read-write.txt",
        &[("tps", 2397.358398), ("latency", 4.171)],
    );
    // Before 14: "including" and "excluding connections establishing".
    assert_values(
        "pgbench",
        &[],
        "pgbench-13-read-only.txt",
        &[("tps", 30498.602210), ("latency", 0.328)],
    );
}

#[test]
fn memcaslap_operations_per_second() {
    assert_values(
        "memcached",
        &[("gets", "10")],
        "memcaslap-1.1.4-memcached-1.6.18-gets10.txt",
        &[("ops", 224777.0), ("net", 38.6)],
    );
}

#[test]
fn siege_json_and_the_response_time_computed_after_it() {
    // siege prints its "New configuration template" lines before the JSON.
    assert_values(
        "siege",
        &[("users", "50")],
        "siege-4.0.7-nginx-1.22.1-c50.txt",
        &[("tps", 16501.65), ("response", 2.5531)],
    );
}

#[test]
fn seven_zip_ratings_of_the_avr_line() {
    assert_values(
        "7zip",
        &[],
        "7zz-26.02-dict22.txt",
        &[("compress", 4238.0), ("decompress", 2381.0)],
    );
}

#[test]
fn openssl_speed_machine_readable_sums() {
    // -multi: the children's "Got: +F..." lines are not the sum.
    assert_values(
        "openssl-evp",
        &[("algorithm", "sha256")],
        "openssl-3.0.19-sha256.txt",
        &[("throughput", 1078867096.08)],
    );
    assert_values(
        "openssl-rsa",
        &[("bits", "4096")],
        "openssl-3.0.19-rsa4096.txt",
        &[("sign", 172.425743), ("verify", 10806.930693)],
    );
}

#[test]
fn iperf_2_bandwidth_packets_and_connections() {
    assert_values(
        "iperf-tcp",
        &[("threads", "1")],
        "iperf-2.1.8-tcp-P1.txt",
        &[("bandwidth", 20226.0)],
    );
    // Received, from the server's report: (1027188 - 667338) / 3.0041 s.
    assert_values(
        "iperf-udp",
        &[],
        "iperf-2.1.8-udp.txt",
        &[("pps", 119786.3), ("bandwidth", 1409.0), ("lost", 65.0)],
    );
    assert_values(
        "iperf-connect",
        &[("threads", "128")],
        "iperf-2.1.8-connect-P128.txt",
        &[("rate", 4515.4), ("connect", 15.592)],
    );
}

#[test]
fn every_profile_test_that_parses_output_has_a_fixture() {
    let covered = [
        "fio-randread",
        "fio-write",
        "redis",
        "nginx",
        "stress-ng",
        "sysbench-cpu",
        "sysbench-memory",
        "sysbench-mutex",
        "sysbench-threads",
        "hackbench",
        "perf-bench-sched-pipe",
        "perf-bench-sched-messaging",
        "perf-bench-futex-wake",
        "perf-bench-futex-hash",
        "perf-bench-syscall-basic",
        "iperf3-tcp",
        "iperf3-udp",
        "pgbench",
        "memcached",
        "siege",
        "7zip",
        "openssl-evp",
        "openssl-rsa",
        "iperf-tcp",
        "iperf-udp",
        "iperf-connect",
    ];
    let profiles = Profiles::builtin();
    for profile in profiles.all() {
        for test in &profile.tests {
            let reads_output = test.metrics.iter().any(|m| {
                m.sources
                    .iter()
                    .any(|s| !matches!(s.kind, kbench_catalog::profile::spec::SourceKind::Elapsed))
            });
            // fio-randwrite and fio-read share fio-randread's and fio-write's metrics.
            let shared = matches!(test.id.as_str(), "fio-randwrite" | "fio-read");
            assert!(
                !reads_output || shared || covered.contains(&test.id.as_str()),
                "{} has no fixture",
                test.id
            );
        }
    }
}
