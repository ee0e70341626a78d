//! Variants: several identifiers measured on one kernel in one interleaved
//! run (`kbench run --variant ...`), each with its own settings: a wrapper,
//! environment variables, sysctl values, a cgroup v2 and a CPU list.
//!
//! A variant is written `NAME` or `NAME=SETTING;SETTING...` with settings
//! `wrap:CMD ARGS`, `env:KEY=VALUE`, `sysctl:key=value`, `cgroup:PATH`
//! (under /sys/fs/cgroup), `cpus:LIST` (e.g. `0`, `0-1`, `0,2`) and
//! `counters:on|off` (whether its agent records perf counters: what their
//! overhead is, measured side by side); a
//! TOML file has the same as `[[variant]]` tables. Every setting is checked
//! before anything runs ([`Variant::check`]); where an agent runs is
//! [`crate::placement`]'s.

use crate::error::{MeasureError, Result, invalid};
use crate::launcher::ProcessLauncher;
use crate::placement::{CGROUP_ENV, CPUS_ENV, cgroup_procs, online_cpus, parse_cpu_list};
use crate::plan::SamplingPlan;
use crate::runner::RunRequest;
use kbench_model::TestKey;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const SYSCTL_ROOT: &str = "/proc/sys";

/// One variant as the user gave it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub wrap: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub sysctl: BTreeMap<String, String>,
    #[serde(default)]
    pub cgroup: Option<String>,
    #[serde(default)]
    pub cpus: Option<String>,
    /// Whether its agent records perf counters (default: as the run).
    #[serde(default)]
    pub counters: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantsFile {
    variant: Vec<Variant>,
}

impl Variant {
    /// Parses `NAME` or `NAME=SETTING;SETTING...`.
    pub fn parse(text: &str) -> Result<Variant> {
        let (name, settings) = text.split_once('=').unwrap_or((text, ""));
        let mut variant = Variant {
            name: name.trim().to_string(),
            ..Variant::default()
        };
        for setting in settings.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            variant
                .add(setting)
                .map_err(|e| e.at(format!("in --variant '{text}'")))?;
        }
        Ok(variant)
    }

    fn add(&mut self, setting: &str) -> Result<()> {
        let Some((kind, value)) = setting.split_once(':') else {
            invalid!(
                "setting '{setting}' has no kind; write wrap:CMD, env:KEY=VALUE, \
                 sysctl:key=value, cgroup:PATH, cpus:LIST or counters:on|off"
            );
        };
        let pair = |what: &str| {
            value
                .split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    MeasureError::Invalid(format!("{what} setting '{setting}' needs KEY=VALUE"))
                })
        };
        match kind.trim() {
            "wrap" => self.wrap = Some(value.trim().to_string()),
            "env" => {
                let (k, v) = pair("env")?;
                self.env.insert(k, v);
            }
            "sysctl" => {
                let (k, v) = pair("sysctl")?;
                self.sysctl.insert(k, v);
            }
            "cgroup" => self.cgroup = Some(value.trim().to_string()),
            "cpus" => self.cpus = Some(value.trim().to_string()),
            "counters" => {
                self.counters = Some(match value.trim() {
                    "on" => true,
                    "off" => false,
                    _ => invalid!("setting '{setting}': counters is on or off"),
                })
            }
            other => invalid!(
                "unknown setting kind '{other}' in '{setting}'; the kinds are wrap, env, \
                 sysctl, cgroup, cpus and counters"
            ),
        }
        Ok(())
    }

    /// The settings as written, for the run's record.
    pub fn settings(&self) -> Vec<String> {
        let mut settings = vec![];
        settings.extend(self.wrap.iter().map(|w| format!("wrap:{w}")));
        settings.extend(self.env.iter().map(|(k, v)| format!("env:{k}={v}")));
        settings.extend(self.sysctl.iter().map(|(k, v)| format!("sysctl:{k}={v}")));
        settings.extend(self.cgroup.iter().map(|c| format!("cgroup:{c}")));
        settings.extend(self.cpus.iter().map(|c| format!("cpus:{c}")));
        settings.extend(
            self.counters
                .map(|on| format!("counters:{}", if on { "on" } else { "off" })),
        );
        settings
    }

    /// Checks that every setting can be applied here, naming the variant
    /// and the setting when one cannot: nothing has run yet.
    pub fn check(&self) -> Result<()> {
        kbench_model::validate_name("variant name", &self.name).map_err(MeasureError::Invalid)?;
        let context = |what: String| format!("variant '{}': {what}", self.name);
        for key in self.sysctl.keys() {
            let path = sysctl_path(key).map_err(|e| e.at(context(format!("sysctl:{key}"))))?;
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(MeasureError::os(context(format!(
                    "sysctl {key} ({}) cannot be written; run kbench as root or drop the setting",
                    path.display()
                ))))?;
        }
        if let Some(cgroup) = &self.cgroup {
            let procs =
                cgroup_procs(cgroup).map_err(|e| e.at(context(format!("cgroup:{cgroup}"))))?;
            std::fs::OpenOptions::new()
                .write(true)
                .open(&procs)
                .map_err(MeasureError::os(context(format!(
                    "cannot move processes into cgroup {cgroup} ({}); run as root or \
                     delegate it to this user",
                    procs.display()
                ))))?;
        }
        if let Some(cpus) = &self.cpus {
            let online = online_cpus();
            let list = parse_cpu_list(cpus).map_err(|e| e.at(context(format!("cpus:{cpus}"))))?;
            if let Some(cpu) = list.iter().find(|&&cpu| cpu >= online) {
                invalid!(
                    "{}",
                    context(format!(
                        "cpus:{cpus} names CPU {cpu}, but this machine has CPUs 0-{}",
                        online - 1
                    ))
                );
            }
        }
        for key in self.env.keys() {
            if key.is_empty() || key.contains(['=', '\0']) {
                invalid!("{}", context(format!("env:{key} is not a variable name")));
            }
        }
        Ok(())
    }
}

