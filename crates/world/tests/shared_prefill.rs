//! A run started from a shared prefilled device (`world::prefill` + `world::run_prefilled`)
//! is the run that prefills its own device, byte for byte (full-scale speed:
//! `reproduce` prefills once per distinct `prefill_key` and copies the device per point).

use commitlab_world as world;
use world::{Config, RunOptions, WorkloadKind};

/// A small aged device (GC active before measuring) running a transactional workload.
fn small(protocol: &str, abort_ratio: f64) -> Config {
    let mut c = Config::default();
    c.protocol.name = protocol.into();
    c.nand.blocks_per_plane = 24;
    c.workload.prefill = 0.8;
    c.workload.age = 0.5;
    c.workload.kind = WorkloadKind::Txn;
    let t = &mut c.workload.txn;
    t.transactions = 400;
    t.size_min = 1;
    t.size_max = 16;
    t.abort_ratio = abort_ratio;
    t.isolation = workload::txn::Isolation::Strict;
    c.run.measure_recovery = true;
    c
}

#[test]
fn a_run_from_a_shared_prefill_is_the_run_that_prefills_itself() {
    for p in [
        "none", "tc", "scc", "bpcc", "cfc", "afc", "lighttx", "aw", "mhl-d", "mhl-m",
    ] {
        let a = small(p, 0.0);
        // Another workload on the same device: shorter transactions, and aborts where the
        // protocol can abort.
        let mut b = small(p, if p == "none" { 0.0 } else { 0.3 });
        b.workload.txn.size_max = 6;
        b.workload.txn.transactions = 500;
        assert_eq!(world::prefill_key(&a), world::prefill_key(&b));
        let shared = world::prefill(&a).unwrap();
        for cfg in [&a, &b] {
            let fresh = world::run(cfg, &RunOptions::default()).unwrap();
            assert!(
                fresh.metrics.nand_erases > 0,
                "{p}: GC must be active while measuring"
            );
            let copy = shared.try_clone().unwrap();
            let from = world::run_prefilled(cfg, copy).unwrap();
            assert_eq!(
                world::deterministic_json(&fresh.metrics),
                world::deterministic_json(&from.metrics),
                "{p}, aborts {}",
                cfg.workload.txn.abort_ratio
            );
            // The media too, data (write tags) included: metrics alone do not see tags.
            assert!(
                fresh.device.core.nand.image() == from.device.core.nand.image(),
                "{p}: the images differ"
            );
        }
        // The original is left untouched by the runs from its copies.
        let last = world::run_prefilled(&b, shared).unwrap().metrics;
        let fresh = world::run(&b, &RunOptions::default()).unwrap().metrics;
        assert_eq!(
            world::deterministic_json(&fresh),
            world::deterministic_json(&last)
        );
    }
}

/// A configuration whose prefill differs (here the seed, which drives the ageing) is refused
/// rather than silently run from the wrong device.
#[test]
fn a_prefill_for_another_configuration_is_refused() {
    let a = small("none", 0.0);
    let mut b = a.clone();
    b.seed += 1;
    assert_ne!(world::prefill_key(&a), world::prefill_key(&b));
    let shared = world::prefill(&a).unwrap();
    let e = world::run_prefilled(&b, shared)
        .err()
        .expect("must be refused");
    assert!(e.to_string().contains("different"), "{e}");
}
