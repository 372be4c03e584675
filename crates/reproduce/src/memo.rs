//! One run per distinct point: two points of a reproduction that resolve to the same
//! configuration and measure the same thing get one run, and its result answers both.
//!
//! Why: the papers' figures sweep one parameter from a common base, so a figure's point at
//! the base's value is often another figure's point too (LightTx's Fig. 7 strict point is
//! Fig. 8's 8-channel strict point and Fig. 19's default zone; its open-loop rate's `none`
//! run is Fig. 7's). At full scale each such point costs a 32 GiB device build and a run.
//!
//! The key: a point's task (`remote::PointTask`: what is measured, and how its starting
//! state is prepared, e.g. Flag Commit's preparation or IPA's window) and its whole
//! configuration as JSON (`remote::config_json`: every key, the seed, the workload, the
//! prefill and ageing the starting device gets), the key the remote engine keeps results
//! under. Never the label: two points with one label and different configurations are two
//! runs, two labels of one configuration one run. A point is a pure function of its key
//! (`runner` module docs; `remote` module docs), so handing one run's result to every point
//! of its key changes no result, only the CPU time.
//!
//! Across batches and papers: the memo lives as long as the top progress, and every
//! `Progress::child` shares it. A batch claims the keys no batch has claimed, runs them,
//! publishes their results, and only then waits for the keys another batch claimed first
//! (so two batches never wait on each other). A point answered from another's run is
//! recorded in timings.csv with the task `same` and no CPU time of its own.
//!
//! What it does not do: points under a counting progress or on a remote engine pass
//! through (the remote engine keeps its results by the same key already); a configuration
//! that does not serialize runs on its own.

use crate::remote::{config_json, PointTask};
use crate::runner::{Job, PointTiming, Progress};
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use world::Config;

/// A point's key (module docs).
type Key = (PointTask, String);

/// A key's state in the memo.
enum Entry {
    /// A batch claimed it and runs it.
    Running,
    /// Its run's result (`Result<T, String>` of the claiming batch's type) and the label
    /// its error, if any, names.
    Done {
        label: String,
        result: Arc<dyn Any + Send + Sync>,
    },
    /// The claiming batch ended without a result (its thread panicked).
    Lost,
}

/// The results of every point run so far, by key (module docs).
#[derive(Default)]
pub(crate) struct Memo {
    entries: Mutex<BTreeMap<Key, Entry>>,
    changed: Condvar,
}

/// What a job of a batch gets.
enum Source {
    /// Its own run: its place among the jobs run.
    Run(usize),
    /// The result of an earlier job of the same batch with the same key.
    Same(usize),
    /// A result another batch published or will publish.
    Other(Key),
}

/// Marks the keys a batch claimed as lost if it ends without publishing them.
struct Claims<'a> {
    memo: &'a Memo,
    keys: Vec<Key>,
}

impl Drop for Claims<'_> {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let mut m = self.memo.lock();
        for k in self.keys.drain(..) {
            if matches!(m.get(&k), Some(Entry::Running)) {
                m.insert(k, Entry::Lost);
            }
        }
        drop(m);
        self.memo.changed.notify_all();
    }
}

