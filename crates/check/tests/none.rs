//! The plain FTL beyond protocols.rs's table (exhaustive with and without summary pages and
//! checkpoints, random schedules on a larger device): replaying one schedule, refusing
//! configurations too big to enumerate, a deliberately broken FTL is caught, transactions
//! judged page by page, and the regressions the checker found.

mod common;

use commitlab_check::*;
use common::*;

/// Replaying one schedule evaluates exactly that state (the run is protocols.rs's random
/// row for `none`).
#[test]
fn replaying_one_schedule_evaluates_exactly_that_state() {
    let mut cfg = small_config("none");
    cfg.nand.planes_per_die = 4;
    cfg.nand.blocks_per_plane = 24;
    cfg.workload.synthetic.requests = 2_000;
    cfg.workload.synthetic.queue_depth = 8;
    let rec = record(&cfg).unwrap();
    let one = check(&rec, Mode::Random { schedules: 300 }, 5, Some(17)).unwrap();
    assert_eq!((one.states, one.first[0].state.index), (1, 17));
}

#[test]
fn exhaustive_refuses_configurations_that_are_too_big() {
    let mut cfg = small_config("none");
    cfg.nand.planes_per_die = 8;
    cfg.nand.blocks_per_plane = 12;
    cfg.workload.synthetic.queue_depth = 16;
    let rec = record(&cfg).unwrap();
    let e = check(&rec, Mode::Exhaustive { max_in_flight: 4 }, 1, None).unwrap_err();
    assert!(e.contains("--schedules"), "{e}");
}

#[test]
fn acks_that_come_before_durability_are_caught() {
    // Doctor a correct recording so that every write claims to be acked when issued, as a
    // firmware that acks from its buffer without power-loss protection would. The checker
    // must then find crash states where an "acked" write is gone.
    let cfg = small_config("none");
    let mut rec = record(&cfg).unwrap();
    for h in &mut rec.host {
        if let world::HostEvent::Plain { issue, ack, .. } = h {
            *ack = *issue;
        }
    }
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert!(rep.violations > 100, "{rep:?}");
    let f = &rep.first[0].findings[0].what;
    assert!(f.contains("acked"), "{f}");
}

#[test]
fn none_on_transactions_is_checked_page_by_page() {
    // `none` gives no atomicity: the oracle judges each write of a transaction on its own,
    // durable at the latest when the commit is acked.
    let mut cfg = small_config("none");
    cfg.workload.kind = world::WorkloadKind::Txn;
    cfg.workload.txn.transactions = 60;
    cfg.workload.txn.size_max = 4;
    cfg.workload.txn.concurrency = 2;
    let rep = exhaustive(&cfg);
    assert!(rep.states > 1000, "{rep:?}");
}

#[test]
fn partly_written_blocks_resume_when_the_medium_does_not_enforce_order() {
    // found by the Flag Commit work: with nand.in_order_program = false the scan never
    // stopped at an erased page, so recovery resumed no partly written block and a unit
    // could be left with no block for GC (crash --protocol none --schedules 2000
    // --set nand.in_order_program=false --set nand.blocks_per_plane=24
    // --set workload.synthetic.requests=2000: 109 violations, first at state 1536).
    let mut cfg = small_config("none");
    cfg.nand.in_order_program = false;
    cfg.nand.blocks_per_plane = 24;
    cfg.workload.synthetic.requests = 2_000;
    let rec = record(&cfg).unwrap();
    let rep = check(&rec, Mode::Random { schedules: 400 }, 1, None).unwrap();
    assert_clean(&rep, &rec);
    let one = check(&rec, Mode::Random { schedules: 2000 }, 1, Some(1536)).unwrap();
    assert_eq!(one.violations, 0);
}

#[test]
fn window_blocks_are_named_only_once_their_erase_is_done() {
    // found by crash checker, seed=1, state=2401 (--set ftl.checkpoint_interval=40
    // --set ftl.checkpoint_window_blocks=1): a root naming a window block became durable
    // while GC's erase of that block was still in progress; recovery scanned the block's
    // old pages and brought back versions the checkpoint had superseded.
    let mut cfg = small_config("none");
    cfg.ftl.checkpoint_interval = 40;
    cfg.ftl.checkpoint_window_blocks = 1;
    let rec = record(&cfg).unwrap();
    let one = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, Some(2401)).unwrap();
    assert_eq!(one.states, 1);
    assert_eq!(one.violations, 0, "{:?}", one.first);
    exhaustive(&cfg);
}
