//! `kbench import` and `kbench export` name every format of kbench-formats'
//! registry, in their summaries and in their help, and accept those names.

use clap::{CommandFactory, Parser};
use kbench_cli::{Cli, Command};
use kbench_formats::registry::{self, FileFormat};

/// `text` with every run of white space one space: clap wraps help to the
/// terminal's width.
fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The summary of `kbench export` once named json and pts but not csv.
#[test]
fn the_summaries_of_import_and_export_name_every_format() {
    let cli = Cli::command();
    let help = unwrapped(&cli.clone().render_help().to_string());
    for (command, formats) in [
        ("import", registry::imports().collect::<Vec<_>>()),
        ("export", registry::exports().collect()),
    ] {
        let about = cli.find_subcommand(command).unwrap().get_about().unwrap();
        let about = unwrapped(&about.to_string());
        assert!(help.contains(&format!("{command} {about}")), "{help}");
        for format in formats {
            assert!(about.contains(format.name), "{}: {about}", format.name);
        }
    }
}

#[test]
fn the_help_of_import_and_export_gives_every_format_its_line() {
    let mut cli = Cli::command();
    let mut help_of = |command: &str, formats: Vec<&FileFormat>| {
        let help = cli
            .find_subcommand_mut(command)
            .unwrap()
            .render_long_help()
            .to_string();
        let help = unwrapped(&help);
        for format in formats {
            let line = unwrapped(&format!("- {}: {}", format.name, format.help));
            assert!(
                help.contains(&line),
                "{command} --help lacks {line:?}:\n{help}"
            );
        }
        help
    };
    let import = help_of("import", registry::imports().collect());
    let auto = unwrapped(&format!("- {}: {}", registry::AUTO, registry::AUTO_HELP));
    assert!(import.contains(&auto), "{import}");
    help_of("export", registry::exports().collect());
}

/// The format `kbench ARGS` (an import or an export) is asked for.
fn chosen(args: &[&str]) -> Result<String, clap::Error> {
    Ok(
        match Cli::try_parse_from([&["kbench"], args].concat())?.command {
            Command::Import(import) => import.from,
            Command::Export(export) => export.format,
            other => panic!("neither import nor export: {other:?}"),
        },
    )
}

#[test]
fn import_and_export_accept_every_registered_name_and_no_other() {
    for format in registry::imports() {
        let args = ["import", "f", "--from", format.name];
        assert_eq!(chosen(&args).unwrap(), format.name);
    }
    assert_eq!(chosen(&["import", "f"]).unwrap(), registry::AUTO);
    for format in registry::exports() {
        let args = ["export", "s", "--format", format.name];
        assert_eq!(chosen(&args).unwrap(), format.name);
    }
    assert_eq!(chosen(&["export", "s"]).unwrap(), "json");
    assert!(chosen(&["import", "f", "--from", "csv"]).is_err());
    assert!(chosen(&["export", "s", "--format", "kbench"]).is_err());
}
