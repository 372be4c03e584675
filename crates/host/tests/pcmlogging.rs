//! `pcmlogging` on the host engine under the host crash checker with PCM crash points
//! (`pcm_tier::check`): every crash of a tiny bank run, random crashes of a tiny TPC-C run,
//! and planted bugs the checker must catch.

mod common;

use commitlab_host as host;
use host::check::{self, Mode};

fn tiny() -> (host::HostConfig, ssd::DeviceConfig) {
    check::tiny_config("pcmlogging", "none")
}

fn tiny_tpcc() -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, mut d) = tiny();
    common::tiny_tpcc(&mut h);
    h.transactions = 40;
    h.pcm.pcm_bytes = 32768;
    h.pcm.dram_bytes = 8 * 8192 + 8192;
    d.nand.blocks_per_plane = 64;
    (h, d)
}

#[test]
fn pcmlogging_survives_every_crash_of_a_tiny_run() {
    let (h, d) = tiny();
    let rec = check::record(&h, &d, 7).unwrap();
    let m = &rec.metrics;
    let k = &m.strategy_counters;
    // The run stole pages into PCM, destaged, aborted and restarted.
    assert!(k["pcm_destaged_pages"] > 0, "{k:?}");
    assert!(k["pcm_records_flushed"] > 0, "{k:?}");
    assert!(m.txns_aborted + m.txns_restarted > 0, "{m:?}");
    assert_eq!(k["buffer_frames"], 4, "{k:?}");
    let tier = rec.tier.as_ref().unwrap();
    assert!(!tier.disk_ops.is_empty());
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    common::show(&rep, usize::MAX);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn pcmlogging_tiny_tpcc_survives_random_crashes() {
    let (h, d) = tiny_tpcc();
    let rec = check::record(&h, &d, 9).unwrap();
    assert!(rec.metrics.txns_committed > 0);
    let rep = check::check(&rec, Mode::Random { schedules: 300 }, 3, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.states, 300);
    assert_eq!(rep.violations, 0);
}

/// Planted bug: the ActiveTxList entry is cleared (the commit point) before the
/// transaction's records are flushed.
#[test]
fn the_checker_catches_an_atl_entry_cleared_before_the_flushes() {
    let (mut h, d) = tiny();
    h.pcm.fault_early_atl_removal = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert!(rep.violations > 0, "planted bug not caught");
}

/// Planted bug: a destage frees the PCM units of the records it merged when it issues the
/// disk write rather than when the write completed (found first by hand: 797 of 3,480
/// states violate).
#[test]
fn the_checker_catches_units_freed_before_the_destage_write_completed() {
    let (mut h, d) = tiny();
    h.pcm.fault_early_destage_free = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert!(rep.violations > 0, "planted bug not caught");
}

/// Wear leveling (§4.2, Algorithm 4) moves records under the swap pointer; every crash of
/// a tiny run with a small δ stays correct.
#[test]
fn wear_leveling_survives_every_crash_of_a_tiny_run() {
    let (mut h, d) = tiny();
    h.pcm.wear_delta = 2;
    let rec = check::record(&h, &d, 7).unwrap();
    assert!(rec.metrics.strategy_counters["pcm_swaps"] > 0);
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.violations, 0);
}

/// The paper's pseudo-XID rule (a moved committed record takes "the largest XID that has
/// been used but not in the ActiveTxList") can name a running transaction that has not
/// flushed yet; when it does, recovery discards the moved committed record
/// (docs/HOST.md, "PCM strategies"). Found by the PCMLogging crash checker (seed 1, larger config).
#[test]
fn the_checker_catches_the_papers_pseudo_xid_rule() {
    let mut caught = false;
    for seed in 1..=6 {
        let (mut h, d) = tiny_tpcc();
        h.pcm.wear_delta = 2;
        h.pcm.pcm_bytes = 8192;
        h.pcm.fault_paper_pseudo_xid = true;
        let Ok(rec) = check::record(&h, &d, seed) else {
            continue;
        };
        let rep = check::check(&rec, Mode::Random { schedules: 300 }, 1, None).unwrap();
        if rep.violations > 0 {
            caught = true;
            break;
        }
    }
    assert!(caught, "planted bug not caught");
}

