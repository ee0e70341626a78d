//! `kbench config show`: each setting's value before any flag, and where
//! it comes from (environment, config file, built-in default).

use crate::cli::config::Settings;
use std::process::ExitCode;

pub fn show(settings: &Settings, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        let shown: Vec<_> = settings.settings.iter().map(|s| s.shown()).collect();
        let doc = serde_json::json!({"file": settings.file, "settings": shown});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", settings.text());
    }
    Ok(ExitCode::SUCCESS)
}
