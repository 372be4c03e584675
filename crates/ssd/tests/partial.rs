//! Sub-page writes and reads of never-written pages.
//!
//! A host write that covers a page only in part (a block-trace request smaller than a page
//! or not page-aligned) is a read-modify-write in the device: `Device::write_partial` reads
//! the old version from NAND (counted in `FtlStats::rmw_reads`) and programs the merged page
//! once the read is done. A read of a page that was never written is answered with zeroes
//! (`ReadOutcome::Unmapped`) from the mapping table, without a NAND read, and counted in
//! `FtlStats::unmapped_reads` (docs/FTL.md, "The FTL").

#![allow(clippy::field_reassign_with_default)]

use commitlab_ssd::core::ReadOutcome;
use commitlab_ssd::*;
use media::NandConfig;
use sim::{Lpn, SimTime};

fn device(protocol: &str) -> Device {
    let mut n = NandConfig::default();
    n.channels = 2;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 32;
    n.pages_per_block = 16;
    let mut c = DeviceConfig {
        nand: n,
        ..Default::default()
    };
    c.protocol.name = protocol.into();
    let nand = media::Nand::new(c.image_params().unwrap(), c.nand.timing.clone()).unwrap();
    Device::create(&c, nand).unwrap()
}

#[test]
fn a_partial_write_of_a_written_page_reads_it_first_on_every_protocol() {
    for info in protocol::REGISTRY {
        let mut d = device(info.name);
        let t0 = d.write_plain(Lpn(3), 1, SimTime::ZERO).unwrap();
        let idle = d.barrier(t0);
        // The same write, whole-page and partial, on two twin devices at the same instant.
        let mut whole = device(info.name);
        let w0 = whole.write_plain(Lpn(3), 1, SimTime::ZERO).unwrap();
        let whole_idle = whole.barrier(w0);
        assert_eq!(idle, whole_idle, "{}: twins diverged", info.name);
        let reads = d.core.nand.counters().reads;
        let ack = d.write_partial(Lpn(3), 2, idle).unwrap();
        let ack_whole = whole.write_plain(Lpn(3), 2, idle).unwrap();
        assert_eq!(d.core.stats.partial_writes, 1, "{}", info.name);
        assert_eq!(d.core.stats.rmw_reads, 1, "{}", info.name);
        assert_eq!(
            d.core.nand.counters().reads,
            reads + 1,
            "{}: one NAND read of the old page",
            info.name
        );
        assert!(
            ack > ack_whole,
            "{}: the partial write waits for its read: acked at {ack}, the whole-page write at {ack_whole}",
            info.name
        );
        // The merged page is the new version.
        let (got, _) = d.read(Lpn(3), ack).unwrap();
        assert!(
            matches!(got, ReadOutcome::Tag(2) | ReadOutcome::Bytes(_)),
            "{}: {got:?}",
            info.name
        );
        d.check_invariants().unwrap();
    }
}

#[test]
fn a_partial_write_of_a_never_written_page_merges_with_zeroes_without_a_read() {
    let mut d = device("none");
    let ack = d.write_partial(Lpn(5), 9, SimTime::ZERO).unwrap();
    assert_eq!(d.core.stats.partial_writes, 1);
    assert_eq!(d.core.stats.rmw_reads, 0);
    assert_eq!(d.core.nand.counters().reads, 0);
    let mut twin = device("none");
    assert_eq!(ack, twin.write_plain(Lpn(5), 9, SimTime::ZERO).unwrap());
}

#[test]
fn a_read_of_a_never_written_page_is_zeroes_without_a_nand_read_and_is_counted() {
    for info in protocol::REGISTRY {
        let mut d = device(info.name);
        let now = SimTime(1_000);
        let (got, done) = d.read(Lpn(7), now).unwrap();
        assert_eq!(got, ReadOutcome::Unmapped, "{}", info.name);
        assert_eq!(done, now, "{}: answered at once", info.name);
        assert_eq!(d.core.nand.counters().reads, 0, "{}", info.name);
        assert_eq!(d.core.stats.unmapped_reads, 1, "{}", info.name);
        assert_eq!(d.core.stats.host_reads, 1, "{}", info.name);
        // A written page is read from NAND and not counted as unmapped.
        let t = d.write_plain(Lpn(7), 4, now).unwrap();
        d.read(Lpn(7), t).unwrap();
        assert_eq!(d.core.stats.unmapped_reads, 1, "{}", info.name);
        assert_eq!(d.core.nand.counters().reads, 1, "{}", info.name);
    }
}
