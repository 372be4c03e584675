//! In-Place Appends on the host: wal + ipa runs append delta records in place,
//! survive every crash of a tiny run (exhaustive) and 1,000 random crashes of a larger
//! one, a planted bug (restart trusting a torn record) is caught, and bad N×M settings are
//! refused with the key named.

use commitlab_host as host;
use host::check::{self, Mode};
use host::{HostConfig, HostError};
use ssd::DeviceConfig;

fn ipa_config(n: u32, m: u32) -> (HostConfig, DeviceConfig) {
    let (mut h, mut d) = check::tiny_config("wal", "none");
    h.update = "ipa".into();
    h.ipa.n = n;
    h.ipa.m = m;
    // One DB page per flash page (ipa.rs); a 2 KiB page keeps 256 B for appends.
    h.page_bytes = d.nand.page_bytes;
    d.nand.append_bytes = 256;
    (h, d)
}

fn report(rep: &check::CheckReport) {
    for v in &rep.first {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
}

#[test]
fn ipa_appends_in_place_and_survives_every_crash_of_a_tiny_run() {
    // Bank updates change an 8-byte balance, so M = 8 lets single-update pages go in place.
    let (mut h, d) = ipa_config(2, 8);
    h.transactions = 120;
    let rec = check::record(&h, &d, 7).unwrap();
    let c = &rec.metrics.strategy_counters;
    assert!(c["ipa_in_place_appends"] > 0, "{c:?}");
    assert!(c["ipa_out_of_place_writes"] > 0, "{c:?}");
    eprintln!("{:?} erases {}", c, rec.metrics.nand_erases);
    assert!(rec.metrics.nand_erases > 0, "GC must run");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    report(&rep);
    eprintln!("{} states", rep.states);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipa_survives_random_crashes_of_a_larger_run() {
    let (mut h, d) = ipa_config(3, 8);
    h.transactions = 300;
    h.clients = 4;
    h.buffer_frames = 6;
    h.log_pages = 16;
    h.bank.accounts = 120;
    let rec = check::record(&h, &d, 11).unwrap();
    assert!(rec.metrics.strategy_counters["ipa_in_place_appends"] > 20);
    let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 5, None).unwrap();
    report(&rep);
    assert_eq!(rep.states, 1000);
    assert_eq!(rep.violations, 0);
}

#[test]
fn the_checker_catches_restart_trusting_a_torn_delta_record() {
    // Planted bug: restart skips the record CRC, so a torn record's garbled tag is applied.
    // A torn append is one crash state among thousands, so several seeds are swept.
    let mut caught = 0;
    for seed in 1..=6 {
        let (mut h, d) = ipa_config(2, 8);
        h.transactions = 120;
        h.fault_ipa_skip_crc = true;
        let rec = check::record(&h, &d, seed).unwrap();
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        eprintln!(
            "planted, seed {seed}: {} of {} states violate",
            rep.violations, rep.states
        );
        caught += rep.violations;
    }
    assert!(caught > 0, "the planted bug went unnoticed");
}

#[test]
fn bad_ipa_settings_are_refused_naming_the_key() {
    let key_of = |h: &HostConfig, d: &DeviceConfig| match check::record(h, d, 1) {
        Err(HostError::Config { key, .. }) => key,
        Err(e) => panic!("unexpected {e}"),
        Ok(_) => panic!("accepted"),
    };
    let (mut h, d) = ipa_config(200, 4); // 200 × 25 B > half a 2 KiB page
    assert_eq!(key_of(&h, &d), "host.ipa");
    h.ipa.n = 20; // 500 B: fits half a page but not nand.append_bytes = 256
    assert_eq!(key_of(&h, &d), "nand.append_bytes");
    let (mut h, d) = ipa_config(2, 4);
    h.page_bytes = 8192;
    assert_eq!(key_of(&h, &d), "host.page_bytes");
    let (mut h, d) = ipa_config(2, 4);
    h.strategy = "device-tx".into();
    assert!(h.validate().is_err());
    let _ = d;
    for u in ["ipa-block", "ipl"] {
        let (mut h, _) = ipa_config(2, 4);
        h.update = u.into();
        h.strategy = "device-tx".into();
        assert!(h.validate().is_err(), "{u}");
    }
    let (mut h, _) = ipa_config(2, 4);
    h.update = "nope".into();
    assert!(h.validate().is_err());
    // ipl: a sector that does not divide the flash page; an unknown protocol for sectors.
    let (mut h, d) = ipl_config();
    h.ipl.sector_bytes = 500;
    assert_eq!(key_of(&h, &d), "host.ipl.sector_bytes");
    let (mut h, d) = ipl_config();
    h.ipl.unit_pages = 0;
    assert_eq!(key_of(&h, &d), "host.ipl");
}

#[test]
fn ipa_survives_every_crash_of_a_gc_heavy_run() {
    // Many GC moves of pages holding delta records (ssd delta.rs `tail_ones` decides
    // between a GC copy and its original after a crash inside the move).
    let (mut h, d) = ipa_config(2, 8);
    h.transactions = 400;
    let rec = check::record(&h, &d, 3).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    report(&rep);
    eprintln!(
        "gc-heavy: {} states, {} violations, erases {}, gc migrations {:?}",
        rep.states, rep.violations, rec.metrics.nand_erases, rec.metrics.strategy_counters
    );
    assert_eq!(rep.violations, 0);
}

/// The workload facts and a first [0×0] vs [N×M] comparison on TPC-B, TPC-C and TATP
/// (SLC, 8 KiB flash pages = DB pages). Slow in debug builds: run with
/// `cargo test -p commitlab-host --release --test ipa measure -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_workload_facts_and_ipa_vs_out_of_place() {
    for wl in ["tpcb", "tpcc", "tatp"] {
        for (n, m) in [(0, 0), (2, 4), (2, 8), (1, 120)] {
            let (mut h, mut d) = check::tiny_config("wal", "none");
            d.nand.planes_per_die = 4;
            d.nand.blocks_per_plane = if wl == "tpcc" { 2048 } else { 128 };
            d.nand.pages_per_block = 64;
            d.nand.page_bytes = 8192;
            d.nand.oob_bytes = 256;
            d.nand.append_bytes = 512;
            d.ftl.gc_min_free_blocks = 4;
            h.page_bytes = 8192;
            h.workload = wl.into();
            h.clients = 8;
            h.transactions = 20_000;
            h.buffer_frames = 64;
            h.log_pages = 2048;
            h.checkpoint_log_bytes = 1 << 20;
            h.tpcb.accounts_per_branch = 100_000;
            h.tpcc.warehouses = 1;
            h.tatp.subscribers = 20_000;
            // [0×0] = out-of-place; the delta area is still reserved in the FTL page, so
            // both runs have the same capacity.
            if n > 0 {
                h.update = "ipa".into();
                h.ipa.n = n;
                h.ipa.m = m;
            }
            let dev = ssd::Device::in_memory(&d).unwrap();
            let run = host::run(&h, &d, dev, 1, false).unwrap_or_else(|e| panic!("{wl}: {e}"));
            let f = run.core.device.core.stats;
            let c = &run.metrics.strategy_counters;
            let g = |k: &str| c.get(k).copied().unwrap_or(0);
            let evicted: u64 = c
                .iter()
                .filter(|(k, _)| k.starts_with("ipa_evicted_net_bytes"))
                .map(|(_, v)| *v)
                .sum();
            let host_bytes = f.host_writes * 8192 + f.delta_bytes;
            let tracked = evicted - g("ipa_evicted_net_bytes_more_or_untracked");
            // DBMS write amplification of writing those pages whole: page bytes / net bytes.
            let dbms_wa = (tracked * 8192) as f64 / g("ipa_net_bytes_tracked").max(1) as f64;
            println!(
                "{wl} [{n}x{m}]: committed {} tput {:.0}/s | data page writes {} in-place {} ({:.0} %) | invalidations {} | gc migrations {} erases {} | host->device bytes {} | evicted <=100 B: {}/{} | net bytes tracked {} | DBMS WA of whole-page writes {:.0}x",
                run.metrics.txns_committed,
                run.metrics.throughput_per_s,
                run.metrics.stats.page_writes,
                g("ipa_in_place_appends"),
                100.0 * g("ipa_in_place_appends") as f64
                    / (g("ipa_in_place_appends") + run.metrics.stats.page_writes).max(1) as f64,
                f.page_invalidations,
                f.gc_page_migrations,
                f.gc_erases,
                host_bytes,
                g("ipa_evicted_net_bytes_le_10")
                    + g("ipa_evicted_net_bytes_le_50")
                    + g("ipa_evicted_net_bytes_le_100"),
                evicted,
                g("ipa_net_bytes_tracked"),
                dbms_wa,
            );
        }
    }
}

