//! cfc-ex on an aged device (the reproduction's quick max_c = 3 and 4 points once filled a
//! log area of 4096 pages). The reproduction of that point: Table 2's
//! device at the quick scale (2 GiB), aged as `reproduce` ages it, TPC-C at 4 warehouses.

use commitlab_host as host;
use sim::SimTime;

fn table2_quick() -> ssd::DeviceConfig {
    let mut d = ssd::DeviceConfig::default();
    d.protocol.name = "none".into();
    let n = &mut d.nand;
    n.channels = 8;
    n.chips_per_channel = 1;
    n.dies_per_chip = 2;
    n.planes_per_die = 2;
    n.blocks_per_plane = 512;
    n.pages_per_block = 64;
    n.page_bytes = 2048;
    n.oob_bytes = 64;
    n.nop = 2;
    n.append_bytes = 8;
    n.timing.read_ns = 80_000;
    n.timing.program_ns = 200_000;
    n.timing.partial_program_ns = 200_000;
    n.timing.erase_ns = 1_500_000;
    d.ftl.over_provisioning = 0.10;
    d.ftl.gc_threshold = 0.05;
    d.ftl.gc_policy = ssd::config::GcPolicyKind::WearAware;
    d
}

/// `reproduce::flagcommit::age`: cold data beyond `from`, then random overwrites.
fn age(dev: &mut ssd::Device, from: u64, seed: u64) {
    let n = u64::from(dev.logical_pages());
    let cold = n - from;
    let phys = dev.core.geo.pages() as u64;
    let depth = 2 * dev.core.geo.pus() as usize;
    let mut in_flight = std::collections::VecDeque::with_capacity(depth);
    let mut now = SimTime::ZERO;
    let mut tag = 1u64 << 62;
    let mut write = |dev: &mut ssd::Device, lpn: u64| {
        if in_flight.len() >= depth {
            if let Some(t) = in_flight.pop_front() {
                now = now.max(t);
            }
        }
        tag += 1;
        in_flight.push_back(dev.write_plain(sim::Lpn(lpn as u32), tag, now).unwrap());
    };
    for lpn in from..n {
        write(dev, lpn);
    }
    let mut rng = sim::Rng::new(seed).fork("flagcommit-age");
    for _ in 0..(phys.saturating_sub(cold) + cold / 4) {
        write(dev, from + rng.below(cold));
    }
}

fn point(max_c: u32, txns: u64, seed: u64) -> host::Result<host::HostRun> {
    let d = table2_quick();
    let h = host::HostConfig {
        strategy: "cfc-ex".into(),
        workload: "tpcc".into(),
        clients: 50,
        transactions: txns,
        buffer_frames: 512,
        max_c,
        log_pages: 4096,
        tpcc: workload::tpcc::TpccConfig {
            warehouses: 4,
            delta_abort: 0.05,
            max_txns: txns,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut dev = ssd::Device::in_memory(&d).unwrap();
    let src = host::source::build(&h, seed).unwrap();
    let parts = host::engine::parts_for(&h, 2048).unwrap();
    let layout = host::data::Layout::from_source(src.as_ref(), parts);
    let from = host::engine::data_lpns(&layout) * 3 + 1 + u64::from(h.log_pages);
    age(&mut dev, from, seed);
    host::engine::run_traced(&h, &d, dev, seed, false, false)
}

/// About 15 s a point in a debug build; run with `-- --ignored`. The log wraps (more than
/// 4,096 log pages are used) and the restart point keeps up.
#[test]
#[ignore]
fn cfc_ex_on_an_aged_device_does_not_fill_its_log_area() {
    for seed in 1..=3 {
        for max_c in [3, 4] {
            match point(max_c, 8_000, seed) {
                Ok(r) => {
                    let c = &r.metrics.strategy_counters;
                    eprintln!(
                        "seed {seed} max_c {max_c}: {} committed, {} log pages used, {} checkpoints ({} deferred)",
                        r.metrics.txns_committed, c["log_pages_used"], c["fc_checkpoints"], c["fc_checkpoints_deferred"]
                    );
                    assert!(c["log_pages_used"] > 4096, "the log did not wrap: {c:?}");
                }
                Err(e) => panic!("seed {seed} max_c {max_c}: {e}"),
            }
        }
    }
}
