//! A database loaded onto the device before the run (`external::load_data_area`: every
//! part of every DB page programmed with its loaded tag) reads and recovers as loaded:
//! `device-tx` over every Flag Commit §5.2 protocol and `wal` run on it, the engine's reads
//! of loaded pages cost flash reads, recovery reads them back as the loaded contents, and
//! every crash state of such a run recovers to the committed database. `cfc-ex` / `afc-ex`
//! take the loaded data area for their version slot 0 holding the page as loaded (no
//! version: every record committed before the run, usn 0). This is how the Flag Commit
//! reproduction puts its database on the device (§5.1: the database lives on the simulated
//! SSD), for §5.2's `device-tx` points and for §5.3's CFC_ex, AFC_ex and WAL.

mod common;

use commitlab_host as host;
use host::check::{self, Mode};
use host::HostConfig;
use sim::{Lpn, SimTime};
use ssd::{Device, DeviceConfig};

/// A small TPC-C with rollbacks and a 10-frame pool (steals, evictions, re-reads).
fn tpcc(strategy: &str, protocol: &str) -> (HostConfig, DeviceConfig) {
    let (mut h, mut d) = check::tiny_config(strategy, protocol);
    common::tiny_tpcc(&mut h);
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

/// `loaded`, then aged by the database's own pages as the Flag Commit reproduction ages
/// its devices (`flagcommit::age_loaded`): random data-area pages rewritten with their
/// loaded tags until the FTL has collected garbage, so the run starts with the database's
/// pages relocated by GC and stale copies of them on flash. The rewrites go to the first
/// half of the data area only (the tiny database is small enough for random rewrites to
/// cover all of it), so the second half is still as the loader wrote it.
fn loaded_aged(h: &HostConfig, d: &DeviceConfig, seed: u64) -> (Device, u64) {
    let (mut dev, n) = loaded(h, d, seed);
    let mut rng = sim::Rng::new(seed).fork("loaded-aged");
    let mut now = dev.barrier(SimTime::ZERO);
    let erases = dev.core.stats.gc_erases;
    for _ in 0..(dev.core.geo.pages() as u64 * 4) {
        let lpn = Lpn(rng.below(n.div_ceil(2)) as u32);
        now = dev
            .write_plain(lpn, host::external::loaded_tag(lpn), now)
            .unwrap();
        if dev.core.stats.gc_erases > erases + 4 {
            break;
        }
    }
    assert!(
        dev.core.stats.gc_erases > erases,
        "the ageing reached GC ({n} data pages)"
    );
    dev.barrier(now);
    (dev, n)
}

/// The crash checker (exhaustive, then 1,000 random schedules) on a run of `h` from `dev`.
fn crash_check(h: &HostConfig, d: &DeviceConfig, seed: u64, dev: Device, what: &str) -> u64 {
    let rec = check::record_on(h, d, seed, dev).unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut states = 0;
    for (mode, s) in [
        (Mode::Exhaustive { max_in_flight: 4 }, seed),
        (Mode::Random { schedules: 1000 }, seed + 100),
    ] {
        let rep = check::check(&rec, mode, s, None).unwrap();
        assert!(rep.states > 0, "{what}");
        eprintln!("{what} seed {seed} {mode:?}: {} states", rep.states);
        assert_eq!(
            rep.violations,
            0,
            "{what} seed {seed} {mode:?}: {:?}",
            rep.first.first().map(|v| &v.findings)
        );
        states += rep.states;
    }
    states
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
        ("cfc-ex", "none"),
        ("afc-ex", "none"),
    ] {
        let (mut h, mut d) = tpcc(s, p);
        if s.ends_with("-ex") {
            // The commit flags' record area (strategy/flagcommit_ex).
            d.nand.append_bytes = 4;
        }
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

/// §5.3's strategies (CFC_ex, AFC_ex and WAL over the plain FTL) on the checker's tiny bank
/// from a loaded device aged by the database's own pages: exhaustive and 1,000 random
/// schedules under several seeds, no violation. CFC_ex / AFC_ex read the loaded data area
/// as version slot 0 holding the page as loaded; before they did, their recovery called
/// every loaded page corrupt ("lpn 0 holds None").
#[test]
fn crash_states_of_the_extended_protocols_and_wal_on_a_loaded_aged_database_recover() {
    for s in ["cfc-ex", "afc-ex", "wal"] {
        let (h, d) = check::tiny_config(s, "none");
        for seed in [1, 5, 9] {
            let (dev, n) = loaded_aged(&h, &d, seed);
            assert!(n > 0);
            crash_check(&h, &d, seed, dev, s);
        }
    }
}

/// A loader that lays a page out wrongly is caught: data-area page 2 carries the loaded
/// tag of another page (as a loader off by one would write it), or the right tag with a
/// commit flag already programmed in its record area (a slot-0 "version" no run wrote).
/// CFC_ex / AFC_ex recovery refuses both as corrupt instead of taking them for the page as
/// loaded, so the checker reports the run's crash states as violations.
#[test]
fn a_misloaded_page_is_caught_by_recovery() {
    for s in ["cfc-ex", "afc-ex"] {
        let (mut h, d) = check::tiny_config(s, "none");
        h.measure_recovery = true;
        for bad in ["wrong-tag", "flag-programmed"] {
            let (mut dev, n) = loaded(&h, &d, 1);
            assert!(n > 3);
            let lpn = Lpn(2);
            let now = dev.barrier(SimTime::ZERO);
            let t = match bad {
                "wrong-tag" => dev
                    .write_plain(lpn, host::external::loaded_tag(Lpn(3)), now)
                    .unwrap(),
                _ => dev.write_delta(lpn, 0, &[0x00], now).unwrap(),
            };
            dev.barrier(t);
            let rec = check::record_on(&h, &d, 1, dev);
            let caught = match rec {
                // The run's own recovery (measure_recovery) or the engine's read refused it.
                Err(e) => {
                    eprintln!("{s} {bad}: {e}");
                    true
                }
                Ok(rec) => {
                    let rep = check::check(&rec, Mode::Random { schedules: 50 }, 1, None).unwrap();
                    rep.violations > 0
                }
            };
            assert!(
                caught,
                "{s}: a {bad} page at {lpn} was taken for the loaded page"
            );
        }
    }
}
