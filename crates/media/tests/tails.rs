//! The dense table of bytes appended in place (`NandImage::tails`, append areas of at most
//! `TAIL_SLOT_BYTES_MAX` bytes) stores what the payload map stores for larger areas: the
//! same operations on two images that differ only in where the tails live read back the
//! same pages, byte for byte, with every invariant holding.

use commitlab_media::image::{DataRef, ImageParams};
use commitlab_media::*;

fn params(append_bytes: u32) -> ImageParams {
    let mut c = NandConfig::default();
    c.channels = 1;
    c.planes_per_die = 2;
    c.blocks_per_plane = 4;
    c.pages_per_block = 8;
    c.page_bytes = 512;
    c.oob_bytes = 16;
    c.cell = CellType::Slc;
    c.nop = 4;
    c.endurance = 1000;
    c.data_mode = DataMode::Tag;
    c.append_bytes = append_bytes;
    c.image_params(8)
}

/// What a read of `ppa` returns, with the tail's bytes owned.
fn read(img: &NandImage, ppa: Ppa) -> String {
    match img.view(ppa) {
        PageView::Programmed { data, oob } => match data {
            DataRef::Tag { tag, tail } => format!("tag {tag} tail {tail:?} oob {oob:?}"),
            DataRef::Bytes(b) => format!("bytes {b:?} oob {oob:?}"),
        },
        v => format!("{v:?}"),
    }
}

#[test]
fn tails_in_slots_read_as_tails_in_the_map() {
    // 8 appended bytes go to slots, 16 to the map; only the first 8 bytes of an append area
    // are used, so the two images hold the same data.
    let (mut dense, mut map) = (
        NandImage::new(params(8)).unwrap(),
        NandImage::new(params(16)).unwrap(),
    );
    assert_eq!(dense.tail_table_bytes(), 64 * 9);
    assert_eq!(map.tail_table_bytes(), 0);
    let pages = dense.geometry().pages();
    let mut rng = sim::Rng::new(7);
    let oob = [0xFFu8; 8];
    for step in 0..4000 {
        let ppa = Ppa(rng.below(u64::from(pages)) as u32);
        let block = dense.geometry().block_of(ppa);
        match rng.below(10) {
            // Erase a whole block now and then.
            0 => {
                dense.erase(block).unwrap();
                map.erase(block).unwrap();
            }
            // Program the page with a tail of 0..=8 bytes, some ending in 0xFF bytes that a
            // store trims, or with raw bytes.
            1..=4 => {
                if !dense.is_erased(ppa) {
                    continue;
                }
                let n = rng.below(9) as usize;
                let mut tail: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
                if n > 0 && rng.chance(0.3) {
                    tail[n - 1] = 0xFF;
                }
                let content = if rng.chance(0.1) {
                    Content::Bytes(tail.clone().into())
                } else {
                    Content::TagTail(step, tail.into())
                };
                // Pages of a block in any order: the image checks nothing about order.
                dense.program(ppa, &content, &oob, false).unwrap();
                map.program(ppa, &content, &oob, false).unwrap();
            }
            // Append to the tail in place (clearing bits only) within the page's NOP.
            _ => {
                if dense.is_erased(ppa) || dense.program_count(ppa) >= 4 {
                    continue;
                }
                let bytes_page = matches!(
                    dense.view(ppa),
                    PageView::Programmed {
                        data: DataRef::Bytes(_),
                        ..
                    }
                );
                let (body_dense, body_map) = if bytes_page { (0, 0) } else { (504, 496) };
                let off = rng.below(8) as u32;
                let len = 1 + rng.below(u64::from(8 - off)) as usize;
                let old = match dense.view(ppa) {
                    PageView::Programmed {
                        data: DataRef::Tag { tail, .. } | DataRef::Bytes(tail),
                        ..
                    } => tail.to_vec(),
                    _ => unreachable!(),
                };
                let patch: Vec<u8> = (0..len)
                    .map(|k| {
                        let o = old.get(off as usize + k).copied().unwrap_or(0xFF);
                        o & rng.below(256) as u8
                    })
                    .collect();
                dense
                    .partial_program(ppa, None, Some((body_dense + off, &patch)))
                    .unwrap();
                map.partial_program(ppa, None, Some((body_map + off, &patch)))
                    .unwrap();
            }
        }
        for p in 0..pages {
            assert_eq!(
                read(&dense, Ppa(p)),
                read(&map, Ppa(p)),
                "step {step} page {p}"
            );
        }
        dense.check_invariants().unwrap();
        map.check_invariants().unwrap();
    }
    // A copy is equal, and an erased device's slots are all zero again.
    assert_eq!(dense.clone(), dense);
    for b in 0..dense.geometry().blocks() {
        dense.erase(BlockId(b)).unwrap();
    }
    dense.check_invariants().unwrap();
    assert!((0..pages).all(|p| dense.is_erased(Ppa(p))));
}
