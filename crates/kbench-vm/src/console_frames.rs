//! kbench's results on a console it shares: a board's or a LAVA qemu
//! device's one serial line, which also carries the kernel's messages and
//! which a lab's dispatcher logs. The guest ([`crate::guest`]) writes each
//! line of its agent's events as a frame with a sequence number, a length
//! and a CRC-32, between [`BEGIN`] and [`END`] (which says how many frames
//! there were), so that a log read back later gives the raw samples whole
//! or says what is missing or damaged. Its summary lines ([`CASE`]) are
//! what LAVA's test monitors turn into test cases with a measurement.

use kbench_measure::agent::AgentJob;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Opens a boot's block; the first frame is its [`BlockHeader`].
pub const BEGIN: &str = "kbench-results-begin";
/// Closes a boot's block: `kbench-results-end FRAMES`.
pub const END: &str = "kbench-results-end";
/// The summary of the tests that failed or skipped follows, to its end
/// marker (LAVA's second monitor reads it: a result without a number).
pub const FAILURES_BEGIN: &str = "kbench-failures-begin";
pub const FAILURES_END: &str = "kbench-failures-end";
/// One frame: `kbench-frame SEQ LEN CRC32 PAYLOAD`.
pub const FRAME: &str = "kbench-frame";
/// One summary line: `kbench-case TEST pass MEDIAN UNIT`, or `kbench-case
/// TEST fail` (and `skip`).
pub const CASE: &str = "kbench-case";

/// One boot of a console guest, as its initramfs gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsoleBoot {
    /// What the boot's runs are stored as.
    pub identifier: String,
    /// Its place among the job's boots, from 1.
    pub boot: u32,
    /// How many boots the job has: a log that ends sooner says which
    /// boots never ran.
    pub boots: u32,
    /// The release its kernel must report; a boot into another kernel
    /// measures nothing.
    pub release: Option<String>,
    /// Its place among its identifier's boots, from 0: its run's round,
    /// wherever the run is stored (absent in the jobs of kbench's first
    /// LAVA jobs: the rounds after those stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

impl ConsoleBoot {
    /// Why a boot of this plan running kernel `release` measures nothing:
    /// the plan names another.
    pub fn refuses(&self, release: &str) -> Option<String> {
        let expected = self
            .release
            .as_deref()
            .filter(|expected| *expected != release)?;
        Some(format!(
            "boot {} of '{}' came up in kernel {release}, not {expected}: nothing was measured",
            self.boot, self.identifier
        ))
    }
}

/// A console guest's push of its boot to a kbench server once it has
/// measured (`kbench lava job --server`). Kept in the initramfs apart from
/// the [`ConsoleBoot`], which goes into the block's header and so into the
/// job's log: this holds the token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestPush {
    /// The server's URL, as the guest reaches it.
    pub server: String,
    pub token: Option<String>,
    /// The result set the boot's run goes into.
    pub set: String,
    /// The guest's address on its network, `A.B.C.D/PREFIX`.
    pub address: String,
    pub gateway: Option<Ipv4Addr>,
}

/// `A.B.C.D/PREFIX` (a prefix of 1 to 32 bits).
pub fn parse_address(text: &str) -> Result<(Ipv4Addr, u8), String> {
    let parsed = text.split_once('/').and_then(|(address, prefix)| {
        let prefix: u8 = prefix.parse().ok().filter(|p| (1..=32).contains(p))?;
        Some((address.parse().ok()?, prefix))
    });
    parsed.ok_or_else(|| {
        format!("'{text}' is not an IPv4 address with its prefix, such as 10.0.2.15/24")
    })
}

/// The first frame of a boot's block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockHeader {
    pub plan: ConsoleBoot,
    /// The running kernel's release, as the guest read it.
    pub release: String,
    /// The job the guest ran (or refused to).
    pub job: AgentJob,
    /// Why the guest measured nothing: it booted a kernel the plan did not
    /// name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl BlockHeader {
    /// The header of a boot of `plan` running `job` on `release`: refused
    /// when the plan names another release.
    pub fn new(plan: ConsoleBoot, release: String, job: AgentJob) -> BlockHeader {
        let refused = plan.refuses(&release);
        BlockHeader {
            plan,
            release,
            job,
            refused,
        }
    }
}

