//! Reproduction on another engine (Ray): every point of a paper runs as its own task in
//! another process, possibly on another machine, and the paper's claims are computed here
//! from the results, byte for byte as the local engine computes them.
//!
//! A point is a pure function of its configuration (`runner::run_all`'s module docs: each
//! run is deterministic on its own, and a point that shares a prefilled device gives the
//! result of one that builds its own). So a point travels as its configuration (JSON) and
//! comes back as its metrics (JSON, checked to round-trip exactly), and the results are
//! keyed by the configuration, not by where or when they ran.
//!
//! The papers compute their plan as they go: a later figure's points are built after an
//! earlier figure's results are read, and a paper stops at the first point that failed. The
//! driver therefore works in rounds (`round`): it runs the papers with a `Remote` attached
//! to the progress, so every `run_all` answers from the results gathered so far and
//! records each point it has no result for (`pending`); those points run on the engine
//! (`run_point`, one task each), their results are added (`Remote::add`), and the next round
//! replays further. A round without a pending point is the reproduction's output. TxFlash
//! takes three rounds (Fig. 6, Fig. 8, Figs. 7 and 9), each one batch of parallel tasks.
//!
//! Shared state: a task builds its own device (prefill, ageing) in its own process; points
//! are never grouped across processes. The cost is that each point of a group ages its own
//! device, as when sharing is off (`run_all_sharing(.., false)`), measured in
//! docs/TOOL.md ("Reproduction on Ray").
//!
//! Points run by a paper's own function (`runner::run_each`, `run_each_shared`: Flag
//! Commit, In-Place Appends and PCMLogging run the host engine on devices they age
//! themselves) return paper-specific results with no serialized form; a round that meets
//! one refuses the paper (`unsupported`) before anything runs.

use crate::runner::{Job, PointTiming, Progress};
use crate::{Output, Scale};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use world::{Config, RunMetrics, RunOptions};

/// A point the engine must run: its label (for progress), its configuration as JSON (the
/// key of its result), and what the admission rule charges it (`runner::job_bytes`), which
/// the engine declares as the task's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemotePoint {
    pub label: String,
    pub config: String,
    pub memory_bytes: u64,
    /// `runner::cost_estimate`: the engine may start the costliest points first.
    pub cost_estimate: u64,
}

/// What a task sends back: the configuration it ran, the metrics as JSON, and what the
/// point cost where it ran (for timings.csv).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointResult {
    pub config: String,
    pub metrics: String,
    pub cpu_s: f64,
    pub wall_s: f64,
    pub peak_rss_bytes: u64,
}

/// A result held by the driver.
struct Done {
    metrics: RunMetrics,
    cpu_s: f64,
    wall_s: f64,
    peak_rss_bytes: u64,
}

/// The driver's side: the results gathered so far and what the last round found missing.
#[derive(Default)]
pub struct Remote {
    results: Mutex<BTreeMap<String, Done>>,
    pending: Mutex<Vec<RemotePoint>>,
    unsupported: Mutex<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A configuration as the key and the message of a point.
pub fn config_json(cfg: &Config) -> Result<String, String> {
    serde_json::to_string(cfg).map_err(|e| format!("a configuration as JSON: {e}"))
}

/// Runs one point from its configuration (a task's whole work): the run `run_all` makes of
/// a job that builds its own device, with recovery measured on its image when the
/// configuration asks. The configuration must round-trip through JSON exactly, so the
/// point that runs is the point that was planned.
pub fn run_point(config: &str) -> Result<PointResult, String> {
    let cfg: Config =
        serde_json::from_str(config).map_err(|e| format!("a point's configuration: {e}"))?;
    if config_json(&cfg)? != config {
        return Err(
            "a point's configuration does not read back as sent (the engine's commitlab differs from the driver's?)"
                .into(),
        );
    }
    let cpu = world::bench::cpu_time_ns();
    let wall = std::time::Instant::now();
    let m = crate::runner::measured(&cfg, |c| world::run(c, &RunOptions::default()))
        .map_err(|e| e.to_string())?;
    let metrics = serde_json::to_string(&m).map_err(|e| e.to_string())?;
    Ok(PointResult {
        config: config.to_string(),
        metrics,
        cpu_s: world::bench::cpu_time_ns().saturating_sub(cpu) as f64 / 1e9,
        wall_s: wall.elapsed().as_secs_f64(),
        peak_rss_bytes: world::bench::peak_rss_bytes(),
    })
}

impl Remote {
    pub fn new() -> Remote {
        Remote::default()
    }

