//! The timing model: independent arrays overlap, one array serializes, channels are shared.

#![allow(clippy::field_reassign_with_default)]

use commitlab_media::*;
use sim::SimTime;

fn device(channels: u32, planes: u32, interleave: Interleave, mbps: u64) -> Nand {
    let mut c = NandConfig::default();
    c.channels = channels;
    c.chips_per_channel = 1;
    c.dies_per_chip = 1;
    c.planes_per_die = planes;
    c.blocks_per_plane = 4;
    c.pages_per_block = 16;
    c.timing.channel_mbps = mbps;
    c.timing.interleave = interleave;
    Nand::new(c.image_params(8), c.timing.clone()).unwrap()
}

const OOB: [u8; 8] = [0; 8];

#[test]
fn n_programs_on_n_idle_planes_take_one_program_latency() {
    let n_planes = 8;
    let mut n = device(1, n_planes, Interleave::Plane, 0);
    let g = n.geometry().clone();
    let mut last = SimTime::ZERO;
    for pu in 0..n_planes {
        let block = g.blocks_of_pu(PuId(pu)).next().unwrap();
        let t = n
            .program(g.first_page(block), Content::Tag(1), &OOB, SimTime::ZERO)
            .unwrap();
        last = last.max(t.end);
    }
    assert_eq!(last, SimTime::from_us(200));
}

#[test]
fn n_programs_on_one_plane_take_n_program_latencies() {
    let mut n = device(1, 8, Interleave::Plane, 0);
    let mut last = SimTime::ZERO;
    for p in 0..8 {
        let t = n
            .program(Ppa(p), Content::Tag(1), &OOB, SimTime::ZERO)
            .unwrap();
        last = last.max(t.end);
    }
    assert_eq!(last, SimTime::from_us(8 * 200));
}

#[test]
fn channel_transfers_serialize_but_programs_overlap() {
    // 4 planes on one channel at 400 MB/s: each 4096+8 byte transfer takes 10.26 us.
    let mut n = device(1, 4, Interleave::Plane, 400);
    let g = n.geometry().clone();
    let xfer = (4104u64 * 1000).div_ceil(400);
    let mut ends = Vec::new();
    for pu in 0..4 {
        let block = g.blocks_of_pu(PuId(pu)).next().unwrap();
        ends.push(
            n.program(g.first_page(block), Content::Tag(1), &OOB, SimTime::ZERO)
                .unwrap()
                .end,
        );
    }
    for (i, e) in ends.iter().enumerate() {
        assert_eq!(e.as_ns(), (i as u64 + 1) * xfer + 200_000);
    }
    // On four channels the transfers overlap too.
    let mut n = device(4, 1, Interleave::Plane, 400);
    let g = n.geometry().clone();
    for pu in 0..4 {
        let block = g.blocks_of_pu(PuId(pu)).next().unwrap();
        let t = n
            .program(g.first_page(block), Content::Tag(1), &OOB, SimTime::ZERO)
            .unwrap();
        assert_eq!(t.end.as_ns(), xfer + 200_000);
    }
}

#[test]
fn die_interleave_serializes_planes_of_a_die() {
    let mut n = device(1, 2, Interleave::Die, 0);
    let g = n.geometry().clone();
    let b0 = g.blocks_of_pu(PuId(0)).next().unwrap();
    let b1 = g.blocks_of_pu(PuId(1)).next().unwrap();
    n.program(g.first_page(b0), Content::Tag(1), &OOB, SimTime::ZERO)
        .unwrap();
    let t = n
        .program(g.first_page(b1), Content::Tag(1), &OOB, SimTime::ZERO)
        .unwrap();
    assert_eq!(t.end, SimTime::from_us(400));
}

#[test]
fn an_operation_waits_for_its_inputs_and_its_array() {
    let mut n = device(1, 1, Interleave::Plane, 0);
    let t = n
        .program(Ppa(0), Content::Tag(1), &OOB, SimTime::from_us(50))
        .unwrap();
    assert_eq!(
        (t.start, t.end),
        (SimTime::from_us(50), SimTime::from_us(250))
    );
    let (r, _) = n.read(Ppa(0), SimTime::ZERO).unwrap();
    assert_eq!(
        r.start,
        SimTime::from_us(250),
        "a read queues behind the program on its plane"
    );
    let (e, worn) = n.erase(BlockId(1), SimTime::ZERO).unwrap();
    assert!(!worn);
    assert_eq!(e.end, r.end + 1_500_000);
}

#[test]
fn the_log_records_start_and_end_of_each_mutation() {
    let mut n = device(1, 2, Interleave::Plane, 400);
    n.enable_log();
    n.program(Ppa(0), Content::Tag(1), &OOB, SimTime::ZERO)
        .unwrap();
    n.read(Ppa(0), SimTime::ZERO).unwrap();
    n.erase(BlockId(0), SimTime::ZERO).unwrap();
    let log = n.take_log();
    assert_eq!(log.len(), 2, "reads are not logged");
    assert!(
        log[0].start > SimTime::ZERO,
        "a program starts after its data transfer"
    );
    assert_eq!(log[0].end - log[0].start, 200_000);
    assert_eq!(
        log[1].start,
        log[0].end + 25_000,
        "the erase queues behind the read's sensing"
    );
}
