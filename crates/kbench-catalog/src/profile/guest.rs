//! What a profile's tests need of a `kbench vm` guest: memory, and free
//! disk in its root filesystem. A profile says so in a `[guest]` table
//! (`memory = "2G"`, `disk = "4G"`); the guest gets the most any of its
//! tests' profiles need, and never less than kbench's defaults.

use serde::Deserialize;

/// A guest's memory when no profile asks for more (`kbench vm --memory`).
pub const DEFAULT_MEMORY_MIB: u32 = 1024;
/// Free space in a rootfs image beyond its files when no profile asks for
/// more: the tools' scratch files go there.
pub const DEFAULT_DISK_MIB: u32 = 512;

/// A profile's `[guest]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GuestFile {
    memory: Option<String>,
    disk: Option<String>,
}

/// What a guest needs, in MiB; `None` where nothing is asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuestNeeds {
    pub memory_mib: Option<u32>,
    pub disk_mib: Option<u32>,
}

impl GuestNeeds {
    /// The larger need of the two, each.
    pub fn max(self, other: GuestNeeds) -> GuestNeeds {
        GuestNeeds {
            memory_mib: self.memory_mib.max(other.memory_mib),
            disk_mib: self.disk_mib.max(other.disk_mib),
        }
    }

    /// The guest's memory: the need, at least [`DEFAULT_MEMORY_MIB`].
    pub fn memory_or_default(self) -> u32 {
        self.memory_mib.unwrap_or(0).max(DEFAULT_MEMORY_MIB)
    }

    /// The image's free space: the need, at least [`DEFAULT_DISK_MIB`].
    pub fn disk_or_default(self) -> u32 {
        self.disk_mib.unwrap_or(0).max(DEFAULT_DISK_MIB)
    }
}

/// The needs a `[guest]` table states, or which of its sizes is not one.
pub(super) fn needs(file: &GuestFile) -> Result<GuestNeeds, String> {
    let size = |key: &str, text: &Option<String>| {
        text.as_deref()
            .map(|t| {
                mebibytes(t)
                    .ok_or_else(|| format!("guest.{key} '{t}' is not a size such as 2G or 512M"))
            })
            .transpose()
    };
    Ok(GuestNeeds {
        memory_mib: size("memory", &file.memory)?,
        disk_mib: size("disk", &file.disk)?,
    })
}

/// "2G", "512M" or a plain number of MiB, in MiB; `None` when the text is
/// not such a size.
pub fn mebibytes(text: &str) -> Option<u32> {
    let trimmed = text.trim();
    let (number, factor) = match trimmed.char_indices().last() {
        Some((i, 'G' | 'g')) => (&trimmed[..i], 1024),
        Some((i, 'M' | 'm')) => (&trimmed[..i], 1),
        _ => (trimmed, 1),
    };
    number.trim().parse::<u32>().ok()?.checked_mul(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_in_mebibytes() {
        assert_eq!(mebibytes("1G"), Some(1024));
        assert_eq!(mebibytes("512m"), Some(512));
        assert_eq!(mebibytes("2048"), Some(2048));
        assert_eq!(mebibytes("lots"), None);
        assert_eq!(mebibytes(""), None);
        assert_eq!(mebibytes("9999999G"), None);
    }

    #[test]
    fn needs_combine_to_the_largest_and_never_below_the_defaults() {
        let fio = GuestNeeds {
            memory_mib: None,
            disk_mib: Some(2048),
        };
        let pg = GuestNeeds {
            memory_mib: Some(3072),
            disk_mib: Some(1024),
        };
        let both = fio.max(pg);
        assert_eq!(
            (both.memory_or_default(), both.disk_or_default()),
            (3072, 2048)
        );
        let small = GuestNeeds {
            memory_mib: Some(256),
            disk_mib: None,
        };
        assert_eq!(small.memory_or_default(), DEFAULT_MEMORY_MIB);
        assert_eq!(small.disk_or_default(), DEFAULT_DISK_MIB);
    }

    #[test]
    fn a_bad_size_is_named() {
        let file = GuestFile {
            memory: Some("lots".into()),
            disk: None,
        };
        assert_eq!(
            needs(&file).unwrap_err(),
            "guest.memory 'lots' is not a size such as 2G or 512M"
        );
    }
}
