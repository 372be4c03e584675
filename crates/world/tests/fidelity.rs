//! Reproduction fidelity: properties of a run that a paper's experiment relies on.

use commitlab_world as world;
use world::{Config, RunOptions, WorkloadKind};

fn small(protocol: &str) -> Config {
    let mut c = Config::default();
    c.protocol.name = protocol.into();
    c.workload.prefill = 0.5;
    c.run.measure_recovery = false;
    c
}

/// An open-loop transaction stream after a prefill: arrivals count from the start of
/// measurement, so a run of N transactions arriving every ~5 ms lasts about N × 5 ms however
/// fast the device is. Found by review: arrivals counted from t = 0, the prefill
/// took longer than the whole schedule, and every transaction ran back to back (AW took the
/// same time at 1 ms and 2.5 ms between arrivals).
#[test]
fn open_loop_txn_arrivals_count_from_the_end_of_the_prefill() {
    let mut runs = Vec::new();
    for gap_ns in [1_000_000u64, 2_500_000] {
        let mut c = small("aw");
        c.workload.kind = WorkloadKind::Txn;
        let t = &mut c.workload.txn;
        t.transactions = 60;
        t.size_min = 1;
        t.size_max = 4;
        t.isolation = workload::txn::Isolation::Strict;
        t.interarrival_ns = gap_ns;
        let m = world::run(&c, &RunOptions::default()).unwrap().metrics;
        // The sum of 59 exponential gaps is far above half its mean with overwhelming
        // probability; the seed is fixed anyway.
        assert!(
            m.sim_time_ns as f64 > 0.5 * 59.0 * gap_ns as f64,
            "gap {gap_ns} ns: the run took {} ns",
            m.sim_time_ns
        );
        // The device keeps up: transactions wait little before they start.
        assert_eq!(
            m.queue_delay_ns.count, 60,
            "one queueing delay per transaction"
        );
        assert!(
            m.queue_delay_ns.p50 < gap_ns,
            "gap {gap_ns}: median queueing delay {} ns",
            m.queue_delay_ns.p50
        );
        assert!(m.response_time_ns.mean >= m.tx_time_ns.mean);
        runs.push(m.sim_time_ns);
    }
    assert!(runs[1] as f64 > 1.8 * runs[0] as f64, "{runs:?}");
}

/// The same for a DiskSim trace: its first request arrives when measurement starts.
#[test]
fn disksim_arrivals_count_from_the_end_of_the_prefill() {
    let dir = std::env::temp_dir().join(format!("commitlab-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.disksim");
    let mut text = String::new();
    for i in 0..50u64 {
        // One 4 KiB write every 2 ms.
        text.push_str(&format!("{} 0 {} 8 0\n", i * 2_000_000, i * 8));
    }
    std::fs::write(&path, text).unwrap();
    let mut c = small("none");
    c.workload.kind = WorkloadKind::Trace;
    c.workload.trace.path = path.display().to_string();
    let m = world::run(&c, &RunOptions::default()).unwrap().metrics;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        m.sim_time_ns >= 49 * 2_000_000,
        "the trace spans 98 ms; the run took {} ns",
        m.sim_time_ns
    );
    assert_eq!(m.queue_delay_ns.count, 50);
    // An idle device serves each write in about one program time.
    assert!(
        m.response_time_ns.p99 < 2_000_000,
        "{:?}",
        m.response_time_ns
    );
}

/// Peak DRAM is reported beside the end-of-run figure: a run whose transactions are all
/// finished at the end still needed memory for them while they ran.
#[test]
fn peak_protocol_dram_is_reported() {
    let mut c = small("scc");
    c.workload.kind = WorkloadKind::Txn;
    let t = &mut c.workload.txn;
    t.transactions = 300;
    t.abort_ratio = 0.3;
    let m = world::run(&c, &RunOptions::default()).unwrap().metrics;
    let end: u64 = m.protocol_dram_bytes;
    assert!(m.protocol_dram_bytes_peak >= end);
    let active_peak = m.dram_bytes_peak["active transactions"];
    assert!(
        active_peak > m.dram_bytes["active transactions"],
        "transactions were active during the run: peak {active_peak}, end {}",
        m.dram_bytes["active transactions"]
    );
    for (k, v) in &m.dram_bytes {
        assert!(m.dram_bytes_peak[k] >= *v, "{k}");
    }
}

