//! Records the rustc version kbench was built with, for the system snapshot.

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Ok(out) = std::process::Command::new(rustc).arg("--version").output()
        && out.status.success()
    {
        let version = String::from_utf8_lossy(&out.stdout);
        println!("cargo:rustc-env=KBENCH_RUSTC_VERSION={}", version.trim());
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
}
