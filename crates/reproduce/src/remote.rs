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
//! What a task runs is named by a `PointTask`: `Run` is `run_all`'s run (`RunMetrics`);
//! the other tasks are the papers' own functions (Flag Commit, In-Place Appends and
//! PCMLogging run the host engine on devices they prepare themselves, through
//! `runner::run_each` and `run_each_shared`), each with its own result type, serialized
//! with `HostMetrics`' histogram (`host::metrics::with_histogram`). A paper's call goes
//! through `each`, which answers from the results on this engine and runs its closure on
//! the local one; a result is keyed by its task and configuration (one configuration may
//! run under two tasks, e.g. Flag Commit's ablation of the preparation). A call of
//! `run_each` that does not go through `each` has no task, and a round that meets one
//! refuses the paper (`unsupported`) before anything runs.

use crate::runner::{Job, PointTiming, Progress};
use crate::{Output, Scale};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use world::{Config, RunMetrics, RunOptions};

/// The function a task runs on a point's configuration (module docs), and so the type of
/// its result.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PointTask {
    /// `runner::run_all`'s run of a job that builds its own device, recovery measured as
    /// `runner::measured` measures it: `world::RunMetrics`.
    #[default]
    Run,
    /// Flag Commit: the host engine on the device the point's own preparation gives
    /// (`flagcommit::prep_of`, `aged`, `run_aged`): `flagcommit::Res`.
    FlagCommit,
    /// Flag Commit: the host engine on a device prepared as `prep` says
    /// (`flagcommit::prepared_point`): `flagcommit::Res`.
    FlagCommitPrepared { prep: crate::flagcommit::Prep },
    /// In-Place Appends: the host engine on the aged device, the window after the first
    /// `window` transactions when the point runs more (`ipa::window_point`): `ipa::Res`.
    Ipa { window: u64 },
    /// PCMLogging: the host engine with a warm-up of `warmup` transactions
    /// (`pcmlogging::host_point`): `pcmlogging::Res`.
    PcmLogging { warmup: u64 },
}

/// A result as JSON, checked to read back into exactly the same text.
fn exact_json<T: Serialize + DeserializeOwned>(v: &T) -> Result<String, String> {
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    read_back::<T>(&text)?;
    Ok(text)
}

/// `text` read as a `T` that serializes to exactly `text` (every float included), or the
/// claims could differ from the local engine's.
fn read_back<T: Serialize + DeserializeOwned>(text: &str) -> Result<T, String> {
    let v: T =
        serde_json::from_str(text).map_err(|e| format!("a point's result does not parse: {e}"))?;
    if serde_json::to_string(&v).map_err(|e| e.to_string())? != text {
        return Err("a point's result does not read back exactly".into());
    }
    Ok(v)
}

impl PointTask {
    /// Runs the task on `cfg` in this process: its result as JSON.
    fn run(self, cfg: &Config) -> Result<String, String> {
        match self {
            PointTask::Run => exact_json(
                &crate::runner::measured(cfg, |c| world::run(c, &RunOptions::default()))
                    .map_err(|e| e.to_string())?,
            ),
            PointTask::FlagCommit => exact_json(&crate::flagcommit::run_aged(
                cfg,
                crate::flagcommit::aged(cfg)?,
            )?),
            PointTask::FlagCommitPrepared { prep } => {
                exact_json(&crate::flagcommit::prepared_point(cfg, prep)?)
            }
            PointTask::Ipa { window } => exact_json(&crate::ipa::window_point_alone(cfg, window)?),
            PointTask::PcmLogging { warmup } => {
                exact_json(&crate::pcmlogging::host_point(cfg, warmup)?)
            }
        }
    }

    /// Checks that `text` is this task's result and reads back exactly.
    fn check(self, text: &str) -> Result<(), String> {
        match self {
            PointTask::Run => read_back::<RunMetrics>(text).map(drop),
            PointTask::FlagCommit | PointTask::FlagCommitPrepared { .. } => {
                read_back::<crate::flagcommit::Res>(text).map(drop)
            }
            PointTask::Ipa { .. } => read_back::<crate::ipa::Res>(text).map(drop),
            PointTask::PcmLogging { .. } => read_back::<crate::pcmlogging::Res>(text).map(drop),
        }
    }
}