fn mlc(d: &mut DeviceConfig, mode: ssd::modes::MlcMode) {
    d.nand.cell = media::CellType::Mlc;
    d.nand.nop = 4;
    d.nand.timing.program_msb_ns = 3 * d.nand.timing.program_ns;
    d.ftl.mlc_mode = mode;
}

#[test]
fn ipa_on_mlc_needs_a_block_mode() {
    let (h, mut d) = ipa_config(2, 8);
    mlc(&mut d, ssd::modes::MlcMode::Mlc);
    match check::record(&h, &d, 1) {
        Err(HostError::Config { key, .. }) => assert_eq!(key, "ftl.mlc_mode"),
        Err(e) => panic!("unexpected {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn ipa_survives_every_crash_on_pslc_and_odd_mlc() {
    for mode in [ssd::modes::MlcMode::Pslc, ssd::modes::MlcMode::OddMlc] {
        let (mut h, mut d) = ipa_config(2, 8);
        mlc(&mut d, mode);
        if mode == ssd::modes::MlcMode::Pslc {
            d.nand.blocks_per_plane *= 2;
        }
        h.transactions = 120;
        let rec = check::record(&h, &d, 7).unwrap();
        let c = &rec.metrics.strategy_counters;
        eprintln!("{mode:?}: {c:?} erases {}", rec.metrics.nand_erases);
        assert!(c["ipa_in_place_appends"] > 0, "{c:?}");
        if mode == ssd::modes::MlcMode::OddMlc {
            assert!(c["ipa_oop_msb"] > 0, "{c:?}");
        }
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        report(&rep);
        eprintln!("{mode:?}: {} states", rep.states);
        assert!(rep.states > 1000, "{} states", rep.states);
        assert_eq!(rep.violations, 0);
    }
}

// ---------------------------------------------------------------- ipa-block

fn block_config(n: u32, m: u32) -> (HostConfig, DeviceConfig) {
    let (mut h, d) = ipa_config(n, m);
    h.update = "ipa-block".into();
    (h, d)
}

#[test]
fn ipa_block_programs_in_place_and_survives_every_crash_of_a_tiny_run() {
    let (mut h, d) = block_config(2, 8);
    h.transactions = 120;
    let rec = check::record(&h, &d, 7).unwrap();
    let c = &rec.metrics.strategy_counters;
    eprintln!("{c:?} erases {}", rec.metrics.nand_erases);
    // The device programmed the whole-page writes in place (SLC: whenever the body is
    // the one on flash).
    assert!(c["ipa_in_place_appends"] > 0, "{c:?}");
    assert_eq!(c["ipa_block_device_out_of_place"], 0, "{c:?}");
    assert!(rec.metrics.nand_erases > 0, "GC must run");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    report(&rep);
    eprintln!("{} states", rep.states);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipa_block_survives_random_crashes_of_a_larger_run() {
    let (mut h, d) = block_config(3, 8);
    h.transactions = 300;
    h.clients = 4;
    h.buffer_frames = 6;
    h.log_pages = 16;
    h.bank.accounts = 120;
    let rec = check::record(&h, &d, 11).unwrap();
    assert!(rec.metrics.strategy_counters["ipa_in_place_appends"] > 20);
    let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 5, None).unwrap();
    report(&rep);
    assert_eq!(rep.states, 1000);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipa_block_survives_crashes_on_pslc_and_odd_mlc() {
    for mode in [ssd::modes::MlcMode::Pslc, ssd::modes::MlcMode::OddMlc] {
        let (mut h, mut d) = block_config(2, 8);
        mlc(&mut d, mode);
        if mode == ssd::modes::MlcMode::Pslc {
            d.nand.blocks_per_plane *= 2;
        }
        h.transactions = 120;
        let rec = check::record(&h, &d, 7).unwrap();
        let c = &rec.metrics.strategy_counters;
        eprintln!("{mode:?}: {c:?} erases {}", rec.metrics.nand_erases);
        assert!(c["ipa_in_place_appends"] > 0, "{c:?}");
        if mode == ssd::modes::MlcMode::OddMlc {
            // Pages on MSB pages: the device wrote body + delta area out of place.
            assert!(c["ipa_block_device_out_of_place"] > 0, "{c:?}");
        }
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        report(&rep);
        eprintln!("{mode:?}: {} states", rep.states);
        assert!(rep.states > 1000, "{} states", rep.states);
        assert_eq!(rep.violations, 0);
        let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 3, None).unwrap();
        report(&rep);
        assert_eq!(rep.violations, 0);
    }
}

#[test]
fn the_checker_catches_ipa_block_trusting_a_torn_record_on_odd_mlc() {
    let mut caught = 0;
    for seed in 1..=6 {
        let (mut h, mut d) = block_config(2, 8);
        mlc(&mut d, ssd::modes::MlcMode::OddMlc);
        h.transactions = 120;
        h.fault_ipa_skip_crc = true;
        let rec = check::record(&h, &d, seed).unwrap();
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        eprintln!(
            "planted, seed {seed}: {} of {} states violate",
            rep.violations, rep.states
        );
        caught += rep.violations;
        if caught > 0 {
            break;
        }
    }
    assert!(caught > 0, "the planted bug went unnoticed");
}

// ---------------------------------------------------------------- ipl

/// The paper's layout (`in-block`): one erase unit per 8-page block — 4 DB pages of one
/// flash page each and 4 log pages of 4 sectors (NOP 4).
fn ipl_config() -> (HostConfig, DeviceConfig) {
    let (mut h, d) = check::tiny_config("wal", "none");
    h.update = "ipl".into();
    h.page_bytes = d.nand.page_bytes;
    h.ipl.unit_pages = 4;
    (h, d)
}

/// The `separate` layout (log regions as FTL logical pages): two erase units on the tiny
/// bank (7 DB pages of 8 KiB), so merges and cross-unit reads occur.
fn ipl_separate_config() -> (HostConfig, DeviceConfig) {
    let (mut h, d) = check::tiny_config("wal", "none");
    h.update = "ipl".into();
    h.ipl.layout = "separate".into();
    h.ipl.unit_pages = 4;
    (h, d)
}

/// Runs `h` on a fresh device and checks the flash it leaves: every host-managed block
/// holds one erase unit — its data pages, then log pages whose sectors name only pages of
/// that unit — and every merge erased its old block at once. Returns (merges, blocks).
fn in_block_layout_of_a_run(h: &HostConfig, d: &DeviceConfig) -> (u64, usize) {
    let dev = ssd::Device::in_memory(d).unwrap();
    let run = host::engine::run_traced(h, d, dev, 7, false, false).unwrap();
    let c = &run.metrics.strategy_counters;
    let merges = c.get("ipl_merges").copied().unwrap_or(0);
    assert!(merges > 0, "{c:?}");
    assert_eq!(
        c.get("ipl_unit_erases").copied(),
        Some(merges),
        "each merge erases its unit's old block: {c:?}"
    );
    let mut dev = run.core.device;
    assert_eq!(dev.core.stats.native_erases, merges);
    let blocks = dev.native_blocks();
    let unit_pages = u64::from(h.ipl.unit_pages);
    let mut seen = std::collections::BTreeSet::new();
    for &b in &blocks {
        let mut owner = None;
        let mut logs = 0;
        for slot in 0..dev.native_slots() {
            let (o, oob, _) = dev.native_read(b, slot, sim::SimTime::ZERO).unwrap();
            let Some(oob) = oob else { break };
            let u = *owner.get_or_insert(oob.a);
            assert_eq!(oob.a, u, "{b} mixes units");
            if slot < u32::from(oob.c) {
                assert!(
                    matches!(o, ssd::ReadOutcome::Tag(_)),
                    "{b} slot {slot}: {o:?}"
                );
                continue;
            }
            let ssd::ReadOutcome::Bytes(bytes) = o else {
                panic!("{b} slot {slot} is a log page but reads {o:?}")
            };
            for s in 0..bytes.len().div_ceil(512) {
                if let Some(e) = host::update::ipl::decode(&bytes[s * 512..], false) {
                    for (p, _) in e {
                        assert_eq!(
                            u64::from(p) / unit_pages,
                            u64::from(u),
                            "{b}: a sector of another unit"
                        );
                        logs += 1;
                    }
                }
            }
        }
        assert!(seen.insert(owner), "two blocks for one unit");
        let _ = logs;
    }
    (merges, blocks.len())
}

#[test]
fn ipl_keeps_log_sectors_in_the_data_block_and_a_merge_erases_it() {
    let (mut h, d) = ipl_config();
    h.transactions = 120;
    let (merges, blocks) = in_block_layout_of_a_run(&h, &d);
    assert!(blocks >= 2, "{blocks} blocks");
    eprintln!("{merges} merges, {blocks} unit blocks");
}

#[test]
#[should_panic]
fn the_separate_layout_keeps_no_unit_in_a_block() {
    // The layout before the paper's: log sectors on FTL logical pages, merges leave the
    // erase to GC — the layout check above must fail on it.
    let (mut h, d) = ipl_separate_config();
    h.transactions = 120;
    in_block_layout_of_a_run(&h, &d);
}

#[test]
fn ipl_in_block_refuses_what_it_cannot_honour() {
    let key_of = |h: &HostConfig, d: &DeviceConfig| match check::record(h, d, 1) {
        Err(HostError::Config { key, .. }) => key,
        Err(e) => panic!("unexpected {e}"),
        Ok(_) => panic!("accepted"),
    };
    // A unit larger than a block.
    let (mut h, d) = ipl_config();
    h.ipl.unit_pages = 5;
    assert_eq!(key_of(&h, &d), "host.ipl.unit_pages");
    // More sectors per log page than programs a page allows.
    let (h, mut d) = ipl_config();
    d.nand.nop = 2;
    assert_eq!(key_of(&h, &d), "host.ipl.sector_bytes");
    // Mapping checkpoints: recovery would not scan the host's blocks.
    let (h, mut d) = ipl_config();
    d.ftl.checkpoint_interval = 64;
    assert_eq!(key_of(&h, &d), "ftl.checkpoint_interval");
    // Odd-MLC: MSB log pages take one program.
    let (h, mut d) = ipl_config();
    mlc(&mut d, ssd::modes::MlcMode::OddMlc);
    assert_eq!(key_of(&h, &d), "ftl.mlc_mode");
    let (mut h, d) = ipl_config();
    h.ipl.layout = "elsewhere".into();
    assert_eq!(key_of(&h, &d), "host.ipl.layout");
}

#[test]
fn ipl_logs_merges_and_survives_every_crash_of_a_tiny_run() {
    let (mut h, d) = ipl_config();
    h.transactions = 120;
    let rec = check::record(&h, &d, 7).unwrap();
    let c = &rec.metrics.strategy_counters;
    eprintln!("{c:?} erases {}", rec.metrics.nand_erases);
    assert!(c["ipl_sector_writes"] > 0, "{c:?}");
    assert!(c["ipl_sector_writes_in_place"] > 0, "{c:?}");
    assert!(c["ipl_merges"] > 0, "{c:?}");
    assert!(c["ipl_log_page_reads"] > 0, "{c:?}");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    report(&rep);
    eprintln!("{} states", rep.states);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipl_survives_random_crashes_of_a_larger_run() {
    let (mut h, d) = ipl_config();
    h.transactions = 300;
    h.clients = 4;
    h.buffer_frames = 6;
    h.log_pages = 16;
    h.bank.accounts = 120;
    let rec = check::record(&h, &d, 11).unwrap();
    assert!(rec.metrics.strategy_counters["ipl_merges"] > 0);
    let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 5, None).unwrap();
    report(&rep);
    assert_eq!(rep.states, 1000);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipl_in_block_survives_every_crash_on_pslc() {
    // pSLC: LSB pages only, so 16-page blocks give the unit its 8 slots.
    let (mut h, mut d) = ipl_config();
    mlc(&mut d, ssd::modes::MlcMode::Pslc);
    d.nand.pages_per_block = 16;
    h.transactions = 120;
    let rec = check::record(&h, &d, 7).unwrap();
    let c = &rec.metrics.strategy_counters;
    assert!(c["ipl_unit_erases"] > 0, "{c:?}");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    report(&rep);
    eprintln!("pSLC in-block: {} states", rep.states);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn ipl_separate_survives_crashes_on_pslc_and_odd_mlc() {
    for mode in [ssd::modes::MlcMode::Pslc, ssd::modes::MlcMode::OddMlc] {
        let (mut h, mut d) = ipl_separate_config();
        mlc(&mut d, mode);
        if mode == ssd::modes::MlcMode::Pslc {
            d.nand.blocks_per_plane *= 2;
        }
        h.transactions = 120;
        let rec = check::record(&h, &d, 7).unwrap();
        let c = &rec.metrics.strategy_counters;
        eprintln!("{mode:?}: {c:?} erases {}", rec.metrics.nand_erases);
        assert!(c["ipl_sector_writes"] > 0, "{c:?}");
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        report(&rep);
        eprintln!("{mode:?}: {} states", rep.states);
        assert!(rep.states > 1000, "{} states", rep.states);
        assert_eq!(rep.violations, 0);
        let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 3, None).unwrap();
        report(&rep);
        assert_eq!(rep.violations, 0);
    }
}

/// The shape that reaches the window between a merge and its unit's next log sector in
/// the `separate` layout (CI runs it; docs/MUTATION.md, `ipl-sector-before-merge`): four
/// channels, so the merge's page writes spread over sixteen planes and the sector can land
/// on an idle one; four clients, so another client writes a page of the merged unit back
/// while the merge is still in flight; four log sectors per unit, so merges are frequent.
/// A first sector that overtakes the merge supersedes the unit's old log page, whose
/// records the WAL may already have truncated, before the merged images are on flash: with
/// `COMMITLAB_MUTANT=ipl-sector-before-merge` (`cargo test -p commitlab-host --features
/// mutants --test ipa ipl_separate`) 560 of 16,479 states of seed 1 lose acked updates.
#[test]
fn ipl_separate_merge_with_sectors_right_behind_survives_every_crash() {
    // As `commitlab crash --host wal --protocol none --update ipl` builds it (one flash
    // page per DB page, `world::host_run::host_crash_config_for`), plus the shape.
    let (mut h, mut d) = ipl_separate_config();
    h.page_bytes = d.nand.page_bytes;
    d.nand.channels = 4;
    h.clients = 4;
    h.ipl.log_sectors = 4;
    let rec = check::record(&h, &d, 1).unwrap();
    let c = &rec.metrics.strategy_counters;
    assert!(c["ipl_merges"] >= 10 && c["ipl_sector_writes"] > 0, "{c:?}");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 10 }, 1, None).unwrap();
    report(&rep);
    eprintln!("{} states", rep.states);
    assert!(rep.states > 10_000, "{} states", rep.states);
    assert_eq!(
        rep.violations, 0,
        "a log sector overtook its unit's merge (seed 1, exhaustive)"
    );
}

#[test]
fn the_checker_catches_ipl_trusting_a_torn_log_sector() {
    let mut caught = 0;
    for seed in 1..=6 {
        let (mut h, d) = ipl_config();
        h.transactions = 120;
        h.fault_ipa_skip_crc = true;
        let rec = check::record(&h, &d, seed).unwrap();
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
        eprintln!(
            "planted, seed {seed}: {} of {} states violate",
            rep.violations, rep.states
        );
        caught += rep.violations;
        if caught > 0 {
            break;
        }
    }
    assert!(caught > 0, "the planted bug went unnoticed");
}