/// Planted bug: the engine's commit is acked at issue (`fault_early_commit_ack` is not
/// wired into pcmlogging, so plant it through the oracle instead: a run whose commit
/// records claim acks at issue must fail on some crash).
#[test]
fn the_checker_catches_acks_claimed_before_the_commit_point() {
    let (h, d) = tiny();
    let mut rec = check::record(&h, &d, 7).unwrap();
    for c in &mut rec.commits {
        c.ack = c.issue;
    }
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert!(rep.violations > 0, "early acks not caught");
}

#[test]
fn same_seed_same_run() {
    let (h, d) = tiny_tpcc();
    let a = check::record(&h, &d, 5).unwrap().metrics;
    let b = check::record(&h, &d, 5).unwrap().metrics;
    assert_eq!(a.strategy_counters, b.strategy_counters);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
}

#[test]
fn bad_pcm_settings_name_the_key() {
    let (mut h, d) = tiny();
    h.pcm.external = "tape".into();
    let e = check::record(&h, &d, 1).err().unwrap().to_string();
    assert!(e.contains("host.pcm.external"), "{e}");
    let (mut h, d) = tiny();
    h.pcm.dram_bytes = 8192;
    let e = check::record(&h, &d, 1).err().unwrap().to_string();
    assert!(e.contains("host.pcm.dram_bytes"), "{e}");
    let (mut h, d) = tiny();
    h.pcm.pcm_bytes = 1000;
    let e = check::record(&h, &d, 1).err().unwrap().to_string();
    assert!(e.contains("host.pcm.pcm_bytes"), "{e}");
}

/// A TPC-C run on the HDD with a PCM small enough to destage throughout: destages of one
/// page overlap in the disk queue (the case the destage ids guard).
fn hdd_tpcc(txns: u64) -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, d) = tiny_tpcc();
    h.transactions = txns;
    h.pcm.pcm_bytes = 131072;
    h.pcm.dram_bytes = 73728;
    h.pcm.external = "hdd".into();
    (h, d)
}

#[test]
fn hdd_tpcc_destaging_survives_random_crashes() {
    let (h, d) = hdd_tpcc(80);
    let rec = check::record(&h, &d, 3).unwrap();
    assert!(rec.metrics.strategy_counters["pcm_destaged_pages"] > 0);
    let rep = check::check(&rec, Mode::Random { schedules: 200 }, 5, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.violations, 0);
}

/// ≥ 1,000 seeded random crash schedules on a larger run; `-- --ignored`.
#[test]
#[ignore]
fn thousand_random_crashes_on_hdd_tpcc() {
    let (h, d) = hdd_tpcc(150);
    let rec = check::record(&h, &d, 1).unwrap();
    let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 1, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.states, 1000);
    assert_eq!(rep.violations, 0);
}

/// Recovery is a PCM scan (§6.2.4): no disk page is read, and the time grows with the
/// records PCM holds. TATP runs as well.
#[test]
fn recovery_is_a_pcm_scan_and_tatp_runs() {
    let (mut h, d) = tiny_tpcc();
    h.measure_recovery = true;
    let m = check::record(&h, &d, 2).unwrap().metrics;
    let r = m.recovery.unwrap();
    assert_eq!((r.pages_read, r.device_time_ns), (0, 0));
    // At least the superblock, ActiveTxList and bitmap lines at 50 ns per 4 lines.
    assert!(r.time_ns >= 50, "{r:?}");
    let (mut h, mut d) = tiny();
    h.workload = "tatp".into();
    h.tatp.subscribers = 200;
    h.transactions = 40;
    h.pcm.pcm_bytes = 32768;
    h.pcm.dram_bytes = 8 * 8192 + 8192;
    d.nand.blocks_per_plane = 64;
    let rec = check::record(&h, &d, 4).unwrap();
    assert!(rec.metrics.txns_committed > 0);
    let rep = check::check(&rec, Mode::Random { schedules: 100 }, 2, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.violations, 0);
}

