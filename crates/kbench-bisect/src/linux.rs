//! `--kernel-config`: kbench builds each commit of a Linux tree itself,
//! the way a kernel developer would, and the way that makes builds cheap
//! and comparable:
//!
//! - out of tree (`O=`), into one build directory for the whole
//!   bisection, so each commit rebuilds only what it changed;
//! - with the guest's configuration (kbench-vm's `guest_config`: the base,
//!   `tinyconfig`, `defconfig` or the user's `.config`, with the guest's
//!   fragment merged in), written once and brought to each commit with
//!   `olddefconfig`; a commit whose Kconfig drops an option the guest
//!   needs is skipped, the option named;
//! - with `KBUILD_BUILD_TIMESTAMP`, `_USER`, `_HOST` and `_VERSION` fixed,
//!   so that the same commit builds the same image;
//! - through ccache when it is installed, with `CCACHE_BASEDIR` at the
//!   bisection's directory, so worktrees (and later bisections) share
//!   the cache; each build says how many compilations ccache answered.
//!
//! Every build's whole output is kept in a log file, named in the skip
//! reason when it fails.

use super::error::{BisectError, Result};
use kbench_analysis::bisect::{BuildRecord, CacheUse};
use kbench_catalog::programs::find_program;
use kbench_vm::guest_config::{self, ALIGN_FUNCTIONS, ConfigBase};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The fixed build facts: no build of the same commit differs by when,
/// by whom, where or how many times it was built.
const BUILD_ENV: [(&str, &str); 4] = [
    ("KBUILD_BUILD_TIMESTAMP", "Thu Jan  1 00:00:00 UTC 2026"),
    ("KBUILD_BUILD_USER", "kbench"),
    ("KBUILD_BUILD_HOST", "kbench"),
    ("KBUILD_BUILD_VERSION", "1"),
];

/// How many of a failed build's last lines its skip reason quotes.
const TAIL: usize = 12;

/// kbench's build of a Linux tree's commits.
#[derive(Debug, Clone)]
pub struct LinuxBuild {
    pub base: ConfigBase,
    /// Functions aligned to 64 bytes (`CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B`).
    pub align_functions: bool,
    /// Where each build's log is kept.
    pub log_dir: PathBuf,
    /// `make -j`.
    pub jobs: usize,
    /// Builds go through ccache (it is installed).
    pub ccache: bool,
}

impl LinuxBuild {
    /// Checks the tools a kernel build needs (the missing one is named)
    /// and looks for ccache.
    pub fn new(base: ConfigBase, align_functions: bool, log_dir: PathBuf) -> Result<LinuxBuild> {
        if let ConfigBase::File(path) = &base
            && !path.is_file()
        {
            return Err(BisectError::Invalid(format!(
                "--kernel-config {}: no such file; give tiny, default or the path of a .config",
                path.display()
            )));
        }
        guest_config::check_build_tools()?;
        Ok(LinuxBuild {
            base,
            align_functions,
            log_dir,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ccache: find_program("ccache").is_some(),
        })
    }

    /// What the report says of the builds.
    pub fn describe(&self) -> String {
        let base = match &self.base {
            ConfigBase::Tiny => "make tinyconfig".to_string(),
            ConfigBase::Default => "make defconfig".to_string(),
            ConfigBase::File(path) => format!("the config {}", path.display()),
        };
        format!(
            "{base} with kbench's guest options merged in, then olddefconfig per commit; {}; \
             out of tree (O=), incremental, make -j{}, KBUILD_BUILD_* fixed; {}",
            if self.align_functions {
                "functions aligned to 64 bytes (CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B)"
            } else {
                "function alignment as the config has it (--align-functions forces 64 bytes)"
            },
            self.jobs,
            if self.ccache {
                "through ccache"
            } else {
                "without ccache (not installed: apt-get install ccache)"
            }
        )
    }

