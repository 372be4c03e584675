//! A database loaded onto the device before the run (`external::load_data_area`: every
//! part of every DB page programmed with its loaded tag) reads and recovers as loaded:
//! `device-tx` over every Flag Commit §5.2 protocol and `wal` run on it, the engine's reads
//! of loaded pages cost flash reads, recovery reads them back as the loaded contents, and
//! every crash state of such a run recovers to the committed database. This is how the
//! Flag Commit reproduction puts its database on the device (§5.1: the database lives on
//! the simulated SSD).

use commitlab_host as host;
use host::check::{self, Mode};
use host::HostConfig;
use ssd::{Device, DeviceConfig};

/// A small TPC-C with rollbacks and a 10-frame pool (steals, evictions, re-reads).
fn tpcc(strategy: &str, protocol: &str) -> (HostConfig, DeviceConfig) {
    let (mut h, mut d) = check::tiny_config(strategy, protocol);
    h.workload = "tpcc".into();
    h.tpcc.warehouses = 1;
    h.tpcc.customers_per_district = 20;
    h.tpcc.items = 50;
    h.tpcc.max_txns = 200;
    h.tpcc.delta_abort = 0.1;
    h.transactions = 40;
    h.buffer_frames = 10;
    h.log_pages = 256;
    // Room for the loaded database (about 600 device pages) and the run's versions.
    d.nand.blocks_per_plane = 256;
    (h, d)
}

fn loaded(h: &HostConfig, d: &DeviceConfig, seed: u64) -> (Device, u64) {
    let mut dev = Device::in_memory(d).unwrap();
    let n = host::external::load_data_area(h, seed, &mut dev).unwrap();
    (dev, n)
}

/// On the code before loaded tags were understood, the engine's reads stopped at the first
/// loaded page ("reads Tag(..), the host expects Unmapped") and recovery called every
/// loaded page corrupt.
#[test]
fn a_loaded_database_runs_and_recovers_as_loaded() {
    for (s, p) in [
        ("device-tx", "cfc"),
        ("device-tx", "afc"),
        ("device-tx", "scc"),
        ("device-tx", "bpcc"),
        ("wal", "none"),
    ] {
        let (mut h, d) = tpcc(s, p);
        h.measure_recovery = true;
        let (dev, n) = loaded(&h, &d, 3);
        assert!(n > 0);
        let m = host::engine::run(&h, &d, dev, 3, false)
            .unwrap_or_else(|e| panic!("{s}/{p} on a loaded device: {e}"))
            .metrics;
        assert!(m.txns_committed > 0, "{s}/{p}");
        // Every buffer miss of a loaded page is a flash read now.
        assert!(m.nand_reads >= m.stats.page_reads, "{s}/{p}: {m:?}");
        let r = m.recovery.expect("recovery measured");
        // Recovery reads every data part back (all mapped on a loaded device).
        assert!(
            r.pages_read >= n,
            "{s}/{p}: recovery read {} of {n}",
            r.pages_read
        );
    }
}

/// The crash checker on a run from a loaded device (the checker's own tiny bank, 60
/// transactions, its database loaded first): exhaustive and 1,000 random schedules under
/// several seeds, no violation (a loaded page must read back as loaded after any crash, a
/// loaded part overwritten by a committed transaction as that transaction's).
#[test]
fn crash_states_of_a_run_on_a_loaded_database_recover_the_committed_database() {
    for p in ["cfc", "afc", "scc", "bpcc"] {
        let (h, d) = check::tiny_config("device-tx", p);
        for seed in [1, 5] {
            let (dev, n) = loaded(&h, &d, seed);
            assert!(n > 0);
            let rec = check::record_on(&h, &d, seed, dev).unwrap();
            for (mode, s) in [
                (Mode::Exhaustive { max_in_flight: 4 }, seed),
                (Mode::Random { schedules: 1000 }, seed + 100),
            ] {
                let rep = check::check(&rec, mode, s, None).unwrap();
                assert!(rep.states > 0, "{p}");
                eprintln!("{p} seed {seed} {mode:?}: {} states", rep.states);
                assert_eq!(
                    rep.violations,
                    0,
                    "{p} seed {seed} {mode:?}: {:?}",
                    rep.first.first().map(|v| &v.findings)
                );
            }
        }
    }
}
