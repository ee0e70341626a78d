//! `kbench set`: edit a result set's title, description and identifiers
//! through the store's `Editing` role.

use crate::cli::{SetCommand, SetEditArgs};
use anyhow::bail;
use kbench_store::Editing;
use std::process::ExitCode;

pub fn set(command: SetCommand, store: &mut dyn Editing) -> anyhow::Result<ExitCode> {
    match command {
        SetCommand::Edit(args) => edit(args, store)?,
        SetCommand::Rename { set, old, new } => {
            store.rename_identifier(&set, &old, &new)?;
            eprintln!("Renamed '{old}' to '{new}' in result set '{set}'.");
        }
        SetCommand::Order { set, identifiers } => {
            let order = store.order_identifiers(&set, &identifiers)?;
            eprintln!("Result set '{set}' now reads: {}.", order.join(", "));
        }
        SetCommand::Remove {
            set,
            identifier,
            yes,
        } => {
            if !yes {
                bail!(
                    "removing '{identifier}' from result set '{set}' deletes its runs and samples \
                     for good, so it needs --yes; nothing was removed (`kbench export {set}` keeps \
                     a copy first)"
                );
            }
            let removed = store.remove_identifier(&set, &identifier)?;
            eprintln!(
                "Removed '{identifier}' from result set '{set}': {} run(s), {} sample(s).",
                removed.runs, removed.samples
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn edit(args: SetEditArgs, store: &mut dyn Editing) -> anyhow::Result<()> {
    let set = &args.set;
    if args.title.is_none() && args.description.is_none() && args.identifier.is_none() {
        bail!("nothing to change: give --title, --description, or --identifier with --factor");
    }
    if let Some(identifier) = &args.identifier {
        let levels = args.factors.into_iter().collect();
        let factors = store.set_factors(set, identifier, &levels, &args.unset_factor)?;
        let list: Vec<String> = factors.iter().map(|(k, v)| format!("{k}={v}")).collect();
        eprintln!(
            "'{identifier}' of '{set}' has factors: {}.",
            list.join(", ")
        );
    }
    if args.title.is_some() || args.description.is_some() {
        store.describe_set(set, args.title.as_deref(), args.description.as_deref())?;
        eprintln!("Result set '{set}' described.");
    }
    Ok(())
}