/// §5.2 wired: on the same seed the adaptive destager (rate μ0 from the measured λ0 and
/// f(k), g = 1, from 2.5 % free) destages on another schedule than the high-low watermark
/// (99 % / 97.5 %), both report the Fig. 12b series, and adaptive runs survive crashes.
#[test]
fn adaptive_destaging_changes_the_schedule_and_survives_random_crashes() {
    let run = |policy: &str| {
        let (mut h, d) = hdd_tpcc(120);
        h.pcm.destage = policy.into();
        h.pcm.high_watermark = 0.99;
        h.pcm.low_watermark = 0.975;
        h.pcm.destage_interval_ns = 10_000_000;
        check::record(&h, &d, 3).unwrap()
    };
    let w = run("watermark");
    let a = run("adaptive");
    let (kw, ka) = (&w.metrics.strategy_counters, &a.metrics.strategy_counters);
    eprintln!("watermark {kw:?}\nadaptive {ka:?}");
    eprintln!(
        "p99 txn time: watermark {} adaptive {}",
        w.metrics.txn_time_ns.p99, a.metrics.txn_time_ns.p99
    );
    assert!(kw["pcm_destaged_pages"] > 0 && ka["pcm_destaged_pages"] > 0);
    assert!(ka["destage_adaptive_recomputations"] > 0, "{ka:?}");
    assert!(!kw.contains_key("destage_adaptive_m"));
    let (tw, ta) = (w.tier.as_ref().unwrap(), a.tier.as_ref().unwrap());
    let starts =
        |t: &host::pcm_tier::TierLog| t.disk_ops.iter().map(|o| o.start).collect::<Vec<_>>();
    assert_ne!(
        starts(tw),
        starts(ta),
        "same destage schedule under both policies"
    );
    let rep = check::check(&a, Mode::Random { schedules: 200 }, 5, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.violations, 0);
}

/// §4.1: the ActiveTxList and FreeSlotBitmap move to the next of 4 metadata regions every 8
/// metadata word writes; every crash of a tiny run (mid-copy and mid-switch included)
/// stays correct, and the hottest metadata unit is written less often than without.
#[test]
fn relocation_survives_every_crash_of_a_tiny_run() {
    let (mut h, d) = tiny();
    h.pcm.relocate_every = 8;
    let rec = check::record(&h, &d, 7).unwrap();
    let k = &rec.metrics.strategy_counters;
    assert!(k["pcm_relocations"] > 3, "{k:?}");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    common::show(&rep, usize::MAX);
    assert!(rep.states > 1000);
    assert_eq!(rep.violations, 0);
}

/// Planted bug: the relocation switches the active region before its copy completed.
#[test]
fn the_checker_catches_a_relocation_switched_before_its_copy() {
    let (mut h, d) = tiny();
    h.pcm.relocate_every = 8;
    h.pcm.fault_early_relocation_switch = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    eprintln!("{} states, {} violations", rep.states, rep.violations);
    assert!(rep.violations > 0, "planted bug not caught");
}

/// Relocation spreads the metadata writes: the most-written unit gets fewer line writes
/// (hdd TPC-C, 120 transactions).
#[test]
fn relocation_cools_the_hottest_metadata_unit() {
    let hottest = |every: u64| {
        let (mut h, d) = hdd_tpcc(120);
        h.pcm.relocate_every = every;
        let k = check::record(&h, &d, 3).unwrap().metrics.strategy_counters;
        (k["pcm_wear_max_unit_writes"], k["pcm_relocations"])
    };
    let (off, _) = hottest(0);
    let (on, n) = hottest(200);
    eprintln!("most-written unit: without {off}, with {on} line writes ({n} relocations)");
    assert!(n > 0);
    // 4 regions: the hottest metadata word's writes split about four ways.
    assert!(on * 2 < off, "without {off}, with {on}");
}

/// A contended TPC-C (one warehouse, 50 clients: several wait-die restarts per commit) whose
/// PCM fills and destages, with wear leveling at threshold `delta` XIDs.
fn contended_wear(delta: u64, per_attempt: bool) -> (u64, u64, u64, u64) {
    let (mut h, mut d) = check::tiny_config("pcmlogging", "none");
    h.workload = "tpcc".into();
    h.tpcc.warehouses = 1;
    h.tpcc.customers_per_district = 30;
    h.tpcc.items = 200;
    h.tpcc.max_txns = 1200;
    h.clients = 50;
    h.transactions = 1200;
    h.page_bytes = 8192;
    // 6,000 units: full after about 300 transactions, so a record stays a few hundred
    // transactions — about 2,000 attempts at 7–8 restarts per commit.
    h.pcm.pcm_bytes = 6000 * 128;
    h.pcm.dram_bytes = 64 * 8192 + 16384;
    h.pcm.high_watermark = 0.99;
    h.pcm.low_watermark = 0.975;
    h.pcm.destage = "adaptive".into();
    h.pcm.external = "hdd".into();
    h.pcm.wear_delta = delta;
    h.pcm.xid_per_attempt = per_attempt;
    d.nand.blocks_per_plane = 256;
    let run = host::engine::run(&h, &d, ssd::Device::in_memory(&d).unwrap(), 3, false).unwrap();
    let m = &run.metrics;
    let k = &m.strategy_counters;
    (
        k["pcm_swaps"],
        k["pcm_records_flushed"],
        m.txns_committed,
        m.txns_restarted,
    )
}

