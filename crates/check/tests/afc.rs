//! The crash checker on AFC (Flag Commit §3.2): zero violations exhaustively on the small
//! configuration, with and without the block-based flag technique (§3.4), with NOP 2,
//! without summary pages and with mapping checkpoints; random schedules on larger devices
//! with half the transactions aborted (so GC keeps FALSE flags); and the violation the
//! checker found, as a regression test.

mod common;

use commitlab_check::*;
use common::*;

const PROTO: &str = "afc";

fn small(block_flags: bool) -> world::Config {
    let mut c = small_config(PROTO);
    c.protocol.block_flags = block_flags;
    c
}

/// A larger device, half the transactions aborted, NOP 2, no summary pages.
fn larger_afc(block_flags: bool, seed: u64) -> world::Config {
    larger(PROTO, seed, |c| {
        c.protocol.block_flags = block_flags;
        c.nand.nop = 2;
        c.ftl.summary_pages = false;
    })
}

#[test]
fn exhaustive_small() {
    let rep = exhaustive(&small(false));
    assert!(rep.states > 2_000, "{rep:?}");
    assert!(rep.max_in_flight_seen >= 2);
}

#[test]
fn exhaustive_small_block_flags() {
    let rep = exhaustive(&small(true));
    assert!(rep.states > 2_000, "{rep:?}");
}

#[test]
fn exhaustive_nop2_no_summaries_and_checkpoints() {
    for bf in [false, true] {
        let mut c = small(bf);
        c.nand.nop = 2;
        c.ftl.summary_pages = false;
        exhaustive(&c);
        let mut c = small(bf);
        c.ftl.checkpoint_interval = 40;
        c.ftl.checkpoint_window_blocks = 1;
        exhaustive(&c);
    }
}

#[test]
fn random_schedules_on_a_larger_device() {
    for bf in [false, true] {
        random(&larger_afc(bf, 2), 300);
    }
}

/// Two planes of 24 blocks, mapping checkpoints every 60 writes.
fn checkpointed(seed: u64) -> world::Config {
    let mut c = small(false);
    c.seed = seed;
    c.nand.blocks_per_plane = 24;
    c.nand.nop = 4;
    c.workload.txn.transactions = 500;
    c.ftl.checkpoint_interval = 60;
    c.ftl.checkpoint_window_blocks = 1;
    c
}

// found by crash checker, seed=1, state=1068 (`commitlab crash --protocol afc --seed 1
// --schedules 2000 --set nand.planes_per_die=2 --set nand.blocks_per_plane=24 --set
// workload.txn.transactions=500 --set ftl.checkpoint_interval=60 --set
// ftl.checkpoint_window_blocks=1`): recovery failed with "out of space" (recovery keeps
// every block with data pages out of the free pools and the FTL writes a checkpoint before
// any GC). `after_recovery` now reclaims those blocks first.
#[test]
fn regression_recovery_reclaims_space_before_the_post_recovery_checkpoint() {
    random(&checkpointed(1), 400);
}
