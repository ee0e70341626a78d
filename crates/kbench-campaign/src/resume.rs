//! The hook's work at a boot: find the running campaign, check this boot
//! against its plan, measure it, and switch to the next kernel, saving the
//! state before each step so that a machine going down anywhere resumes
//! correctly at its next boot.

use crate::decide::{Here, Step, next};
use crate::error::{CampaignError, Result};
use crate::state::{running, save};
use crate::{decided, hook, invocation, kexec, plan, settle, switch, watchdog};
use kbench_model::campaign::{
    Aborted, Boot, BootStatus, BootVia, Campaign, CampaignState, WrongKernel,
};
use kbench_model::now_ms;
use kbench_store::Database;
use std::fs::File;
use std::os::fd::AsRawFd;

/// Held while a hook works, so that two never run at once in one boot.
const LOCK: &str = "/run/kbench-campaign.lock";

/// What the hook tells: each line goes to its output (the console, under
/// the systemd unit) and the campaign's log.
pub(crate) struct Teller<'a> {
    pub out: &'a mut dyn FnMut(&str),
}

impl Teller<'_> {
    pub fn tell(&mut self, campaign: &mut Campaign, boot: Option<usize>, text: String) {
        (self.out)(&format!("kbench campaign {}: {text}", campaign.name));
        campaign.note(now_ms(), boot, text);
    }
}

/// This boot's release, id and command line.
fn here() -> Here {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|text| text.trim().to_string())
            .unwrap_or_default()
    };
    Here {
        release: kbench_sysinfo::kernel_release(),
        boot_id: read("/proc/sys/kernel/random/boot_id"),
        cmdline: read("/proc/cmdline"),
        now_ms: now_ms(),
    }
}

/// Takes the hook's lock; `None` when another hook holds it.
fn lock() -> Result<Option<File>> {
    let file = File::create(LOCK).map_err(CampaignError::os(format!("creating {LOCK}")))?;
    // SAFETY: flock(2) on an open descriptor.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    Ok(taken.then_some(file))
}

/// Resumes the running campaign at this boot. Returns once the next
/// switch is under way, or the campaign has ended.
pub fn resume(store: &mut dyn Database, out: &mut dyn FnMut(&str)) -> Result<()> {
    let Some(_lock) = lock()? else {
        out("kbench campaign: another hook is at work in this boot; nothing to do");
        return Ok(());
    };
    let Some(mut campaign) = running(store)? else {
        out("kbench campaign: no campaign is running; nothing to do");
        return Ok(());
    };
    let mut teller = Teller { out };
    let here = here();
    let switched =
        (campaign.current()).filter(|&i| campaign.boots[i].status == BootStatus::Switching);
    if let Some(index) = switched.filter(|&i| campaign.boots[i].watchdog) {
        let done = watchdog::disarm().unwrap_or_else(|| {
            format!(
                "WARNING: the watchdog armed before this boot cannot be disarmed (this kernel has \
                 no /dev/watchdog): it resets the machine within {} s of the switch",
                campaign.hook_timeout_s
            )
        });
        teller.tell(&mut campaign, Some(index), done);
    }
    loop {
        match next(&campaign, &here) {
            Step::Recover { index } => {
                recover(store, &mut campaign, index, &mut teller)?;
                if !campaign.state.is_running() {
                    return Ok(());
                }
            }
            Step::Measure { index, via } => {
                measure(store, &mut campaign, index, via, &here, &mut teller)?;
                return after_measuring(store, &mut campaign, &mut teller);
            }
            Step::Retry { index } => {
                campaign.boots[index].wrong.push(WrongKernel {
                    release: here.release.clone(),
                    boot_id: here.boot_id.clone(),
                    at_ms: here.now_ms,
                });
                let kernel = campaign.kernel_of(index).clone();
                teller.tell(
                    &mut campaign,
                    Some(index),
                    format!(
                        "came up in {} instead of {} ({}); this boot is not measured as {}; switching again, once",
                        here.release, kernel.name, kernel.release, kernel.name
                    ),
                );
                return switch_to(store, &mut campaign, index, &mut teller);
            }
            Step::Switch { index } => return switch_to(store, &mut campaign, index, &mut teller),
            Step::Finish => return finish(store, &mut campaign, &mut teller),
            Step::Stop { reason } => return stop(store, &mut campaign, reason, &mut teller),
        }
    }
}

