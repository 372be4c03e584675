//! TxFlash's commit protocols (`tc`, `scc`, `bpcc`) end to end: commits are visible and
//! aborts invisible, SCC erases aborted intentions (and only then), BPCC keeps straddlers
//! through GC and releases them, TC keeps commit records exactly as long as they prove
//! something, SCC and BPCC refuse concurrent writes to one page, and recovery rebuilds what
//! each protocol needs to keep running correctly (checked by recovering again after more
//! writes: a "double crash").

#![allow(clippy::field_reassign_with_default)]

use commitlab_ssd::*;
use media::{Nand, NandConfig, Ppa};
use sim::{Lpn, Rng, SimTime, TxId};

const ALL: [&str; 3] = ["tc", "scc", "bpcc"];

fn nand(planes: u32, blocks: u32) -> NandConfig {
    let mut n = NandConfig::default();
    n.channels = 1;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = planes;
    n.blocks_per_plane = blocks;
    n.pages_per_block = 16;
    n.page_bytes = 2048;
    n
}

fn cfg(protocol: &str) -> DeviceConfig {
    let mut c = DeviceConfig {
        nand: nand(2, 24),
        ..Default::default()
    };
    c.protocol.name = protocol.into();
    c
}

fn read(d: &mut Device, lpn: u32) -> ReadOutcome {
    d.read(Lpn(lpn), SimTime::from_ms(1 << 40)).unwrap().0
}

fn counter(d: &Device, name: &str) -> u64 {
    d.protocol_counters()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or(0)
}

/// Power fails with every issued operation persisted; the device recovers from the image.
fn power_cut(c: &DeviceConfig, d: &Device) -> Device {
    let nand = Nand::from_image(d.core.nand.image().clone(), d.core.nand.timing().clone());
    let (d, _) = Device::recover(c, nand).unwrap();
    d.check_invariants().unwrap();
    d
}

/// Where the intention (lpn, version) of a cyclic protocol sits on flash (every copy).
fn copies_of(d: &Device, lpn: u32, ver: u32) -> Vec<Ppa> {
    let img = d.core.nand.image();
    (0..d.core.geo.pages())
        .map(Ppa)
        .filter(|p| {
            img.oob(*p).is_some_and(|o| {
                o[0] == 0x01
                    && u64::from_le_bytes(o[1..9].try_into().unwrap()) == u64::from(lpn)
                    && u32::from_le_bytes(o[9..13].try_into().unwrap()) == ver
            })
        })
        .collect()
}

fn tx(d: &mut Device, id: u64, pages: &[(u32, u64)], commit: bool, now: SimTime) -> SimTime {
    let mut t = d.begin(TxId(id), now).unwrap();
    for (lpn, tag) in pages {
        t = t.max(d.write(TxId(id), Lpn(*lpn), *tag, now).unwrap());
    }
    if commit {
        d.commit(TxId(id), t).unwrap()
    } else {
        d.abort(TxId(id), t).unwrap()
    }
}

#[test]
fn commits_are_visible_and_aborts_invisible_across_power_cuts() {
    for p in ALL {
        let c = cfg(p);
        let mut d = Device::in_memory(&c).unwrap();
        let mut t = tx(&mut d, 1, &[(1, 11), (2, 12), (3, 13)], true, SimTime::ZERO);
        t = tx(&mut d, 2, &[(2, 22), (4, 24)], false, t);
        t = tx(&mut d, 3, &[(5, 35)], true, t);
        t = tx(&mut d, 4, &[(6, 46)], false, t);
        d.write_plain(Lpn(7), 57, t).unwrap();
        let mut r = power_cut(&c, &d);
        for d in [&mut d, &mut r] {
            assert_eq!(read(d, 1), ReadOutcome::Tag(11), "{p}");
            assert_eq!(
                read(d, 2),
                ReadOutcome::Tag(12),
                "{p}: aborted write invisible"
            );
            assert_eq!(read(d, 4), ReadOutcome::Unmapped, "{p}");
            assert_eq!(
                read(d, 5),
                ReadOutcome::Tag(35),
                "{p}: one-page transaction"
            );
            assert_eq!(read(d, 6), ReadOutcome::Unmapped, "{p}");
            assert_eq!(read(d, 7), ReadOutcome::Tag(57), "{p}");
        }
    }
}

