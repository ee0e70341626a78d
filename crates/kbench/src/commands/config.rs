//! `kbench config show`: each setting's value before any flag, and where
//! it comes from (environment, config file, built-in default).

use crate::cli::config::{Settings, Source, path};
use std::process::ExitCode;

pub fn show(settings: &Settings, json: bool) -> anyhow::Result<ExitCode> {
    let shown: Vec<_> = settings.settings.iter().map(|s| s.shown()).collect();
    if json {
        let doc = serde_json::json!({"file": settings.file, "settings": shown});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    match (&settings.file, path()) {
        (Some(file), _) => println!("config file: {}", file.display()),
        (None, Some((file, _))) => {
            println!("config file: none ({} does not exist)", file.display())
        }
        (None, None) => println!("config file: none (no HOME or XDG_CONFIG_HOME)"),
    }
    for s in shown {
        let source = match s.source {
            Source::Env(variable) => format!("environment {variable}"),
            Source::File(_) => "config file".to_string(),
            Source::Default => "built-in default".to_string(),
        };
        println!("{:<11} {:<32} {source}", s.key, s.value.unwrap_or("-"));
    }
    Ok(ExitCode::SUCCESS)
}
