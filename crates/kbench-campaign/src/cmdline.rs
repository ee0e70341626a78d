//! The command line a campaign kexecs a kernel with: the origin's, less
//! what belongs to its boot loader or to the campaign, plus `panic=`, the
//! boot's marker and the user's additions.

use kbench_model::campaign::BOOT_MARKER as MARKER_KEY;

/// Parameters not carried from the origin's command line: the boot
/// loader's own (`BOOT_IMAGE=`, `initrd=`, which kexec's initrd replaces)
/// and those the campaign sets.
const DROPPED: &[&str] = &["BOOT_IMAGE", "initrd", "panic", MARKER_KEY];

/// The parameters of a command line, split at blanks outside double
/// quotes (`dyndbg="file x.c +p"` stays one).
pub fn parameters(cmdline: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut start = None;
    let mut quoted = false;
    for (at, c) in cmdline.char_indices() {
        match c {
            '"' => {
                quoted = !quoted;
                start.get_or_insert(at);
            }
            c if c.is_whitespace() && !quoted => {
                if let Some(from) = start.take() {
                    found.push(&cmdline[from..at]);
                }
            }
            _ => {
                start.get_or_insert(at);
            }
        }
    }
    found.extend(start.map(|from| &cmdline[from..]));
    found
}

/// A parameter's key: what comes before `=`.
fn key(parameter: &str) -> &str {
    parameter.split('=').next().unwrap_or(parameter)
}

/// The command line to kexec a kernel with.
pub fn kexec_cmdline(origin: &str, panic_s: u32, marker: &str, append: &str) -> String {
    let mut kept: Vec<String> = parameters(origin)
        .into_iter()
        .filter(|p| !DROPPED.contains(&key(p)))
        .map(str::to_string)
        .collect();
    kept.push(format!("panic={panic_s}"));
    kept.push(format!("{MARKER_KEY}={marker}"));
    kept.extend(parameters(append).into_iter().map(str::to_string));
    kept.join(" ")
}

/// The origin's command line for the return to it: what its boot loader
/// gave, less `BOOT_IMAGE=` and `initrd=`.
pub fn return_cmdline(origin: &str) -> String {
    parameters(origin)
        .into_iter()
        .filter(|p| !matches!(key(p), "BOOT_IMAGE" | "initrd"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The marker on a command line, if it has one.
pub fn marker_of(cmdline: &str) -> Option<&str> {
    parameters(cmdline)
        .into_iter()
        .find_map(|p| p.strip_prefix(MARKER_KEY)?.strip_prefix('='))
}

/// The value of `BOOT_IMAGE=` (the image GRUB booted), if any.
pub fn boot_image(cmdline: &str) -> Option<&str> {
    parameters(cmdline)
        .into_iter()
        .find_map(|p| p.strip_prefix("BOOT_IMAGE="))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRUB: &str = "BOOT_IMAGE=/boot/vmlinuz-6.1.0-57-cloud-amd64 root=UUID=1234 ro \
                        dyndbg=\"file x.c +p\" panic=0 quiet";

    #[test]
    fn quoted_values_stay_one_parameter() {
        assert_eq!(
            parameters(GRUB),
            [
                "BOOT_IMAGE=/boot/vmlinuz-6.1.0-57-cloud-amd64",
                "root=UUID=1234",
                "ro",
                "dyndbg=\"file x.c +p\"",
                "panic=0",
                "quiet"
            ]
        );
        assert_eq!(parameters("  a  b "), ["a", "b"]);
    }

    #[test]
    fn a_kexec_line_keeps_the_origins_and_replaces_the_campaigns() {
        let line = kexec_cmdline(GRUB, 10, "c/3/1", "mitigations=off");
        assert_eq!(
            line,
            "root=UUID=1234 ro dyndbg=\"file x.c +p\" quiet panic=10 kbench.boot=c/3/1 mitigations=off"
        );
        assert_eq!(marker_of(&line), Some("c/3/1"));
        // A line kexec'd before is the base of none: its marker goes.
        let again = kexec_cmdline(&line, 10, "c/4/1", "");
        assert_eq!(marker_of(&again), Some("c/4/1"));
        assert_eq!(again.matches("kbench.boot").count(), 1);
        assert_eq!(again.matches("panic=").count(), 1);
    }

    #[test]
    fn the_return_keeps_the_origins_panic_and_the_boot_image_is_read() {
        assert_eq!(
            return_cmdline(GRUB),
            "root=UUID=1234 ro dyndbg=\"file x.c +p\" panic=0 quiet"
        );
        assert_eq!(boot_image(GRUB), Some("/boot/vmlinuz-6.1.0-57-cloud-amd64"));
        assert_eq!(marker_of(GRUB), None);
        assert_eq!(boot_image("root=/dev/vda"), None);
    }
}