/// The frame line (without its newline) of payload `payload`, number `seq`.
pub fn frame(seq: u64, payload: &str) -> String {
    let crc = crc32fast::hash(payload.as_bytes());
    format!("{FRAME} {seq} {} {crc:08x} {payload}", payload.len())
}

/// A frame line's number and payload, checked; `None` for a line that is
/// no frame, an error saying what is wrong with a damaged one.
pub fn parse_frame(line: &str) -> Option<Result<(u64, &str), String>> {
    let rest = line.trim_end_matches(['\r', '\n']).strip_prefix(FRAME)?;
    let rest = rest.strip_prefix(' ')?;
    let mut fields = rest.splitn(4, ' ');
    let (Some(seq), Some(len), Some(crc), payload) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Some(Err("a frame line with too few fields".to_string()));
    };
    let payload = payload.unwrap_or("");
    let (Ok(seq), Ok(len), Ok(crc)) = (
        seq.parse::<u64>(),
        len.parse::<usize>(),
        u32::from_str_radix(crc, 16),
    ) else {
        return Some(Err(format!(
            "a frame line whose header is damaged: {seq} {len} {crc}"
        )));
    };
    if payload.len() != len {
        return Some(Err(format!(
            "frame {seq} holds {} bytes where its header says {len}",
            payload.len()
        )));
    }
    if crc32fast::hash(payload.as_bytes()) != crc {
        return Some(Err(format!("frame {seq} fails its checksum")));
    }
    Some(Ok((seq, payload)))
}

/// The frame count an end line gives; `None` for another line.
pub fn parse_end(line: &str) -> Option<Option<u64>> {
    let rest = line.trim_end_matches(['\r', '\n']).strip_prefix(END)?;
    Some(rest.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_and_damage_is_named() {
        let line = frame(7, r#"{"event":"test_end","target_met":true,"stop":"x"}"#);
        assert_eq!(
            parse_frame(&format!("{line}\r")).unwrap().unwrap(),
            (7, r#"{"event":"test_end","target_met":true,"stop":"x"}"#)
        );
        assert!(parse_frame("[    1.2] a kernel message").is_none());
        let cut = &line[..line.len() - 3];
        assert!(
            parse_frame(cut)
                .unwrap()
                .unwrap_err()
                .contains("where its header says"),
            "{cut}"
        );
        let flipped = line.replace("true", "tru3");
        assert_eq!(
            parse_frame(&flipped).unwrap().unwrap_err(),
            "frame 7 fails its checksum"
        );
        assert_eq!(parse_end("kbench-results-end 12\r"), Some(Some(12)));
        assert_eq!(parse_end("kbench-results-end"), Some(None));
        assert_eq!(parse_end("kbench-frame 1"), None);
    }

    #[test]
    fn a_boot_into_another_kernel_is_refused() {
        let job = AgentJob {
            snapshot: true,
            tests: vec![],
            plan: Default::default(),
            tools: vec![],
        };
        let plan = ConsoleBoot {
            identifier: "old".into(),
            boot: 3,
            boots: 4,
            release: Some("6.1.0-57-cloud-amd64".into()),
            round: Some(1),
        };
        let right = BlockHeader::new(plan.clone(), "6.1.0-57-cloud-amd64".into(), job.clone());
        assert_eq!(right.refused, None);
        let wrong = BlockHeader::new(plan, "6.12.118+deb12-cloud-amd64".into(), job);
        assert_eq!(
            wrong.refused.unwrap(),
            "boot 3 of 'old' came up in kernel 6.12.118+deb12-cloud-amd64, not \
             6.1.0-57-cloud-amd64: nothing was measured"
        );
    }
}
