//! Runs many configurations on a pool of worker threads, returning results in input order
//! (each run is deterministic on its own, so the order of execution does not matter and the
//! report is byte-identical whatever `--jobs` is).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use world::{Config, RunMetrics, RunOptions};

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
/// its slot.
pub fn run_all(jobs: Vec<Job>, progress: &Progress) -> Vec<Result<RunMetrics, String>> {
    run_each(jobs, progress, |cfg| {
        world::run(cfg, &RunOptions::default())
            .map(|o| o.metrics)
            .map_err(|e| e.to_string())
    })
}

/// As `run_all`, with `f` making one point of a job's configuration (e.g. a host run on
/// an aged device); results in input order, failures as `Err("label: message")`.
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
}
