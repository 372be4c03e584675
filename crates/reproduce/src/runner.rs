//! Runs many configurations on a pool of worker threads, returning results in input order
//! (each run is deterministic on its own, so the order of execution does not matter and the
//! report is byte-identical whatever `--jobs` is).
//!
//! Shared prefills: at 32 GiB the prefill and ageing are most of a point's cost, and most
//! points of a figure start from the same device (a sweep of abort ratios or isolation
//! levels changes only the workload). Jobs with the same `world::prefill_key` form a group:
//! the first job to start prefills once (`world::prefill`), every job of the group runs
//! from its own copy of that device (`world::run_prefilled`), which gives the same result,
//! byte for byte, as prefilling separately (tests in `world/tests/shared_prefill.rs` and
//! below). Memory: a prefilled device stays alive only while a job of its group has not
//! started, and only `MAX_PREFILLED` of them is alive or being built at once, so peak
//! memory is about `jobs` + 1 devices (a second one would mostly wait for the first group to
//! finish: with two jobs at TxFlash Fig. 8's scale it took peak RSS from about 3.5 to 4.6 GiB).
//! The price is that the first prefill of a figure runs alone. Groups share only within one
//! `run_all` call (one figure): the
//! runner cannot know which later figures will need a device again, and keeping them all
//! would not fit in memory at full scale. If a group's prefill fails, every other job of the
//! group runs on its own, so its error is its own.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
use world::{Config, Prefilled, RunMetrics, RunOptions};

/// One run to make: a label for progress and errors, and its configuration.
pub struct Job {
    pub label: String,
    pub cfg: Config,
}

/// How a reproduction runs its points: how many at once, and where progress goes. Progress
/// lines say how many points are done out of the total planned, and an ETA from the mean
/// wall time per point so far.
pub struct Progress<'a> {
    pub jobs: usize,
    report: &'a (dyn Fn(&str) + Sync),
    start: Instant,
    done: AtomicUsize,
    planned: AtomicUsize,
    /// (label, configuration as TOML) of every job `run_all` was given since the last
    /// `take_configs` (for REPORT.html).
    configs: Mutex<Vec<(String, String)>>,
}