impl Memo {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `error`, which names the point `from`, as the error of the point `to`.
fn relabel(error: &str, from: &str, to: &str) -> String {
    match error.strip_prefix(from).and_then(|r| r.strip_prefix(": ")) {
        Some(rest) => format!("{to}: {rest}"),
        None => format!("{to}: {error}"),
    }
}

/// Runs the distinct points of `jobs` with `run` (results in the order of the jobs it is
/// given), and answers every job from the run of its key: its own, an earlier job's of
/// this batch, or another batch's (module docs). Results in input order, as `run` gives
/// them.
pub(crate) fn answer<T: Clone + Send + Sync + 'static>(
    jobs: Vec<Job>,
    progress: &Progress,
    task: impl Fn(&Config) -> PointTask,
    run: impl FnOnce(Vec<Job>) -> Vec<Result<T, String>>,
) -> Vec<Result<T, String>> {
    let Some(memo) = progress.memo() else {
        return run(jobs);
    };
    let labels: Vec<String> = jobs.iter().map(|j| j.label.clone()).collect();
    let tomls: Vec<(String, String)> = jobs
        .iter()
        .map(|j| (j.label.clone(), j.cfg.to_toml()))
        .collect();
    let keys: Vec<Option<Key>> = jobs
        .iter()
        .map(|j| config_json(&j.cfg).ok().map(|c| (task(&j.cfg), c)))
        .collect();
    let mut sources = Vec::with_capacity(jobs.len());
    let mut claims = Claims {
        memo,
        keys: Vec::new(),
    };
    let mut to_run = Vec::new();
    {
        let mut m = memo.lock();
        for (i, job) in jobs.into_iter().enumerate() {
            let Some(k) = &keys[i] else {
                sources.push(Source::Run(to_run.len()));
                to_run.push(job);
                continue;
            };
            if let Some(first) = keys[..i].iter().position(|x| x.as_ref() == Some(k)) {
                sources.push(Source::Same(first));
            } else if m.contains_key(k) {
                sources.push(Source::Other(k.clone()));
            } else {
                m.insert(k.clone(), Entry::Running);
                claims.keys.push(k.clone());
                sources.push(Source::Run(to_run.len()));
                to_run.push(job);
            }
        }
    }
    // The configurations for REPORT.html: every job of the batch, in its order, as when each
    // point ran (the runner records only the jobs it was given).
    let before = progress.configs_len();
    let ran = if to_run.is_empty() {
        Vec::new()
    } else {
        run(to_run)
    };
    progress.set_configs_from(before, tomls);
    // Publish this batch's results before waiting on any other batch's.
    {
        let mut m = memo.lock();
        for (i, s) in sources.iter().enumerate() {
            if let (Source::Run(r), Some(k)) = (s, &keys[i]) {
                if let Some(res) = ran.get(*r) {
                    m.insert(
                        k.clone(),
                        Entry::Done {
                            label: labels[i].clone(),
                            result: Arc::new(res.clone()),
                        },
                    );
                }
            }
        }
        claims.keys.clear();
    }
    memo.changed.notify_all();
    let mut out: Vec<Result<T, String>> = Vec::with_capacity(sources.len());
    for (i, s) in sources.iter().enumerate() {
        let r = match s {
            Source::Run(r) => ran
                .get(*r)
                .cloned()
                .unwrap_or_else(|| Err(format!("{}: run did not complete", labels[i]))),
            Source::Same(first) => {
                let r = match &out[*first] {
                    Ok(v) => Ok(v.clone()),
                    Err(e) => Err(relabel(e, &labels[*first], &labels[i])),
                };
                progress.answered(same_timing(&labels[i]), r.is_err());
                r
            }
            Source::Other(k) => {
                let r = wait_for::<T>(memo, k, &labels[i]);
                progress.answered(same_timing(&labels[i]), r.is_err());
                r
            }
        };
        out.push(r);
    }
    out
}

/// The timing of a point answered from another point's run.
fn same_timing(label: &str) -> PointTiming {
    PointTiming {
        label: label.to_string(),
        task: "same",
        cpu_s: 0.0,
        setup_cpu_s: None,
        wall_s: 0.0,
        cost_estimate: 0,
        rss_end_bytes: 0,
        peak_rss_bytes: world::bench::peak_rss_bytes(),
    }
}