    fn extra_fragment(&self) -> &'static str {
        if self.align_functions {
            ALIGN_FUNCTIONS
        } else {
            ""
        }
    }

    /// The image `make` leaves in the build directory, and its target.
    fn image_target() -> (&'static str, &'static str) {
        match std::env::consts::ARCH {
            "aarch64" => ("arch/arm64/boot/Image", "Image"),
            _ => ("arch/x86/boot/bzImage", "bzImage"),
        }
    }

    /// Builds the commit checked out in `tree` into `out` (configured
    /// the first time), logging to `<name>.log`. `basedir` holds the tree
    /// and `out` (ccache's base). The record, and the image or why the
    /// commit does not build (it is then skipped).
    pub fn build(
        &self,
        tree: &Path,
        out: &Path,
        basedir: &Path,
        name: &str,
    ) -> Result<(BuildRecord, std::result::Result<PathBuf, String>)> {
        let started = Instant::now();
        std::fs::create_dir_all(&self.log_dir).map_err(BisectError::os(format!(
            "creating {}",
            self.log_dir.display()
        )))?;
        let log = self.log_dir.join(format!("{name}.log"));
        std::fs::write(&log, "").map_err(BisectError::os(format!("writing {}", log.display())))?;
        let config = out.join(".config");
        let before = self.ccache.then(ccache_counts).flatten();
        let (image, target) = Self::image_target();
        let configured = if config.is_file() {
            Ok(())
        } else {
            guest_config::write(tree, out, &self.base, self.extra_fragment())
                .map(drop)
                .map_err(|error| format!("configuring failed: {error}"))
        };
        let built = configured
            .and_then(|()| self.make(tree, out, basedir, &log, &["olddefconfig"]))
            .and_then(|()| {
                guest_config::check(&config, self.extra_fragment())
                    .map_err(|error| error.to_string())
            })
            .and_then(|()| self.make(tree, out, basedir, &log, &[target]));
        let ccache = match (before, self.ccache.then(ccache_counts).flatten()) {
            (Some(before), Some(after)) => Some(CacheUse {
                hits: after.hits.saturating_sub(before.hits),
                misses: after.misses.saturating_sub(before.misses),
            }),
            _ => None,
        };
        let record = BuildRecord {
            identifier: name.to_string(),
            seconds: started.elapsed().as_secs_f64(),
            ok: built.is_ok(),
            ccache,
            log: log.display().to_string(),
        };
        let built = built
            .map(|()| out.join(image))
            .map_err(|reason| format!("{reason}; whole log {}", log.display()));
        Ok((record, built))
    }

    /// `make -C tree O=out targets`, its output appended to `log`;
    /// `Err` with the log's tail (and the missing tool, if that is why).
    fn make(
        &self,
        tree: &Path,
        out: &Path,
        basedir: &Path,
        log: &Path,
        targets: &[&str],
    ) -> std::result::Result<(), String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot write the build log {}: {e}", log.display()))?;
        let copy = file
            .try_clone()
            .map_err(|e| format!("cannot write the build log {}: {e}", log.display()))?;
        let mut command = Command::new("make");
        command
            .arg("-C")
            .arg(tree)
            .arg(format!("O={}", out.display()))
            .arg(format!("-j{}", self.jobs))
            .args(targets)
            .envs(BUILD_ENV)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(copy);
        if self.ccache {
            command
                .arg("CC=ccache gcc")
                .env("CCACHE_BASEDIR", basedir)
                .env("CCACHE_NOHASHDIR", "true");
        }
        tracing::info!("running {command:?}");
        let status = command
            .status()
            .map_err(|e| format!("cannot run make: {e}"))?;
        if status.success() {
            return Ok(());
        }
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(TAIL)..].join("\n");
        let missing = super::bench::missing_tool(&text)
            .map(|tool| format!(" (the build needs {tool})"))
            .unwrap_or_default();
        Err(format!(
            "make {} failed ({status}){missing}:\n{tail}",
            targets.join(" ")
        ))
    }
}

/// ccache's hit and miss counters so far (`ccache --print-stats`).
fn ccache_counts() -> Option<CacheUse> {
    let out = Command::new("ccache")
        .arg("--print-stats")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse_stats(&String::from_utf8_lossy(&out.stdout)))
}

/// Hits (direct and preprocessed) and misses of `--print-stats` output.
fn parse_stats(text: &str) -> CacheUse {
    let counters: HashMap<&str, u64> = text
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once('\t')?;
            Some((name.trim(), value.trim().parse().ok()?))
        })
        .collect();
    let count = |name: &str| counters.get(name).copied().unwrap_or(0);
    CacheUse {
        hits: count("direct_cache_hit") + count("preprocessed_cache_hit"),
        misses: count("cache_miss"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ccache_counts_hits_of_both_kinds() {
        let text = "cache_miss\t18\ndirect_cache_hit\t800\ndirect_cache_miss\t30\n\
                    preprocessed_cache_hit\t12\nstats_updated_timestamp\t1733380000\n";
        let used = parse_stats(text);
        assert_eq!(
            used,
            CacheUse {
                hits: 812,
                misses: 18
            }
        );
        assert_eq!(used.text(), "812 of 830 compilations from ccache (97.8 %)");
    }

    #[test]
    fn a_missing_base_config_is_refused_before_anything_runs() {
        let error = LinuxBuild::new(
            ConfigBase::File("/no/such/.config".into()),
            false,
            "/tmp".into(),
        )
        .err()
        .unwrap();
        assert!(error.to_string().contains("no such file"), "{error}");
    }
}
