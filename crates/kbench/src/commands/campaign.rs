//! `kbench campaign`: kernels measured one boot at a time (kbench-campaign).
//! Its lines go to stdout: at boot the hook's reach the console.

use super::context::Db;
use crate::cli::CampaignCommand;
use kbench_campaign::state;
use kbench_model::campaign::Campaign;
use kbench_report::format::{Style, text_or_json};
use std::process::ExitCode;

pub fn campaign(command: CampaignCommand, db: &Db) -> anyhow::Result<ExitCode> {
    let say = &mut |line: &str| println!("{line}");
    match command {
        CampaignCommand::Start(args) => {
            let request = args.request(std::env::current_exe()?, db.location()?.to_arg());
            let request = request.map_err(anyhow::Error::msg)?;
            kbench_campaign::start(db.open()?.as_mut(), request, say)?;
        }
        CampaignCommand::Resume => kbench_campaign::resume(db.open()?.as_mut(), say)?,
        CampaignCommand::Stop(arg) => {
            let mut store = db.open_existing()?;
            kbench_campaign::stop(store.as_mut(), &arg.name, say)?;
        }
        CampaignCommand::List(arg) => {
            let all = state::list(db.open_existing()?.as_mut())?;
            let text = text_or_json::<Vec<Campaign>>(arg.json).render(&all, Style::default());
            print!("{text}");
        }
        CampaignCommand::Show(args) => {
            let campaign = state::load(db.open_existing()?.as_mut(), &args.name.name)?;
            let text = text_or_json::<Campaign>(args.json).render(&campaign, Style::default());
            print!("{text}");
            if !args.json && campaign.every_kernel_measured() {
                println!();
                return super::compare::compare(args.compare(), db);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
