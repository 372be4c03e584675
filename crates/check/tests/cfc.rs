//! CFC (Flag Commit §3.1) beyond protocols.rs's table (exhaustive with and without block
//! flags, NOP 2 and checkpoints; random schedules on larger devices): the violations the
//! checker found, as regression tests.

mod common;

use commitlab_check::*;
use common::*;

const PROTO: &str = "cfc";

fn small(block_flags: bool) -> world::Config {
    let mut c = small_config(PROTO);
    c.protocol.block_flags = block_flags;
    c
}

// found by crash checker, seed=1, state=2014 (`commitlab crash --protocol cfc --set
// ftl.summary_pages=false --set nand.nop=2`): GC skipped the TRUE flag for a link whose
// target read as erased, but that erase was only issued; a crash kept the target (FALSE)
// and lost the newer page, leaving a FALSE head of an acked transaction. GC now waits until
// the erase that made a link dangle is durable.
#[test]
fn regression_dangling_link_waits_for_the_erase_that_made_it_dangle() {
    for bf in [false, true] {
        let mut c = small(bf);
        c.ftl.summary_pages = false;
        c.nand.nop = 2;
        exhaustive(&c);
    }
}

/// The configuration of the next two regressions: two planes of 24 blocks, mapping
/// checkpoints every 60 writes.
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

// found by crash checker, seed=1, state=12 (`--schedules 2000 --set
// nand.planes_per_die=2 --set nand.blocks_per_plane=24 --set workload.txn.transactions=500
// --set ftl.checkpoint_interval=60 --set ftl.checkpoint_window_blocks=1`): recovery failed
// with "out of space": recovery keeps every block with data pages out of the free pools, and
// the FTL writes a mapping checkpoint before any command runs GC. `after_recovery` now
// reclaims those blocks first.
#[test]
fn regression_recovery_reclaims_space_before_the_post_recovery_checkpoint() {
    let rec = record(&checkpointed(1)).unwrap();
    let rep = check(&rec, Mode::Random { schedules: 2000 }, 1, Some(12)).unwrap();
    assert_eq!(rep.states, 1);
    assert_clean(&rep, &rec);
    random(&checkpointed(1), 200);
}

// found by crash checker, seed=3, state=1920 (same configuration, --seed 3): a copy of
// another transaction carried a stale link to an address since reused by a committed
// transaction's page; GC took that page as still linked-from and skipped its TRUE flag. A
// copy now covers a target only through a link recovery would follow (same XID, older page).
#[test]
fn regression_a_stale_link_of_another_transaction_does_not_cover_a_head() {
    random(&checkpointed(3), 600);
}

// found by crash checker, seed=1, state=151 (`commitlab crash --protocol cfc --schedules
// 2000 --set workload.txn.isolation="strict" --set workload.txn.transactions=300 --set
// nand.blocks_per_plane=16`) and seed=1, state=1934 (`--set workload.txn.size_max=12 --set
// workload.txn.concurrency=2 --set nand.planes_per_die=4 --set nand.blocks_per_plane=24
// --set workload.txn.transactions=300 --set nand.nop=2`): recovery failed with "out of
// space". Pages found by recovery are never reprogrammed, so the first GC after a crash
// replaced every flag move by a carrier copy and a unit with a nearly full GC block ran out.
// Recovery now tracks and pins only transactions whose status can still matter, GC makes no
// carriers for the others, and carriers go to any unit with room.
#[test]
fn regression_carriers_after_recovery_do_not_run_a_unit_out_of_space() {
    let mut strict = small(false);
    strict.workload.txn.isolation = workload::txn::Isolation::Strict;
    strict.workload.txn.transactions = 300;
    strict.nand.blocks_per_plane = 16;
    let mut big = small(false);
    big.workload.txn.size_max = 12;
    big.workload.txn.concurrency = 2;
    big.nand.planes_per_die = 4;
    big.nand.blocks_per_plane = 24;
    big.workload.txn.transactions = 300;
    big.nand.nop = 2;
    for (cfg, state) in [(strict, 151), (big, 1934)] {
        let rec = record(&cfg).unwrap();
        let rep = check(&rec, Mode::Random { schedules: 2000 }, 1, Some(state)).unwrap();
        assert_eq!(rep.states, 1);
        assert_clean(&rep, &rec);
        random(&cfg, 300);
    }
}
