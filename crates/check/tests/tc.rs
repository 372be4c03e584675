//! The crash checker on traditional commit (TxFlash §3.1, §4.1): zero violations
//! exhaustively on the small configuration (serializable transactions, the most permissive
//! isolation TC supports), with and without summary pages, with many aborts and interleaved
//! writes; random schedules on a larger device; and a scripted serializable schedule whose
//! commit order differs from its write order.

mod scripted;

mod common;

use commitlab_check::*;
use common::*;
use scripted::{us, Script};

#[test]
fn tc_passes_exhaustively_with_summaries() {
    let cfg = small_config("tc");
    assert_eq!(
        cfg.workload.txn.isolation,
        workload::txn::Isolation::Serializable
    );
    let rep = exhaustive(&cfg);
    assert!(rep.states > 2_000, "{rep:?}");
}

#[test]
fn tc_passes_exhaustively_without_summaries_with_many_aborts_and_interleaving() {
    let mut cfg = small_config("tc");
    cfg.ftl.summary_pages = false;
    cfg.workload.txn.abort_ratio = 0.5;
    cfg.ftl.interface_mbps = 400;
    cfg.seed = 3;
    let rep = exhaustive(&cfg);
    assert!(rep.states > 1_000, "{rep:?}");
}

#[test]
fn random_schedules_on_a_larger_device_with_interleaved_transactions() {
    let mut cfg = small_config("tc");
    cfg.nand.planes_per_die = 4;
    cfg.nand.blocks_per_plane = 24;
    cfg.ftl.interface_mbps = 200;
    cfg.workload.txn.transactions = 400;
    cfg.workload.txn.concurrency = 6;
    // Commit records live outside the exported capacity; a hot half keeps them short-lived.
    cfg.workload.txn.span = 0.5;
    cfg.seed = 8;
    let rec = record(&cfg).unwrap();
    let rep = check(&rec, Mode::Random { schedules: 600 }, 8, None).unwrap();
    assert_eq!(rep.states, 600);
    assert_clean(&rep, &rec);
}

/// Serializable: transaction 1 writes page 1 before transaction 2 does, but commits after
/// it, so page 1 must end up with transaction 1's data. Versions follow write order; the
/// newest version is decided by the commit sequence number (in the commit record), which
/// follows COMMIT issue order. Ordering by version instead fails here.
#[test]
fn the_last_commit_wins_not_the_last_write() {
    let cfg = small_config("tc");
    let mut s = Script::new(&cfg);
    let t = us(0);
    s.begin(1, t);
    s.begin(2, t);
    s.write(1, 1, t);
    s.write(1, 5, t); // programs tx 1's page 1
    s.write(2, 1, t);
    s.write(2, 6, t); // programs tx 2's page 1, a higher version
    let a2 = s.commit(2, t);
    let a1 = s.commit(1, t);
    // A single-page transaction and a plain write ordered the same way.
    s.begin(3, a1);
    s.write(3, 1, a1);
    s.plain(1, a1);
    s.commit(3, a1.max(a2));
    let rec = s.recording();
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert_clean(&rep, &rec);
}

/// Crash, recover, keep running (concurrent transactions sharing pages, commits overlapping
/// later writes, aborts), crash again: the commit records recovery keeps must still prove
/// every committed version after the second crash.
#[test]
fn crash_recover_run_crash_again() {
    let mut cfg = small_config("tc");
    cfg.workload.txn.abort_ratio = 0.4;
    // The second segment writes the lower half of the pages; so does the first, or live
    // commit records (outside the exported capacity) would fill this tiny device.
    cfg.workload.txn.span = 0.5;
    let (states, bad) = scripted::double_crash(&cfg, 5, 12, 150, true);
    assert!(states >= 1_800);
    assert_eq!(bad, 0, "{bad} of {states} second-crash states violate");
}

/// The long version of the double-crash check (`cargo test -p commitlab-check --release
/// --test tc -- --ignored`).
#[test]
#[ignore]
fn crash_recover_run_crash_again_long() {
    for seed in 1..=8 {
        for summaries in [true, false] {
            let mut cfg = small_config("tc");
            cfg.seed = seed;
            cfg.ftl.summary_pages = summaries;
            cfg.workload.txn.abort_ratio = 0.4;
            cfg.workload.txn.span = 0.5;
            let (states, bad) = scripted::double_crash(&cfg, seed, 40, 300, true);
            eprintln!("seed {seed} summaries {summaries}: {states} states, {bad} violations");
            assert_eq!(bad, 0, "{bad} of {states} second-crash states violate");
        }
    }
}
