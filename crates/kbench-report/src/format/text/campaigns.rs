//! Campaigns as `kbench campaign show` and `list` print them: one
//! campaign's kernels, plan, each boot's fate and its log; or a line per
//! campaign.

use kbench_analysis::number::date;
use kbench_model::campaign::{Boot, BootStatus, Campaign, CampaignState, Hook, Switch};
use std::fmt::Write;

/// "running: 3 of 4 boots measured", "finished ...", "STOPPED: why".
fn progress(campaign: &Campaign) -> String {
    let done = campaign
        .boots
        .iter()
        .filter(|b| b.status == BootStatus::Done)
        .count();
    let of = format!("{done} of {} boots measured", campaign.boots.len());
    match &campaign.state {
        CampaignState::Running => format!("running, {of}"),
        CampaignState::Finished { at_ms } => format!("finished {}, {of}", date(*at_ms)),
        CampaignState::Stopped { reason, .. } => format!("STOPPED, {of}: {reason}"),
    }
}

/// "HH:MM:SS" of a time in ms since the epoch (UTC).
fn clock(at_ms: i64) -> String {
    let seconds = at_ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A boot's row: status, how it started, its boot id's head, the settle
/// wait, runs, time, and what went wrong before.
fn row(index: usize, campaign: &Campaign, boot: &Boot) -> [String; 8] {
    let settled = boot.settled.map_or(String::new(), |s| match s.settled {
        true => format!("{:.0} s", s.waited_s),
        false => format!("NO ({:.0} s)", s.waited_s),
    });
    let seconds = match (boot.started_at_ms, boot.ended_at_ms) {
        (Some(start), Some(end)) => format!("{} s", (end - start) / 1000),
        _ => String::new(),
    };
    let mut notes = Vec::new();
    for aborted in &boot.aborted {
        notes.push(format!(
            "cut short in boot {} ({} run(s) aborted)",
            short(&aborted.boot_id),
            aborted.runs.len()
        ));
    }
    for wrong in &boot.wrong {
        notes.push(format!("came up in {}", wrong.release));
    }
    if let Some(exit) = boot.exit.as_deref().filter(|e| *e != "exit status: 0") {
        notes.push(exit.to_string());
    }
    [
        (index + 1).to_string(),
        campaign.kernels[boot.kernel].name.clone(),
        boot.status.as_str().to_string(),
        boot.via.map_or(String::new(), |v| v.as_str().to_string()),
        boot.boot_id.as_deref().map_or(String::new(), short),
        settled,
        format!("{} {seconds}", boot.runs.len()),
        notes.join("; "),
    ]
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

pub(super) fn text(campaign: &Campaign) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Campaign {}: {}", campaign.name, progress(campaign));
    for kernel in &campaign.kernels {
        let _ = writeln!(
            out,
            "  {} = {} ({}{})",
            kernel.name,
            kernel.release,
            kernel.image,
            kernel
                .initrd
                .as_deref()
                .map_or(String::new(), |i| format!(", initrd {i}"))
        );
    }
    let switch = match &campaign.switch {
        Switch::Kexec { append } if append.is_empty() => "kexec".to_string(),
        Switch::Kexec { append } => format!("kexec, adding \"{append}\""),
        Switch::Command { command } => format!("the command `{command}`"),
    };
    let hook = match &campaign.hook {
        Hook::Systemd { unit, .. } => format!("systemd unit {unit}"),
        Hook::RcLocal { path } => path.clone(),
    };
    let _ = writeln!(
        out,
        "  started {} from {}; switched by {switch} (panic={}); hook: {hook}",
        date(campaign.created_at_ms),
        campaign.origin.release,
        campaign.panic_s
    );
    let order: Vec<&str> = campaign
        .boots
        .iter()
        .map(|b| campaign.kernels[b.kernel].name.as_str())
        .collect();
    let cap = campaign.until_decided.map_or(String::new(), |cap| {
        format!(", until decided (at most {cap} per kernel)")
    });
    let _ = writeln!(
        out,
        "  boots: {} per kernel planned{cap}; order {} (seed {})",
        campaign.boots_per_kernel,
        order.join(" "),
        campaign.seed
    );
    let _ = writeln!(
        out,
        "  each boot runs: kbench run {}\n",
        campaign.run_args.join(" ")
    );
    let head = [
        "#",
        "kernel",
        "status",
        "via",
        "boot id",
        "settled",
        "runs time",
        "notes",
    ];
    let rows: Vec<[String; 8]> = (campaign.boots.iter().enumerate())
        .map(|(i, boot)| row(i, campaign, boot))
        .collect();
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .max()
                .unwrap_or(0)
                .max(head[c].len())
        })
        .collect();
    for cells in std::iter::once(head.map(str::to_string)).chain(rows) {
        let line: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
    let _ = writeln!(out, "\nLog (UTC):");
    for entry in &campaign.log {
        let _ = writeln!(out, "  {} {}", clock(entry.at_ms), entry.text);
    }
    out
}

pub(super) fn list(campaigns: &[Campaign]) -> String {
    if campaigns.is_empty() {
        return "No campaign: `kbench campaign start` begins one.\n".to_string();
    }
    let mut out = String::new();
    for campaign in campaigns {
        let kernels: Vec<String> = campaign
            .kernels
            .iter()
            .map(|k| format!("{}={}", k.name, k.release))
            .collect();
        let _ = writeln!(
            out,
            "{}  {}  {}",
            campaign.name,
            kernels.join(" "),
            progress(campaign)
        );
    }
    out
}
