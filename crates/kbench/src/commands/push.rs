//! `kbench push`: sends a local result set to `kbench serve`, as one
//! kbench.samples/1 document with a push id; retried on connection errors
//! and 503 with the same id, so the server stores it once.

use super::context::Db;
use crate::cli::PushArgs;
use kbench_fleet::api::Api;
use std::process::ExitCode;

pub fn push(args: PushArgs, db: &Db) -> anyhow::Result<ExitCode> {
    let api = Api::new(&args.to, Some(&args.token))?;
    let data = db.open_existing()?.load(&args.set)?;
    let target = args.into.clone().unwrap_or_else(|| args.set.clone());
    let push_id = match &args.push_id {
        Some(id) => id.clone(),
        None => kbench_model::random_id()?,
    };
    let answer = kbench_fleet::push::push(&api, &target, &data, &push_id, args.tries)?;
    crate::logs::note(format_args!("kbench push: {answer} (push id {push_id})"));
    Ok(ExitCode::SUCCESS)
}
