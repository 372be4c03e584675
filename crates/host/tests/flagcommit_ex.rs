//! `flagcommit-ex` (Flag Commit §4 host side) under the host crash checker: every crash of
//! a tiny run, seeded random crashes of a larger one, max_c admission, and a planted bug
//! (commit acked before the redo log is durable) that the checker must catch.

use commitlab_host as host;
use host::check::{self, Mode};

fn tiny() -> (host::HostConfig, ssd::DeviceConfig) {
    check::tiny_config("flagcommit-ex", "none")
}

#[test]
fn flagcommit_ex_survives_every_crash_of_a_tiny_run() {
    let (mut h, d) = tiny();
    // A redo-only log is smaller than wal's: 8 pages make it wrap in this run.
    h.log_pages = 8;
    let rec = check::record(&h, &d, 7).unwrap();
    let m = &rec.metrics;
    // The run covered checkpoints, a wrapped log, aborts and GC.
    assert!(m.stats.checkpoints >= 2, "{:?}", m.stats);
    assert!(
        m.strategy_counters["log_pages_used"] > u64::from(h.log_pages),
        "{m:?}"
    );
    assert!(m.txns_aborted > 0, "{m:?}");
    assert!(m.nand_erases > 0);
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    for v in &rep.first {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
    assert!(rep.states > 1000, "{} states", rep.states);
    assert_eq!(rep.violations, 0);
}

#[test]
fn the_checker_catches_a_commit_acked_before_the_redo_log_is_durable() {
    let (mut h, d) = tiny();
    h.fault_early_commit_ack = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    assert!(rep.violations > 0, "planted bug not caught");
}

/// Planted bug 2: the checkpoint's committed-XID list is dropped, so a committed
/// transaction whose COMMIT lies below the checkpoint's log page but whose pending records
/// are still the newest version on disk loses its updates.
#[test]
fn the_checker_catches_a_checkpoint_that_drops_commit_status() {
    let (mut h, d) = tiny();
    h.log_pages = 8;
    h.fault_fc_empty_commit_list = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap();
    assert!(rep.violations > 0, "planted bug not caught");
}

#[test]
fn max_c_one_restarts_concurrent_updaters_of_a_page() {
    let (mut h, d) = tiny();
    h.max_c = 1;
    let rec = check::record(&h, &d, 7).unwrap();
    let r1 = rec.metrics.strategy_counters["max_c_restarts"];
    h.max_c = 3;
    let rec3 = check::record(&h, &d, 7).unwrap();
    let r3 = rec3.metrics.strategy_counters["max_c_restarts"];
    assert!(r1 > 0 && r1 > r3, "max_c=1: {r1}, max_c=3: {r3}");
    let rep = check::check(&rec, Mode::Random { schedules: 200 }, 3, None).unwrap();
    assert_eq!(rep.violations, 0);
}

fn larger(txns: u64) -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, mut d) = tiny();
    h.clients = 8;
    h.transactions = txns;
    h.buffer_frames = 16;
    h.bank.accounts = 800;
    h.bank.records_per_page = 20;
    h.log_pages = 96;
    h.checkpoint_log_bytes = 16 << 10;
    d.nand.blocks_per_plane = 32;
    d.nand.planes_per_die = 4;
    (h, d)
}

#[test]
fn larger_run_survives_random_crashes() {
    let (h, d) = larger(150);
    let rec = check::record(&h, &d, 11).unwrap();
    let rep = check::check(&rec, Mode::Random { schedules: 300 }, 5, None).unwrap();
    for v in &rep.first {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
    assert_eq!(rep.states, 300);
    assert_eq!(rep.violations, 0);
}

/// The bar: ≥ 1,000 random crash states on a larger database (about a second).
#[test]
fn thousand_random_crashes() {
    let (h, d) = larger(300);
    let rec = check::record(&h, &d, 21).unwrap();
    let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 8, None).unwrap();
    for v in &rep.first {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
    eprintln!(
        "{} commits, {} ops, {} states, {} violations",
        rep.commits, rep.ops, rep.states, rep.violations
    );
    assert_eq!(rep.violations, 0);
}
