//! Every protocol × every FTL and protocol option either works or is refused.
//!
//! tc, scc and bpcc used to accept `ftl.checkpoint_interval > 0` and then lose acked
//! transactions. This enumerates each protocol with checkpoints off and on, crossed with one
//! change at a time of every other option of `FtlConfig` and `ProtocolConfig` and each
//! isolation level, and insists: a refused combination is refused by validation with a
//! configuration error naming its key, and exactly the combinations known to be unsupported
//! are refused (checkpoints on a scan-only protocol, an isolation level the protocol lacks);
//! every accepted one records a run and passes random crash schedules with zero violations.
//!
//! The default test draws a few schedules per combination (fast in the dev profile); the
//! ignored one draws many more.

mod common;

use commitlab_check::{check, record, small_config, Mode, RecordError};
use common::assert_clean;
use ssd::config::{GcPolicyKind, MapPlacement, Striping};
use world::Config;

type Variant = (&'static str, fn(&mut Config));

fn variants() -> Vec<Variant> {
    vec![
        ("base", |_| {}),
        ("map_journal=false", |c| c.ftl.map_journal = false),
        ("map_journal_pages=1", |c| c.ftl.map_journal_pages = 1),
        ("summary_pages=false", |c| c.ftl.summary_pages = false),
        ("gc_policy=cost-benefit", |c| {
            c.ftl.gc_policy = GcPolicyKind::CostBenefit
        }),
        ("gc_policy=wear-aware", |c| {
            c.ftl.gc_policy = GcPolicyKind::WearAware
        }),
        ("gc_threshold=0.2", |c| c.ftl.gc_threshold = 0.2),
        ("gc_min_free_blocks=3", |c| c.ftl.gc_min_free_blocks = 3),
        ("striping=plane-first", |c| {
            c.ftl.striping = Striping::PlaneFirst
        }),
        ("striping=least-busy", |c| {
            c.ftl.striping = Striping::LeastBusy
        }),
        ("dynamic_wear_leveling=false", |c| {
            c.ftl.dynamic_wear_leveling = false
        }),
        ("static_wear_leveling", |c| {
            c.ftl.static_wear_leveling = true;
            c.ftl.static_wl_threshold = 1;
            c.ftl.static_wl_interval = 4;
        }),
        ("checkpoint_window_blocks=2", |c| {
            c.ftl.checkpoint_window_blocks = 2
        }),
        ("map_placement=one-unit", |c| {
            c.ftl.map_placement = MapPlacement::OneUnit
        }),
        ("over_provisioning=0.3", |c| c.ftl.over_provisioning = 0.3),
        ("interface_mbps=200", |c| c.ftl.interface_mbps = 200),
        ("block_flags", |c| c.protocol.block_flags = true),
        ("log_heads=3", |c| c.protocol.log_heads = 3),
        ("aw_log_chains=1", |c| c.protocol.aw_log_chains = 1),
        ("aw_log_chains=3", |c| c.protocol.aw_log_chains = 3),
        ("aw_gc_move_records", |c| {
            c.protocol.aw_gc_move_records = true
        }),
        ("aw_log_chains=1 aw_gc_move_records", |c| {
            c.protocol.aw_log_chains = 1;
            c.protocol.aw_gc_move_records = true;
        }),
        ("bpcc_srs=until-erased", |c| {
            c.protocol.bpcc_srs = ssd::BpccSrs::UntilErased
        }),
        ("trim_ratio=0.3", |c| c.workload.synthetic.trim_ratio = 0.3),
        ("isolation=strict", |c| {
            c.workload.txn.isolation = workload::txn::Isolation::Strict
        }),
        ("isolation=no-page-conflict", |c| {
            c.workload.txn.isolation = workload::txn::Isolation::NoPageConflict
        }),
        ("isolation=serializable", |c| {
            c.workload.txn.isolation = workload::txn::Isolation::Serializable
        }),
    ]
}

/// Why `cfg` should be refused, if it should: the key the error must name.
fn expected_refusal(cfg: &Config) -> Option<&'static str> {
    let info = ssd::protocol::lookup(&cfg.protocol.name).unwrap();
    if cfg.ftl.checkpoint_interval > 0 && !info.supports_checkpoints {
        return Some("ftl.checkpoint_interval");
    }
    if cfg.workload.kind == world::WorkloadKind::Txn {
        use workload::txn::Isolation as I;
        let level = match cfg.workload.txn.isolation {
            I::Strict => ssd::Isolation::Strict,
            I::NoPageConflict => ssd::Isolation::NoPageConflict,
            I::Serializable => ssd::Isolation::Serializable,
        };
        if !info.supports(level) {
            return Some("workload.txn.isolation");
        }
    }
    None
}

fn matrix(schedules: u64) {
    let mut accepted = 0;
    let mut refused = 0;
    for p in ssd::protocol::names() {
        for ckpt in [0u64, 40] {
            for (name, f) in variants() {
                let mut cfg = small_config(p);
                cfg.ftl.checkpoint_interval = ckpt;
                f(&mut cfg);
                let what = format!("{p} checkpoint_interval={ckpt} {name}");
                match (cfg.validate(), expected_refusal(&cfg)) {
                    (Err(e), Some(key)) => {
                        assert!(e.to_string().contains(key), "{what}: {e}");
                        // The run is refused the same way.
                        let e = record(&cfg).err().unwrap_or_else(|| panic!("{what} ran"));
                        assert!(
                            matches!(&e, RecordError::Input(s) if s.contains(key)),
                            "{what}: {e}"
                        );
                        refused += 1;
                    }
                    (Err(e), None) => panic!("{what}: refused unexpectedly: {e}"),
                    (Ok(()), Some(key)) => panic!("{what}: accepted, should be refused ({key})"),
                    (Ok(()), None) => {
                        // Accepted by validation, so it must run: out of space while
                        // recording would be a configuration error validation missed.
                        let rec = record(&cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
                        let rep = check(&rec, Mode::Random { schedules }, cfg.seed, None)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        if rep.violations > 0 {
                            eprintln!("{what}:");
                        }
                        assert_clean(&rep, &rec);
                        accepted += 1;
                    }
                }
            }
        }
    }
    eprintln!("{accepted} combinations accepted and clean, {refused} refused");
    assert!(accepted > 200 && refused > 30, "{accepted} / {refused}");
}

/// MHL-M with checkpoints every 40 writes under least-busy striping ran out of space while
/// recording ("no parallel unit has a free block") with 4 free blocks in unit 0: a stream
/// whose open block in the least busy unit was full fell back to `next_pu` for the other
/// units, and least-busy named the same unit again. The fallback now tries every unit.
#[test]
fn mhl_m_under_least_busy_striping_with_checkpoints_records_and_survives_crashes() {
    for seed in [1, 2, 3] {
        let mut cfg = small_config("mhl-m");
        cfg.seed = seed;
        cfg.ftl.checkpoint_interval = 40;
        cfg.ftl.striping = Striping::LeastBusy;
        let rec = record(&cfg).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let rep = check(&rec, Mode::Random { schedules: 200 }, seed, None).unwrap();
        assert_clean(&rep, &rec);
    }
}

#[test]
fn every_protocol_option_combination_works_or_is_refused() {
    matrix(20);
}

#[test]
#[ignore]
fn every_protocol_option_combination_works_or_is_refused_larger() {
    matrix(300);
}
