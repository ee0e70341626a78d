//! Starting a campaign: every check first (kernels, initrds, kexec, the
//! hook, no other campaign), then the plan saved, the hook installed and
//! the first switch. Nothing switches before every check has passed.

use crate::error::{CampaignError, Result, refuse};
use crate::resume::Teller;
use crate::state::{list, save};
use crate::{hook, kernels, kexec, plan, switch, watchdog};
use kbench_model::campaign::{Boot, CAMPAIGN_SCHEMA, Campaign, CampaignState, Settle, Switch};
use kbench_model::now_ms;
use kbench_store::Database;
use std::path::{Path, PathBuf};

/// What `kbench campaign start` asks.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub name: String,
    /// `NAME=PATH_OR_RELEASE`, in order; the first is the baseline.
    pub kernels: Vec<(String, String)>,
    /// `NAME=PATH` initrds that replace the installed ones.
    pub initrds: Vec<(String, PathBuf)>,
    pub boots_per_kernel: u32,
    pub switch: Switch,
    /// `kbench run`'s arguments, checked by the caller.
    pub run_args: Vec<String>,
    pub settle: Settle,
    pub panic_s: u32,
    pub hook_timeout_s: u64,
    pub until_decided: Option<u32>,
    pub seed: Option<u64>,
    /// The kbench binary and the database the hook resumes with (an
    /// absolute path or a URL).
    pub kbench: PathBuf,
    pub db: String,
}

/// Where installed kernels are.
const BOOT_DIR: &str = "/boot";

/// Checks `request`, saves the campaign, installs its hook and switches
/// to its first boot's kernel; the campaign as saved. Returns once the
/// switch is under way.
pub fn start(
    store: &mut dyn Database,
    request: StartRequest,
    out: &mut dyn FnMut(&str),
) -> Result<Campaign> {
    let mut campaign = check(store, request)?;
    let mut teller = Teller { out };
    let hook_line = shlex::try_join([
        campaign.kbench.as_str(),
        "--db",
        &campaign.db,
        "campaign",
        "resume",
    ])
    .map_err(|_| CampaignError::Invalid("the kbench or database path holds a NUL byte".into()))?;
    hook::install(&campaign.hook, &campaign.name, &hook_line)?;
    let order: Vec<String> = campaign
        .boots
        .iter()
        .map(|boot| campaign.kernels[boot.kernel].name.clone())
        .collect();
    let started = format!(
        "started: {} boots in the order {} (seed {}); hook: {hook_line}",
        order.len(),
        order.join(" "),
        campaign.seed,
    );
    teller.tell(&mut campaign, None, started);
    save(store, &campaign)?;
    let target = switch::prepare(&mut campaign, 0, now_ms());
    let switched = switch::load(&campaign, &target).and_then(|()| {
        let (armed, how) = watchdog::arm(campaign.hook_timeout_s);
        campaign.boots[0].watchdog = armed;
        teller.tell(&mut campaign, Some(0), how);
        save(store, &campaign)?;
        let name = campaign.name.clone();
        let mut out = |line: String| (teller.out)(&format!("kbench campaign {name}: {line}"));
        switch::perform(&campaign, &target, &mut out)
    });
    if let Err(error) = switched {
        hook::remove(&campaign.hook)?;
        campaign.state = CampaignState::Stopped {
            at_ms: now_ms(),
            reason: format!("the first switch failed: {error}"),
        };
        save(store, &campaign)?;
        return Err(error);
    }
    Ok(campaign)
}

