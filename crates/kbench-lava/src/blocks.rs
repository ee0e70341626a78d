//! A console's lines into the boots' result blocks
//! ([`kbench_vm::console_frames`]): each block's header and the agent's
//! events, in order, checked frame by frame. What is damaged or missing
//! is said, and the events stop at the first gap, so that what is kept
//! is exactly what the guest sent.

use kbench_model::AgentEvent;
use kbench_vm::console_frames::{self, BEGIN, BlockHeader};

/// One boot's block, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct BootBlock {
    pub header: BlockHeader,
    /// The agent's events, up to the end or the first gap.
    pub events: Vec<AgentEvent>,
    /// Why the events stop before the agent's end, if they do.
    pub cut: Option<String>,
}

/// What the console held: the blocks read, and the blocks that could not
/// be (no readable header), said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blocks {
    pub blocks: Vec<BootBlock>,
    pub unreadable: Vec<String>,
}

/// A block being read.
struct Open {
    header: Option<BlockHeader>,
    events: Vec<AgentEvent>,
    /// The next frame number expected.
    next: u64,
    cut: Option<String>,
    /// Its place among the blocks, from 1, for messages.
    place: usize,
}

impl Open {
    fn cut(&mut self, why: String) {
        self.cut.get_or_insert(why);
    }

    fn frame(&mut self, seq: u64, payload: &str) {
        if self.cut.is_some() {
            return;
        }
        if seq != self.next {
            return self.cut(format!(
                "frames {} to {} are missing from the console log",
                self.next,
                seq.saturating_sub(1)
            ));
        }
        self.next += 1;
        if seq == 0 {
            match serde_json::from_str(payload) {
                Ok(header) => self.header = Some(header),
                Err(error) => self.cut(format!("its header does not read: {error}")),
            }
            return;
        }
        match serde_json::from_str(payload) {
            Ok(event) => self.events.push(event),
            Err(error) => self.cut(format!("frame {seq} is no event of this kbench: {error}")),
        }
    }

    fn close(mut self, end: Option<Option<u64>>, blocks: &mut Blocks) {
        match end {
            None => self.cut("the console log stops before the block's end".to_string()),
            Some(None) => self.cut("the agent died before it ended (see the console)".to_string()),
            Some(Some(frames)) if frames != self.next => self.cut(format!(
                "the block ends saying {frames} frames were sent, but {} arrived whole",
                self.next
            )),
            Some(Some(_)) => {}
        }
        match self.header {
            Some(header) => blocks.blocks.push(BootBlock {
                header,
                events: self.events,
                cut: self.cut,
            }),
            None => blocks.unreadable.push(format!(
                "results block {} has no readable header ({}); it cannot be told which boot \
                 it was",
                self.place,
                self.cut.unwrap_or_else(|| "no frame 0".to_string())
            )),
        }
    }
}

/// Reads every block on `console`.
pub fn read(console: &[String]) -> Blocks {
    let mut blocks = Blocks::default();
    let mut open: Option<Open> = None;
    let mut place = 0;
    for line in console {
        if line.trim_end() == BEGIN {
            if let Some(previous) = open.take() {
                previous.close(None, &mut blocks);
            }
            place += 1;
            open = Some(Open {
                header: None,
                events: Vec::new(),
                next: 0,
                cut: None,
                place,
            });
            continue;
        }
        let Some(block) = open.as_mut() else {
            continue;
        };
        if let Some(end) = console_frames::parse_end(line) {
            open.take()
                .expect("a block is open")
                .close(Some(end), &mut blocks);
            continue;
        }
        match console_frames::parse_frame(line) {
            Some(Ok((seq, payload))) => block.frame(seq, payload),
            Some(Err(damage)) => block.cut(damage),
            None => {}
        }
    }
    if let Some(last) = open {
        last.close(None, &mut blocks);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_measure::agent::AgentJob;
    use kbench_vm::console_frames::{ConsoleBoot, END, frame};

    fn header(boot: u32) -> String {
        let header = BlockHeader::new(
            ConsoleBoot {
                identifier: "a".into(),
                boot,
                boots: 3,
                release: None,
                round: None,
            },
            "6.1".into(),
            AgentJob {
                snapshot: true,
                tests: vec![],
                plan: Default::default(),
                tools: vec![],
            },
        );
        frame(0, &serde_json::to_string(&header).unwrap())
    }

    fn end_event() -> String {
        r#"{"event":"test_end","target_met":true,"stop":"x"}"#.to_string()
    }

    #[test]
    fn whole_blocks_read_back_amid_kernel_messages() {
        let console: Vec<String> = [
            "[ 0.1] booting".to_string(),
            BEGIN.to_string(),
            header(1),
            "[ 2.0] a message between frames".to_string(),
            frame(1, &end_event()),
            format!("{END} 2"),
        ]
        .into();
        let blocks = read(&console);
        assert_eq!(blocks.unreadable, Vec::<String>::new());
        assert_eq!(blocks.blocks.len(), 1);
        assert_eq!(blocks.blocks[0].events.len(), 1);
        assert_eq!(blocks.blocks[0].cut, None);
        assert_eq!(blocks.blocks[0].header.plan.boot, 1);
    }

    #[test]
    fn gaps_damage_and_early_ends_are_said_and_stop_the_events() {
        let damaged = frame(2, &end_event()).replace("true", "tru3");
        let console: Vec<String> = [
            BEGIN.to_string(),
            header(1),
            frame(1, &end_event()),
            damaged,
            frame(3, &end_event()),
            format!("{END} 4"),
            BEGIN.to_string(),
            header(2),
            frame(2, &end_event()),
            format!("{END} 3"),
            BEGIN.to_string(),
            header(3),
            frame(1, &end_event()),
        ]
        .into();
        let blocks = read(&console);
        let cuts: Vec<(usize, Option<String>)> = blocks
            .blocks
            .iter()
            .map(|b| (b.events.len(), b.cut.clone()))
            .collect();
        assert_eq!(
            cuts,
            [
                (1, Some("frame 2 fails its checksum".to_string())),
                (
                    0,
                    Some("frames 1 to 1 are missing from the console log".to_string())
                ),
                (
                    1,
                    Some("the console log stops before the block's end".to_string())
                ),
            ]
        );
    }

    #[test]
    fn a_block_without_its_header_cannot_be_stored() {
        let console: Vec<String> = [
            BEGIN.to_string(),
            frame(1, &end_event()),
            format!("{END} 2"),
        ]
        .into();
        let blocks = read(&console);
        assert!(blocks.blocks.is_empty());
        assert!(
            blocks.unreadable[0].starts_with("results block 1 has no readable header"),
            "{:?}",
            blocks.unreadable
        );
    }
}
