//! Sample blocks (schema version 10): the samples of one test in one run
//! are a few rows of `sample_blocks`, packed in one binary column, so a
//! lab's millions of samples are a tenth as many rows to write, index and
//! read.
//!
//! The packing is 32 bytes a sample, in measurement order, each field a
//! big-endian 64-bit value: round, value (IEEE 754 bits), iterations,
//! at_ms. Big-endian as PostgreSQL's `int8send` and `float8send` write
//! them, so its migration packs old rows in SQL alone.
//!
//! A run and test's samples are split in parts of at most [`PART_SAMPLES`]
//! (numbered from 0), so that storing one more sample rewrites one part of
//! at most 4 KB, however many samples the test has.

use super::convert::narrow;
use super::{Fail, Res, Row, SampleBlock, SampleRow, Sql, args, first_int};
use kbench_model::Sample;

/// Bytes of one packed sample.
pub const SAMPLE_BYTES: usize = 32;

/// The most samples one part holds (4 KB).
pub const PART_SAMPLES: usize = 128;

/// Bytes of a full part.
const PART_BYTES: usize = PART_SAMPLES * SAMPLE_BYTES;

/// Appends a checked sample's packed bytes to `out`.
pub fn pack(row: &SampleRow, out: &mut Vec<u8>) {
    out.extend_from_slice(&i64::from(row.round).to_be_bytes());
    out.extend_from_slice(&row.value.to_bits().to_be_bytes());
    out.extend_from_slice(&row.iterations.to_be_bytes());
    out.extend_from_slice(&row.at_ms.to_be_bytes());
}

/// The samples of a packed block, in order; `Damaged` for a length that
/// is not whole samples or a field out of its range.
pub fn unpack(bytes: &[u8]) -> Res<Vec<Sample>> {
    if !bytes.len().is_multiple_of(SAMPLE_BYTES) {
        return Err(Fail::Damaged(format!(
            "a block of samples has {} bytes, not a multiple of {SAMPLE_BYTES}",
            bytes.len()
        )));
    }
    bytes
        .chunks_exact(SAMPLE_BYTES)
        .map(|sample| {
            let field = |i: usize| {
                let mut word = [0; 8];
                word.copy_from_slice(&sample[8 * i..8 * i + 8]);
                i64::from_be_bytes(word)
            };
            Ok(Sample {
                round: narrow("round", field(0))?,
                value: f64::from_bits(field(1) as u64),
                iterations: narrow("iteration count", field(2))?,
                at_ms: field(3),
            })
        })
        .collect()
}

/// How many samples a block of `bytes` bytes holds.
pub fn count(bytes: usize) -> u64 {
    (bytes / SAMPLE_BYTES) as u64
}

/// The packed samples of a new run and test as parts of
/// [`PART_SAMPLES`], from part 0.
pub fn parts(run: i64, test: i64, samples: Vec<u8>) -> Vec<SampleBlock> {
    if samples.len() <= PART_BYTES {
        return vec![SampleBlock {
            run,
            test,
            part: 0,
            samples,
        }];
    }
    (0..)
        .zip(samples.chunks(PART_BYTES))
        .map(|(part, chunk)| SampleBlock {
            run,
            test,
            part,
            samples: chunk.to_vec(),
        })
        .collect()
}

/// How many samples of `test` are stored in `run`.
pub fn stored_count(db: &mut dyn Sql, run: i64, test: i64) -> Res<u64> {
    let bytes = first_int(
        db,
        "SELECT SUM(LENGTH(samples)) FROM sample_blocks WHERE run_id = ?1 AND test_id = ?2",
        args![run, test],
    )?;
    Ok(count(narrow(
        "the length of a run's samples",
        bytes.unwrap_or(0),
    )?))
}

/// The last part of `test`'s samples in `run` (an empty part 0 when there
/// is none yet), read from a row of `part, samples` (both NULL for none).
pub fn read_last_part(row: &dyn Row, run: i64, test: i64) -> Res<SampleBlock> {
    Ok(SampleBlock {
        run,
        test,
        part: row.int(0)?.unwrap_or(0),
        samples: row.blob(1)?.unwrap_or_default(),
    })
}