#[test]
fn a_transaction_cut_before_its_commit_is_invisible_and_the_held_page_never_written() {
    for p in ALL {
        let c = cfg(p);
        let mut d = Device::in_memory(&c).unwrap();
        let t = tx(&mut d, 1, &[(1, 11), (2, 12)], true, SimTime::ZERO);
        let programs = d.core.nand.counters().programs;
        d.begin(TxId(2), t).unwrap();
        d.write(TxId(2), Lpn(1), 21, t).unwrap();
        assert_eq!(
            d.core.nand.counters().programs,
            programs,
            "{p}: the first write is held"
        );
        d.write(TxId(2), Lpn(3), 23, t).unwrap();
        d.write(TxId(2), Lpn(2), 22, t).unwrap();
        let mut r = power_cut(&c, &d);
        assert_eq!(read(&mut r, 1), ReadOutcome::Tag(11), "{p}");
        assert_eq!(read(&mut r, 2), ReadOutcome::Tag(12), "{p}");
        assert_eq!(read(&mut r, 3), ReadOutcome::Unmapped, "{p}");
        // Aborting with the last page still held: it is simply dropped. (SCC starts
        // erasing the programmed intentions at once, `protocol.scc_erase_at_abort`: the
        // only programs are that relocation's copies.)
        let before = d.core.nand.counters().programs;
        let moved = d.core.stats.forced_migrations;
        d.abort(TxId(2), t).unwrap();
        let copies = d.core.stats.forced_migrations - moved;
        assert_eq!(d.core.nand.counters().programs, before + copies, "{p}");
        assert_eq!(copies > 0, p == "scc", "{p}: copies {copies}");
    }
}

/// Random transactions against a model, some aborted; returns the device and its model.
fn run_random(c: &DeviceConfig, n: u64, abort: f64, seed: u64) -> (Device, Vec<Option<u64>>) {
    let mut d = Device::in_memory(c).unwrap();
    let lp = d.logical_pages();
    let mut model = vec![None; lp as usize];
    let mut rng = Rng::new(seed);
    let mut now = SimTime::ZERO;
    for i in 0..n {
        let size = 1 + rng.below(6) as usize;
        let mut pages: Vec<(u32, u64)> = Vec::new();
        while pages.len() < size {
            let l = rng.below(u64::from(lp) / 2) as u32;
            if !pages.iter().any(|(x, _)| *x == l) {
                pages.push((l, i * 100 + pages.len() as u64 + 1));
            }
        }
        let commit = !rng.chance(abort);
        now = tx(&mut d, i + 1, &pages, commit, now);
        if commit {
            for (l, tag) in pages {
                model[l as usize] = Some(tag);
            }
        }
    }
    d.check_invariants().unwrap();
    (d, model)
}

fn verify(d: &mut Device, model: &[Option<u64>]) {
    for (l, want) in model.iter().enumerate() {
        let want = want.map_or(ReadOutcome::Unmapped, ReadOutcome::Tag);
        assert_eq!(read(d, l as u32), want, "lpn {l}");
    }
}

#[test]
fn many_transactions_with_gc_keep_every_commit_and_no_abort() {
    for p in ALL {
        let c = cfg(p);
        let (mut d, model) = run_random(&c, 3_000, 0.3, 1);
        assert!(d.core.stats.gc_erases > 50, "{p}: GC ran");
        verify(&mut d, &model);
        verify(&mut power_cut(&c, &d), &model);
    }
}

