//! `wal-pcm` and `scmlogging` (PCMLogging §6.1's WAL baselines) on the host engine under the
//! host crash checker with PCM crash points (`pcm_tier::check`): every crash of tiny runs,
//! random crashes of TPC-C runs, planted bugs the checker must catch, TPC-C on the HDD and
//! the SSD, determinism and the recovery-time model.

use commitlab_host as host;
use host::check::{self, Mode};

const BOTH: [&str; 2] = ["wal-pcm", "scmlogging"];

fn tiny(s: &str) -> (host::HostConfig, ssd::DeviceConfig) {
    check::tiny_config(s, "none")
}

fn show(rep: &check::CheckReport) {
    for v in &rep.first {
        eprintln!("{:?}\n{:#?}", v.state, v.findings);
    }
    eprintln!("{} states, {} violations", rep.states, rep.violations);
}

#[test]
fn smoke() {
    for s in BOTH {
        let (h, d) = tiny(s);
        let rec = check::record(&h, &d, 7).unwrap();
        eprintln!("{s}: {:?} committed {} aborted {} restarted {}", rec.metrics.strategy_counters, rec.metrics.txns_committed, rec.metrics.txns_aborted, rec.metrics.txns_restarted);
        let t = rec.tier.as_ref().unwrap();
        eprintln!("pcm ops {} disk ops {}", t.pcm_ops.len(), t.disk_ops.len());
        let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
        show(&rep);
    }
}
