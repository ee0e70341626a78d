//! `kbench job`: submit jobs to the lab's server for its workers
//! (`kbench worker`), and list them.

use super::context::print_json;
use crate::cli::{JobCommand, JobListArgs, SubmitArgs};
use kbench_catalog::profile::Profiles;
use kbench_catalog::suite::DEFAULT_SUITE;
use kbench_fleet::api::Api;
use kbench_fleet::jobs;
use kbench_model::lab::Job;
use kbench_report::format::{Style, text_or_json};
use kbench_store::JobSpec;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn job(command: JobCommand, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    match command {
        JobCommand::Submit(args) => submit(args, profile_dirs),
        JobCommand::List(args) => list(args),
    }
}

fn submit(args: SubmitArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut names = args.names.clone();
    names.extend(args.suites.iter().cloned());
    if names.is_empty() {
        names.push(DEFAULT_SUITE.to_string());
    }
    let profiles = Profiles::load(profile_dirs)?;
    let spec = JobSpec {
        set: args.into.clone(),
        identifier: args.identifier.clone(),
        names: kbench_catalog::job::names_to_send(names, &profiles)?,
        kernel: args.kernel.clone(),
        rounds: args.rounds,
        max_time: args.max_time,
        tags: args.tags.clone(),
    };
    // The server and the worker check the same; a typo fails here rather
    // than on a worker, later.
    kbench_catalog::job::check_spec(&spec, &profiles)?;
    let api = Api::new(&args.server, Some(&args.token))?;
    let job = jobs::submit(&api, &spec)?;
    if args.json {
        print_json(&job)?;
    } else {
        println!("{}", job.id);
        eprintln!(
            "Queued job {} ({} as '{}' into '{}'); `kbench job list --server {}` follows it.",
            job.id,
            job.spec.names.join(" "),
            job.spec.identifier,
            job.spec.set,
            api.url
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn list(args: JobListArgs) -> anyhow::Result<ExitCode> {
    let api = Api::new(&args.server, None)?;
    let list = jobs::list(&api)?;
    if args.json {
        print_json(&list.document)?;
        return Ok(ExitCode::SUCCESS);
    }
    let jobs = list.jobs()?;
    if jobs.is_empty() {
        eprintln!("No jobs on {}; `kbench job submit` queues one.", api.url);
    } else {
        print!(
            "{}",
            text_or_json::<Vec<Job>>(false).render(&jobs, Style::default())
        );
    }
    Ok(ExitCode::SUCCESS)
}