/// Waits until the batch that claimed `key` published its result, and returns it as the
/// result of the point `label`.
fn wait_for<T: Clone + 'static>(memo: &Memo, key: &Key, label: &str) -> Result<T, String> {
    let mut m = memo.lock();
    loop {
        match m.get(key) {
            Some(Entry::Done {
                label: from,
                result,
            }) => {
                return match result.downcast_ref::<Result<T, String>>() {
                    Some(Ok(v)) => Ok(v.clone()),
                    Some(Err(e)) => Err(relabel(e, from, label)),
                    None => Err(format!(
                        "{label}: internal: an identical point's result is of another type"
                    )),
                };
            }
            Some(Entry::Lost) | None => {
                return Err(format!(
                    "{label}: the identical point that ran for it did not complete"
                ))
            }
            Some(Entry::Running) => {
                m = memo.changed.wait(m).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A cheap synthetic point: 200 requests on the default device.
    fn point(label: &str) -> Job {
        let mut cfg = Config {
            seed: 1,
            ..Config::default()
        };
        cfg.workload.synthetic.requests = 200;
        cfg.run.measure_recovery = false;
        Job {
            label: label.into(),
            cfg,
        }
    }

    /// Answers a batch through the memo with a `run` that records the labels it was given
    /// and answers each job with its label.
    fn batch(
        progress: &Progress,
        jobs: Vec<Job>,
        task: PointTask,
        ran: &Mutex<Vec<String>>,
    ) -> Vec<Result<String, String>> {
        answer(
            jobs,
            progress,
            |_| task,
            |js| {
                let v: Vec<String> = js.iter().map(|j| j.label.clone()).collect();
                ran.lock().unwrap().extend(v.iter().cloned());
                v.into_iter().map(Ok).collect()
            },
        )
    }

    /// Two points with the same resolved configuration and task run once and both get its
    /// result, in one batch and across batches; points that differ in any one key (the seed,
    /// the workload's length, the device's size, the protocol, the prefill, the ageing,
    /// recovery measured or not, the host's transactions) or in the task each run.
    #[test]
    fn identical_points_run_once_and_different_ones_do_not_share() {
        let say = |_: &str| {};
        let p = Progress::new(1, &say);
        let ran = Mutex::new(Vec::new());
        let variants: Vec<(&str, fn(&mut Config))> = vec![
            ("seed", |c: &mut Config| c.seed = 2),
            ("requests", |c: &mut Config| {
                c.workload.synthetic.requests = 201
            }),
            ("blocks", |c: &mut Config| c.nand.blocks_per_plane += 1),
            ("protocol", |c: &mut Config| c.protocol.name = "bpcc".into()),
            ("prefill", |c: &mut Config| c.workload.prefill = 0.7),
            ("age", |c: &mut Config| c.workload.age = 0.5),
            ("recovery", |c: &mut Config| c.run.measure_recovery = true),
            ("host transactions", |c: &mut Config| {
                c.host.transactions += 1
            }),
        ];
        let mut jobs = vec![point("a"), point("b")];
        for (name, change) in &variants {
            let mut j = point(name);
            change(&mut j.cfg);
            jobs.push(j);
        }
        let r = batch(&p, jobs, PointTask::Run, &ran);
        // "b" is "a": answered by a's run, under its own place.
        assert_eq!(r[0], Ok("a".to_string()));
        assert_eq!(r[1], Ok("a".to_string()));
        let mut expect = vec!["a".to_string()];
        expect.extend(variants.iter().map(|(n, _)| n.to_string()));
        assert_eq!(*ran.lock().unwrap(), expect);
        for (k, (n, _)) in variants.iter().enumerate() {
            assert_eq!(r[2 + k], Ok(n.to_string()));
        }
        let t = p.take_timings();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].label.as_str(), t[0].task), ("b", "same"));

        // A later batch (another figure, another paper's child): "a"'s configuration is
        // answered by the first run; the same configuration under another task runs.
        ran.lock().unwrap().clear();
        let c = p.child();
        let r = batch(&c, vec![point("c")], PointTask::Run, &ran);
        assert_eq!(r, vec![Ok("a".to_string())]);
        assert!(ran.lock().unwrap().is_empty());
        let r = batch(&c, vec![point("d")], PointTask::Ipa { window: 5 }, &ran);
        assert_eq!(r, vec![Ok("d".to_string())]);
        assert_eq!(*ran.lock().unwrap(), ["d"]);
        let r = batch(&c, vec![point("e")], PointTask::Ipa { window: 6 }, &ran);
        assert_eq!(r, vec![Ok("e".to_string())]);

        // Without the memo every point runs.
        let mut off = Progress::new(1, &say);
        off.set_memo(false);
        ran.lock().unwrap().clear();
        batch(&off, vec![point("a"), point("b")], PointTask::Run, &ran);
        assert_eq!(*ran.lock().unwrap(), ["a", "b"]);
    }

    /// An error is its point's own: the twin's error names the twin.
    #[test]
    fn an_answered_error_names_its_own_point() {
        let say = |_: &str| {};
        let p = Progress::new(1, &say);
        let r: Vec<Result<u8, String>> = answer(
            vec![point("a"), point("b")],
            &p,
            |_| PointTask::Run,
            |js| {
                js.iter()
                    .map(|j| Err(format!("{}: it failed", j.label)))
                    .collect()
            },
        );
        assert_eq!(
            r,
            vec![Err("a: it failed".into()), Err("b: it failed".into())]
        );
    }

    /// Through `run_all`: two batches with one point in common, the common point run once,
    /// and every result byte for byte what running each point on its own gives; the
    /// configurations recorded for REPORT.html are every point's, as without the memo.
    #[test]
    fn run_all_runs_a_repeated_point_once_with_the_same_results() {
        let say = |_: &str| {};
        let mk = |label: &str, seed: u64| {
            let mut j = point(label);
            j.cfg.seed = seed;
            j
        };
        let json = |r: Vec<Result<world::RunMetrics, String>>| -> Vec<String> {
            r.into_iter()
                .map(|r| world::deterministic_json(&r.unwrap()))
                .collect()
        };
        let p = Progress::new(2, &say);
        let first = json(crate::runner::run_all(
            vec![mk("x", 1), mk("y", 2), mk("x again", 1)],
            &p,
        ));
        let second = json(crate::runner::run_all(vec![mk("z", 2), mk("w", 3)], &p));
        let tasks: Vec<(String, &str)> = p
            .take_timings()
            .into_iter()
            .map(|t| (t.label, t.task))
            .filter(|(_, t)| *t == "same")
            .collect();
        let mut tasks = tasks;
        tasks.sort();
        assert_eq!(
            tasks,
            vec![("x again".to_string(), "same"), ("z".to_string(), "same")]
        );
        let configs: Vec<String> = p.take_configs().into_iter().map(|(l, _)| l).collect();
        assert_eq!(configs, ["x, x again", "y, z", "w"]);
        let mut off = Progress::new(1, &say);
        off.set_memo(false);
        let alone = json(crate::runner::run_all(
            vec![mk("x", 1), mk("y", 2), mk("x", 1), mk("z", 2), mk("w", 3)],
            &off,
        ));
        assert_eq!([first, second].concat(), alone);
        assert!(off.take_timings().iter().all(|t| t.task != "same"));
    }
}
