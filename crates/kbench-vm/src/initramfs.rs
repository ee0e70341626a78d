//! A writer of the "newc" cpio format, the one the Linux kernel unpacks as
//! its initramfs (Documentation/driver-api/early-userspace/buffer-format.rst):
//! per entry a 110-byte ASCII header (`070701` and 13 eight-digit hex
//! fields), the NUL-terminated name padded to 4 bytes, the data padded to 4
//! bytes; the archive ends with the entry `TRAILER!!!`.
//!
//! The kernel does not create missing parent directories, so [`Archive`]
//! adds every parent of a path before the path itself.

use std::collections::BTreeSet;
use std::io::{self, Write};

const MAGIC: &str = "070701";
const TRAILER: &str = "TRAILER!!!";
const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFCHR: u32 = 0o020_000;

/// One entry's kind and contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(Vec<u8>),
    /// A character device node (major, minor), e.g. /dev/console = (5, 1).
    CharDev(u32, u32),
}

/// An archive being built in memory, in the order entries are added.
#[derive(Debug, Default)]
pub struct Archive {
    entries: Vec<(String, u32, Entry)>,
    dirs: BTreeSet<String>,
}

impl Archive {
    pub fn new() -> Archive {
        Archive::default()
    }

    /// A directory (and its parents), mode 0755.
    pub fn dir(&mut self, path: &str) -> &mut Archive {
        let path = relative(path);
        self.parents(&path);
        if self.dirs.insert(path.clone()) {
            self.entries.push((path, S_IFDIR | 0o755, Entry::Dir));
        }
        self
    }

    /// A regular file with permission bits `perm` (e.g. 0o755), parents first.
    pub fn file(&mut self, path: &str, perm: u32, data: Vec<u8>) -> &mut Archive {
        let path = relative(path);
        self.parents(&path);
        self.entries
            .push((path, S_IFREG | (perm & 0o7777), Entry::File(data)));
        self
    }

    /// A character device node, parents first.
    pub fn char_dev(&mut self, path: &str, perm: u32, major: u32, minor: u32) -> &mut Archive {
        let path = relative(path);
        self.parents(&path);
        self.entries.push((
            path,
            S_IFCHR | (perm & 0o7777),
            Entry::CharDev(major, minor),
        ));
        self
    }

    fn parents(&mut self, path: &str) {
        let mut prefix = String::new();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if self.dirs.insert(prefix.clone()) {
                self.entries
                    .push((prefix.clone(), S_IFDIR | 0o755, Entry::Dir));
            }
        }
    }

    /// Writes the archive with its trailer.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        for (index, (name, mode, entry)) in self.entries.iter().enumerate() {
            write_entry(out, index as u32 + 1, name, *mode, entry)?;
        }
        write_entry(out, 0, TRAILER, 0, &Entry::File(Vec::new()))
    }

    /// The archive as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes)
            .expect("writing to a Vec cannot fail");
        bytes
    }
}

/// Archive names have no leading '/' (the kernel accepts both; cpio tools
/// expect relative names).
fn relative(path: &str) -> String {
    path.trim_start_matches('/')
        .trim_end_matches('/')
        .to_string()
}

fn write_entry(
    out: &mut dyn Write,
    ino: u32,
    name: &str,
    mode: u32,
    entry: &Entry,
) -> io::Result<()> {
    let (data, nlink, rdev): (&[u8], u32, (u32, u32)) = match entry {
        Entry::Dir => (&[], 2, (0, 0)),
        Entry::File(data) => (data, 1, (0, 0)),
        Entry::CharDev(major, minor) => (&[], 1, (*major, *minor)),
    };
    let size = u32::try_from(data.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name} is over 4 GiB, more than a newc archive holds"),
        )
    })?;
    // ino, mode, uid, gid, nlink, mtime (fixed: the same inputs give the
    // same archive), filesize, devmajor, devminor, rdevmajor, rdevminor,
    // namesize (with its NUL), check.
    let namesize = name.len() as u32 + 1;
    let fields = [
        ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev.0, rdev.1, namesize, 0,
    ];
    let mut header = String::with_capacity(110);
    header.push_str(MAGIC);
    for field in fields {
        header.push_str(&format!("{field:08X}"));
    }
    out.write_all(header.as_bytes())?;
    out.write_all(name.as_bytes())?;
    out.write_all(&[0])?;
    out.write_all(&[0; 3][..pad(110 + name.len() + 1)])?;
    out.write_all(data)?;
    out.write_all(&[0; 3][..pad(data.len())])
}

/// Bytes of padding after `len` bytes to reach a multiple of 4.
fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// The entries of concatenated archives, as the kernel reads them:
/// (name, mode, entry). For tests and diagnostics.
pub fn read_archive(bytes: &[u8]) -> Result<Vec<(String, u32, Entry)>, String> {
    let mut entries = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        at = read_one(bytes, at, &mut entries)?;
        // The kernel skips zeros between archives.
        while bytes.get(at) == Some(&0) {
            at += 1;
        }
    }
    Ok(entries)
}