/// `workload.age` brings the device to steady state before measuring, so GC is active in
/// the measured part even when the workload itself writes less than the free space. Found
/// by review: at full scale `lighttx-fig11-gc` reported "LightTx did no GC" and
/// `fig11-aw-mhlm` −100 %, because 50,000 transactions never filled a 32 GiB device.
#[test]
fn ageing_reaches_steady_state_before_measuring() {
    let run = |age: f64| {
        let mut c = small("lighttx");
        c.workload.prefill = 0.85;
        c.workload.age = age;
        c.workload.kind = WorkloadKind::Txn;
        let t = &mut c.workload.txn;
        // About 5 % of the logical space, well under the free space.
        t.transactions = 100;
        t.size_min = 1;
        t.size_max = 16;
        world::run(&c, &RunOptions::default()).unwrap().metrics
    };
    let fresh = run(0.0);
    assert_eq!(
        fresh.gc_erases, 0,
        "the short workload alone never needs GC"
    );
    let aged = run(1.0);
    assert!(
        aged.gc_erases > 0,
        "aged: GC must be active while measuring"
    );
    assert!(aged.gc_page_migrations > 0);
    // Measurement still covers only the workload.
    assert_eq!(aged.host_writes, fresh.host_writes);
}

/// A root record whose page ends in 0xFF bytes (directory entries of translation chunks
/// never written) is still a complete root. Found by review: from 1,024 blocks
/// per plane up, LightTx and AW recovered without a checkpoint root and scanned the whole
/// device. Tag data mode stores a raw page without its trailing 0xFF bytes, and the root
/// reader took the shortened payload for a torn page. Reproduced here on a small device with
/// 512-byte pages, where the directory spans pages as it does at 16 GiB with 4 KiB pages;
/// `root_survives_at_1024_blocks_per_plane` checks the papers' scale (release, ignored).
#[test]
fn a_root_page_ending_in_unwritten_chunks_is_complete() {
    for p in ["lighttx", "aw"] {
        let mut c = small(p);
        c.nand.page_bytes = 512;
        c.nand.blocks_per_plane = 512;
        c.nand.pages_per_block = 16;
        c.workload.prefill = 0.0;
        c.run.measure_recovery = true;
        c.workload.kind = WorkloadKind::Txn;
        let t = &mut c.workload.txn;
        t.transactions = 400;
        t.size_min = 1;
        t.size_max = 8;
        t.isolation = workload::txn::Isolation::Strict;
        // Only the low tenth of the logical space is written: the directory's tail is
        // u32::MAX ("never written") entries.
        t.span = 0.1;
        let m = world::run(&c, &RunOptions::default()).unwrap().metrics;
        let r = m.recovery.unwrap();
        assert!(m.ftl.checkpoints > 0, "{p}: no checkpoint was taken");
        assert!(
            r.had_checkpoint,
            "{p}: recovery found no checkpoint root: {r:?}"
        );
    }
}

/// The papers' scale: 1,024 blocks per plane on the LightTx shape (16 GiB). Slow in a debug
/// build: `cargo test --release -p commitlab-world --test fidelity -- --ignored`.
#[test]
#[ignore]
fn root_survives_at_1024_blocks_per_plane() {
    for p in ["lighttx", "aw"] {
        let mut c = Config::load(&world::ConfigSource {
            preset: Some("lighttx".into()),
            file: None,
            sets: vec![
                "nand.data_mode=\"tag\"".into(),
                "nand.blocks_per_plane=1024".into(),
                "workload.prefill=0.85".into(),
            ],
        })
        .unwrap();
        c.protocol.name = p.into();
        c.workload.kind = WorkloadKind::Txn;
        c.workload.txn.transactions = 300;
        c.workload.txn.isolation = workload::txn::Isolation::Strict;
        c.workload.txn.span = 0.5;
        let m = world::run(&c, &RunOptions::default()).unwrap().metrics;
        let r = m.recovery.unwrap();
        assert!(r.had_checkpoint, "{p}: {r:?}");
    }
}
