//! Workload shapes: named adjustments of [`crate::small_config`] that hold the windows a
//! commit protocol must get right open for long, so crash states land inside them.
//!
//! Each shape changes the workload (and, where the window needs it, the FTL); the timing
//! profiles of [`crate::timing`] combine with every shape. A protocol either runs a shape or
//! refuses it with a clear error (tc, scc and bpcc cannot trim; a shape's transactions may
//! not fit a protocol's isolation rules); a test checks which.
//!
//! What it does not do: pick protocol-specific corner cases (those live in each protocol's
//! tests), or change the isolation level `small_config` chose.

use workload::address::AddressKind;
use world::{Config, WorkloadKind};

/// (name, what it stresses).
pub const SHAPES: &[(&str, &str)] = &[
    ("default", "small_config as it is: aborts, plain writes in between, GC"),
    (
        "long-tx",
        "long-lived transactions (6-12 pages) on a slow host interface: each stays open across GC rounds",
    ),
    (
        "hot-rewrite",
        "a few hot pages rewritten over and over, by plain writes and transactions, so a page is rewritten between a COMMIT and its ack",
    ),
    (
        "abort-gc",
        "60 % aborts on a device that collects constantly: aborts land in the middle of GC",
    ),
    (
        "erase-race",
        "four units of eight blocks and a tiny logical space: a block emptied by a write or commit still in flight on another unit is collected at once",
    ),
    (
        "trim-in-flight",
        "plain writes and 30 % trims of a few hot pages at queue depth 8: trims of pages whose program is in flight",
    ),
    (
        "near-full",
        "90 % of the logical space prefilled with 5 % over-provisioning: GC copies most of every victim",
    ),
    (
        "checkpoints",
        "mapping checkpoints every 40 writes with one-block windows (recovery from a checkpoint)",
    ),
    (
        "no-summaries",
        "no summary pages: recovery reads every page's OOB",
    ),
];

/// Applies shape `name` to `cfg` (a `small_config`).
pub fn apply(name: &str, cfg: &mut Config) -> Result<(), String> {
    let txn = cfg.workload.kind == WorkloadKind::Txn;
    match name {
        "default" => {}
        "long-tx" => {
            cfg.ftl.interface_mbps = 4;
            if txn {
                let t = &mut cfg.workload.txn;
                t.size_min = 6;
                t.size_max = 12;
                t.transactions = 40;
                // Three of them would not fit the small device's logical space under the
                // page-conflict rules of some isolation levels.
                t.concurrency = 2;
            } else {
                cfg.workload.synthetic.request_pages_min = 4;
                cfg.workload.synthetic.request_pages_max = 8;
                cfg.workload.synthetic.requests = 100;
            }
        }
        "hot-rewrite" => {
            if txn {
                let t = &mut cfg.workload.txn;
                t.address = AddressKind::HotCold;
                t.hot_fraction = 0.03;
                t.hot_access = 0.9;
                t.plain_write_ratio = 0.4;
                t.concurrency = 4;
            } else {
                let s = &mut cfg.workload.synthetic;
                s.address = AddressKind::HotCold;
                s.hot_fraction = 0.03;
                s.hot_access = 0.9;
                s.queue_depth = 6;
            }
            cfg.ftl.interface_mbps = 16;
        }
        "erase-race" => {
            // The window of `FtlCore::erase_not_before`: GC may erase a block whose last live
            // page was superseded by a program (or a commit) still in flight. On two planes
            // with round-robin striping both backlogs stay level, so GC's erase queues behind
            // the superseding program and the window never opens (docs/MUTATION.md). Four
            // units of eight blocks leave a logical space of a few dozen pages, so nearly
            // every write supersedes a recent page and victims are blocks emptied moments
            // ago, while the other units' backlogs differ. The mutation campaign's
            // core-erase-early and core-release-now survived every other shape on none, tc
            // and mhl-d and are caught here (with wild-jitter on none).
            cfg.nand.channels = 2;
            cfg.nand.blocks_per_plane = 8;
            cfg.ftl.interface_mbps = 16;
            if txn {
                let t = &mut cfg.workload.txn;
                t.plain_write_ratio = 0.4;
                if t.isolation != workload::txn::Isolation::Serializable {
                    // No-page-conflict needs concurrency x size_max within half the span.
                    t.concurrency = 2;
                    t.size_max = 3;
                }
            }
        }
        "abort-gc" => {
            cfg.ftl.gc_min_free_blocks = 3;
            if txn {
                cfg.workload.txn.abort_ratio = 0.6;
                cfg.workload.txn.transactions = 120;
            }
        }
        "trim-in-flight" => {
            cfg.workload.kind = WorkloadKind::Synthetic;
            let s = &mut cfg.workload.synthetic;
            s.trim_ratio = 0.3;
            s.queue_depth = 8;
            s.address = AddressKind::HotCold;
            s.hot_fraction = 0.05;
            s.hot_access = 0.8;
        }
        "near-full" => {
            cfg.ftl.over_provisioning = 0.05;
            cfg.workload.prefill = 0.9;
            if txn {
                cfg.workload.txn.transactions = 60;
            } else {
                cfg.workload.synthetic.requests = 200;
            }
        }
        "checkpoints" => {
            cfg.ftl.checkpoint_interval = 40;
            cfg.ftl.checkpoint_window_blocks = 1;
        }
        "no-summaries" => cfg.ftl.summary_pages = false,
        other => {
            let names: Vec<&str> = SHAPES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "unknown workload shape '{other}' (known: {})",
                names.join(", ")
            ));
        }
    }
    Ok(())
}
