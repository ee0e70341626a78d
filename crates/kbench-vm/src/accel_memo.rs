//! The answer of the last KVM probe boot, remembered for the host's boot:
//! where /dev/kvm exists but KVM guests fail, every `--accel auto` command
//! would otherwise spend a probe boot learning it again (a bisection boots
//! dozens of times). The answer holds while the host's boot id and the
//! qemu binary are the same; a reboot or another qemu probes again.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A probe's answer, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeAnswer {
    /// The host's `/proc/sys/kernel/random/boot_id` when it was probed.
    pub boot_id: String,
    /// The qemu binary probed.
    pub qemu: PathBuf,
    /// `None`: KVM worked; else why it did not.
    pub failure: Option<String>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// Where answers are kept: one file, the newest answer.
pub struct ProbeMemo {
    pub file: PathBuf,
}

impl ProbeMemo {
    /// Beside the kernel cache: `$XDG_CACHE_HOME/kbench/kvm-probe.json`
    /// by default.
    pub fn beside(cache: &crate::kernel_fetch::KernelCache) -> ProbeMemo {
        ProbeMemo {
            file: cache.dir.with_file_name("kvm-probe.json"),
        }
    }

    /// Whether KVM works with `qemu`: [`ProbeMemo::answer`], saying where
    /// a remembered failure came from.
    pub fn kvm_works(
        &self,
        qemu: &Path,
        probe: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let (answer, remembered) = self.answer(qemu, probe);
        answer.map_err(|why| match remembered {
            true => format!(
                "{why} (this boot's probe, remembered in {}; a reboot or another qemu probes \
                 again)",
                self.file.display()
            ),
            false => why,
        })
    }

    /// The probe's answer for `qemu` in this boot of the host: remembered
    /// (`true`), or from `probe` now, then remembered (`false`). A memo
    /// that cannot be read or written only costs a probe.
    pub fn answer(
        &self,
        qemu: &Path,
        probe: impl FnOnce() -> Result<(), String>,
    ) -> (Result<(), String>, bool) {
        let boot_id = host_boot_id();
        let remembered = std::fs::read(&self.file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<ProbeAnswer>(&bytes).ok())
            .filter(|answer| {
                !boot_id.is_empty() && answer.boot_id == boot_id && answer.qemu == qemu
            });
        if let Some(answer) = remembered {
            return (answer.failure.map_or(Ok(()), Err), true);
        }
        let result = probe();
        let answer = ProbeAnswer {
            boot_id,
            qemu: qemu.to_path_buf(),
            failure: result.clone().err(),
            at_ms: kbench_model::now_ms(),
        };
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let json = serde_json::to_string_pretty(&answer).expect("an answer serializes");
        let _ = std::fs::write(&self.file, json + "\n");
        (result, false)
    }
}

fn host_boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|id| id.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_holds_for_this_boot_and_this_qemu() {
        let dir = tempfile::tempdir().unwrap();
        let memo = ProbeMemo {
            file: dir.path().join("kvm-probe.json"),
        };
        let qemu = Path::new("/usr/bin/qemu-system-x86_64");
        let failed = || Err("failed to set MSR 0x10a".to_string());
        assert_eq!(
            memo.answer(qemu, failed),
            (Err("failed to set MSR 0x10a".into()), false)
        );
        let again = memo.answer(qemu, || panic!("probed again"));
        assert_eq!(again, (Err("failed to set MSR 0x10a".into()), true));
        // Another qemu is probed again, and its answer replaces the first.
        let other = Path::new("/opt/qemu/bin/qemu-system-x86_64");
        assert_eq!(memo.answer(other, || Ok(())), (Ok(()), false));
        assert_eq!(
            memo.answer(other, || panic!("probed again")),
            (Ok(()), true)
        );
        // Another boot of the host is probed again.
        let mut stored: ProbeAnswer =
            serde_json::from_slice(&std::fs::read(&memo.file).unwrap()).unwrap();
        stored.boot_id = "another-boot".into();
        std::fs::write(&memo.file, serde_json::to_vec(&stored).unwrap()).unwrap();
        assert_eq!(memo.answer(other, || Ok(())), (Ok(()), false));
    }

    #[test]
    fn an_unreadable_memo_costs_only_a_probe() {
        let dir = tempfile::tempdir().unwrap();
        let memo = ProbeMemo {
            file: dir.path().join("kvm-probe.json"),
        };
        std::fs::write(&memo.file, b"not json").unwrap();
        assert_eq!(memo.answer(Path::new("/q"), || Ok(())), (Ok(()), false));
    }
}