#[test]
fn scc_forces_erases_under_aborts_and_not_without_them() {
    let c = cfg("scc");
    let (d, _) = run_random(&c, 1_500, 0.0, 2);
    assert_eq!(d.core.stats.forced_erases, 0);
    assert_eq!(counter(&d, "uncommitted_intentions"), 0);
    let (d, _) = run_random(&c, 1_500, 0.3, 2);
    assert!(d.core.stats.forced_erases > 20, "{:?}", d.core.stats);
    // BPCC never erases on purpose.
    let (d, _) = run_random(&cfg("bpcc"), 1_500, 0.3, 2);
    assert_eq!(d.core.stats.forced_erases, 0);
    assert!(counter(&d, "straddlers_pinned") > 0);
}

#[test]
fn scc_recovery_rebuilds_the_uncommitted_intentions_it_must_erase() {
    let c = cfg("scc");
    let mut d = Device::in_memory(&c).unwrap();
    // Cut power with a transaction in progress: page 1 programmed, linking to page 2
    // (held, never programmed).
    d.begin(TxId(1), SimTime::ZERO).unwrap();
    d.write(TxId(1), Lpn(1), 11, SimTime::ZERO).unwrap();
    d.write(TxId(1), Lpn(2), 12, SimTime::ZERO).unwrap();
    let mut d = power_cut(&c, &d);
    assert_eq!(counter(&d, "uncommitted_intentions"), 1);
    // Page 2 is named by the uncommitted intention: it must be erased first, or page 2's
    // new version would make the intention look committed (SCC Recovery case I or III).
    let t = SimTime::from_ms(100);
    d.write_plain(Lpn(2), 22, t).unwrap();
    assert_eq!(d.core.stats.forced_erases, 1);
    assert_eq!(counter(&d, "uncommitted_intentions"), 0);
    let mut d = power_cut(&c, &d);
    assert_eq!(read(&mut d, 1), ReadOutcome::Unmapped);
    assert_eq!(read(&mut d, 2), ReadOutcome::Tag(22));
}

/// Writes cold pages that are never rewritten, so GC leaves their blocks alone.
fn cold(d: &mut Device, from: u32, n: u32, now: SimTime) -> SimTime {
    let mut t = now;
    for k in 0..n {
        t = d
            .write_plain(Lpn(from + k), 7_000 + u64::from(k), t)
            .unwrap();
    }
    t
}

/// Rewrites pages 4..16 so the next pages land in blocks without cold data.
fn hot(d: &mut Device, n: u64, now: SimTime) -> SimTime {
    let mut t = now;
    for k in 0..n {
        t = d
            .write_plain(Lpn(4 + (k % 12) as u32), 9_000 + k, t)
            .unwrap();
    }
    t
}

