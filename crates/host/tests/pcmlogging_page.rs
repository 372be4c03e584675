//! `pcmlogging-page` (PCMLogging §3.1–3.2) on the host engine under the host crash checker
//! with PCM crash points (`pcm_tier::check`): every crash of a tiny bank run, random crashes
//! of a tiny TPC-C run, and a planted bug the checker must catch.

mod common;

use commitlab_host as host;
use host::check::{self, Mode};

/// The CLI's tiny configuration with fewer transactions: every crash of its 60 is ~480,000
/// states (`commitlab crash --host pcmlogging-page --protocol none`).
fn tiny() -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, d) = check::tiny_config("pcmlogging-page", "none");
    h.transactions = 20;
    (h, d)
}

fn tiny_tpcc() -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, mut d) = tiny();
    common::tiny_tpcc(&mut h);
    h.page_bytes = 8192;
    h.transactions = 40;
    h.pcm.pcm_bytes = 64 * 8320 + 2048;
    h.pcm.dram_bytes = 8 * 8192 + 8192;
    h.pcm.high_watermark = 0.8;
    h.pcm.low_watermark = 0.5;
    d.nand.blocks_per_plane = 64;
    (h, d)
}

#[test]
fn pcmlogging_page_survives_every_crash_of_a_tiny_run() {
    let (h, d) = tiny();
    let rec = check::record(&h, &d, 7).unwrap();
    let m = &rec.metrics;
    let k = &m.strategy_counters;
    eprintln!(
        "{k:?} committed {} aborted {} restarted {}",
        m.txns_committed, m.txns_aborted, m.txns_restarted
    );
    // The run stole pages into PCM, served misses from PCM, destaged, aborted.
    assert!(k["pcm_destaged_pages"] > 0, "{k:?}");
    assert!(k["pcm_pages_flushed"] > 0, "{k:?}");
    assert!(k["pcm_page_hits"] > 0, "{k:?}");
    assert!(m.txns_aborted + m.txns_restarted > 0, "{m:?}");
    assert_eq!(m.lock_level, "page");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    common::show(&rep, usize::MAX);
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

/// Planted bug: commit frees the versions it replaced (the Dirty Page Table's entries)
/// before clearing the ActiveTxList entry; a crash in between loses both versions.
#[test]
fn the_checker_catches_replaced_versions_freed_before_the_commit_point() {
    let (mut h, d) = tiny();
    h.pcm.fault_page_free_before_commit_point = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    eprintln!("{} states, {} violations", rep.states, rep.violations);
    assert!(rep.violations > 0, "planted bug not caught");
}

#[test]
fn pcmlogging_page_tiny_tpcc_survives_random_crashes() {
    let (h, d) = tiny_tpcc();
    let rec = check::record(&h, &d, 9).unwrap();
    let k = &rec.metrics.strategy_counters;
    eprintln!("{k:?}");
    assert!(rec.metrics.txns_committed > 0);
    assert!(k["pcm_destaged_pages"] > 0, "{k:?}");
    let rep = check::check(&rec, Mode::Random { schedules: 300 }, 3, None).unwrap();
    common::show(&rep, usize::MAX);
    assert_eq!(rep.states, 300);
    assert_eq!(rep.violations, 0);
}

#[test]
fn record_locks_are_refused_and_recovery_is_a_pcm_scan() {
    let (mut h, d) = tiny();
    h.lock_level = host::LockLevel::Record;
    let e = check::record(&h, &d, 1).err().unwrap().to_string();
    assert!(e.contains("host.lock_level"), "{e}");
    let (mut h, d) = tiny_tpcc();
    h.measure_recovery = true;
    let m = check::record(&h, &d, 2).unwrap().metrics;
    let r = m.recovery.unwrap();
    assert_eq!((r.pages_read, r.device_time_ns), (0, 0));
    assert!(r.time_ns >= 50, "{r:?}");
    let a = check::record(&h, &d, 5).unwrap().metrics;
    let b = check::record(&h, &d, 5).unwrap().metrics;
    assert_eq!(a.strategy_counters, b.strategy_counters);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
}
