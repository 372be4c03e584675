//! MHL-M beyond protocols.rs's table (exhaustive on the small device and without
//! summaries, random schedules on larger devices): the states where the checker once found
//! violations.

mod common;

use commitlab_check::*;
use common::*;

/// Replays one state of the small exhaustive run. A state index names a state of one
/// recording; when the FTL changes, the recording changes and the index may name another
/// state or none. So this checks the state if the current recording has it; the scenarios
/// themselves stay covered by protocols.rs's exhaustive test (every state of the
/// recording) and the named unit tests.
fn replay(state: u64) {
    let cfg = small_config("mhl-m");
    let rec = record(&cfg).unwrap();
    let rep = check(
        &rec,
        Mode::Exhaustive { max_in_flight: 8 },
        cfg.seed,
        Some(state),
    )
    .unwrap();
    assert!(rep.states <= 1);
    assert_clean(&rep, &rec);
}

#[test]
fn regression_mapping_log_space_after_recovery() {
    // found by crash checker, seed=1, states 1250, 1074, 2174 and 2808 (exhaustive; the
    // indices refer to the recordings at the time, the exhaustive test covers all states):
    // recovery restarted both logs in fresh blocks and ran out of space for its checkpoint,
    // or a move record written by GC right after recovery needed a new log block while
    // every unit was at its last free block. Now a log goes on where it ended if that block
    // is clean and has room, a fresh block comes from the unit with the most unused blocks,
    // commits link to a new log block early (leaving room for GC's records), a move record
    // goes to a log with room, and recovery collects garbage before its checkpoint.
    for s in [1250, 1074, 2174, 2808] {
        replay(s);
    }
}

#[test]
fn regression_log_link_waits_for_its_block_to_be_erased() {
    // found by crash checker, seed=1, state=8844 (aw) / 11943 (mhl-m) (exhaustive, 300
    // transactions, half aborted): the log linked to a block GC had just pooled while its
    // erase was still queued on another plane; the link persisted, the erase was torn, and
    // the recovered log went on in a block that could not be programmed. reserve_block now
    // says when the block's plane is done with what was issued before, and the link waits.
    let mut cfg = small_config("mhl-m");
    cfg.workload.txn.transactions = 300;
    cfg.workload.txn.abort_ratio = 0.5;
    let rep = exhaustive(&cfg);
    assert!(rep.states > 10_000, "{rep:?}");
}