#[test]
fn bpcc_keeps_a_straddler_through_gc_while_it_is_the_only_proof() {
    let c = cfg("bpcc");
    let mut d = Device::in_memory(&c).unwrap();
    // The aborted intention of page 1 sits among cold data that fills most of the device
    // (so GC victims hold live pages); its next-link names page 2's version 1, never
    // programmed.
    let mut t = cold(&mut d, 70, 300, SimTime::ZERO);
    t = tx(&mut d, 1, &[(1, 11), (2, 12)], false, t);
    t = cold(&mut d, 370, 40, t);
    t = hot(&mut d, 64, t);
    let aborted = copies_of(&d, 1, 1);
    assert_eq!(aborted.len(), 1);
    // Page 2's version 2 straddles version 1 (back pointer 0): the only proof that page 1's
    // intention is uncommitted once page 2 moves on.
    t = tx(&mut d, 2, &[(2, 22), (3, 23)], true, t);
    assert_eq!(counter(&d, "live_straddlers"), 1);
    let first = copies_of(&d, 2, 2);
    // Hot rewrites of a few pages, page 2 among them, make GC collect the straddler's block
    // again and again.
    let mut rng = Rng::new(3);
    let gc0 = d.core.stats.gc_erases;
    let mut k = 0u64;
    let mut page2 = 22;
    while d.core.stats.gc_erases < gc0 + 200 {
        let l = 2 + rng.below(60) as u32;
        t = d.write_plain(Lpn(l), 100_000 + k, t).unwrap();
        if l == 2 {
            page2 = 100_000 + k;
        }
        k += 1;
        if k.is_multiple_of(97) {
            assert_eq!(read(&mut power_cut(&c, &d), 1), ReadOutcome::Unmapped);
        }
    }
    assert_eq!(
        copies_of(&d, 1, 1),
        aborted,
        "the aborted intention is still there"
    );
    let now = copies_of(&d, 2, 2);
    assert!(!now.is_empty(), "the straddler survived GC");
    assert_ne!(now, first, "GC moved the straddler");
    assert!(now.iter().any(|p| d.core.page_flags(*p) & 2 != 0), "pinned");
    assert_eq!(counter(&d, "live_straddlers"), 1);
    // Once page 1 has a committed newer version, the straddler proves nothing any more.
    d.write_plain(Lpn(1), 41, t).unwrap();
    assert_eq!(counter(&d, "live_straddlers"), 0);
    assert_eq!(counter(&d, "srs_entries"), 0);
    let mut r = power_cut(&c, &d);
    assert_eq!(read(&mut r, 1), ReadOutcome::Tag(41));
    assert_eq!(read(&mut r, 2), ReadOutcome::Tag(page2));
}

#[test]
fn bpcc_recovery_rebuilds_straddle_responsibility_sets() {
    let c = cfg("bpcc");
    let mut d = Device::in_memory(&c).unwrap();
    // 290 cold pages: page 1's intention lands mid-block, among live cold pages (alone in a
    // block it would be erased as garbage after recovery, and need no straddler).
    let mut t = cold(&mut d, 70, 290, SimTime::ZERO);
    // Power fails with page 1 programmed and page 2 held: after recovery page 1's intention
    // is uncommitted and names page 2's version 1, which never reached flash.
    d.begin(TxId(1), t).unwrap();
    d.write(TxId(1), Lpn(1), 11, t).unwrap();
    d.write(TxId(1), Lpn(2), 12, t).unwrap();
    let mut d = power_cut(&c, &d);
    assert_eq!(counter(&d, "uncommitted_intentions"), 1);
    t = cold(&mut d, 360, 50, SimTime::from_ms(1_000));
    t = hot(&mut d, 64, t);
    // Page 2 moves on: its new version must not reuse version 1 and straddles it.
    d.write_plain(Lpn(2), 22, t).unwrap();
    assert!(copies_of(&d, 2, 1).is_empty());
    assert_eq!(counter(&d, "live_straddlers"), 1);
    // Recovery must find the straddler and pin it again.
    let mut d = power_cut(&c, &d);
    assert_eq!(counter(&d, "live_straddlers"), 1);
    let mut rng = Rng::new(4);
    let mut t = SimTime::from_ms(2_000);
    let first = copies_of(&d, 2, 2);
    let gc0 = d.core.stats.gc_erases;
    let mut k = 0u64;
    let mut page2 = 22;
    while d.core.stats.gc_erases < gc0 + 150 {
        let l = 2 + rng.below(60) as u32;
        t = d.write_plain(Lpn(l), 200_000 + k, t).unwrap();
        if l == 2 {
            page2 = 200_000 + k;
        }
        k += 1;
        if k.is_multiple_of(89) {
            let mut r = power_cut(&c, &d);
            assert_eq!(read(&mut r, 1), ReadOutcome::Unmapped);
            assert_eq!(read(&mut r, 2), ReadOutcome::Tag(page2));
        }
    }
    assert_ne!(copies_of(&d, 2, 2), first, "GC moved the straddler");
    assert!(!copies_of(&d, 1, 1).is_empty());
    assert!(!copies_of(&d, 2, 2).is_empty(), "the straddler survived GC");
}

