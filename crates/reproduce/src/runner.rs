//! Runs many configurations on all cores, returning results in input order (each run is
//! deterministic on its own, so the order of execution does not matter).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use world::{Config, RunMetrics, RunOptions};

/// One run to make: a label for progress and errors, and its configuration.
pub struct Job {
    pub label: String,
    pub cfg: Config,
}

thread_local! {
    /// Configurations of the jobs `run_all` was given on this thread while
    /// `collecting_configs` runs (for REPORT.html); None when not collecting.
    static CONFIGS: std::cell::RefCell<Option<Vec<(String, String)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f`, returning what it returns and every distinct configuration `run_all` was given
/// meanwhile on this thread, as (labels of the runs that used it, TOML), in first-use order.
pub fn collecting_configs<T>(f: impl FnOnce() -> T) -> (T, Vec<(String, String)>) {
    CONFIGS.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let r = f();
    let seen = CONFIGS.with(|c| c.borrow_mut().take()).unwrap_or_default();
    let mut grouped: Vec<(Vec<String>, String)> = Vec::new();
    for (label, toml) in seen {
        match grouped.iter_mut().find(|(_, t)| *t == toml) {
            Some((labels, _)) => labels.push(label),
            None => grouped.push((vec![label], toml)),
        }
    }
    let out = grouped
        .into_iter()
        .map(|(labels, toml)| (labels.join(", "), toml))
        .collect();
    (r, out)
}

/// Runs every job; a run that fails yields `Err(message)` in its slot.
pub fn run_all(
    jobs: Vec<Job>,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<Result<RunMetrics, String>> {
    let n = jobs.len();
    CONFIGS.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.extend(jobs.iter().map(|j| (j.label.clone(), j.cfg.to_toml())));
        }
    });
    let threads = std::thread::available_parallelism()
        .map_or(1, |p| p.get())
        .clamp(1, 8);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunMetrics, String>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let job = &jobs[i];
                let r = world::run(&job.cfg, &RunOptions::default())
                    .map(|o| o.metrics)
                    .map_err(|e| format!("{}: {e}", job.label));
                let k = done.fetch_add(1, Ordering::SeqCst) + 1;
                progress(&format!(
                    "[{k}/{n}] {}{}",
                    job.label,
                    if r.is_err() { " (failed)" } else { "" }
                ));
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
