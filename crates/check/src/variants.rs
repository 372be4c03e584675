//! Safety variants: the non-default position of every option that switches a protocol's
//! crash-safety mechanism, each on a protocol that runs it, so that the crash matrix
//! (`commitlab crash --variants`) checks both positions of each option and not only the
//! default one.
//!
//! An option is here when its two positions run different code on the commit, GC or
//! recovery path, so a bug in the path the default does not take would pass every default
//! check (docs/CRASH-MODEL.md, "Crash matrix: both positions of every safety option", gives
//! the list and the options left out and why). A variant is a list of `--set` overrides of
//! [`crate::small_config`]: the option's non-default position and, where the default
//! workload never reaches the mechanism's window, the workload change that does (SCC's
//! erase of an uncommitted intention on the next write's path needs aborts followed by
//! rewrites of the aborted pages: `workload.txn.abort_ratio=0.3`). A replay command of a
//! failing state spells the overrides out as `--set`, so it replays without this table.

/// The options that switch a protocol's crash-safety mechanism, with the protocols they
/// concern: each must have a variant per protocol listed (a test checks it). Options that
/// only size or place things without changing the commit, GC or recovery path (GC policy,
/// thresholds, striping, wear levelling, log heads, interface speed, window sizes) are not
/// here: the option matrix (`tests/option_matrix.rs`) runs them through random crash
/// schedules, and the default workload already takes the paths they feed.
pub const SAFETY_OPTIONS: &[(&str, &[&str])] = &[
    ("ftl.checkpoint_interval", &["none", "cfc", "afc"]),
    ("ftl.map_journal", &["none", "lighttx"]),
    ("ftl.map_placement", &["lighttx"]),
    ("ftl.summary_pages", &["none", "tc"]),
    ("protocol.scc_erase_at_abort", &["scc"]),
    ("protocol.bpcc_srs", &["bpcc"]),
    ("protocol.cfc_flag_reprogram", &["cfc"]),
    ("protocol.block_flags", &["cfc", "afc"]),
    ("protocol.aw_gc_move_records", &["aw", "mhl-m"]),
    ("protocol.aw_log_chains", &["aw"]),
];

/// One variant: a protocol, the option it flips, and the overrides that make it.
pub struct Variant {
    pub protocol: &'static str,
    /// Short label for the summary table (the option's non-default position).
    pub name: &'static str,
    /// `--set` overrides (TOML values), applied after the user's own.
    pub sets: &'static [&'static str],
    /// The mechanism whose other position this checks.
    pub what: &'static str,
}

pub const VARIANTS: &[Variant] = &[
    Variant {
        protocol: "none",
        name: "checkpoints",
        sets: &["ftl.checkpoint_interval=40"],
        what: "recovery from a mapping checkpoint root and its journal, not the full scan",
    },
    Variant {
        protocol: "none",
        name: "checkpoints, whole map",
        sets: &["ftl.checkpoint_interval=40", "ftl.map_journal=false"],
        what: "checkpoints that rewrite every translation page instead of journalling",
    },
    Variant {
        protocol: "none",
        name: "no summaries",
        sets: &["ftl.summary_pages=false"],
        what: "recovery reads every page's OOB instead of block summary pages",
    },
    Variant {
        protocol: "tc",
        name: "no summaries",
        sets: &["ftl.summary_pages=false"],
        what: "TC's scan recovery from every page's OOB",
    },
    Variant {
        protocol: "scc",
        name: "erase on next write",
        sets: &[
            "protocol.scc_erase_at_abort=false",
            "workload.txn.abort_ratio=0.3",
        ],
        what: "TxFlash §3.2: the uncommitted intention is erased on the path of the next write of its page, before the new version",
    },
    Variant {
        protocol: "bpcc",
        name: "srs until-erased",
        sets: &["protocol.bpcc_srs=\"until-erased\""],
        what: "TxFlash §3.3 SRS without the first two pruning rules (LightTx §4.3's BPCC)",
    },
    Variant {
        protocol: "cfc",
        name: "flag reprogram",
        sets: &["protocol.cfc_flag_reprogram=true"],
        what: "Flag Commit §3.3: the commit flag by a separate partial program after the last page",
    },
    Variant {
        protocol: "cfc",
        name: "page flags",
        sets: &["protocol.block_flags=false"],
        what: "Flag Commit §3.2: per-page flags instead of §3.4's block-based flags",
    },
    Variant {
        protocol: "cfc",
        name: "checkpoints",
        sets: &["ftl.checkpoint_interval=40"],
        what: "CFC recovering from a mapping checkpoint",
    },
    Variant {
        protocol: "afc",
        name: "page flags",
        sets: &["protocol.block_flags=false"],
        what: "Flag Commit §3.2: per-page flags instead of §3.4's block-based flags",
    },
    Variant {
        protocol: "afc",
        name: "checkpoints",
        sets: &["ftl.checkpoint_interval=40"],
        what: "AFC recovering from a mapping checkpoint",
    },
    Variant {
        protocol: "lighttx",
        name: "whole map, striped",
        sets: &["ftl.map_journal=false", "ftl.map_placement=\"striped\""],
        what: "checkpoints rewriting every translation page, spread over every unit",
    },
    Variant {
        protocol: "aw",
        name: "move records",
        sets: &["protocol.aw_gc_move_records=true"],
        what: "GC writes a move record that the victim's erase waits for",
    },
    Variant {
        protocol: "aw",
        name: "one log chain",
        sets: &["protocol.aw_log_chains=1"],
        what: "the mapping log as one serial chain",
    },
    Variant {
        protocol: "mhl-m",
        name: "move records",
        sets: &["protocol.aw_gc_move_records=true"],
        what: "GC writes a move record that the victim's erase waits for",
    },
];