    /// Adds a task's result. Its metrics must read back into exactly the JSON that was
    /// sent (every float included), or the claims could differ from the local engine's.
    pub fn add(&self, r: PointResult) -> Result<(), String> {
        let metrics: RunMetrics = serde_json::from_str(&r.metrics)
            .map_err(|e| format!("a point's result does not parse: {e}"))?;
        if serde_json::to_string(&metrics).map_err(|e| e.to_string())? != r.metrics {
            return Err("a point's result does not read back exactly".into());
        }
        lock(&self.results).insert(
            r.config,
            Done {
                metrics,
                cpu_s: r.cpu_s,
                wall_s: r.wall_s,
                peak_rss_bytes: r.peak_rss_bytes,
            },
        );
        Ok(())
    }

    /// The results gathered so far.
    pub fn len(&self) -> usize {
        lock(&self.results).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The points the last round met without a result, each once, in the order met.
    pub fn take_pending(&self) -> Vec<RemotePoint> {
        std::mem::take(&mut *lock(&self.pending))
    }

    /// `run_all` under a remote progress: each job's result from those gathered, or an
    /// error that stops the paper for this round while the job is recorded as pending.
    pub(crate) fn serve(
        &self,
        jobs: &[Job],
        progress: &Progress,
    ) -> Vec<Result<RunMetrics, String>> {
        let results = lock(&self.results);
        let mut pending = lock(&self.pending);
        jobs.iter()
            .map(|j| {
                let key = config_json(&j.cfg).map_err(|e| format!("{}: {e}", j.label))?;
                // A configuration with a part that JSON does not carry cannot travel.
                if serde_json::from_str::<Config>(&key).ok().as_ref() != Some(&j.cfg) {
                    lock(&self.unsupported).push(j.label.clone());
                    return Err(format!("{}: {PENDING}", j.label));
                }
                match results.get(&key) {
                    Some(d) => {
                        progress.record_timing(PointTiming {
                            label: j.label.clone(),
                            task: "remote",
                            cpu_s: d.cpu_s,
                            setup_cpu_s: None,
                            wall_s: d.wall_s,
                            cost_estimate: crate::runner::cost_estimate(&j.cfg),
                            rss_end_bytes: 0,
                            peak_rss_bytes: d.peak_rss_bytes,
                        });
                        Ok(d.metrics.clone())
                    }
                    None => {
                        if !pending.iter().any(|p| p.config == key) {
                            pending.push(RemotePoint {
                                label: j.label.clone(),
                                config: key,
                                memory_bytes: crate::runner::job_bytes(&j.cfg),
                                cost_estimate: crate::runner::cost_estimate(&j.cfg),
                            });
                        }
                        Err(format!("{}: {PENDING}", j.label))
                    }
                }
            })
            .collect()
    }

    /// `run_each` under a remote progress: its points cannot travel (module docs).
    pub(crate) fn refuse(&self, jobs: &[Job]) -> Vec<String> {
        let mut u = lock(&self.unsupported);
        jobs.iter()
            .map(|j| {
                u.push(j.label.clone());
                format!("{}: {PENDING}", j.label)
            })
            .collect()
    }
}

/// The error a point without a result yields in a round.
const PENDING: &str = "not run yet (pending on the remote engine)";

/// One round (module docs): runs `papers` at `scale` against the results `remote` holds.
/// `Ok(Some(outputs))` when every point had its result (the reproduction's output, as
/// `run_paper` gives it locally); `Ok(None)` when points are pending (`take_pending`);
/// `Err` for a paper whose points cannot run on the engine, or a paper that failed with
/// nothing pending (its own error).
pub fn round(
    papers: &[String],
    scale: Scale,
    remote: &Remote,
) -> Result<Option<Vec<(String, Output)>>, String> {
    let quiet = |_: &str| {};
    let mut progress = Progress::new(1, &quiet);
    progress.set_remote(remote);
    let mut outputs = Vec::new();
    let mut failed = None;
    for p in papers {
        let before = lock(&remote.pending).len();
        let r = crate::run_paper(p, scale, &progress);
        let unsupported = std::mem::take(&mut *lock(&remote.unsupported));
        if let Some(first) = unsupported.first() {
            return Err(format!(
                "{p}: {} of its points run the host engine through the paper's own function (first: {first}), whose results only the local engine can use; use the local engine for {p}",
                unsupported.len()
            ));
        }
        match r {
            Ok(o) => outputs.push((p.clone(), o)),
            Err(e) if lock(&remote.pending).len() == before => {
                failed.get_or_insert(format!("{p}: {e}"));
            }
            Err(_) => {}
        }
    }
    if !lock(&remote.pending).is_empty() {
        return Ok(None);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(Some(outputs)),
    }
}

/// Every point's result by configuration, for a driver that keeps them between rounds.
pub fn results_from_json(remote: &Remote, json: &str) -> Result<(), String> {
    let rs: Vec<PointResult> =
        serde_json::from_str(json).map_err(|e| format!("point results: {e}"))?;
    for r in rs {
        remote.add(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small TxFlash-shaped point (as `runner`'s tests build them).
    fn small(protocol: &str, aborts: f64) -> Config {
        let mut c = Config::default();
        c.nand.blocks_per_plane = 16;
        c.protocol.name = protocol.into();
        c.workload.kind = world::WorkloadKind::Txn;
        c.workload.txn.transactions = 200;
        c.workload.txn.abort_ratio = aborts;
        c.workload.prefill = 0.5;
        c
    }

    /// A point run as a task, its result added to the driver, gives `run_all` the metrics
    /// the local engine gives, byte for byte (wall-clock fields aside), and a configuration
    /// not run yet is pending with the admission rule's charge.
    #[test]
    fn a_remote_point_gives_the_local_result() {
        let jobs = vec![
            Job {
                label: "bpcc 10%".into(),
                cfg: small("bpcc", 0.1),
            },
            Job {
                label: "tc 0%".into(),
                cfg: small("tc", 0.0),
            },
        ];
        let say = |_: &str| {};
        let local = crate::runner::run_all(
            jobs.iter()
                .map(|j| Job {
                    label: j.label.clone(),
                    cfg: j.cfg.clone(),
                })
                .collect(),
            &Progress::new(1, &say),
        );
        let remote = Remote::new();
        let r = run_point(&config_json(&jobs[0].cfg).unwrap()).unwrap();
        // Through JSON text, as a task's result travels.
        let text = serde_json::to_string(&vec![r]).unwrap();
        results_from_json(&remote, &text).unwrap();
        let mut p = Progress::new(1, &say);
        p.set_remote(&remote);
        let got = remote.serve(&jobs, &p);
        assert_eq!(
            world::deterministic_json(got[0].as_ref().unwrap()),
            world::deterministic_json(local[0].as_ref().unwrap())
        );
        assert!(got[1].as_ref().unwrap_err().contains("pending"));
        let pending = remote.take_pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].label, "tc 0%");
        assert_eq!(
            pending[0].memory_bytes,
            crate::runner::job_bytes(&jobs[1].cfg)
        );
    }

    /// A result that does not read back exactly is refused, not used.
    #[test]
    fn a_result_that_does_not_round_trip_is_refused() {
        let r = run_point(&config_json(&small("tc", 0.0)).unwrap()).unwrap();
        let mut bad = r.clone();
        bad.metrics = bad.metrics.replacen("\"seed\":1", "\"seed\":01", 1);
        assert!(Remote::new().add(bad).is_err());
        let mut spaced = r;
        spaced.metrics = spaced.metrics.replacen(',', ", ", 1);
        assert!(Remote::new().add(spaced).is_err());
    }
}
