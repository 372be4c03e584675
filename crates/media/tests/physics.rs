//! The NAND physics rules: each one rejects the operation that breaks it, with the error
//! naming the rule, and leaves the image unchanged.

#![allow(clippy::field_reassign_with_default)]

use commitlab_media::image::ImageParams;
use commitlab_media::*;
use sim::SimTime;

fn params(cell: CellType, mode: DataMode) -> ImageParams {
    let mut c = NandConfig::default();
    c.channels = 1;
    c.planes_per_die = 2;
    c.blocks_per_plane = 4;
    c.pages_per_block = 8;
    c.page_bytes = 512;
    c.oob_bytes = 16;
    c.cell = cell;
    c.nop = 2;
    c.endurance = 3;
    c.data_mode = mode;
    c.append_bytes = 64;
    c.image_params(8)
}

fn nand(cell: CellType, mode: DataMode) -> Nand {
    Nand::new(params(cell, mode), NandTiming::default()).unwrap()
}

const T0: SimTime = SimTime::ZERO;
const OOB: [u8; 8] = [0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];

#[test]
fn programming_a_programmed_page_is_rejected() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    n.program(Ppa(0), Content::Tag(7), &OOB, T0).unwrap();
    let before = n.image().clone();
    let e = n.program(Ppa(0), Content::Tag(8), &OOB, T0).unwrap_err();
    assert_eq!(e, NandError::NotErased { ppa: Ppa(0) });
    assert_eq!(n.image(), &before);
}

#[test]
fn reprogramming_may_only_clear_bits() {
    for mode in [DataMode::Tag, DataMode::Full] {
        let mut n = nand(CellType::Slc, mode);
        n.program(Ppa(0), Content::Tag(7), &OOB, T0).unwrap();
        let mut sets = OOB;
        sets[0] = 0xFF; // 0x0F -> 0xFF sets bits
        let e = n
            .partial_program(Ppa(0), Some(&sets), None, T0)
            .unwrap_err();
        assert_eq!(
            e,
            NandError::BitsWouldSet {
                ppa: Ppa(0),
                offset: 0
            }
        );
        assert_eq!(
            n.image().program_count(Ppa(0)),
            1,
            "a rejected program is not counted"
        );
        let mut cleared = OOB;
        cleared[1] = 0x7F;
        n.partial_program(Ppa(0), Some(&cleared), None, T0).unwrap();
        match n.image().view(Ppa(0)) {
            PageView::Programmed { oob, .. } => assert_eq!(oob, &cleared),
            v => panic!("{v:?}"),
        }
    }
}

#[test]
fn nop_limits_programs_between_erases() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    n.program(Ppa(0), Content::Tag(1), &OOB, T0).unwrap(); // 1 of NOP=2
    let mut o = OOB;
    o[2] = 0;
    n.partial_program(Ppa(0), Some(&o), None, T0).unwrap(); // 2 of 2
    o[3] = 0;
    let e = n.partial_program(Ppa(0), Some(&o), None, T0).unwrap_err();
    assert_eq!(
        e,
        NandError::NopExceeded {
            ppa: Ppa(0),
            nop: 2
        }
    );
    assert_eq!(n.image().program_count(Ppa(0)), 2);
    n.erase(BlockId(0), T0).unwrap();
    assert_eq!(n.image().program_count(Ppa(0)), 0);
    n.program(Ppa(0), Content::Tag(2), &OOB, T0).unwrap();
}

#[test]
fn in_order_programming_is_enforced_within_a_block() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    n.program(Ppa(3), Content::Tag(1), &OOB, T0).unwrap(); // skipping forward is allowed
    let e = n.program(Ppa(1), Content::Tag(2), &OOB, T0).unwrap_err();
    assert_eq!(
        e,
        NandError::OutOfOrder {
            ppa: Ppa(1),
            last_programmed: 3
        }
    );
    n.program(Ppa(8), Content::Tag(3), &OOB, T0).unwrap(); // another block is independent
}

#[test]
fn erase_sets_everything_to_ones_and_counts_a_cycle() {
    let mut n = nand(CellType::Slc, DataMode::Full);
    n.program(Ppa(1), Content::Tag(9), &OOB, T0).unwrap();
    n.program(Ppa(2), Content::Bytes(vec![1, 2, 3].into()), &OOB, T0)
        .unwrap();
    n.erase(BlockId(0), T0).unwrap();
    assert_eq!(n.image().erase_count(BlockId(0)), 1);
    for p in 0..8 {
        assert_eq!(n.image().view(Ppa(p)), PageView::Erased);
    }
    n.image().check_invariants().unwrap();
}

#[test]
fn blocks_go_bad_at_their_endurance() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    assert!(!n.erase(BlockId(1), T0).unwrap().1);
    assert!(!n.erase(BlockId(1), T0).unwrap().1);
    assert!(
        n.erase(BlockId(1), T0).unwrap().1,
        "third erase reaches endurance 3"
    );
    assert!(n.image().is_bad(BlockId(1)));
    assert_eq!(
        n.erase(BlockId(1), T0).unwrap_err(),
        NandError::BadBlock { block: BlockId(1) }
    );
    let e = n.program(Ppa(8), Content::Tag(1), &OOB, T0).unwrap_err();
    assert_eq!(e, NandError::BadBlock { block: BlockId(1) });
}

