//! File-backed images: written through on every operation, reopened intact, and rejected with
//! a clear error when corrupt.

#![allow(clippy::field_reassign_with_default)]

use commitlab_media::*;
use sim::SimTime;
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("commitlab-media-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("dev.img")
}

fn cfg() -> NandConfig {
    let mut c = NandConfig::default();
    c.channels = 1;
    c.planes_per_die = 1;
    c.blocks_per_plane = 4;
    c.pages_per_block = 8;
    c.page_bytes = 512;
    c.data_mode = DataMode::Full;
    c
}

#[test]
fn an_image_reopens_exactly_as_it_was_left() {
    let path = tmp("roundtrip");
    let c = cfg();
    let mut n = Nand::create_file(&path, c.image_params(8), c.timing.clone(), "label-x").unwrap();
    n.program(Ppa(0), Content::Tag(11), &[1; 8], SimTime::ZERO)
        .unwrap();
    n.program(
        Ppa(1),
        Content::Bytes(vec![7; 30].into()),
        &[2; 8],
        SimTime::ZERO,
    )
    .unwrap();
    n.partial_program(Ppa(1), Some(&[0; 8]), None, SimTime::ZERO)
        .unwrap();
    n.program(Ppa(8), Content::Tag(12), &[3; 8], SimTime::ZERO)
        .unwrap();
    n.erase(BlockId(1), SimTime::ZERO).unwrap();
    let expected = n.image().clone();
    drop(n);
    let (m, label) = Nand::open_file(&path, c.timing.clone()).unwrap();
    assert_eq!(label, "label-x");
    assert_eq!(m.image(), &expected);
}

#[test]
fn tag_mode_cannot_be_file_backed() {
    let mut c = cfg();
    c.data_mode = DataMode::Tag;
    let e = Nand::create_file(&tmp("tagmode"), c.image_params(8), c.timing.clone(), "")
        .err()
        .unwrap();
    assert!(e.to_string().contains("data_mode"), "{e}");
}

#[test]
fn corrupt_images_are_reported_not_panicked_on() {
    let path = tmp("corrupt");
    let c = cfg();
    let mut n = Nand::create_file(&path, c.image_params(8), c.timing.clone(), "").unwrap();
    n.program(Ppa(0), Content::Tag(11), &[1; 8], SimTime::ZERO)
        .unwrap();
    // A second program, so the journal (the last record written, replayed on open) holds
    // page 1 and page 0's record stands alone.
    n.program(Ppa(1), Content::Tag(12), &[2; 8], SimTime::ZERO)
        .unwrap();
    drop(n);
    let good = std::fs::read(&path).unwrap();

    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    cases.push(("magic", bad_magic));
    let mut bad_crc = good.clone();
    bad_crc[20] ^= 0xFF;
    cases.push(("CRC", bad_crc));
    cases.push(("bytes", good[..good.len() / 2].to_vec()));
    cases.push(("magic", Vec::new()));
    // Flip a byte of page 0's data: it no longer matches its content tag.
    let json_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let header = (16 + json_len + 4).next_multiple_of(4096);
    let page_off = header + (4 * 16usize).next_multiple_of(4096);
    // Page record: tag (8), OOB (8 here), data (512), program count (1), CRC-32 (4), state (1).
    // A flipped data bit fails the record's CRC (the ECC model: uncorrectable).
    let mut bad_data = good.clone();
    bad_data[page_off + 8 + 8 + 20] ^= 1;
    cases.push(("page 0: record checksum", bad_data));
    let mut bad_state = good.clone();
    bad_state[page_off + 8 + 8 + 512 + 1 + 4] = 0x7;
    cases.push(("page 0", bad_state));

    for (want, bytes) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let Some(e) = Nand::open_file(&path, c.timing.clone()).err() else {
            panic!("corrupt image opened ({want})");
        };
        let msg = e.to_string();
        assert!(msg.contains(want), "expected '{want}' in: {msg}");
    }
}

#[test]
fn a_write_cut_short_reads_as_a_lost_program_not_as_corruption() {
    // A killed process may leave any prefix of a record written (Linux can stop a write at a
    // page boundary of the file). With the state byte last, a cut record reads as erased.
    let path = tmp("cut");
    let c = cfg();
    let n = Nand::create_file(&path, c.image_params(8), c.timing.clone(), "").unwrap();
    drop(n);
    let blank = std::fs::read(&path).unwrap();
    let mut n = Nand::open_file(&path, c.timing.clone()).unwrap().0;
    n.program(Ppa(3), Content::Tag(11), &[1; 8], SimTime::ZERO)
        .unwrap();
    drop(n);
    let full = std::fs::read(&path).unwrap();
    let json_len = u32::from_le_bytes(full[12..16].try_into().unwrap()) as usize;
    let header = (16 + json_len + 4).next_multiple_of(4096);
    let page_off = header + (4 * 16usize).next_multiple_of(4096);
    // Page record: tag (8), OOB (8 here), data (512), program count (1), CRC-32 (4), state (1).
    let rec = 8 + 8 + 512 + 1 + 4 + 1;
    let start = page_off + 3 * rec;
    for cut in 0..rec {
        // Bytes [start, start+cut) of the record written, the rest (and the block record) not.
        let mut img = blank.clone();
        img[start..start + cut].copy_from_slice(&full[start..start + cut]);
        std::fs::write(&path, &img).unwrap();
        let (m, _) = Nand::open_file(&path, c.timing.clone())
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let programmed = cut == rec;
        assert_eq!(!m.image().is_erased(Ppa(3)), programmed, "cut at {cut}");
        m.image().check_invariants().unwrap();
    }
}