/// Reads one archive starting at byte `at`; returns where it ended.
fn read_one(
    bytes: &[u8],
    mut at: usize,
    entries: &mut Vec<(String, u32, Entry)>,
) -> Result<usize, String> {
    loop {
        let header = bytes
            .get(at..at + 110)
            .ok_or_else(|| format!("truncated header at byte {at}"))?;
        let header = std::str::from_utf8(header).map_err(|e| format!("header at {at}: {e}"))?;
        if &header[..6] != MAGIC {
            return Err(format!("bad magic {:?} at byte {at}", &header[..6]));
        }
        let field = |i: usize| {
            u32::from_str_radix(&header[6 + i * 8..14 + i * 8], 16)
                .map_err(|e| format!("field {i} at {at}: {e}"))
        };
        let (mode, size, rmajor, rminor, namesize) = (
            field(1)?,
            field(6)? as usize,
            field(9)?,
            field(10)?,
            field(11)? as usize,
        );
        let name_start = at + 110;
        let name = bytes
            .get(name_start..name_start + namesize - 1)
            .ok_or("truncated name")?;
        let name = String::from_utf8_lossy(name).into_owned();
        let data_start = name_start + namesize + pad(110 + namesize);
        let data = bytes
            .get(data_start..data_start + size)
            .ok_or_else(|| format!("truncated data of {name}"))?;
        at = data_start + size + pad(size);
        if name == TRAILER {
            return Ok(at);
        }
        let entry = match mode & 0o170_000 {
            S_IFDIR => Entry::Dir,
            S_IFCHR => Entry::CharDev(rmajor, rminor),
            _ => Entry::File(data.to_vec()),
        };
        entries.push((name, mode, entry));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_with_parents_first() {
        let mut archive = Archive::new();
        archive
            .file("/init", 0o755, b"#!binary".to_vec())
            .file("/lib/x86_64-linux-gnu/libc.so.6", 0o644, vec![7; 5])
            .char_dev("/dev/console", 0o600, 5, 1)
            .dir("/proc")
            .dir("/lib");
        let bytes = archive.to_bytes();
        assert_eq!(bytes.len() % 4, 0);
        let entries = read_archive(&bytes).unwrap();
        let names: Vec<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "init",
                "lib",
                "lib/x86_64-linux-gnu",
                "lib/x86_64-linux-gnu/libc.so.6",
                "dev",
                "dev/console",
                "proc"
            ]
        );
        assert_eq!(entries[0].1, 0o100_755);
        assert_eq!(entries[0].2, Entry::File(b"#!binary".to_vec()));
        assert_eq!(entries[1].1, 0o040_755);
        assert_eq!(entries[3].2, Entry::File(vec![7; 5]));
        assert_eq!(entries[5].2, Entry::CharDev(5, 1));
        assert_eq!(entries[5].1, 0o020_600);
    }

    #[test]
    fn header_layout_is_newc() {
        let bytes = Archive::new().file("a", 0o644, b"xyz".to_vec()).to_bytes();
        let text = String::from_utf8_lossy(&bytes[..110]).into_owned();
        assert!(text.starts_with("070701"), "{text}");
        // namesize (field 11) = 2 ("a" and its NUL), filesize (field 6) = 3.
        assert_eq!(&text[6 + 11 * 8..6 + 12 * 8], "00000002");
        assert_eq!(&text[6 + 6 * 8..6 + 7 * 8], "00000003");
        // 110 + 2 name bytes -> padded to 112; data at 112.
        assert_eq!(&bytes[112..115], b"xyz");
        assert!(String::from_utf8_lossy(&bytes).contains("TRAILER!!!"));
        assert_eq!(read_archive(&bytes).unwrap().len(), 1);
    }

    #[test]
    fn concatenated_archives_read_as_one() {
        let mut bytes = Archive::new().file("a/b", 0o644, vec![1]).to_bytes();
        bytes.extend(Archive::new().file("c", 0o644, vec![2, 3]).to_bytes());
        let names: Vec<String> = read_archive(&bytes)
            .unwrap()
            .into_iter()
            .map(|(name, _, _)| name)
            .collect();
        assert_eq!(names, ["a", "a/b", "c"]);
    }

    #[test]
    fn same_inputs_same_bytes() {
        let build = || Archive::new().file("x/y", 0o600, vec![1, 2]).to_bytes();
        assert_eq!(build(), build());
    }

    #[test]
    fn reader_rejects_garbage() {
        assert!(read_archive(b"not a cpio archive at all").is_err());
        let mut bytes = Archive::new().file("a", 0o644, vec![0; 100]).to_bytes();
        bytes.truncate(150);
        assert!(read_archive(&bytes).is_err());
    }
}