/// Marks the runs of boot `index`'s cut-short invocation aborted and plans
/// the boot again; a boot cut short twice stops the campaign, rather than
/// loop on a kernel that crashes (or a machine that resets) while it
/// measures.
fn recover(
    store: &mut dyn Database,
    campaign: &mut Campaign,
    index: usize,
    teller: &mut Teller,
) -> Result<()> {
    let boot = campaign.boots[index].clone();
    let boot_id = boot.boot_id.clone().unwrap_or_default();
    let identifier = campaign.kernel_of(index).name.clone();
    let runs = invocation::runs_of_boot(store, campaign, &identifier, &boot_id)?;
    let reason = format!(
        "aborted: the machine went down during boot {} of campaign {} (boot id {boot_id}); that boot was measured again",
        index + 1,
        campaign.name
    );
    for run in &runs {
        store.abort_run(run.id, &reason)?;
    }
    let mut again = Boot::planned(boot.kernel);
    again.aborted = boot.aborted;
    again.aborted.push(Aborted {
        boot_id,
        runs: runs.iter().map(|run| run.id.0).collect(),
        found_at_ms: now_ms(),
    });
    again.wrong = boot.wrong;
    campaign.boots[index] = again;
    let times = campaign.boots[index].aborted.len();
    teller.tell(
        campaign,
        Some(index),
        format!(
            "boot {} was cut short mid-invocation; its {} run(s) are kept, marked aborted",
            index + 1,
            runs.len()
        ),
    );
    if times >= 2 {
        let kernel = campaign.kernel_of(index).name.clone();
        let reason = format!(
            "boot {} ({kernel}) was cut short {times} times while it measured: {kernel} crashes \
             under the tests, or something resets the machine (`journalctl -b -1` and the \
             console say which)",
            index + 1
        );
        return stop(store, campaign, reason, teller);
    }
    teller.tell(
        campaign,
        Some(index),
        format!("boot {} is done again", index + 1),
    );
    save(store, campaign)
}

/// Measures boot `index` in this boot: settle, then the invocation.
fn measure(
    store: &mut dyn Database,
    campaign: &mut Campaign,
    index: usize,
    via: BootVia,
    here: &Here,
    teller: &mut Teller,
) -> Result<()> {
    let boot = &mut campaign.boots[index];
    boot.status = BootStatus::Measuring;
    boot.boot_id = Some(here.boot_id.clone());
    boot.via = Some(via);
    boot.started_at_ms = Some(now_ms());
    let kernel = campaign.kernel_of(index).clone();
    let total = campaign.boots.len();
    save(store, campaign)?;
    let settled = settle::wait(&campaign.settle, &mut |line| (teller.out)(&line));
    campaign.boots[index].settled = Some(settled);
    let settled_text = match settled.settled {
        true => format!(
            "settled after {:.0} s (load {:.2})",
            settled.waited_s, settled.load
        ),
        false => format!(
            "NOT settled after {:.0} s (load {:.2}): measuring anyway",
            settled.waited_s, settled.load
        ),
    };
    teller.tell(
        campaign,
        Some(index),
        format!(
            "boot {} of {total}: {} ({}) via {}, {settled_text}; measuring: {}",
            index + 1,
            kernel.name,
            kernel.release,
            via.as_str(),
            invocation::command_line(campaign, index).join(" ")
        ),
    );
    save(store, campaign)?;
    let exit = invocation::run(campaign, index, via)?;
    let runs = invocation::runs_of_boot(store, campaign, &kernel.name, &here.boot_id)?;
    let boot = &mut campaign.boots[index];
    boot.runs = runs.iter().map(|run| run.id.0).collect();
    boot.exit = Some(exit.clone());
    boot.status = BootStatus::Done;
    boot.ended_at_ms = Some(now_ms());
    let seconds = (boot.ended_at_ms.unwrap_or(0) - boot.started_at_ms.unwrap_or(0)) / 1000;
    teller.tell(
        campaign,
        Some(index),
        format!(
            "boot {} of {total} measured: {} run(s), {exit}, {seconds} s",
            index + 1,
            runs.len()
        ),
    );
    save(store, campaign)
}