#[test]
fn tc_commit_records_are_written_for_multi_page_transactions_and_released_once_obsolete() {
    let mut c = cfg("tc");
    c.nand = nand(1, 24);
    c.nand.channels = 4;
    let mut d = Device::in_memory(&c).unwrap();
    let t = tx(&mut d, 1, &[(5, 15)], true, SimTime::ZERO);
    let t = d.write_plain(Lpn(6), 16, t).unwrap();
    assert_eq!(
        d.core.stats.commit_record_writes, 0,
        "one-page transactions"
    );
    let t = tx(&mut d, 2, &[(1, 21), (2, 22)], true, t);
    assert_eq!(d.core.stats.commit_record_writes, 1);
    assert_eq!(counter(&d, "live_record_pages"), 1);
    let records = |d: &Device| -> Vec<Ppa> {
        let img = d.core.nand.image();
        (0..d.core.geo.pages())
            .map(Ppa)
            .filter(|p| img.oob(*p).is_some_and(|o| o[0] == 0x05))
            .filter(|p| d.core.page_flags(*p) & 2 != 0)
            .collect()
    };
    let rec2 = records(&d);
    assert_eq!(rec2.len(), 1);
    // Two later commits supersede transaction 2's two pages: the first one issued (tx 3)
    // completes last, as its commit record waits for its intentions; tx 2's record must
    // stay until both are durable.
    d.begin(TxId(3), t).unwrap();
    d.write(TxId(3), Lpn(1), 31, t).unwrap();
    d.write(TxId(3), Lpn(3), 33, t).unwrap();
    let ack3 = d.commit(TxId(3), t).unwrap();
    assert_eq!(counter(&d, "live_record_pages"), 2);
    let ack4 = d.write_plain(Lpn(2), 42, t).unwrap();
    assert!(
        ack4 < ack3,
        "the later commit is acked first ({ack4} vs {ack3})"
    );
    assert_eq!(
        counter(&d, "live_record_pages"),
        1,
        "tx 2's record released"
    );
    let block = d.core.geo.block_of(rec2[0]);
    assert!(
        d.core.erase_not_before(block) >= ack3,
        "tx 2's record is not erased before every superseding commit is durable"
    );
    let mut r = power_cut(&c, &d);
    assert_eq!(counter(&r, "live_record_pages"), 1);
    for (l, want) in [(1, 31), (2, 42), (3, 33), (5, 15), (6, 16)] {
        assert_eq!(read(&mut r, l), ReadOutcome::Tag(want));
    }
    // Superseding tx 3 entirely releases its record too.
    let t = tx(
        &mut r,
        5,
        &[(1, 51), (3, 53)],
        true,
        SimTime::from_ms(1_000),
    );
    assert_eq!(counter(&r, "live_record_pages"), 1);
    r.write_plain(Lpn(1), 61, t).unwrap();
    r.write_plain(Lpn(3), 63, t).unwrap();
    assert_eq!(counter(&r, "live_record_pages"), 0);
}

#[test]
fn tc_serializable_transactions_may_share_pages_and_the_last_commit_wins() {
    let c = cfg("tc");
    let mut d = Device::in_memory(&c).unwrap();
    let t = SimTime::ZERO;
    d.begin(TxId(1), t).unwrap();
    d.begin(TxId(2), t).unwrap();
    d.write(TxId(1), Lpn(1), 11, t).unwrap();
    d.write(TxId(1), Lpn(2), 12, t).unwrap();
    d.write(TxId(2), Lpn(1), 21, t).unwrap();
    d.write(TxId(2), Lpn(2), 22, t).unwrap();
    d.write(TxId(1), Lpn(1), 13, t).unwrap(); // rewrites inside a transaction are fine
    let a2 = d.commit(TxId(2), t).unwrap();
    let a1 = d.commit(TxId(1), a2).unwrap();
    let mut r = power_cut(&c, &d);
    for d in [&mut d, &mut r] {
        assert_eq!(read(d, 1), ReadOutcome::Tag(13));
        assert_eq!(read(d, 2), ReadOutcome::Tag(12));
    }
    assert!(a1 > a2);
}