#[test]
fn random_garbage_never_panics_the_opener() {
    let path = tmp("garbage");
    let mut rng = sim::Rng::new(99);
    for len in [0usize, 3, 20, 100, 5000, 70000] {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert!(Nand::open_file(&path, NandTiming::default()).is_err());
    }
}

#[test]
fn an_erase_cut_anywhere_reads_as_a_torn_erase_not_as_corruption() {
    // Regression: a kill inside an erase's page buffer once left a record whose tag was
    // already erased but whose data and state byte were old, and opening called the image
    // corrupt ("data does not match its content tag"). An erase writes, in order: the block
    // record marked unstable, the block's erased page records, the final block record. Cut
    // that sequence after every byte and the image must open, each page reading as its old
    // content, erased or uncorrectable, the block unstable until the last record lands.
    let path = tmp("cut-erase");
    let c = cfg();
    let mut n = Nand::create_file(&path, c.image_params(8), c.timing.clone(), "").unwrap();
    for p in 8..16 {
        n.program(
            Ppa(p),
            Content::Tag(u64::from(p)),
            &[p as u8; 8],
            SimTime::ZERO,
        )
        .unwrap();
    }
    let before_image = n.image().clone();
    drop(n);
    let before = std::fs::read(&path).unwrap();
    let mut n = Nand::open_file(&path, c.timing.clone()).unwrap().0;
    n.erase(BlockId(1), SimTime::ZERO).unwrap();
    drop(n);
    let after = std::fs::read(&path).unwrap();
    let json_len = u32::from_le_bytes(after[12..16].try_into().unwrap()) as usize;
    let header = (16 + json_len + 4).next_multiple_of(4096);
    let page_off = header + (4 * 16usize).next_multiple_of(4096);
    // Page record: tag (8), OOB (8 here), data (512), program count (1), CRC-32 (4), state (1).
    let rec = 8 + 8 + 512 + 1 + 4 + 1;
    let block_rec = header + 16;
    let mut marked = after[block_rec..block_rec + 16].to_vec();
    marked[5] |= 2;
    // The record's CRC covers the block number and its first 8 bytes.
    let mut covered = 1u32.to_le_bytes().to_vec();
    covered.extend_from_slice(&marked[0..8]);
    let crc = sim::crc::crc32(&covered);
    marked[8..12].copy_from_slice(&crc.to_le_bytes());
    let writes: Vec<(usize, Vec<u8>)> = vec![
        (block_rec, marked),
        (
            page_off + 8 * rec,
            after[page_off + 8 * rec..page_off + 16 * rec].to_vec(),
        ),
        (block_rec, after[block_rec..block_rec + 16].to_vec()),
    ];
    let total: usize = writes.iter().map(|w| w.1.len()).sum();
    for cut in 0..=total {
        // A block record is 16 bytes at a 16-byte-aligned offset: it never straddles a
        // 4 KiB page of the file, so a kill writes it whole or not at all (its CRC would
        // reject a part, as `block_records_carry_a_checksum` checks).
        if (0 < cut && cut < 16) || (total - 16 < cut && cut < total) {
            continue;
        }
        let mut img = before.clone();
        let mut left = cut;
        for (off, bytes) in &writes {
            let k = left.min(bytes.len());
            img[*off..*off + k].copy_from_slice(&bytes[..k]);
            left -= k;
        }
        std::fs::write(&path, &img).unwrap();
        let (m, _) = Nand::open_file(&path, c.timing.clone())
            .unwrap_or_else(|e| panic!("cut at {cut} of {total}: {e}"));
        let im = m.image();
        im.check_invariants().unwrap();
        let done = cut == total;
        // The block record is written first (flagged unstable) and last (final).
        let flagged = cut >= 16 && cut < total;
        assert_eq!(im.is_unstable(BlockId(1)), flagged, "cut at {cut}");
        for p in 8..16 {
            let ppa = Ppa(p);
            match im.view(ppa) {
                PageView::Erased | PageView::Uncorrectable => {}
                v => assert!(
                    v == before_image.view(ppa),
                    "cut at {cut}: page {p} is neither old, erased nor uncorrectable"
                ),
            }
            if done {
                assert!(im.is_erased(ppa), "cut at {cut}: page {p}");
            }
        }
    }
}

#[test]
fn block_records_carry_a_checksum() {
    // Erase counts and flags (bad, unstable) had no check, so a corrupt block table
    // opened silently. Flip each byte of a block record, or swap two records: corrupt.
    let path = tmp("blockcrc");
    let c = cfg();
    let mut n = Nand::create_file(&path, c.image_params(8), c.timing.clone(), "").unwrap();
    n.erase(BlockId(2), SimTime::ZERO).unwrap();
    drop(n);
    let good = std::fs::read(&path).unwrap();
    let json_len = u32::from_le_bytes(good[12..16].try_into().unwrap()) as usize;
    let header = (16 + json_len + 4).next_multiple_of(4096);
    Nand::open_file(&path, c.timing.clone()).unwrap();
    for b in [0usize, 2] {
        for k in 0..16 {
            let mut bad = good.clone();
            bad[header + b * 16 + k] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let e = Nand::open_file(&path, c.timing.clone())
                .err()
                .unwrap_or_else(|| panic!("block {b} byte {k} flipped but the image opened"));
            assert!(e.to_string().contains("checksum"), "{e}");
        }
    }
    let mut swapped = good.clone();
    swapped.copy_within(header + 2 * 16..header + 3 * 16, header + 16);
    std::fs::write(&path, &swapped).unwrap();
    assert!(Nand::open_file(&path, c.timing.clone()).is_err());
}
