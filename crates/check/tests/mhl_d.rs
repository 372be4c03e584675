//! MHL-D beyond protocols.rs's table (exhaustive, random schedules on larger devices): the
//! configurations where the checker once found violations.

mod common;

use common::*;

#[test]
fn regression_recovery_gc_without_a_free_block() {
    // found by crash checker, seed=4, state=1069 (random, 2000 schedules): after the crash a
    // unit had no free block and no open GC block, and the GC that recovery runs before its
    // checkpoint failed. It now leaves such a unit to later GC.
    let cfg = larger("mhl-d", 4, |c| {
        c.ftl.checkpoint_window_blocks = 3;
        c.ftl.checkpoint_interval = 40;
        c.ftl.summary_pages = false;
        c.workload.txn.concurrency = 6;
    });
    random(&cfg, 2_000);
}

#[test]
fn regression_log_heads_spread_over_units() {
    // found by crash checker, seed=2, state=285 (random, 2000 schedules, 4 planes of 16
    // blocks, one-block windows): log heads were picked by free blocks, which GC keeps equal
    // in every unit, with a fixed tie-break, so transactions piled into the first units; one
    // filled with live data and the recovered device had nowhere to collect into. Heads now
    // go to the unit with the fewest mapped pages (round robin among equals).
    let cfg = larger("mhl-d", 2, |c| {
        c.nand.blocks_per_plane = 16;
        c.ftl.checkpoint_window_blocks = 1;
    });
    random(&cfg, 2_000);
}
