//! CFC and AFC (Flag Commit §3) end to end: commits are visible and aborts are not, before
//! and after recovery; GC moves or adds commit flags for committed (CFC) or aborted (AFC)
//! chains; a crash in the middle of setting several commit flags is recovered as an abort and
//! stays so; pages that can no longer be reprogrammed are handled; unsupported concurrency is
//! an error.

#![allow(clippy::field_reassign_with_default)]

use commitlab_ssd::*;
use media::{NandConfig, OpKind};
use sim::{Lpn, Rng, SimTime, TxId};

fn small_nand(nop: u8) -> NandConfig {
    let mut n = NandConfig::default();
    n.channels = 1;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 16;
    n.pages_per_block = 8;
    n.page_bytes = 512;
    n.oob_bytes = 64;
    n.nop = nop;
    n
}

fn cfg(proto: &str, block_flags: bool, nop: u8) -> DeviceConfig {
    let mut c = DeviceConfig {
        nand: small_nand(nop),
        ..Default::default()
    };
    c.protocol.name = proto.into();
    c.protocol.block_flags = block_flags;
    c.ftl.gc_threshold = 0.0;
    c.ftl.gc_min_free_blocks = 2;
    c
}

const ALL: [(&str, bool); 4] = [("cfc", false), ("cfc", true), ("afc", false), ("afc", true)];

