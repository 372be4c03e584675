//! Host runs: the DBMS host engine (`host` crate) on the device a `Config` describes, with
//! the `[host]` section — the world's side of `workload.kind = "host"` and
//! `commitlab run|crash --host S`.

use crate::config::{Config, WorkloadKind};
use crate::run::{build_device, WorldError};
use host::check::{CheckReport, HostRecording, Mode};
use host::{HostError, HostMetrics};

fn herr(e: HostError) -> WorldError {
    match e {
        HostError::Config { .. } | HostError::Workload(_) => WorldError::Config(e.to_string()),
        HostError::Device { at, what, error } => WorldError::Device {
            at,
            request: what,
            error,
        },
        other => WorldError::Io(other.to_string()),
    }
}

/// Runs the host engine on the configured device; returns its metrics.
pub fn run_host(cfg: &Config) -> Result<HostMetrics, WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    let device = build_device(&cfg, None)?;
    Ok(host::run(&cfg.host, device, cfg.seed, false)
        .map_err(herr)?
        .metrics)
}

/// The configuration `commitlab crash --host S --protocol P` starts from: the host
/// checker's tiny database on a small device (`host::check::tiny_config`).
pub fn host_crash_config(strategy: &str, protocol: &str) -> Config {
    let (h, d) = host::check::tiny_config(strategy, protocol);
    let mut c = Config {
        nand: d.nand,
        ftl: d.ftl,
        protocol: d.protocol,
        host: h,
        ..Config::default()
    };
    c.workload.kind = WorkloadKind::Host;
    c
}

/// Records a host run for the crash checker.
pub fn record_host(cfg: &Config) -> Result<HostRecording, WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    host::check::record(&cfg.host, &cfg.device(), cfg.seed).map_err(herr)
}

/// Crash-checks a recorded host run.
pub fn check_host(
    rec: &HostRecording,
    mode: Mode,
    seed: u64,
    only: Option<u64>,
) -> Result<CheckReport, WorldError> {
    host::check::check(rec, mode, seed, only).map_err(WorldError::Config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_run_from_a_config_and_its_errors() {
        let mut c = host_crash_config("wal", "none");
        let m = run_host(&c).unwrap();
        assert!(m.txns_committed > 0);
        c.host.clients = 0;
        let e = run_host(&c).unwrap_err().to_string();
        assert!(e.contains("host.clients"), "{e}");
        let c = Config::load(&crate::ConfigSource {
            sets: vec![
                "host.strategy=\"aries\"".into(),
                "workload.kind=\"host\"".into(),
            ],
            ..Default::default()
        })
        .unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("host.strategy"), "{e}");
        let e = Config::load(&crate::ConfigSource {
            sets: vec!["host.buffer_frame=3".into()],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("buffer_frame"), "{e}");
    }
}