impl<'a> Progress<'a> {
    /// `jobs` = 0 means one per available core.
    pub fn new(jobs: usize, report: &'a (dyn Fn(&str) + Sync)) -> Progress<'a> {
        let jobs = if jobs == 0 {
            std::thread::available_parallelism().map_or(1, |p| p.get())
        } else {
            jobs
        };
        Progress {
            jobs,
            report,
            start: Instant::now(),
            done: AtomicUsize::new(0),
            planned: AtomicUsize::new(0),
            configs: Mutex::new(Vec::new()),
        }
    }

    /// Adds `n` points to the total the ETA counts toward.
    pub fn plan(&self, n: usize) {
        self.planned.fetch_add(n, Ordering::SeqCst);
    }

    /// Every distinct configuration run since the last call, as (labels of the runs that
    /// used it, TOML), in first-use order.
    pub fn take_configs(&self) -> Vec<(String, String)> {
        let seen = std::mem::take(&mut *self.configs.lock().unwrap_or_else(|e| e.into_inner()));
        let mut grouped: Vec<(Vec<String>, String)> = Vec::new();
        for (label, toml) in seen {
            match grouped.iter_mut().find(|(_, t)| *t == toml) {
                Some((labels, _)) => labels.push(label),
                None => grouped.push((vec![label], toml)),
            }
        }
        grouped
            .into_iter()
            .map(|(labels, toml)| (labels.join(", "), toml))
            .collect()
    }

    pub fn say(&self, line: &str) {
        (self.report)(line);
    }

    fn finished(&self, label: &str, failed: bool) {
        let k = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let total = self.planned.load(Ordering::SeqCst).max(k);
        let el = self.start.elapsed().as_secs_f64();
        let eta = el / k as f64 * (total - k) as f64;
        (self.report)(&format!(
            "[{k}/{total}] {label}{} ({el:.0} s elapsed, ETA {eta:.0} s)",
            if failed { " (failed)" } else { "" }
        ));
    }
}

/// Runs every job, `progress.jobs` at a time; a run that fails yields `Err(message)` in
/// its slot. Jobs that start from the same prefilled device share one prefill (module docs).
pub fn run_all(jobs: Vec<Job>, progress: &Progress) -> Vec<Result<RunMetrics, String>> {
    run_all_sharing(jobs, progress, true)
}

/// Prefilled devices alive or being built at once (module docs: memory).
const MAX_PREFILLED: usize = 1;

/// A shared prefill's state.
enum Slot {
    /// A thread is prefilling it.
    Building,
    /// Ready, with the number of the group's jobs that have not yet taken a copy.
    Ready(Arc<Prefilled>, usize),
    /// The prefill failed: the group's remaining jobs run on their own.
    Failed,
}

/// What a worker does with the job it took.
enum Task {
    /// Build and prefill its own device (a job alone in its group, or sharing off).
    Alone,
    /// Prefill the group's device, publish it, then run from a copy.
    Lead,
    /// Run from a copy of the group's device.
    Follow(Arc<Prefilled>),
}

struct Sched {
    /// Jobs not yet taken, in the order they should start (grouped by prefill key).
    pending: Vec<usize>,
    slots: BTreeMap<usize, Slot>,
}

/// `run_all`, with prefill sharing switchable (off: every job prefills its own device; for
/// the test that both give the same results).
pub fn run_all_sharing(
    jobs: Vec<Job>,
    progress: &Progress,
    share: bool,
) -> Vec<Result<RunMetrics, String>> {
    let n = jobs.len();
    progress
        .configs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
    let threads = progress.jobs.clamp(1, n.max(1));
    // Group by prefill key, groups in order of first appearance. A group of one, or a job
    // without a prefill, runs alone.
    let mut keys: Vec<(String, usize)> = Vec::new();
    let group: Vec<usize> = jobs
        .iter()
        .map(|j| {
            let k = world::prefill_key(&j.cfg);
            match keys.iter().position(|(x, _)| *x == k) {
                Some(g) => {
                    keys[g].1 += 1;
                    g
                }
                None => {
                    keys.push((k, 1));
                    keys.len() - 1
                }
            }
        })
        .collect();
    let shared = |i: usize| share && keys[group[i]].1 > 1 && jobs[i].cfg.workload.prefill > 0.0;
    let mut pending: Vec<usize> = (0..n).collect();
    pending.sort_by_key(|&i| group[i]);
    let sched = Mutex::new(Sched {
        pending,
        slots: BTreeMap::new(),
    });
    let changed = Condvar::new();
    let results: Mutex<Vec<Option<Result<RunMetrics, String>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    // Takes the next job: a job whose group's device is ready first (so devices are freed
    // soon), else a job that runs alone or leads a new group while fewer than `threads`
    // devices are alive or being built; else waits for a build to finish.
    let take = || -> Option<(usize, Task)> {
        let mut s = sched.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if s.pending.is_empty() {
                return None;
            }
            let ready = s.pending.iter().position(|&i| {
                shared(i)
                    && matches!(
                        s.slots.get(&group[i]),
                        Some(Slot::Ready(..)) | Some(Slot::Failed)
                    )
            });
            if let Some(p) = ready {
                let i = s.pending.remove(p);
                let g = group[i];
                let task = match s.slots.get_mut(&g) {
                    Some(Slot::Ready(dev, left)) => {
                        let dev = Arc::clone(dev);
                        *left -= 1;
                        if *left == 0 {
                            s.slots.remove(&g);
                            changed.notify_all();
                        }
                        Task::Follow(dev)
                    }
                    _ => Task::Alone,
                };
                return Some((i, task));
            }
            let alive = s
                .slots
                .values()
                .filter(|x| !matches!(x, Slot::Failed))
                .count();
            let startable = s.pending.iter().position(|&i| {
                !shared(i) || (!s.slots.contains_key(&group[i]) && alive < MAX_PREFILLED)
            });
            if let Some(p) = startable {
                let i = s.pending.remove(p);
                if !shared(i) {
                    return Some((i, Task::Alone));
                }
                s.slots.insert(group[i], Slot::Building);
                return Some((i, Task::Lead));
            }
            s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    };
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                while let Some((i, task)) = take() {
                    let job = &jobs[i];
                    let err = |e: world::WorldError| format!("{}: {e}", job.label);
                    let r = match task {
                        Task::Alone => world::run(&job.cfg, &RunOptions::default())
                            .map(|o| o.metrics)
                            .map_err(err),
                        Task::Follow(dev) => run_copy(&job.cfg, dev).map_err(err),
                        Task::Lead => {
                            let built = world::prefill(&job.cfg);
                            let mut s = sched.lock().unwrap_or_else(|e| e.into_inner());
                            let r = match built {
                                Ok(dev) => {
                                    let dev = Arc::new(dev);
                                    // The group's other jobs; this one copies it too.
                                    let others = keys[group[i]].1 - 1;
                                    s.slots
                                        .insert(group[i], Slot::Ready(Arc::clone(&dev), others));
                                    drop(s);
                                    changed.notify_all();
                                    run_copy(&job.cfg, dev).map_err(err)
                                }
                                Err(e) => {
                                    s.slots.insert(group[i], Slot::Failed);
                                    drop(s);
                                    changed.notify_all();
                                    Err(err(e))
                                }
                            };
                            r
                        }
                    };
                    progress.finished(&job.label, r.is_err());
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not complete".into())))
        .collect()
}

/// Runs `cfg` from its own copy of a shared prefilled device; the last holder of the
/// device takes it instead of copying.
fn run_copy(cfg: &Config, dev: Arc<Prefilled>) -> Result<RunMetrics, world::WorldError> {
    let own = match Arc::try_unwrap(dev) {
        Ok(d) => d,
        Err(shared) => shared.try_clone().ok_or_else(|| {
            world::WorldError::Config("a prefilled device could not be copied".into())
        })?,
    };
    world::run_prefilled(cfg, own).map(|o| o.metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number of jobs changes the wall time, never the results or their order.
    #[test]
    fn results_do_not_depend_on_the_number_of_jobs() {
        let jobs = || {
            (0..4)
                .map(|i| {
                    let mut cfg = Config {
                        seed: i + 1,
                        ..Config::default()
                    };
                    cfg.workload.synthetic.requests = 200;
                    cfg.run.measure_recovery = false;
                    Job {
                        label: format!("seed {}", i + 1),
                        cfg,
                    }
                })
                .collect::<Vec<_>>()
        };
        let lines = Mutex::new(Vec::new());
        let say = |l: &str| lines.lock().unwrap().push(l.to_string());
        let json = |jobs_n: usize| {
            let p = Progress::new(jobs_n, &say);
            p.plan(4);
            run_all(jobs(), &p)
                .into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(json(1), json(3));
        let lines = lines.into_inner().unwrap();
        assert!(lines
            .iter()
            .any(|l| l.starts_with("[4/4] ") && l.contains("ETA")));
    }

    /// Points that share a prefilled device (same device, seed and prefill; different
    /// workloads) give the same JSON, byte for byte, as points that prefill their own, and
    /// the groups may interleave on the worker threads in any order.
    #[test]
    fn shared_prefills_give_the_results_of_separate_ones() {
        let mk = |protocol: &str, aborts: f64, seed: u64| {
            let mut cfg = Config {
                seed,
                ..Config::default()
            };
            cfg.protocol.name = protocol.into();
            cfg.nand.blocks_per_plane = 24;
            cfg.workload.prefill = 0.8;
            cfg.workload.age = 0.5;
            cfg.workload.kind = world::WorkloadKind::Txn;
            cfg.workload.txn.transactions = 200;
            cfg.workload.txn.size_max = 12;
            cfg.workload.txn.abort_ratio = aborts;
            cfg.run.measure_recovery = false;
            Job {
                label: format!("{protocol} {aborts} {seed}"),
                cfg,
            }
        };
        let jobs = || {
            vec![
                mk("lighttx", 0.0, 1),
                mk("scc", 0.0, 1),
                mk("lighttx", 0.2, 1),
                mk("none", 0.0, 1),
                mk("scc", 0.3, 1),
                mk("lighttx", 0.4, 1),
                mk("lighttx", 0.4, 2),
                // Differs from the lighttx group only in its ageing: must not share.
                {
                    let mut j = mk("lighttx", 0.2, 1);
                    j.cfg.workload.age = 0.25;
                    j
                },
            ]
        };
        let say = |_: &str| {};
        let json = |jobs_n: usize, share: bool| {
            let p = Progress::new(jobs_n, &say);
            run_all_sharing(jobs(), &p, share)
                .into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect::<Vec<_>>()
        };
        let separate = json(1, false);
        assert_eq!(separate, json(2, true));
        assert_eq!(separate, json(3, true));
        assert_eq!(separate, json(1, true));
    }
}

/// Runs every job with `f` making one point of a job's configuration (e.g. a host run on an
/// aged device), `progress.jobs` at a time, without prefill sharing (the caller owns the
/// device); results in input order, failures as `Err("label: message")`.
pub fn run_each<T: Send>(
    jobs: Vec<Job>,
    progress: &Progress,
    f: impl Fn(&Config) -> Result<T, String> + Sync,
) -> Vec<Result<T, String>> {
    let n = jobs.len();
    progress
        .configs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
    let threads = progress.jobs.clamp(1, n.max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T, String>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let job = &jobs[i];
                let r = f(&job.cfg).map_err(|e| format!("{}: {e}", job.label));
                progress.finished(&job.label, r.is_err());
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not complete".into())))
        .collect()
}