/// Appends rows of one run and test to their last part, and to new parts
/// as each fills; inside the caller's transaction.
pub fn append(db: &mut dyn Sql, run: i64, test: i64, rows: &[SampleRow]) -> Res<()> {
    let mut last = SampleBlock {
        run,
        test,
        part: 0,
        samples: Vec::new(),
    };
    db.query(
        "SELECT part, samples FROM sample_blocks WHERE run_id = ?1 AND test_id = ?2 \
         ORDER BY part DESC LIMIT 1",
        args![run, test],
        &mut |row| {
            last = read_last_part(row, run, test)?;
            Ok(())
        },
    )?;
    extend(db, last, rows)
}

/// Appends rows to `last`, the last part of their run and test, and to new
/// parts as each fills, writing what changed.
pub fn extend(db: &mut dyn Sql, mut last: SampleBlock, rows: &[SampleRow]) -> Res<()> {
    let mut changed = false;
    for row in rows {
        if last.samples.len() >= PART_BYTES {
            if changed {
                write(db, &last)?;
            }
            last.part += 1;
            last.samples.clear();
        }
        pack(row, &mut last.samples);
        changed = true;
    }
    if changed {
        write(db, &last)?;
    }
    Ok(())
}

/// Writes a part, replacing what it held.
fn write(db: &mut dyn Sql, block: &SampleBlock) -> Res<()> {
    db.execute(
        "INSERT INTO sample_blocks (run_id, test_id, part, samples) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (run_id, test_id, part) DO UPDATE SET samples = excluded.samples",
        args![block.run, block.test, block.part, block.samples.as_slice()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: i64, test: i64, value: f64) -> SampleRow {
        SampleRow {
            run,
            test,
            round: 3,
            value,
            iterations: 1 << 40,
            at_ms: -5,
        }
    }

    #[test]
    fn packed_samples_read_back_exactly_and_in_order() {
        let mut bytes = Vec::new();
        for value in [0.1, 1e300, 5e-324] {
            pack(&row(1, 7, value), &mut bytes);
        }
        assert_eq!(count(bytes.len()), 3);
        let samples = unpack(&bytes).ok().unwrap();
        let bits: Vec<u64> = samples.iter().map(|s| s.value.to_bits()).collect();
        assert_eq!(bits, [0.1f64, 1e300, 5e-324].map(f64::to_bits));
        assert_eq!(
            (samples[0].round, samples[0].iterations, samples[0].at_ms),
            (3, 1 << 40, -5)
        );
    }

    #[test]
    fn the_packing_is_big_endian_as_postgresql_writes_it() {
        let mut bytes = Vec::new();
        pack(&row(1, 1, 1.0), &mut bytes);
        assert_eq!(&bytes[..8], &[0, 0, 0, 0, 0, 0, 0, 3]);
        // float8send(1.0) is 3ff0000000000000.
        assert_eq!(&bytes[8..16], &[0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_long_run_s_samples_are_split_in_parts_of_4_kb() {
        let mut bytes = Vec::new();
        for i in 0..2 * PART_SAMPLES + 1 {
            pack(&row(1, 7, i as f64 + 1.0), &mut bytes);
        }
        let parts = parts(1, 7, bytes.clone());
        let sizes: Vec<(i64, u64)> = parts
            .iter()
            .map(|p| (p.part, count(p.samples.len())))
            .collect();
        assert_eq!(sizes, [(0, 128), (1, 128), (2, 1)]);
        let joined: Vec<u8> = parts.iter().flat_map(|p| p.samples.clone()).collect();
        assert_eq!(joined, bytes);
    }

    #[test]
    fn a_block_cut_mid_sample_or_out_of_range_is_damaged() {
        let mut bytes = Vec::new();
        pack(&row(1, 1, 1.0), &mut bytes);
        assert!(matches!(unpack(&bytes[..31]), Err(Fail::Damaged(_))));
        bytes[..8].copy_from_slice(&(-1i64).to_be_bytes());
        assert!(matches!(unpack(&bytes), Err(Fail::Damaged(_))));
    }
}