/// A point the engine must run: its label (for progress), its configuration as JSON and its
/// task (together the key of its result), and what the admission rule charges it
/// (`runner::job_bytes`), which the engine declares as the task's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemotePoint {
    pub label: String,
    pub config: String,
    #[serde(default)]
    pub task: PointTask,
    pub memory_bytes: u64,
    /// `runner::cost_estimate`: the engine may start the costliest points first.
    pub cost_estimate: u64,
}

/// What a task sends back: the configuration and task it ran, the result as JSON (the
/// task's type: `PointTask`), and what the point cost where it ran (for timings.csv).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointResult {
    pub config: String,
    #[serde(default)]
    pub task: PointTask,
    pub metrics: String,
    pub cpu_s: f64,
    pub wall_s: f64,
    pub peak_rss_bytes: u64,
}

/// A result held by the driver (its JSON, checked when added).
struct Done {
    metrics: String,
    cpu_s: f64,
    wall_s: f64,
    peak_rss_bytes: u64,
}

/// The driver's side: the results gathered so far and what the last round found missing.
#[derive(Default)]
pub struct Remote {
    results: Mutex<BTreeMap<(PointTask, String), Done>>,
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

/// Runs one point from its task and configuration (a task's whole work): for `Run`, the run
/// `run_all` makes of a job that builds its own device, with recovery measured on its
/// image when the configuration asks; for a paper's task, the paper's function
/// (`PointTask`). The configuration must round-trip through JSON exactly, so the point
/// that runs is the point that was planned.
pub fn run_point(task: PointTask, config: &str) -> Result<PointResult, String> {
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
    let metrics = task.run(&cfg)?;
    Ok(PointResult {
        config: config.to_string(),
        task,
        metrics,
        cpu_s: world::bench::cpu_time_ns().saturating_sub(cpu) as f64 / 1e9,
        wall_s: wall.elapsed().as_secs_f64(),
        peak_rss_bytes: world::bench::peak_rss_bytes(),
    })
}

/// A paper's own points (`runner::run_each`, `run_each_shared`, called by `local` on the
/// local engine) under the engine `progress` runs on: on a remote one, each job's result is
/// its task's (`task`) from the results gathered, or pending (`Remote::serve`).
pub(crate) fn each<T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static>(
    jobs: Vec<Job>,
    progress: &Progress,
    task: impl Fn(&Config) -> PointTask,
    local: impl FnOnce(Vec<Job>) -> Vec<Result<T, String>>,
) -> Vec<Result<T, String>> {
    match progress.remote_engine() {
        Some(remote) => {
            progress.record_configs(&jobs);
            remote.serve(&jobs, progress, task)
        }
        // Identical points run once (`crate::memo`).
        None => crate::memo::answer(jobs, progress, task, local),
    }
}

impl Remote {
    pub fn new() -> Remote {
        Remote::default()
    }

