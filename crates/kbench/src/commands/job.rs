//! `kbench job`: submit jobs to the lab's server for its workers
//! (`kbench worker`), and list them.

use kbench_catalog::profile::Profiles;
use kbench_fleet::api::Api;
use kbench_fleet::jobs;
use kbench_store::JobSpec;
use std::path::PathBuf;
use std::process::ExitCode;

/// Submit jobs to a lab server for its workers, and list them
#[derive(Debug, clap::Subcommand)]
pub enum JobCommand {
    /// Queue a run for the lab's workers: prints its job id
    #[command(
        after_help = "A worker (`kbench worker`) whose tags include all of the job's runs \
`kbench run NAMES --as ID --into SET` (or, with --kernel, `kbench vm run` on that kernel) and \
uploads its samples to the server as they come. A job whose worker dies is leased again and \
resumes the unfinished run.\n\n\
Examples:\n  kbench job submit --server http://lab:8080 --token $T quick --as 6.18 --into lab\n  \
kbench job submit --server http://lab:8080 --suite quick --kernel debian:6.12 --as deb-6.12 --into lab --tags tcg"
    )]
    Submit(SubmitArgs),
    /// List the server's jobs, newest first
    #[command(after_help = "Example:\n  kbench job list --server http://lab:8080")]
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// The lab's server, http://HOST:PORT
    #[arg(long, value_name = "URL")]
    pub server: String,

    /// API token (`kbench token create` on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: String,

    /// Suites, benchmark ids or tests with options, as for `kbench run` [default: quick]
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    /// A suite to run (the same as naming it)
    #[arg(long = "suite", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Boot this kernel in a VM: debian:VERSION (fetched by the worker) or a release in the
    /// worker's kernel cache
    #[arg(long, value_name = "KERNEL")]
    pub kernel: Option<String>,

    /// Identifier to store the run under
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifier: String,

    /// Result set on the server
    #[arg(long, value_name = "SET")]
    pub into: String,

    /// Only workers with every one of these tags take the job (comma-separated)
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,

    /// Rounds, as for `kbench run`
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    /// Time budget per test and round in seconds, as for `kbench run`
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,

    /// Print the submitted job as JSON on stdout instead of its id
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The lab's server, http://HOST:PORT
    #[arg(long, value_name = "URL")]
    pub server: String,

    /// Print the server's kbench.jobs/1 document on stdout
    #[arg(long)]
    pub json: bool,
}

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
        names.push("quick".to_string());
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
        super::print_json(&job)?;
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

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let api = Api::new(&args.server, None)?;
    let list = jobs::list(&api)?;
    if args.json {
        super::print_json(&list.document)?;
        return Ok(ExitCode::SUCCESS);
    }
    let jobs = list.jobs()?;
    if jobs.is_empty() {
        eprintln!("No jobs on {}; `kbench job submit` queues one.", api.url);
    } else {
        print!("{}", kbench_report::lab::jobs_table(&jobs));
    }
    Ok(ExitCode::SUCCESS)
}