/// After a measured boot: the next boot, more boots (`--until-decided`),
/// or the end.
fn after_measuring(
    store: &mut dyn Database,
    campaign: &mut Campaign,
    teller: &mut Teller,
) -> Result<()> {
    if campaign.current().is_none() && campaign.until_decided.is_some() {
        let (more, why) = decided::more_rounds(store, campaign)?;
        teller.tell(campaign, None, why);
        let rounds = campaign.boots.len() / campaign.kernels.len();
        let mut rng = plan::resumed(campaign.seed, campaign.kernels.len(), rounds as u32);
        let added = plan::order(campaign.kernels.len(), more, &mut rng);
        campaign.boots.extend(added.into_iter().map(Boot::planned));
    }
    match campaign.current() {
        Some(index) => switch_to(store, campaign, index, teller),
        None => finish(store, campaign, teller),
    }
}

/// Switches to boot `index`'s kernel; a switch that fails stops the
/// campaign.
fn switch_to(
    store: &mut dyn Database,
    campaign: &mut Campaign,
    index: usize,
    teller: &mut Teller,
) -> Result<()> {
    let target = switch::prepare(campaign, index, now_ms());
    if let Err(error) = switch::load(campaign, &target) {
        return stop(store, campaign, error.to_string(), teller);
    }
    teller.tell(
        campaign,
        Some(index),
        format!(
            "switching to boot {} of {}: {} ({})",
            index + 1,
            campaign.boots.len(),
            target.name,
            target.release
        ),
    );
    let (armed, how) = watchdog::arm(campaign.hook_timeout_s);
    campaign.boots[index].watchdog = armed;
    teller.tell(campaign, Some(index), how);
    save(store, campaign)?;
    let name = campaign.name.clone();
    let switched = {
        let mut out = |line: String| (teller.out)(&format!("kbench campaign {name}: {line}"));
        switch::perform(campaign, &target, &mut out)
    };
    match switched {
        Ok(()) => Ok(()),
        Err(error) => stop(
            store,
            campaign,
            format!("the switch failed: {error}"),
            teller,
        ),
    }
}

/// Every boot is measured: the hook goes, the state says finished, and
/// the machine goes back to the origin.
fn finish(store: &mut dyn Database, campaign: &mut Campaign, teller: &mut Teller) -> Result<()> {
    hook::remove(&campaign.hook)?;
    campaign.state = CampaignState::Finished { at_ms: now_ms() };
    let target = switch::origin(campaign);
    teller.tell(
        campaign,
        None,
        format!(
            "finished: {} boots measured; the hook is removed; returning to {}. See `kbench campaign show {}`",
            campaign.boots.len(),
            target.release,
            campaign.name
        ),
    );
    save(store, campaign)?;
    if kbench_sysinfo::kernel_release() == target.release && target.image.is_none() {
        return Ok(());
    }
    switch::load(campaign, &target)?;
    let name = campaign.name.clone();
    let mut out = |line: String| (teller.out)(&format!("kbench campaign {name}: {line}"));
    switch::perform(campaign, &target, &mut out)
}

/// Ends the campaign early with `reason`: the hook goes, nothing switches.
pub(crate) fn stop(
    store: &mut dyn Database,
    campaign: &mut Campaign,
    reason: String,
    teller: &mut Teller,
) -> Result<()> {
    hook::remove(&campaign.hook)?;
    if kexec::loaded() {
        kexec::unload()?;
    }
    campaign.state = CampaignState::Stopped {
        at_ms: now_ms(),
        reason: reason.clone(),
    };
    let release = kbench_sysinfo::kernel_release();
    let stays = match release == campaign.origin.release {
        true => format!("the machine stays in {release}, the kernel it started from"),
        false => format!(
            "the machine stays in {release}; reboot to return to your default kernel ({})",
            campaign.origin.release
        ),
    };
    teller.tell(
        campaign,
        None,
        format!("STOPPED: {reason}; the hook is removed; {stays}"),
    );
    save(store, campaign)
}