#[test]
fn cyclic_commit_refuses_concurrent_writes_to_one_page() {
    for p in ["scc", "bpcc"] {
        let c = cfg(p);
        let mut d = Device::in_memory(&c).unwrap();
        let t = SimTime::ZERO;
        d.begin(TxId(1), t).unwrap();
        d.begin(TxId(2), t).unwrap();
        d.write(TxId(1), Lpn(1), 11, t).unwrap();
        let unsupported = |e: SsdError| matches!(e, SsdError::Unsupported { .. });
        // Another transaction, or a plain write, on a page an active transaction wrote.
        assert!(
            unsupported(d.write(TxId(2), Lpn(1), 21, t).unwrap_err()),
            "{p}"
        );
        assert!(
            unsupported(d.write_plain(Lpn(1), 31, t).unwrap_err()),
            "{p}"
        );
        // The held page may be rewritten; a programmed one may not.
        d.write(TxId(1), Lpn(1), 12, t).unwrap();
        d.write(TxId(1), Lpn(2), 13, t).unwrap();
        assert!(
            unsupported(d.write(TxId(1), Lpn(1), 14, t).unwrap_err()),
            "{p}"
        );
        d.write(TxId(2), Lpn(3), 23, t).unwrap();
        let t = d.commit(TxId(1), t).unwrap();
        // Once the writer committed, the page is free again.
        d.write(TxId(2), Lpn(1), 24, t).unwrap();
        let t = d.commit(TxId(2), t).unwrap();
        d.write_plain(Lpn(2), 35, t).unwrap();
        let mut r = power_cut(&c, &d);
        assert_eq!(read(&mut r, 1), ReadOutcome::Tag(24), "{p}");
        assert_eq!(read(&mut r, 2), ReadOutcome::Tag(35), "{p}");
        assert_eq!(read(&mut r, 3), ReadOutcome::Tag(23), "{p}");
        assert!(!d.info().supports(Isolation::Serializable));
    }
}

/// SCC's erase of an aborted transaction's intentions runs in the background from ABORT on
/// (`protocol.scc_erase_at_abort`): TxFlash §3.2 only needs it done before a
/// newer version of the page is written, so a later writer of that page, arriving after the
/// erase finished, commits in one program's time. With the erase on the writer's path
/// (the old behaviour, now `scc_erase_at_abort = false`) its commit waits for a whole block
/// relocation and erase (> 1.5 ms).
fn scc_commit_after_abort_ns(erase_at_abort: bool) -> (u64, u64, ReadOutcome) {
    let mut c = cfg("scc");
    c.protocol.scc_erase_at_abort = erase_at_abort;
    let mut d = Device::in_memory(&c).unwrap();
    let mut now = SimTime::ZERO;
    for l in 0..8 {
        now = d.write_plain(Lpn(l), 1, now).unwrap();
    }
    let t1 = TxId(1);
    now = d.begin(t1, now).unwrap();
    now = d.write(t1, Lpn(0), 2, now).unwrap();
    now = d.write(t1, Lpn(1), 2, now).unwrap();
    d.abort(t1, now).unwrap();
    // The next writer of page 0 comes 100 ms later.
    let start = now + 100_000_000;
    let t2 = TxId(2);
    let mut t = d.begin(t2, start).unwrap();
    t = d.write(t2, Lpn(0), 3, t).unwrap();
    let ack = d.commit(t2, t).unwrap();
    d.check_invariants().unwrap();
    let forced = counter(&d, "forced_relocations");
    (ack.since(start), forced, read(&mut d, 0))
}

