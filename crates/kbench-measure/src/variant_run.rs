//! `kbench run --variant`, made ready: the checked variants with their
//! agent launchers (and a duet's pinned ones), one run request each, the
//! block plan and the seed, owned in one value that lends
//! [`crate::interleave::execute`] its [`InterleavedRequest`]; and what the
//! command says before and after.

use crate::duet;
use crate::error::Result;
use crate::interleave::{BlockPlan, InterleavedRequest};
use crate::launcher::{Launcher, ProcessLauncher};
use crate::plan::SamplingPlan;
use crate::runner::{RunRequest, RunSummary};
use crate::variant::Variant;
use kbench_model::TestKey;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// What the flags chose besides the variants.
pub struct VariantChoice<'a> {
    /// The result set (`--into`), its name checked.
    pub set: &'a str,
    pub tests: &'a [TestKey],
    pub plan: SamplingPlan,
    /// Time per test and variant (`--budget`).
    pub budget: Duration,
    /// Run both variants at once (`--duet`).
    pub duet: bool,
    /// The order's seed (`--seed`); random without it.
    pub seed: Option<u64>,
    /// Measure the other tests after one FAILED (`--keep-going`).
    pub keep_going: bool,
    /// The kbench binary the agents run, and their environment
    /// ([`crate::launcher::agent_env`]).
    pub exe: &'a Path,
    pub env: &'a [(&'static str, OsString)],
}

/// Variants ready to measure in interleaved blocks.
pub struct VariantRun {
    variants: Vec<Variant>,
    requests: Vec<RunRequest>,
    launchers: Vec<ProcessLauncher>,
    duet: Option<[[ProcessLauncher; 2]; 2]>,
    blocks: BlockPlan,
    seed: u64,
}

impl VariantRun {
    /// `variants` (from [`crate::variant::gather`], the first the
    /// baseline) as `choice` asks; a duet is checked here, before anything
    /// runs.
    pub fn prepare(variants: Vec<Variant>, choice: VariantChoice<'_>) -> Result<VariantRun> {
        let mut plan = choice.plan;
        let blocks = BlockPlan::for_variants(&mut plan, choice.budget);
        let launchers = variants
            .iter()
            .map(|v| v.launcher(choice.exe, choice.env))
            .collect::<Result<Vec<_>>>()?;
        let duet = if choice.duet {
            duet::check_variants(&variants, choice.tests)?;
            Some(duet::launchers(&variants, choice.exe, choice.env)?)
        } else {
            None
        };
        let seed = match choice.seed {
            Some(seed) => seed,
            None => duet::random_seed()?,
        };
        let requests = variants
            .iter()
            .map(|v| {
                let note = duet::note(&variants, v, choice.duet);
                v.request(choice.set, choice.tests, &plan, note, choice.keep_going)
            })
            .collect();
        Ok(VariantRun {
            variants,
            requests,
            launchers,
            duet,
            blocks,
            seed,
        })
    }

    /// The request [`crate::interleave::execute`] measures.
    pub fn request(&self) -> InterleavedRequest<'_> {
        InterleavedRequest {
            requests: self.requests.clone(),
            variants: self.variants.clone(),
            launchers: self.launchers.iter().map(|l| l as &dyn Launcher).collect(),
            blocks: self.blocks.clone(),
            seed: self.seed,
            duet: self.duet.as_ref().map(|[a, b]| {
                [
                    [&a[0] as &dyn Launcher, &a[1]],
                    [&b[0] as &dyn Launcher, &b[1]],
                ]
            }),
        }
    }

    /// The variants' names (identifiers), the baseline first.
    pub fn names(&self) -> Vec<String> {
        self.variants.iter().map(|v| v.name.clone()).collect()
    }

    /// The line said before measuring.
    pub fn opening(&self) -> String {
        format!(
            "Measuring {} variants in interleaved blocks (seed {}; the first, '{}', is the baseline).",
            self.variants.len(),
            self.seed,
            self.variants[0].name
        )
    }

    /// The lines said after measuring, into set `set`: what was stored,
    /// and the tests that FAILED, if any.
    pub fn ending(&self, summary: &RunSummary, set: &str) -> String {
        let interrupted = if summary.interrupted {
            " (interrupted: run the same command again to measure a new session)"
        } else {
            ""
        };
        let stored = format!(
            "\nStored {} sample(s) of {} variants in result set '{set}'{interrupted}.",
            summary.samples,
            self.variants.len(),
        );
        match summary.failed_line(self.requests[0].tests.len()) {
            Some(failed) => format!("{stored}\n{failed}"),
            None => stored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(duet: bool, seed: Option<u64>) -> Result<VariantRun> {
        let variants = vec![
            Variant::parse("base").unwrap(),
            Variant::parse("tuned=env:X=1").unwrap(),
        ];
        let tests = [TestKey::parse("syscall-null").unwrap()];
        let env = [("KBENCH_PROFILES", OsString::from("/p"))];
        VariantRun::prepare(
            variants,
            VariantChoice {
                set: "s",
                tests: &tests,
                plan: SamplingPlan::default(),
                budget: Duration::from_secs(2),
                duet,
                seed,
                keep_going: false,
                exe: Path::new("/bin/kbench"),
                env: &env,
            },
        )
    }

    #[test]
    fn each_variant_gets_its_request_and_the_seed_is_kept() {
        let run = prepared(false, Some(7)).unwrap();
        let request = run.request();
        assert_eq!(request.seed, 7);
        assert_eq!(request.launchers.len(), 2);
        assert!(request.duet.is_none());
        let identifiers: Vec<&str> = request
            .requests
            .iter()
            .map(|r| r.identifier.as_str())
            .collect();
        assert_eq!(identifiers, ["base", "tuned"]);
        assert!(
            request
                .requests
                .iter()
                .all(|r| r.set == "s" && r.rounds == 1)
        );
        assert!(request.requests.iter().all(|r| r.notes.is_empty()));
        assert_eq!(request.blocks.min_blocks, BlockPlan::MIN_BLOCKS);
        assert_eq!(run.names(), ["base", "tuned"]);
        assert_eq!(
            run.opening(),
            "Measuring 2 variants in interleaved blocks (seed 7; the first, 'base', is the baseline)."
        );
    }

    #[test]
    fn the_ending_says_whether_the_session_was_interrupted() {
        let run = prepared(false, Some(1)).unwrap();
        let mut summary = RunSummary {
            samples: 40,
            ..RunSummary::default()
        };
        assert_eq!(
            run.ending(&summary, "s"),
            "\nStored 40 sample(s) of 2 variants in result set 's'."
        );
        summary.interrupted = true;
        assert!(
            run.ending(&summary, "s")
                .contains("(interrupted: run the same")
        );
    }

    #[test]
    fn a_duet_is_checked_and_notes_its_partner() {
        match prepared(true, None) {
            // Machines of one CPU refuse a duet.
            Err(error) => assert!(error.to_string().contains("--duet"), "{error}"),
            Ok(run) => {
                let request = run.request();
                assert!(request.duet.is_some());
                assert!(request.requests[0].notes[0].contains("'tuned'"));
            }
        }
    }
}