    /// Adds a task's result. It must read back as its task's type into exactly the JSON
    /// that was sent (every float included), or the claims could differ from the local
    /// engine's.
    pub fn add(&self, r: PointResult) -> Result<(), String> {
        r.task.check(&r.metrics)?;
        lock(&self.results).insert(
            (r.task, r.config),
            Done {
                metrics: r.metrics,
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

    /// `run_all` (task `Run`) or a paper's own function (`each`) under a remote progress:
    /// each job's result from those gathered, or an error that stops the paper for this
    /// round while the job is recorded as pending.
    pub(crate) fn serve<T: Serialize + DeserializeOwned>(
        &self,
        jobs: &[Job],
        progress: &Progress,
        task: impl Fn(&Config) -> PointTask,
    ) -> Vec<Result<T, String>> {
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
                let t = task(&j.cfg);
                match results.get(&(t, key)) {
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
                        // Checked by `add`; read again as the caller's type.
                        read_back(&d.metrics).map_err(|e| format!("{}: {e}", j.label))
                    }
                    None => {
                        let key = config_json(&j.cfg).map_err(|e| format!("{}: {e}", j.label))?;
                        if !pending.iter().any(|p| p.config == key && p.task == t) {
                            pending.push(RemotePoint {
                                label: j.label.clone(),
                                config: key,
                                task: t,
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

    /// `run_each` outside `each` under a remote progress: its points have no task, so
    /// they cannot travel (module docs).
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
                "{p}: {} of its points have no task another engine can run (first: {first}); use the local engine for {p}",
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

/// The remote engine in this process, for the papers' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use serde::de::DeserializeOwned;
    use std::fmt::Debug;

    /// Runs `paper` (its `run_plan` on a plan) with every point on a remote engine made of
    /// this process: round after round, each pending point run by `run_point` and its
    /// result carried as JSON text, as a Ray task's is, until none is pending. Returns the
    /// output and the number of rounds.
    pub(crate) fn drive(paper: impl Fn(&Progress) -> Result<Output, String>) -> (Output, usize) {
        let remote = Remote::new();
        let say = |_: &str| {};
        for rounds in 1..50 {
            let mut p = Progress::new(1, &say);
            p.set_remote(&remote);
            let r = paper(&p);
            assert!(
                lock(&remote.unsupported).is_empty(),
                "points without a task: {:?}",
                lock(&remote.unsupported)
            );
            let pending = remote.take_pending();
            if pending.is_empty() {
                let mut o = r.expect("no point pending, yet the paper failed");
                o.configs = p.take_configs();
                return (o, rounds);
            }
            let done: Vec<PointResult> = pending
                .iter()
                .map(|q| run_point(q.task, &q.config).unwrap())
                .collect();
            results_from_json(&remote, &serde_json::to_string(&done).unwrap()).unwrap();
        }
        panic!("the rounds do not end");
    }

    /// A value read back from JSON equals the value in every field: `Debug` prints every
    /// float in its shortest exact form and the histogram bucket by bucket, and, unlike the
    /// JSON, leaves out no field.
    pub(crate) fn assert_round_trip<T: Serialize + DeserializeOwned + Debug>(v: &T) {
        let text = serde_json::to_string(v).unwrap();
        let back: T = serde_json::from_str(&text).unwrap();
        assert_eq!(format!("{back:?}"), format!("{v:?}"));
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    /// The parts of two outputs that a reproduction writes (timings aside).
    pub(crate) fn assert_same_output(remote: &Output, local: &Output) {
        let claims = |o: &Output| serde_json::to_string(&o.claims).unwrap();
        assert_eq!(claims(remote), claims(local));
        assert_eq!(remote.csvs, local.csvs);
        assert_eq!(remote.svgs, local.svgs);
        assert_eq!(remote.notes, local.notes);
        assert_eq!(
            format!("{:?}", remote.explanations),
            format!("{:?}", local.explanations)
        );
    }
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
        let r = run_point(PointTask::Run, &config_json(&jobs[0].cfg).unwrap()).unwrap();
        // Every field of the metrics reads back, floats bit for bit.
        testing::assert_round_trip(local[0].as_ref().unwrap());
        // Through JSON text, as a task's result travels.
        let text = serde_json::to_string(&vec![r]).unwrap();
        results_from_json(&remote, &text).unwrap();
        let mut p = Progress::new(1, &say);
        p.set_remote(&remote);
        let got: Vec<Result<RunMetrics, String>> = remote.serve(&jobs, &p, |_| PointTask::Run);
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
        let r = run_point(PointTask::Run, &config_json(&small("tc", 0.0)).unwrap()).unwrap();
        // Another task's type does not read it.
        let mut other = r.clone();
        other.task = PointTask::PcmLogging { warmup: 0 };
        assert!(Remote::new().add(other).is_err());
        let mut bad = r.clone();
        bad.metrics = bad.metrics.replacen("\"seed\":1", "\"seed\":01", 1);
        assert!(Remote::new().add(bad).is_err());
        let mut spaced = r;
        spaced.metrics = spaced.metrics.replacen(',', ", ", 1);
        assert!(Remote::new().add(spaced).is_err());
    }
}