fn counter(d: &Device, name: &str) -> u64 {
    d.protocol_counters()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn read(d: &mut Device, lpn: u32) -> ReadOutcome {
    d.read(Lpn(lpn), SimTime::from_ms(1 << 40)).unwrap().0
}

fn recover(c: &DeviceConfig, d: Device) -> Device {
    let (d, _) = Device::recover(c, d.into_nand()).unwrap();
    d.check_invariants().unwrap();
    d
}

fn verify(d: &mut Device, model: &[Option<u64>], what: &str) {
    for (lpn, want) in model.iter().enumerate() {
        let want = want.map_or(ReadOutcome::Unmapped, ReadOutcome::Tag);
        assert_eq!(read(d, lpn as u32), want, "{what}: lpn {lpn}");
    }
}

/// One transaction at a time: `size` distinct pages, committed or aborted, with plain
/// writes in between. Keeps `model` up to date.
struct Driver {
    rng: Rng,
    now: SimTime,
    next_tag: u64,
    next_tx: u64,
}

impl Driver {
    fn new(seed: u64) -> Driver {
        Driver {
            rng: Rng::new(seed),
            now: SimTime::ZERO,
            next_tag: 1,
            next_tx: 1,
        }
    }

    fn plain(&mut self, d: &mut Device, model: &mut [Option<u64>], lpn: u32) {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.now = d.write_plain(Lpn(lpn), tag, self.now).unwrap();
        model[lpn as usize] = Some(tag);
    }

    fn tx(&mut self, d: &mut Device, model: &mut [Option<u64>], size: u32, commit: bool) {
        let lp = d.logical_pages();
        let tx = TxId(self.next_tx);
        self.next_tx += 1;
        self.now = d.begin(tx, self.now).unwrap();
        let mut pages: Vec<u32> = Vec::new();
        while pages.len() < size as usize {
            let p = self.rng.below(u64::from(lp)) as u32;
            if !pages.contains(&p) {
                pages.push(p);
            }
        }
        let mut writes = Vec::new();
        for p in &pages {
            let tag = self.next_tag;
            self.next_tag += 1;
            self.now = d.write(tx, Lpn(*p), tag, self.now).unwrap();
            writes.push((*p, tag));
            // Before COMMIT a read returns the last committed version (LastPBA).
            assert_eq!(
                read(d, *p),
                model[*p as usize].map_or(ReadOutcome::Unmapped, ReadOutcome::Tag)
            );
        }
        if commit {
            self.now = d.commit(tx, self.now).unwrap();
            for (p, tag) in writes {
                model[p as usize] = Some(tag);
            }
        } else {
            self.now = d.abort(tx, self.now).unwrap();
        }
    }

    /// `n` transactions of 1..=max pages (a share aborted) and some plain writes.
    fn workload(
        &mut self,
        d: &mut Device,
        model: &mut [Option<u64>],
        n: u32,
        max: u32,
        abort_ratio: f64,
    ) {
        let lp = d.logical_pages();
        for _ in 0..n {
            if self.rng.chance(0.2) {
                let p = self.rng.below(u64::from(lp)) as u32;
                self.plain(d, model, p);
            }
            let size = 1 + self.rng.below(u64::from(max)) as u32;
            let commit = !self.rng.chance(abort_ratio);
            self.tx(d, model, size, commit);
        }
    }
}

#[test]
fn commits_are_visible_and_aborts_are_not() {
    for (proto, bf) in ALL {
        let c = cfg(proto, bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let mut now = SimTime::ZERO;
        for l in 0..4u32 {
            now = d.write_plain(Lpn(l), u64::from(l) + 1, now).unwrap();
        }
        now = d.begin(TxId(1), now).unwrap();
        d.write(TxId(1), Lpn(0), 10, now).unwrap();
        d.write(TxId(1), Lpn(1), 11, now).unwrap();
        assert_eq!(read(&mut d, 0), ReadOutcome::Tag(1), "{proto}: uncommitted");
        now = d.commit(TxId(1), now).unwrap();
        assert_eq!(read(&mut d, 0), ReadOutcome::Tag(10), "{proto}: committed");
        d.begin(TxId(2), now).unwrap();
        d.write(TxId(2), Lpn(2), 20, now).unwrap();
        d.write(TxId(2), Lpn(3), 21, now).unwrap();
        d.write(TxId(2), Lpn(7), 22, now).unwrap();
        d.abort(TxId(2), now).unwrap();
        let model = [Some(10), Some(11), Some(3), Some(4), None, None, None, None];
        verify(&mut d, &model, proto);
        let mut d = recover(&c, d);
        verify(
            &mut d,
            &model,
            &format!("{proto} block_flags={bf} after recovery"),
        );
        // A commit sets one flag (CFC: the last page; AFC: the first page).
        assert!(
            d.core.stats.flag_writes == 0,
            "counters restart after recovery"
        );
    }
}

#[test]
fn gc_moves_commit_flags_of_committed_chains_in_cfc() {
    for bf in [false, true] {
        let c = cfg("cfc", bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let mut model = vec![None; d.logical_pages() as usize];
        let mut w = Driver::new(7);
        w.workload(&mut d, &mut model, 400, 5, 0.05);
        assert!(d.core.stats.gc_erases > 20, "GC ran");
        let gc_flags = counter(&d, "gc_flag_writes");
        let commits = counter(&d, "commit_flag_writes");
        assert!(
            gc_flags > 0,
            "block_flags={bf}: flags moved or added for committed chains"
        );
        assert_eq!(
            d.core.stats.flag_writes,
            gc_flags + commits,
            "every partial program is a commit flag"
        );
        assert_eq!(
            counter(&d, "carrier_copies"),
            0,
            "NOP 2 suffices at run time"
        );
        if bf {
            assert!(
                counter(&d, "links_rewritten") > 0,
                "§3.4 rewrites Links of copies"
            );
        }
        verify(&mut d, &model, "before recovery");
        let mut d = recover(&c, d);
        verify(&mut d, &model, "after recovery");
    }
}

#[test]
fn block_based_flags_save_gc_reprograms() {
    // The same workload with and without §3.4: clusters let a moved page keep the cluster it
    // links to linked, so fewer flags are reprogrammed in GC (Fig. 9).
    let run = |bf: bool| {
        let c = cfg("cfc", bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let mut model = vec![None; d.logical_pages() as usize];
        let mut w = Driver::new(11);
        w.workload(&mut d, &mut model, 400, 8, 0.0);
        verify(&mut d, &model, "run");
        counter(&d, "gc_flag_writes")
    };
    let (plain, clustered) = (run(false), run(true));
    assert!(
        clustered < plain,
        "GC flag writes: {clustered} with block flags, {plain} without"
    );
}

#[test]
fn gc_keeps_false_flags_of_aborted_chains_in_afc() {
    for bf in [false, true] {
        let c = cfg("afc", bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let mut model = vec![None; d.logical_pages() as usize];
        let mut w = Driver::new(3);
        w.workload(&mut d, &mut model, 400, 5, 0.5);
        assert!(d.core.stats.gc_erases > 20);
        assert!(
            counter(&d, "gc_flag_writes") > 0,
            "block_flags={bf}: FALSE flags moved or added for aborted chains"
        );
        let mut d = recover(&c, d);
        verify(&mut d, &model, "after recovery");
        // And AFC does nothing in GC for committed transactions.
        let c2 = cfg("afc", bf, 2);
        let mut d2 = Device::in_memory(&c2).unwrap();
        let mut m2 = vec![None; d2.logical_pages() as usize];
        Driver::new(3).workload(&mut d2, &mut m2, 300, 5, 0.0);
        assert_eq!(counter(&d2, "gc_flag_writes"), 0);
        verify(&mut d2, &m2, "no aborts");
    }
}

/// The device after the commit, the image just before it, the commit's flag programs, the
/// model before the commit and the transaction's writes.
type SplitCommit = (
    Device,
    media::NandImage,
    Vec<media::LoggedOp>,
    Vec<Option<u64>>,
    Vec<(u32, u64)>,
);

/// Drives a transaction whose pages GC relocates while it is active, so that at COMMIT its
/// pages form several chain pieces (heads). Returns the image just before the commit, the
/// flag programs the commit issued, and the model as it was before the commit.
fn commit_with_several_heads(c: &DeviceConfig) -> SplitCommit {
    for seed in 0..50u64 {
        let mut d = Device::in_memory(c).unwrap();
        let lp = d.logical_pages();
        let mut model = vec![None; lp as usize];
        let mut w = Driver::new(seed);
        w.workload(&mut d, &mut model, 60, 4, 0.0);
        let tx = TxId(1 << 20);
        d.begin(tx, w.now).unwrap();
        let mut writes = Vec::new();
        for k in 0..6u32 {
            let p = k * 5 % lp;
            let tag = 1_000_000 + u64::from(k);
            w.now = d.write(tx, Lpn(p), tag, w.now).unwrap();
            writes.push((p, tag));
            for _ in 0..60 {
                let q = 1 + (w.rng.below(u64::from(lp - 1)) as u32);
                if !q.is_multiple_of(5) {
                    w.plain(&mut d, &mut model, q);
                }
            }
        }
        let before = d.core.nand.image().clone();
        d.core.nand.enable_log();
        w.now = d.commit(tx, w.now).unwrap();
        // COMMIT runs GC first, which may flag other transactions' pages: keep the programs
        // on pages of this transaction (the last one is certainly COMMIT's).
        let xid_of = |op: &media::LoggedOp| match &op.kind {
            OpKind::PartialProgram { ppa, .. } => before.oob(*ppa).map(|o| o[13..17].to_vec()),
            _ => None,
        };
        let log: Vec<media::LoggedOp> = d.core.nand.take_log();
        let ours = log.iter().rev().find_map(xid_of);
        let flags: Vec<media::LoggedOp> = log
            .into_iter()
            .filter(|o| ours.is_some() && xid_of(o) == ours)
            .collect();
        if flags.len() >= 2 {
            return (d, before, flags, model, writes);
        }
    }
    panic!("no seed made GC split an active transaction's chain");
}

#[test]
fn a_crash_between_commit_flags_leaves_an_inconsistent_transaction_that_stays_aborted() {
    for bf in [false, true] {
        let c = cfg("cfc", bf, 2);
        let (done, mut img, flags, model, writes) = commit_with_several_heads(&c);
        // Had every flag persisted, the transaction would be committed.
        let mut full = recover(&c, done);
        for (p, tag) in &writes {
            assert_eq!(read(&mut full, *p), ReadOutcome::Tag(*tag));
        }
        // The crash lets only the first flag program persist: one head TRUE, one FALSE.
        img.apply(&flags[0].kind).unwrap();
        let nand = media::Nand::from_image(img, c.nand.timing.clone());
        let (mut d, _) = Device::recover(&c, nand).unwrap();
        assert_eq!(counter(&d, "recovered_inconsistent"), 1, "block_flags={bf}");
        verify(&mut d, &model, "inconsistent transaction aborted");
        // Through GC that drops its pages and further crashes it stays aborted.
        let mut model = model;
        let mut w = Driver::new(99);
        w.now = SimTime::from_ms(1 << 20);
        for round in 0..3 {
            w.workload(&mut d, &mut model, 150, 4, 0.1);
            d = recover(&c, d);
            verify(&mut d, &model, &format!("round {round}"));
        }
    }
}

#[test]
fn pages_that_cannot_be_reprogrammed_get_carrier_copies() {
    // After a crash the reprogram count of every page on flash is unknown (a torn partial
    // program may have used it without a visible bit), so GC copies a page with the right
    // flag instead of reprogramming one. Many recoveries in a row exercise that path.
    for (proto, bf) in ALL {
        let c = cfg(proto, bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let mut model = vec![None; d.logical_pages() as usize];
        let mut w = Driver::new(5);
        let abort = if proto == "afc" { 0.5 } else { 0.05 };
        let mut carriers = 0;
        let mut releases = 0;
        for round in 0..8 {
            w.workload(&mut d, &mut model, 60, 5, abort);
            carriers += counter(&d, "carrier_copies");
            releases += counter(&d, "carrier_releases");
            d = recover(&c, d);
            verify(&mut d, &model, &format!("{proto} bf={bf} round {round}"));
        }
        assert!(carriers > 0, "{proto} bf={bf}: no carrier copy was needed");
        assert!(releases > 0, "{proto} bf={bf}: carriers are released");
    }
}

#[test]
fn a_write_to_a_page_another_active_transaction_wrote_is_unsupported() {
    for (proto, bf) in ALL {
        let c = cfg(proto, bf, 2);
        let mut d = Device::in_memory(&c).unwrap();
        let now = SimTime::ZERO;
        d.begin(TxId(1), now).unwrap();
        d.begin(TxId(2), now).unwrap();
        d.write(TxId(1), Lpn(5), 1, now).unwrap();
        let e = d.write(TxId(2), Lpn(5), 2, now).unwrap_err();
        assert!(matches!(e, SsdError::Unsupported { .. }), "{e:?}");
        // The same transaction may write it again; the newest version wins.
        d.write(TxId(1), Lpn(5), 3, now).unwrap();
        d.write(TxId(2), Lpn(6), 4, now).unwrap();
        let t = d.commit(TxId(1), now).unwrap();
        d.commit(TxId(2), t).unwrap();
        assert_eq!(read(&mut d, 5), ReadOutcome::Tag(3));
        let mut d = recover(&c, d);
        assert_eq!(read(&mut d, 5), ReadOutcome::Tag(3));
        assert_eq!(read(&mut d, 6), ReadOutcome::Tag(4));
    }
    let info = protocol::lookup("cfc").unwrap();
    assert!(info.supports(Isolation::NoPageConflict) && !info.supports(Isolation::Serializable));
}

#[test]
fn a_plain_write_to_a_page_of_an_active_transaction_is_ordered_before_its_commit() {
    for (proto, bf) in ALL {
        for commit in [true, false] {
            let c = cfg(proto, bf, 2);
            let mut d = Device::in_memory(&c).unwrap();
            let mut now = d.write_plain(Lpn(3), 1, SimTime::ZERO).unwrap();
            d.begin(TxId(1), now).unwrap();
            d.write(TxId(1), Lpn(3), 2, now).unwrap();
            d.write(TxId(1), Lpn(4), 3, now).unwrap();
            now = d.write_plain(Lpn(3), 4, now).unwrap();
            assert_eq!(
                read(&mut d, 3),
                ReadOutcome::Tag(4),
                "the plain write is committed"
            );
            now = if commit {
                d.commit(TxId(1), now).unwrap()
            } else {
                d.abort(TxId(1), now).unwrap()
            };
            let want = if commit { [2, 3] } else { [4, 0] };
            let check = |d: &mut Device, what: &str| {
                assert_eq!(read(d, 3), ReadOutcome::Tag(want[0]), "{what}");
                let w4 = if commit {
                    ReadOutcome::Tag(want[1])
                } else {
                    ReadOutcome::Unmapped
                };
                assert_eq!(read(d, 4), w4, "{what}");
            };
            check(&mut d, &format!("{proto} commit={commit}"));
            if commit {
                assert_eq!(counter(&d, "restamp_writes"), 1);
            }
            let _ = now;
            let mut d = recover(&c, d);
            check(&mut d, &format!("{proto} commit={commit} after recovery"));
        }
    }
}

#[test]
fn a_medium_without_partial_programs_is_rejected() {
    for proto in ["cfc", "afc"] {
        let c = cfg(proto, false, 1);
        match Device::in_memory(&c) {
            Err(SsdError::Config { key, .. }) => assert_eq!(key, "nand.nop"),
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("{proto} accepted nop = 1"),
        }
    }
}

#[test]
fn dram_accounting_names_the_protocol_tables() {
    let c = cfg("cfc", false, 2);
    let mut d = Device::in_memory(&c).unwrap();
    d.begin(TxId(1), SimTime::ZERO).unwrap();
    d.write(TxId(1), Lpn(1), 1, SimTime::ZERO).unwrap();
    let dram = d.dram_bytes();
    let get = |n: &str| dram.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
    assert!(get("transaction table").is_some_and(|v| v > 0));
    assert!(get("dirty page table").is_some_and(|v| v > 0));
    assert!(get("reprogram watermarks").is_some());
}

/// The block-based flag technique (§3.4) is on unless configured off: Flag Commit §5.1
/// evaluated "the basic CFC and AFC protocols with block-based flag technique" (it
/// used to be off by default). A device built from the default protocol
/// configuration behaves exactly like one with the technique explicitly on, and (CFC, on
/// the workload of `block_based_flags_save_gc_reprograms`) not like one with it off.
#[test]
fn block_based_flag_technique_is_on_by_default() {
    assert!(ProtocolConfig::default().block_flags);
    for proto in ["cfc", "afc"] {
        let run = |bf: Option<bool>| {
            let mut c = cfg(proto, false, 2);
            c.protocol.block_flags = bf.unwrap_or(ProtocolConfig::default().block_flags);
            let mut d = Device::in_memory(&c).unwrap();
            let mut model = vec![None; d.logical_pages() as usize];
            Driver::new(11).workload(&mut d, &mut model, 400, 8, 0.0);
            (
                counter(&d, "gc_flag_writes"),
                d.core.nand.counters().partial_programs,
            )
        };
        let (default, on, off) = (run(None), run(Some(true)), run(Some(false)));
        assert_eq!(default, on, "{proto}");
        if proto == "cfc" {
            assert_ne!(on, off, "{proto}: the technique changes GC's flag writes");
        }
    }
}
