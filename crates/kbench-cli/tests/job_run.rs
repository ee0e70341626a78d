//! A lab job's child command line, as `kbench worker` runs it, parses back
//! with kbench's own flags into the job: its set, identifier, rounds,
//! time budget and names, the job's store and the server, the kernel, and
//! --keep-going (a FAILED test fails the job after the other tests ran).

use clap::Parser;
use kbench_cli::{Cli, Command, VmCommand, job_run_args};
use kbench_model::lab::JobSpec;
use std::ffi::OsString;
use std::path::Path;

/// A job whose every field looks like an option: each must stay a value.
fn hostile_job(kernel: Option<&str>, max_time: Option<f64>) -> JobSpec {
    JobSpec {
        set: "--help".into(),
        identifier: "-x".into(),
        names: vec!["--wrap=sh -c touch /tmp/pwned".into(), "quick".into()],
        kernel: kernel.map(str::to_string),
        rounds: 7,
        max_time,
        tags: vec![],
    }
}

fn parsed(args: Vec<OsString>) -> Cli {
    let mut argv = vec![OsString::from("kbench")];
    argv.extend(args);
    Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

#[test]
fn a_job_without_kernel_is_kbench_run_of_its_fields() {
    for max_time in [Some(0.5), None] {
        let job = hostile_job(None, max_time);
        let cli = parsed(job_run_args(&job, None, Path::new("/w/r.db"), "http://h:1"));
        assert_eq!(cli.db, Some("/w/r.db".into()));
        let Command::Run(run) = cli.command else {
            panic!("not `kbench run`: {:?}", cli.command)
        };
        assert_eq!(run.into, job.set);
        assert_eq!(run.identifier.as_deref(), Some(job.identifier.as_str()));
        assert_eq!(run.rounds, Some(job.rounds));
        assert_eq!(run.sampling.max_time, job.max_time);
        assert_eq!(run.names, job.names);
        assert_eq!(run.upload.upload.as_deref(), Some("http://h:1"));
        assert!(run.sampling.keep_going, "a FAILED test stops no job");
        assert_eq!(run.wrap, None, "a name became --wrap");
    }
}

#[test]
fn a_job_with_a_kernel_is_kbench_vm_run_on_it() {
    for max_time in [Some(2.0), None] {
        let job = hostile_job(Some("debian:6.12"), max_time);
        let args = job_run_args(&job, Some("--help"), Path::new("/w/r.db"), "http://h:1");
        let cli = parsed(args);
        assert_eq!(cli.db, Some("/w/r.db".into()));
        let Command::Vm(VmCommand::Run(run)) = cli.command else {
            panic!("not `kbench vm run`: {:?}", cli.command)
        };
        assert_eq!(run.kernel, "--help");
        assert_eq!(run.into, job.set);
        assert_eq!(run.identifier.as_deref(), Some(job.identifier.as_str()));
        assert_eq!(run.rounds, job.rounds);
        assert_eq!(run.sampling.max_time, job.max_time);
        assert_eq!(run.names, job.names);
        assert_eq!(run.upload.upload.as_deref(), Some("http://h:1"));
        assert!(run.sampling.keep_going, "a FAILED test stops no job");
    }
}