/// Every check of `request`, in the order a user fixes them; the
/// campaign it plans.
fn check(store: &mut dyn Database, request: StartRequest) -> Result<Campaign> {
    kbench_model::validate_name("campaign", &request.name).map_err(CampaignError::Invalid)?;
    let campaigns = list(store)?;
    if let Some(other) = campaigns.iter().find(|c| c.state.is_running()) {
        refuse!(
            "campaign {} is running (`kbench campaign show {}`): one campaign at a time. Stop it \
             with `kbench campaign stop {}` first",
            other.name,
            other.name,
            other.name
        );
    }
    if campaigns.iter().any(|c| c.name == request.name) {
        refuse!(
            "there was a campaign {} already; give the new one another name",
            request.name
        );
    }
    if store
        .result_sets()?
        .iter()
        .any(|set| set.name == request.name)
    {
        refuse!(
            "result set {} exists already; a campaign's runs go into a set of their own: give \
             the campaign another name",
            request.name
        );
    }
    if request.kernels.len() < 2 {
        refuse!(
            "a campaign compares two kernels or more: give --kernel NAME=PATH_OR_RELEASE for each"
        );
    }
    for (at, (name, _)) in request.kernels.iter().enumerate() {
        kbench_model::validate_name("kernel name", name).map_err(CampaignError::Invalid)?;
        if request.kernels[..at].iter().any(|(other, _)| other == name) {
            refuse!("kernel name {name} is given twice: each --kernel needs a name of its own");
        }
    }
    for (name, _) in &request.initrds {
        if !request.kernels.iter().any(|(kernel, _)| kernel == name) {
            refuse!("--initrd {name}=...: no --kernel is named {name}");
        }
    }
    if request.boots_per_kernel == 0 {
        refuse!("--boots must be 1 or more");
    }
    if let Some(cap) = request.until_decided
        && cap < request.boots_per_kernel
    {
        refuse!(
            "--until-decided {cap} is below --boots {}: the cap counts boots per kernel, the planned ones included",
            request.boots_per_kernel
        );
    }
    let hook = hook::choose(Path::new("/"));
    hook::check(&hook)?;
    let boot_dir = Path::new(BOOT_DIR);
    let kernels = request
        .kernels
        .iter()
        .map(|(name, given)| {
            let initrd = request
                .initrds
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| p.as_path());
            kernels::resolve(name, given, initrd, boot_dir)
        })
        .collect::<Result<Vec<_>>>()?;
    match &request.switch {
        Switch::Kexec { .. } => {
            // The kernel's own check of the image, and of kexec here.
            let first = &kernels[0];
            kexec::load(
                Path::new(&first.image),
                first.initrd.as_deref().map(Path::new),
                "",
            )?;
            kexec::unload()?;
        }
        Switch::Command { command } => switch::check_command(command)?,
    }
    let seed = request.seed.unwrap_or_else(|| fastrand::u64(..));
    let order = plan::order(
        kernels.len(),
        request.boots_per_kernel,
        &mut fastrand::Rng::with_seed(seed),
    );
    Ok(Campaign {
        schema: CAMPAIGN_SCHEMA.to_string(),
        name: request.name,
        created_at_ms: now_ms(),
        kernels,
        origin: kernels::origin(boot_dir),
        switch: request.switch,
        run_args: request.run_args,
        settle: request.settle,
        panic_s: request.panic_s,
        hook_timeout_s: request.hook_timeout_s,
        hook,
        kbench: request.kbench.to_string_lossy().into_owned(),
        db: request.db,
        seed,
        boots_per_kernel: request.boots_per_kernel,
        until_decided: request.until_decided,
        boots: order.into_iter().map(Boot::planned).collect(),
        state: CampaignState::Running,
        log: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{SETTLE, campaign};
    use kbench_store::{RunSink, SqliteStore};

    fn request(name: &str) -> StartRequest {
        StartRequest {
            name: name.into(),
            kernels: vec![("a".into(), "x".into()), ("b".into(), "y".into())],
            initrds: vec![],
            boots_per_kernel: 2,
            switch: Switch::Kexec {
                append: String::new(),
            },
            run_args: vec!["quick".into()],
            settle: SETTLE,
            panic_s: 10,
            hook_timeout_s: 600,
            until_decided: None,
            seed: None,
            kbench: "/usr/bin/kbench".into(),
            db: "/tmp/results.db".into(),
        }
    }

    fn refusal(store: &mut SqliteStore, request: StartRequest) -> String {
        check(store, request).unwrap_err().to_string()
    }

    #[test]
    fn one_campaign_at_a_time_each_in_a_set_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let mut running = campaign(&[0, 1]);
        save(&mut store, &running).unwrap();
        let error = refusal(&mut store, request("d"));
        assert!(
            error.contains("campaign c is running") && error.contains("kbench campaign stop c"),
            "{error}"
        );
        running.state = CampaignState::Stopped {
            at_ms: 1,
            reason: "stopped".into(),
        };
        save(&mut store, &running).unwrap();
        let error = refusal(&mut store, request("c"));
        assert!(error.contains("there was a campaign c already"), "{error}");
        let run = store
            .begin_run("taken", "a", &kbench_model::results::RunInfo::default())
            .unwrap();
        store
            .end_run(run, kbench_model::results::RunStatus::Complete, None)
            .unwrap();
        let error = refusal(&mut store, request("taken"));
        assert!(error.contains("result set taken exists already"), "{error}");
        let mut capped = request("d");
        capped.until_decided = Some(1);
        let error = refusal(&mut store, capped);
        assert!(
            error.contains("--until-decided 1 is below --boots 2"),
            "{error}"
        );
    }
}