impl Variant {
    /// The agent launcher of this variant: its wrapper and environment,
    /// and its cgroup and CPUs (which the agent applies itself, before its
    /// snapshot); `env` is set for every agent too.
    pub fn launcher(&self, exe: &Path, env: &[(&str, OsString)]) -> Result<ProcessLauncher> {
        let mut launcher = ProcessLauncher::new(exe.to_path_buf(), self.wrap.as_deref())
            .map_err(|e| e.at(format!("variant '{}'", self.name)))?
            .with_envs(env);
        for (key, value) in &self.env {
            launcher = launcher.with_env(key, value);
        }
        if let Some(cgroup) = &self.cgroup {
            launcher = launcher.with_env(CGROUP_ENV, cgroup);
        }
        if let Some(cpus) = &self.cpus {
            launcher = launcher.with_env(CPUS_ENV, cpus);
        }
        Ok(launcher)
    }

    /// This variant's run of `tests` into `set`, one round per block
    /// (going on after a FAILED test with `keep_going`).
    pub fn request(
        &self,
        set: &str,
        tests: &[TestKey],
        plan: &SamplingPlan,
        notes: Vec<String>,
        keep_going: bool,
    ) -> RunRequest {
        let mut plan = plan.clone();
        if let Some(on) = self.counters {
            plan.record.counters = on;
        }
        RunRequest {
            set: set.to_string(),
            identifier: self.name.clone(),
            tests: tests.to_vec(),
            plan,
            rounds: 1,
            adaptive: None,
            wrapper: self.wrap.clone(),
            notes,
            host: None,
            keep_going,
            replayed: None,
        }
    }
}

/// The variants of `--variant` texts and `--variants` files, in order:
/// the first is the baseline. Names must be distinct, and at least two;
/// every setting is checked ([`Variant::check`]) before anything runs.
pub fn gather(texts: &[String], files: &[PathBuf]) -> Result<Vec<Variant>> {
    let mut variants = vec![];
    for file in files {
        variants.extend(read_file(file)?);
    }
    for text in texts {
        variants.push(Variant::parse(text)?);
    }
    for (i, variant) in variants.iter().enumerate() {
        if variants[..i].iter().any(|v| v.name == variant.name) {
            invalid!(
                "variant '{}' is given twice; give each variant its own name",
                variant.name
            );
        }
    }
    if variants.len() < 2 {
        invalid!(
            "an interleaved run needs at least two variants (the first is the baseline), \
             e.g. --variant base --variant 'slow=wrap:./slow'"
        );
    }
    for variant in &variants {
        variant.check()?;
    }
    Ok(variants)
}

fn read_file(path: &Path) -> Result<Vec<Variant>> {
    let text = std::fs::read_to_string(path).map_err(MeasureError::os(format!(
        "reading the variants file {}",
        path.display()
    )))?;
    let file: VariantsFile = toml::from_str(&text).map_err(|e| {
        MeasureError::Invalid(format!(
            "{} is not a variants file ([[variant]] tables with name, wrap, env, sysctl, \
             cgroup, cpus): {e}",
            path.display()
        ))
    })?;
    Ok(file.variant)
}

/// /proc/sys/... of a dotted sysctl name, which must exist.
fn sysctl_path(key: &str) -> Result<PathBuf> {
    if key.is_empty() || key.split('.').any(|part| part.is_empty() || part == "..") {
        invalid!("'{key}' is not a sysctl name (e.g. vm.page_lock_unfairness)");
    }
    let path = Path::new(SYSCTL_ROOT).join(key.replace('.', "/"));
    if !path.is_file() {
        invalid!(
            "unknown sysctl '{key}': {} does not exist on this kernel",
            path.display()
        );
    }
    Ok(path)
}

/// Sysctl values set for one variant's round; restored when dropped, so
/// an error or Ctrl-C in the round restores them too.
pub struct SysctlGuard {
    /// (name, value before), in the order set.
    before: Vec<(String, String)>,
}