#[test]
fn mlc_pages_allow_one_program_in_normal_mode() {
    let mut n = nand(CellType::Mlc, DataMode::Tag);
    n.program(Ppa(0), Content::Tag(1), &OOB, T0).unwrap();
    let mut o = OOB;
    o[4] = 0;
    let e = n.partial_program(Ppa(0), Some(&o), None, T0).unwrap_err();
    assert_eq!(
        e,
        NandError::NopExceeded {
            ppa: Ppa(0),
            nop: 1
        }
    );
}

#[test]
fn pslc_uses_only_lsb_pages_each_with_nop_programs() {
    let mut n = nand(CellType::Mlc, DataMode::Tag);
    n.set_block_mode(BlockId(0), BlockMode::PSlc, T0).unwrap();
    let e = n.program(Ppa(1), Content::Tag(1), &OOB, T0).unwrap_err();
    assert!(
        matches!(e, NandError::PageNotProgrammable { mode: "pSLC", .. }),
        "{e:?}"
    );
    n.program(Ppa(2), Content::Tag(1), &OOB, T0).unwrap();
    let mut o = OOB;
    o[4] = 0;
    n.partial_program(Ppa(2), Some(&o), None, T0).unwrap();
}

#[test]
fn odd_mlc_allows_partial_programs_on_lsb_pages_only() {
    let mut n = nand(CellType::Mlc, DataMode::Full);
    n.set_block_mode(BlockId(0), BlockMode::OddMlc, T0).unwrap();
    n.program(Ppa(0), Content::Tag(1), &OOB, T0).unwrap();
    n.program(Ppa(1), Content::Tag(2), &OOB, T0).unwrap();
    // Appends go into the append area (last 64 bytes of the 512-byte page).
    n.partial_program(Ppa(0), None, Some((448, &[0x12, 0x34])), T0)
        .unwrap();
    let e = n
        .partial_program(Ppa(1), None, Some((448, &[0x12])), T0)
        .unwrap_err();
    assert_eq!(
        e,
        NandError::NopExceeded {
            ppa: Ppa(1),
            nop: 1
        }
    );
    match n.image().view(Ppa(0)) {
        PageView::Programmed {
            data: image::DataRef::Tag { tag, tail },
            ..
        } => {
            assert_eq!(tag, 1);
            assert_eq!(&tail[..3], &[0x12, 0x34, 0xFF]);
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn mode_changes_need_an_erased_mlc_block() {
    let mut s = nand(CellType::Slc, DataMode::Tag);
    assert!(s.set_block_mode(BlockId(0), BlockMode::PSlc, T0).is_err());
    let mut m = nand(CellType::Mlc, DataMode::Tag);
    m.program(Ppa(0), Content::Tag(1), &OOB, T0).unwrap();
    let e = m
        .set_block_mode(BlockId(0), BlockMode::PSlc, T0)
        .unwrap_err();
    assert!(e.to_string().contains("not erased"), "{e}");
}

#[test]
fn appends_cannot_touch_the_body_of_a_tagged_page() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    n.program(Ppa(0), Content::Tag(1), &OOB, T0).unwrap();
    assert!(n
        .partial_program(Ppa(0), None, Some((0, &[0])), T0)
        .is_err());
    n.partial_program(Ppa(0), None, Some((500, &[0xAB])), T0)
        .unwrap();
    match n.image().view(Ppa(0)) {
        PageView::Programmed {
            data: image::DataRef::Tag { tail, .. },
            ..
        } => {
            assert_eq!(tail.get(500 - 448), Some(&0xAB));
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn wrong_sizes_and_ranges_are_errors_not_panics() {
    let mut n = nand(CellType::Slc, DataMode::Tag);
    assert!(matches!(
        n.program(Ppa(0), Content::Tag(1), &[0u8; 3], T0),
        Err(NandError::SizeMismatch { .. })
    ));
    assert!(matches!(
        n.program(Ppa(1_000_000), Content::Tag(1), &OOB, T0),
        Err(NandError::OutOfRange { .. })
    ));
    assert!(matches!(
        n.erase(BlockId(99), T0),
        Err(NandError::OutOfRange { .. })
    ));
    assert!(matches!(
        n.read(Ppa(u32::MAX - 1), T0),
        Err(NandError::OutOfRange { .. })
    ));
    assert!(matches!(
        n.program(Ppa(0), Content::Bytes(vec![0; 513].into()), &OOB, T0),
        Err(NandError::SizeMismatch { .. })
    ));
}

#[test]
fn torn_operations_leave_the_documented_states() {
    let mut img = NandImage::new(params(CellType::Slc, DataMode::Tag)).unwrap();
    let prog = OpKind::Program {
        ppa: Ppa(0),
        content: Content::Tag(5),
        oob: OOB.into(),
    };
    img.apply_torn(&prog, TornKind::Program).unwrap();
    assert_eq!(img.view(Ppa(0)), PageView::Uncorrectable);
    img.apply(&OpKind::Program {
        ppa: Ppa(9),
        content: Content::Tag(6),
        oob: OOB.into(),
    })
    .unwrap();
    img.apply_torn(&OpKind::Erase { block: BlockId(1) }, TornKind::EraseGarbled)
        .unwrap();
    assert_eq!(img.view(Ppa(9)), PageView::Uncorrectable);
    assert!(img.is_unstable(BlockId(1)));
    let e = img
        .program(Ppa(10), &Content::Tag(1), &OOB, true)
        .unwrap_err();
    assert_eq!(e, NandError::UnstableBlock { block: BlockId(1) });
    img.erase(BlockId(1)).unwrap();
    assert!(!img.is_unstable(BlockId(1)));
    img.program(Ppa(10), &Content::Tag(1), &OOB, true).unwrap();
}

#[test]
fn torn_partial_program_clears_a_subset_of_the_bits() {
    let mut img = NandImage::new(params(CellType::Slc, DataMode::Tag)).unwrap();
    img.program(Ppa(0), &Content::Tag(1), &[0xFF; 8], true)
        .unwrap();
    let op = OpKind::PartialProgram {
        ppa: Ppa(0),
        oob: Some(vec![0u8; 8].into()),
        patch: None,
    };
    let mut some_differ = false;
    for seed in 0..8 {
        let mut i = img.clone();
        i.apply_torn(&op, TornKind::Partial { seed }).unwrap();
        let oob = i.oob(Ppa(0)).unwrap().to_vec();
        assert!(oob.iter().all(|b| *b != 0) || oob.iter().any(|b| *b != 0xFF));
        some_differ |= oob != vec![0u8; 8] && oob != vec![0xFF; 8];
    }
    assert!(some_differ);
}

#[test]
fn full_mode_stores_and_verifies_every_byte() {
    let mut n = nand(CellType::Slc, DataMode::Full);
    n.program(Ppa(0), Content::Tag(0xDEAD), &OOB, T0).unwrap();
    n.program(Ppa(1), Content::Bytes(vec![9; 100].into()), &OOB, T0)
        .unwrap();
    let (_, v) = n.read(Ppa(0), T0).unwrap();
    assert!(matches!(
        v,
        PageView::Programmed {
            data: image::DataRef::Tag { tag: 0xDEAD, .. },
            ..
        }
    ));
    let (_, v) = n.read(Ppa(1), T0).unwrap();
    match v {
        PageView::Programmed {
            data: image::DataRef::Bytes(b),
            ..
        } => {
            assert_eq!(b.len(), 512);
            assert_eq!(&b[..100], &[9; 100][..]);
            assert!(b[100..].iter().all(|x| *x == 0xFF));
        }
        v => panic!("{v:?}"),
    }
}

// Erased page records are stored as zeros (for speed: a new device's records are untouched
// zeroed memory), but an erased page's OOB still reads as all 1s: on a new device, after an
// erase, and as the starting point of a torn program; and an erase leaves the image equal
// to a never-programmed one, so image comparisons (crash checker, tests) still hold.
#[test]
fn erased_oob_reads_as_ones_before_and_after_use() {
    for mode in [DataMode::Tag, DataMode::Full] {
        let mut n = nand(CellType::Slc, mode);
        let fresh = n.image().clone();
        assert_eq!(n.image().oob(Ppa(3)), Some(&[0xFF; 8][..]));
        assert!(matches!(n.image().view(Ppa(3)), PageView::Erased));
        for p in 0..8 {
            n.program(Ppa(p), Content::Tag(40 + u64::from(p)), &OOB, T0)
                .unwrap();
        }
        assert_eq!(n.image().oob(Ppa(3)), Some(&OOB[..]));
        n.erase(BlockId(0), T0).unwrap();
        assert_eq!(n.image().oob(Ppa(3)), Some(&[0xFF; 8][..]));
        n.image().check_invariants().unwrap();
        let mut img = n.image().clone();
        assert_eq!(img.erase_count(BlockId(0)), 1);
        // Apart from the erase count, the block is as manufactured.
        let mut f = fresh.clone();
        f.erase(BlockId(0)).unwrap();
        assert_eq!(img, f);
        // A torn program of an erased page: uncorrectable, no OOB to read.
        img.apply_torn(
            &OpKind::Program {
                ppa: Ppa(5),
                content: Content::Tag(9),
                oob: OOB.into(),
            },
            TornKind::Program,
        )
        .unwrap();
        assert_eq!(img.oob(Ppa(5)), None);
        img.check_invariants().unwrap();
        img.erase(BlockId(0)).unwrap();
        assert_eq!(img.oob(Ppa(5)), Some(&[0xFF; 8][..]));
        img.check_invariants().unwrap();
    }
}