#[test]
fn scc_erases_aborted_intentions_off_the_next_writers_path() {
    let (bg_ns, bg_forced, bg_read) = scc_commit_after_abort_ns(true);
    let (fg_ns, fg_forced, fg_read) = scc_commit_after_abort_ns(false);
    assert_eq!(bg_read, ReadOutcome::Tag(3));
    assert_eq!(fg_read, ReadOutcome::Tag(3));
    assert_eq!(
        (bg_forced, fg_forced),
        (1, 1),
        "one forced relocation either way"
    );
    assert!(
        bg_ns < 1_000_000,
        "background erase: commit took {bg_ns} ns"
    );
    assert!(
        fg_ns > 1_500_000,
        "erase on the writer's path: commit took {fg_ns} ns"
    );
}

#[test]
fn bpcc_until_erased_moves_an_invalid_straddler_until_the_intention_is_erased() {
    // LightTx §4.3 compares against a BPCC in which "a page whose SRS is not null, even if it
    // is invalid, cannot be erased and has to be moved" (`protocol.bpcc_srs =
    // "until-erased"`); TxFlash's pruned SRS (the default) release the straddler as soon as
    // the straddled page has a committed newer version (§3.3, first pruning rule).
    for mode in [BpccSrs::Pruned, BpccSrs::UntilErased] {
        let mut c = cfg("bpcc");
        c.protocol.bpcc_srs = mode;
        let mut d = Device::in_memory(&c).unwrap();
        // Page 1's aborted intention, among cold data, names page 2's version 1 (never
        // programmed); page 2's version 2 straddles it.
        let mut t = cold(&mut d, 70, 300, SimTime::ZERO);
        t = tx(&mut d, 1, &[(1, 11), (2, 12)], false, t);
        t = cold(&mut d, 370, 40, t);
        t = hot(&mut d, 64, t);
        t = tx(&mut d, 2, &[(2, 22), (3, 23)], true, t);
        assert_eq!(counter(&d, "live_straddlers"), 1, "{mode:?}");
        // Pages 1 and 2 get committed newer versions: the straddler is invalid now.
        t = d.write_plain(Lpn(1), 41, t).unwrap();
        t = d.write_plain(Lpn(2), 42, t).unwrap();
        let first = copies_of(&d, 2, 2);
        let held = mode == BpccSrs::UntilErased;
        assert_eq!(counter(&d, "live_straddlers"), u64::from(held), "{mode:?}");
        assert_eq!(counter(&d, "superseded_intentions"), u64::from(held));
        // Hot rewrites make GC collect the straddler's block again and again.
        let mut rng = Rng::new(3);
        let gc0 = d.core.stats.gc_erases;
        let mut k = 0u64;
        // Until erased: go on until GC has had to move the invalid straddler.
        while d.core.stats.gc_erases < gc0 + 200
            || (held && copies_of(&d, 2, 2) == first && d.core.stats.gc_erases < gc0 + 5_000)
        {
            let l = 3 + rng.below(60) as u32;
            t = d.write_plain(Lpn(l), 100_000 + k, t).unwrap();
            k += 1;
            if k.is_multiple_of(97) {
                let mut r = power_cut(&c, &d);
                assert_eq!(read(&mut r, 1), ReadOutcome::Tag(41));
                assert_eq!(read(&mut r, 2), ReadOutcome::Tag(42));
            }
        }
        d.check_invariants().unwrap();
        assert!(
            !copies_of(&d, 1, 1).is_empty(),
            "the aborted intention stays"
        );
        let now = copies_of(&d, 2, 2);
        if held {
            assert!(!now.is_empty(), "the invalid straddler survived GC");
            assert_ne!(now, first, "GC moved the invalid straddler");
            assert!(now.iter().any(|p| d.core.page_flags(*p) & 2 != 0), "pinned");
            assert_eq!(counter(&d, "live_straddlers"), 1);
        } else {
            assert!(now.is_empty(), "GC erased the released straddler: {now:?}");
        }
    }
}