impl SysctlGuard {
    /// Reads each value, then sets the variant's; on a failure the ones
    /// already set are restored and the error names the setting.
    pub fn apply(variant: &Variant) -> Result<SysctlGuard> {
        let mut guard = SysctlGuard { before: vec![] };
        for (key, value) in &variant.sysctl {
            let path = sysctl_path(key)?;
            let old = read_sysctl(&path)?;
            std::fs::write(&path, value).map_err(MeasureError::os(format!(
                "variant '{}': setting sysctl {key} = {value} failed",
                variant.name
            )))?;
            guard.before.push((key.clone(), old));
        }
        Ok(guard)
    }

    /// The values found before setting, for the run's record.
    pub fn values_before(variant: &Variant) -> Result<BTreeMap<String, String>> {
        variant
            .sysctl
            .keys()
            .map(|key| Ok((key.clone(), read_sysctl(&sysctl_path(key)?)?)))
            .collect()
    }

    /// Restores every value; the error lists the ones that could not be
    /// restored, with what to write by hand.
    pub fn restore(mut self) -> Result<()> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> Result<()> {
        let mut failed = vec![];
        for (key, old) in self.before.drain(..).rev() {
            let written = sysctl_path(&key).and_then(|path| {
                std::fs::write(&path, &old)
                    .map_err(MeasureError::os(format!("writing {}", path.display())))
            });
            if let Err(error) = written {
                failed.push(format!(
                    "{key} = {old} ({error}); restore it with: sysctl -w {key}='{old}'"
                ));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            invalid!("SYSCTL NOT RESTORED: {}", failed.join("; "))
        }
    }
}

impl Drop for SysctlGuard {
    fn drop(&mut self) {
        if let Err(error) = self.restore_all() {
            eprintln!("kbench: {error}");
        }
    }
}

fn read_sysctl(path: &Path) -> Result<String> {
    Ok(std::fs::read_to_string(path)
        .map_err(MeasureError::os(format!("reading {}", path.display())))?
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_issue_examples() {
        let slow = Variant::parse("slow=wrap:./seccomp-slow 1").unwrap();
        assert_eq!(slow.wrap.as_deref(), Some("./seccomp-slow 1"));
        let deep = Variant::parse("deep=env:TMPDIR=/tmp/x/a/b;cpus:0").unwrap();
        assert_eq!(deep.env["TMPDIR"], "/tmp/x/a/b");
        assert_eq!(deep.cpus.as_deref(), Some("0"));
        let plu = Variant::parse("plu5=sysctl:vm.page_lock_unfairness=5").unwrap();
        assert_eq!(plu.sysctl["vm.page_lock_unfairness"], "5");
        assert_eq!(plu.settings(), vec!["sysctl:vm.page_lock_unfairness=5"]);
        assert_eq!(
            Variant::parse("base").unwrap().settings(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn bad_variants_are_refused_with_what_to_do() {
        let unknown = Variant::parse("a=color:red").unwrap_err();
        assert!(format!("{unknown:#}").contains("unknown setting kind 'color'"));
        let no_value = Variant::parse("a=env:X").unwrap_err();
        assert!(format!("{no_value:#}").contains("needs KEY=VALUE"));
        let twice = gather(&["a".into(), "b".into(), "a".into()], &[]).unwrap_err();
        assert!(twice.to_string().contains("'a' is given twice"), "{twice}");
        assert!(gather(&["a".into()], &[]).is_err());
        let sysctl = Variant::parse("s=sysctl:vm.no_such_knob=1").unwrap();
        let error = format!("{:#}", sysctl.check().unwrap_err());
        assert!(
            error.contains("variant 's'") && error.contains("unknown sysctl"),
            "{error}"
        );
        let cpus = Variant::parse("c=cpus:4096").unwrap();
        assert!(format!("{:#}", cpus.check().unwrap_err()).contains("CPU 4096"));
        let cgroup = Variant::parse("g=cgroup:no/such/group").unwrap();
        assert!(cgroup.check().is_err());
    }

    #[test]
    fn a_variants_file_reads_as_the_flags_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.toml");
        std::fs::write(
            &path,
            "[[variant]]\nname = \"base\"\n[[variant]]\nname = \"deep\"\nenv = { TMPDIR = \"/tmp/a\" }\n",
        )
        .unwrap();
        let variants = gather(&[], std::slice::from_ref(&path)).unwrap();
        assert_eq!(
            variants[1],
            Variant::parse("deep=env:TMPDIR=/tmp/a").unwrap()
        );
        std::fs::write(&path, "[[variant]]\nname = \"x\"\ncolour = 1\n").unwrap();
        assert!(gather(&[], &[path]).is_err());
    }

    #[test]
    fn a_sysctl_guard_restores_on_drop() {
        // Needs a writable sysctl: only as root.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let key = "kernel.sched_autogroup_enabled";
        let path = sysctl_path(key).unwrap();
        let old = read_sysctl(&path).unwrap();
        let new = if old == "0" { "1" } else { "0" };
        let variant = Variant::parse(&format!("v=sysctl:{key}={new}")).unwrap();
        {
            let _guard = SysctlGuard::apply(&variant).unwrap();
            assert_eq!(read_sysctl(&path).unwrap(), new);
        }
        assert_eq!(read_sysctl(&path).unwrap(), old);
    }
}
