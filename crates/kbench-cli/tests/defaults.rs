//! The defaults that `--help` states are the ones the commands use: each
//! is read from the flags' help and default values and compared with what
//! kbench-measure and kbench-analysis do when the flag is not given.

use clap::CommandFactory;
use kbench_analysis::thresholds::Thresholds;
use kbench_cli::Cli;
use kbench_measure::adaptive::AdaptiveRounds;
use kbench_measure::interleave::BlockPlan;
use kbench_measure::plan::{PlanChoice, SamplingPlan};

/// The flag `--long` of `kbench PATH...`: its help on one line, and its
/// default value (clap's), if any.
fn flag(path: &[&str], long: &str) -> (String, Option<String>) {
    let mut command = Cli::command();
    for name in path {
        command = command.find_subcommand(name).unwrap().clone();
    }
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long))
        .unwrap_or_else(|| panic!("kbench {path:?} has no --{long}"));
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    let default = arg.get_default_values().first();
    let default = default.map(|value| value.to_string_lossy().into_owned());
    (
        help.split_whitespace().collect::<Vec<_>>().join(" "),
        default,
    )
}

/// The plan of a run that chose nothing: `--target-ci` and `--max-samples`
/// at clap's defaults, `--max-time` and `--min-samples` not given.
fn unchosen() -> SamplingPlan {
    let number = |long| flag(&["run"], long).1.unwrap().parse::<f64>().unwrap();
    SamplingPlan::chosen(&PlanChoice {
        target_ci_percent: number("target-ci"),
        max_time: None,
        min_samples: None,
        max_samples: number("max-samples") as u64,
    })
    .unwrap()
}

#[test]
fn the_sampling_defaults_in_help_are_the_plans() {
    let plan = unchosen();
    assert_eq!(
        plan,
        SamplingPlan::default(),
        "clap's defaults are the plan's"
    );
    let (help, _) = flag(&["run"], "min-samples");
    assert!(
        help.contains(&format!("[default: {};", plan.min_samples)),
        "{help}"
    );
    // Adaptive rounds and variants' blocks shorten the round; --rounds
    // and VMs keep the plan's.
    let mut adaptive = plan.clone();
    let rounds = AdaptiveRounds::for_plan(&mut adaptive, 1.0).unwrap();
    let mut blocks = plan.clone();
    BlockPlan::for_variants(&mut blocks, rounds.budget);
    assert_eq!(adaptive.max_time, blocks.max_time);
    let (help, _) = flag(&["run"], "max-time");
    let stated = format!(
        "[default: {} in `kbench run`'s adaptive rounds and its variants' blocks, {} with \
         --rounds and in `kbench vm`;",
        adaptive.max_time.as_secs_f64(),
        plan.max_time.as_secs_f64()
    );
    assert!(help.contains(&stated), "{help}\nshould say {stated}");
    let (help, _) = flag(&["run"], "rounds");
    assert!(
        help.contains(&format!("at least {}", rounds.min_rounds)),
        "{help}"
    );
    let (help, _) = flag(&["run"], "budget");
    assert!(
        help.contains(&format!(
            "({} rounds, {} blocks)",
            rounds.min_rounds,
            BlockPlan::MIN_BLOCKS
        )),
        "{help}"
    );
}

#[test]
fn the_threshold_default_is_the_analysis_default() {
    for path in [&["compare"][..], &["vm", "compare"]] {
        let (_, default) = flag(path, "threshold");
        let parsed = Thresholds::parse(&default.unwrap()).unwrap();
        assert_eq!(parsed, Thresholds::default(), "{path:?}");
    }
    assert_eq!(
        Thresholds::parse("lat=5").unwrap().default,
        Thresholds::default().default
    );
}

/// No two flags of one command share an argument id: clap lets flattened
/// structs collide, and then one flag's value and environment variable
/// reach the other's field (`--rootfs-cache` once set the kernel cache).
#[test]
fn every_flag_of_a_command_has_an_id_of_its_own() {
    fn check(command: &clap::Command, path: &str) {
        let mut ids: Vec<&str> = command
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        ids.sort();
        let repeated: Vec<&&str> = ids
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| &w[0])
            .collect();
        assert!(
            repeated.is_empty(),
            "kbench {path}: ids {repeated:?} are given twice"
        );
        for sub in command.get_subcommands() {
            check(sub, &format!("{path} {}", sub.get_name()));
        }
    }
    check(&Cli::command(), "");
}