/// §4.2 / §6.3: a smaller swapping threshold swaps more (PL-1 against PL-10, thresholds of
/// a tenth and the whole of the run's 1,200 transactions, as `reproduce` scales them). The
/// XID is the transaction's number, kept across wait-die restarts; with a fresh XID per
/// attempt (`xid_per_attempt`, the rule before) the XID clock ran ahead by the restarts and
/// both thresholds swapped on most flushed records (quick reproduction: 0.88–0.96), so PL-10
/// did not swap less than PL-1 by much.
#[test]
fn pl10_swaps_on_fewer_records_than_pl1_under_restarts() {
    let (s10, f10, c10, r10) = contended_wear(1200, false);
    let (s1, f1, c1, r1) = contended_wear(120, false);
    let (rate10, rate1) = (s10 as f64 / f10 as f64, s1 as f64 / f1 as f64);
    eprintln!(
        "PL-10 {s10}/{f10} = {rate10:.3} ({c10} commits, {r10} restarts); PL-1 {s1}/{f1} = {rate1:.3} ({c1} commits, {r1} restarts)"
    );
    // The setting is the one that inflated the clock: restarts outnumber commits.
    assert!(r10 > 2 * c10 && r1 > 2 * c1, "{r10} / {c10}, {r1} / {c1}");
    assert!(rate10 < 0.5 * rate1, "PL-10 {rate10:.3} vs PL-1 {rate1:.3}");
}

/// `host.pcm.xid_per_attempt` keeps the old rule: a restart takes a fresh XID, so the XID
/// clock counts attempts and PL-10 swaps about as often as PL-1.
#[test]
fn xid_per_attempt_advances_the_clock_with_restarts() {
    let (s10, f10, ..) = contended_wear(1200, false);
    let (a10, g10, ..) = contended_wear(1200, true);
    let (rate, rate_attempt) = (s10 as f64 / f10 as f64, a10 as f64 / g10 as f64);
    eprintln!("PL-10 swap rate: per transaction {rate:.3}, per attempt {rate_attempt:.3}");
    assert!(rate_attempt > 1.5 * rate, "{rate_attempt:.3} vs {rate:.3}");
}

/// Planted bug: with XIDs kept across wait-die restarts, a moved committed record's pseudo
/// XID must be the largest *committed* XID. The largest *finished* one (aborts included, the
/// rule while every attempt had a fresh XID) can be an aborted transaction's XID, which
/// re-enters the ActiveTxList when the transaction restarts; a crash then discards the moved
/// committed record (docs/HOST.md "PCMLogging's XID clock").
#[test]
fn the_checker_catches_a_pseudo_xid_an_aborted_transaction_reuses() {
    let mut caught = false;
    let mut restarts = 0;
    for seed in 1..=8 {
        let (mut h, d) = tiny_tpcc();
        h.clients = 8;
        h.pcm.wear_delta = 2;
        h.pcm.pcm_bytes = 16384;
        h.pcm.fault_pseudo_xid_of_aborts = true;
        let rec = match check::record(&h, &d, seed) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("seed {seed}: {e}");
                continue;
            }
        };
        eprintln!(
            "seed {seed}: {} commits, {} restarts, {} swaps",
            rec.metrics.txns_committed,
            rec.metrics.txns_restarted,
            rec.metrics.strategy_counters["pcm_swaps"]
        );
        restarts += rec.metrics.txns_restarted;
        let rep = check::check(&rec, Mode::Random { schedules: 300 }, 1, None).unwrap();
        if rep.violations > 0 {
            eprintln!(
                "caught with seed {seed}: {} of {} states",
                rep.violations, rep.states
            );
            caught = true;
            break;
        }
    }
    assert!(restarts > 0, "no restart: the case was not exercised");
    assert!(caught, "planted bug not caught");
}
