//! AFC (Flag Commit §3.2) beyond protocols.rs's table (exhaustive with and without block
//! flags, NOP 2 without summary pages and checkpoints; random schedules on larger devices
//! with half the transactions aborted, so GC keeps FALSE flags): the violation the checker
//! found, as a regression test.

mod common;

use commitlab_check::*;
use common::*;

const PROTO: &str = "afc";

fn small(block_flags: bool) -> world::Config {
    let mut c = small_config(PROTO);
    c.protocol.block_flags = block_flags;
    c
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
