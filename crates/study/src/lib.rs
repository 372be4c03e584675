//! Experiments over many points: `commitlab compare` (every protocol on one configuration),
//! `commitlab sweep` (a grid of `--set` values × protocols) and the Python bindings' `run`,
//! `compare` and `sweep`.
//!
//! A run of many points is planned, checked and only then run:
//! 1. `plan` resolves every point's configuration (the main job's base, a preset, a file,
//!    `--set`s, the point's swept values and protocol); a key or value that does not parse
//!    is an error before anything runs;
//! 2. `prepare` validates every point; a protocol that cannot run the configuration is
//!    *adapted* (an isolation level it supports, no aborts for a protocol without
//!    atomicity) when adaptation is on, else marked `unsupported`; a point whose
//!    configuration no protocol could run is `Invalid`, which callers treat as bad input;
//! 3. `run_points` runs the remaining points on a rayon pool of `jobs` threads. Results come
//!    back in plan order, so output does not depend on `jobs`; every point's simulation is
//!    single-threaded and deterministic, only `wall_time_s` varies.
//!
//! A point that fails while running becomes a record with `status = unsupported` (the device
//! refused a request the protocol cannot honour) or `error` (anything else); the other
//! points still run and are written.

use report::results::{Record, Status};
use ssd::protocol::ProtocolInfo;
use world::{Config, ConfigSource, RunOptions, WorkloadKind};

/// One point of a plan: the swept values it has and its full configuration.
#[derive(Clone, Debug)]
pub struct Point {
    pub swept: Vec<(String, toml::Value)>,
    pub config: Config,
}

/// A point after checking: ready to run (possibly adapted), or already decided.
#[derive(Clone, Debug)]
pub enum Prepared {
    Run {
        point: Point,
        status: Status,
        reason: String,
    },
    Done(Box<Record>),
    /// No protocol could run this configuration: the input's fault.
    Invalid {
        point: Point,
        message: String,
    },
}

/// Protocol names from `--protocols` items: each item may hold several comma-separated
/// names, whitespace around names is ignored, and every name is checked against the
/// registry before anything runs. Empty means every registered protocol.
pub fn parse_protocols(items: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        for name in item.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let name = ssd::protocol::canonical(name).map_err(|e| e.to_string())?;
            if !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    if out.is_empty() {
        out = ssd::protocol::names()
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    Ok(out)
}

/// Splits `a,b,c` at top-level commas (not inside quotes, brackets or braces).
fn split_values(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// A TOML value as `--set` takes it: valid TOML, or else a bare string.
fn parse_value(s: &str) -> toml::Value {
    match format!("v = {s}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(s.into())),
        Err(_) => toml::Value::String(s.into()),
    }
}

/// One swept key and its values, from `key=a,b,c`.
pub fn parse_sweep_set(s: &str) -> Result<(String, Vec<toml::Value>), String> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(format!("--set '{s}': expected key=value[,value...]"));
    };
    let key = k.trim().to_string();
    if key.is_empty() {
        return Err(format!("--set '{s}': empty key"));
    }
    if key == "protocol.name" {
        return Err("--set protocol.name: sweep protocols with --protocols".into());
    }
    let values: Vec<toml::Value> = split_values(v).iter().map(|x| parse_value(x)).collect();
    if values.iter().any(|v| v.as_str() == Some("")) {
        return Err(format!("--set '{s}': an empty value"));
    }
    Ok((key, values))
}

/// Every combination of the grid's values, the first key varying slowest.
pub fn expand_grid(grid: &[(String, Vec<toml::Value>)]) -> Vec<Vec<(String, toml::Value)>> {
    let mut points: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
    for (k, vs) in grid {
        points = points
            .into_iter()
            .flat_map(|p| {
                vs.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((k.clone(), v.clone()));
                    q
                })
            })
            .collect();
    }
    points
}

/// The configuration of one point: the main job's base, then `src` (preset, file, sets),
/// then the swept values and the protocol.
pub fn point_config(
    src: &ConfigSource,
    swept: &[(String, toml::Value)],
    protocol: Option<&str>,
) -> Result<Config, String> {
    let mut s = src.clone();
    for (k, v) in swept {
        s.sets.push(format!("{k}={v}"));
    }
    if let Some(p) = protocol {
        s.sets.push(format!("protocol.name=\"{p}\""));
    }
    let cfg = Config::load_under(world::presets::MAIN_JOB, &s).map_err(|e| e.to_string())?;
    // A key the user set (or swept) that this point's run never reads is refused, naming
    // what would read it (`world::usage`); the protocol is the study's own.
    let mut keys = world::usage::user_keys(src).map_err(|e| e.to_string())?;
    keys.extend(swept.iter().map(|(k, _)| k.clone()));
    world::usage::check_used(&cfg, &keys).map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// Every point of grid × protocols, grid-major.
pub fn plan(
    src: &ConfigSource,
    grid: &[(String, Vec<toml::Value>)],
    protocols: &[String],
) -> Result<Vec<Point>, String> {
    let mut out = Vec::new();
    for swept in expand_grid(grid) {
        for p in protocols {
            let config = point_config(src, &swept, Some(p))?;
            out.push(Point {
                swept: swept.clone(),
                config,
            });
        }
    }
    Ok(out)
}

fn info(cfg: &Config) -> Option<&'static ProtocolInfo> {
    ssd::protocol::lookup(&cfg.protocol.name).ok()
}

/// Changes a configuration so its protocol can run it, saying what changed; None when
/// nothing needs to (or can) change.
pub fn adapt(cfg: &Config) -> Option<(Config, String)> {
    let info = info(cfg)?;
    if cfg.workload.kind != WorkloadKind::Txn {
        return None;
    }
    let mut c = cfg.clone();
    let mut why = Vec::new();
    let want = to_ssd(c.workload.txn.isolation);
    if !info.supports(want) {
        use workload::txn::Isolation as W;
        // The next stricter level the protocol supports (strict is always stricter).
        let order = [W::Serializable, W::NoPageConflict, W::Strict];
        let from = order.iter().position(|l| *l == c.workload.txn.isolation)?;
        let to = order[from..]
            .iter()
            .copied()
            .find(|l| info.supports(to_ssd(*l)))?;
        c.workload.txn.isolation = to;
        why.push(format!(
            "ran at {} isolation ({} does not support {})",
            to_ssd(to).name(),
            info.name,
            want.name()
        ));
    }
    if c.workload.txn.abort_ratio > 0.0 && !info.atomic {
        why.push(format!(
            "ran without aborts (abort_ratio {} -> 0: {} has no atomicity and cannot abort)",
            c.workload.txn.abort_ratio, info.name
        ));
        c.workload.txn.abort_ratio = 0.0;
    }
    if why.is_empty() {
        None
    } else {
        Some((c, why.join("; ")))
    }
}

fn to_ssd(l: workload::txn::Isolation) -> ssd::Isolation {
    match l {
        workload::txn::Isolation::Strict => ssd::Isolation::Strict,
        workload::txn::Isolation::NoPageConflict => ssd::Isolation::NoPageConflict,
        workload::txn::Isolation::Serializable => ssd::Isolation::Serializable,
    }
}

/// Checks a point before running it (see the module docs).
pub fn prepare(point: Point, allow_adapt: bool) -> Prepared {
    let first = match point.config.validate() {
        Ok(()) => {
            return Prepared::Run {
                point,
                status: Status::Ok,
                reason: String::new(),
            }
        }
        Err(e) => e.to_string(),
    };
    if allow_adapt {
        if let Some((c, why)) = adapt(&point.config) {
            if c.validate().is_ok() {
                return Prepared::Run {
                    point: Point {
                        swept: point.swept,
                        config: c,
                    },
                    status: Status::Adapted,
                    reason: why,
                };
            }
        }
    }
    // Is it this protocol, or the configuration? Some protocol must be able to run it.
    let someone_can = ssd::REGISTRY.iter().any(|p| {
        let mut c = point.config.clone();
        c.protocol.name = p.name.to_string();
        c.validate().is_ok()
    });
    if someone_can {
        let mut r = Record::failed(point.config, Status::Unsupported, first);
        r.swept = point.swept;
        Prepared::Done(Box::new(r))
    } else {
        Prepared::Invalid {
            point,
            message: first,
        }
    }
}

/// Runs one prepared point (the simulation itself; deterministic but for wall time).
pub fn run_prepared(p: Prepared) -> Record {
    match p {
        Prepared::Done(r) => *r,
        Prepared::Invalid { point, message } => {
            let mut r = Record::failed(point.config, Status::Error, message);
            r.swept = point.swept;
            r
        }
        Prepared::Run {
            point,
            status,
            reason,
        } => {
            // A DBMS host point runs the host engine over the device (compare
            // and sweep across host strategies and protocols).
            if point.config.workload.kind == world::WorkloadKind::Host {
                let mut r = match world::host_run::run_host(&point.config) {
                    Ok(m) => Record::ran_host(point.config, status, reason, &m),
                    Err(e) => {
                        let st = match &e {
                            world::WorldError::Device { error, .. } if unsupported(error) => {
                                Status::Unsupported
                            }
                            world::WorldError::Config(m) if !m.contains("invariant") => {
                                Status::Unsupported
                            }
                            _ => Status::Error,
                        };
                        Record::failed(point.config, st, e.to_string())
                    }
                };
                r.swept = point.swept;
                return r;
            }
            let mut r = match world::run(&point.config, &RunOptions::default()) {
                Ok(out) => Record::ran(point.config, status, reason, out.metrics),
                Err(e) => {
                    let st = match &e {
                        world::WorldError::Device { error, .. } if unsupported(error) => {
                            Status::Unsupported
                        }
                        // The configuration validated, so a configuration error from building
                        // the device is this protocol refusing it (cfc on MLC pages); a broken
                        // invariant is a simulator bug, not the protocol's choice.
                        world::WorldError::Config(m) if !m.contains("invariant") => {
                            Status::Unsupported
                        }
                        _ => Status::Error,
                    };
                    Record::failed(point.config, st, e.to_string())
                }
            };
            r.swept = point.swept;
            r
        }
    }
}

/// Whether a device error during a run says the protocol cannot honour a request of this
/// workload (rather than, say, running out of space).
pub fn unsupported(e: &ssd::SsdError) -> bool {
    use ssd::SsdError::*;
    matches!(
        e,
        Unsupported { .. } | TooManyActive { .. } | TxTooLarge { .. }
    )
}

/// Whether a device error during a run is a request the protocol or configuration cannot
/// honour (the input's fault) rather than a failure of the simulator.
pub fn input_fault(e: &ssd::SsdError) -> bool {
    e.input_fault()
}

/// The first invalid point's message, naming the point (callers exit 2 with it).
pub fn first_invalid(prepared: &[Prepared]) -> Option<String> {
    prepared.iter().find_map(|p| match p {
        Prepared::Invalid { point, message } => {
            let at: Vec<String> = point
                .swept
                .iter()
                .map(|(k, v)| format!("{k}={}", report::results::value_text(v)))
                .collect();
            Some(if at.is_empty() {
                message.clone()
            } else {
                format!("{message} (at {})", at.join(" "))
            })
        }
        _ => None,
    })
}

/// How many points to run at once: `requested` (0: one per core), but no more than fit in
/// the memory available by each point's estimate (at least 1). Returns the count and, when
/// memory lowered it, a sentence saying so.
pub fn jobs_for(prepared: &[Prepared], requested: usize) -> (usize, Option<String>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = if requested == 0 { cores } else { requested }.min(prepared.len().max(1));
    let need = prepared
        .iter()
        .filter_map(|p| match p {
            Prepared::Run { point, .. } => point.config.memory_estimate_bytes(),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let Some(avail) = world::config::mem_available_bytes() else {
        return (want, None);
    };
    if need == 0 {
        return (want, None);
    }
    let fit = ((avail / need) as usize).max(1);
    if fit < want {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        (
            fit,
            Some(format!(
                "running {fit} point(s) at a time instead of {want}: each needs about {:.1} GiB and {:.1} GiB is available",
                gib(need),
                gib(avail)
            )),
        )
    } else {
        (want, None)
    }
}

/// Runs prepared points on `jobs` threads (0: one per core), calling `done` as each finishes
/// (from a worker thread). Records come back in the order of `prepared`.
pub fn run_points(
    prepared: Vec<Prepared>,
    jobs: usize,
    done: &(dyn Fn(&Record) + Sync),
) -> Result<Vec<Record>, String> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| format!("cannot start {jobs} worker threads: {e}"))?;
    Ok(pool.install(|| {
        prepared
            .into_par_iter()
            .map(|p| {
                let r = run_prepared(p);
                done(&r);
                r
            })
            .collect()
    }))
}

/// Plans, checks and runs a grid × protocols. Returns Err for bad input (nothing ran).
pub fn sweep(
    src: &ConfigSource,
    grid: &[(String, Vec<toml::Value>)],
    protocols: &[String],
    allow_adapt: bool,
    jobs: usize,
    done: &(dyn Fn(&Record) + Sync),
) -> Result<Vec<Record>, String> {
    let points = plan(src, grid, protocols)?;
    let prepared: Vec<Prepared> = points
        .into_iter()
        .map(|p| prepare(p, allow_adapt))
        .collect();
    if let Some(m) = first_invalid(&prepared) {
        return Err(m);
    }
    let (jobs, _) = jobs_for(&prepared, jobs);
    run_points(prepared, jobs, done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(sets: &[&str]) -> ConfigSource {
        ConfigSource {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    /// `--protocols "tc, scc"` failed on the space, and
    /// `tc,scc,bogus` ran two protocols before rejecting the third.
    #[test]
    fn protocol_lists_tolerate_spaces_and_are_checked_whole() {
        assert_eq!(
            parse_protocols(&["tc, scc".into()]).unwrap(),
            vec!["tc", "scc"]
        );
        assert_eq!(
            parse_protocols(&["tc".into(), " scc ,tc".into()]).unwrap(),
            vec!["tc", "scc"]
        );
        let e = parse_protocols(&["tc,scc,bogus".into()]).unwrap_err();
        assert!(
            e.contains("unknown protocol 'bogus'") && e.contains("lighttx"),
            "{e}"
        );
        assert_eq!(parse_protocols(&[]).unwrap().len(), ssd::REGISTRY.len());
    }

    #[test]
    fn grid_values_split_at_top_level_commas() {
        let (k, v) = parse_sweep_set("ftl.gc_policy=greedy, cost-benefit").unwrap();
        assert_eq!(k, "ftl.gc_policy");
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].as_str(), Some("cost-benefit"));
        let (_, v) = parse_sweep_set("a.b=\"x,y\",[1,2],3").unwrap();
        assert_eq!(v.len(), 3, "{v:?}");
        assert_eq!(v[0].as_str(), Some("x,y"));
        assert!(parse_sweep_set("nokey").is_err());
        assert!(parse_sweep_set("a=1,,2").is_err());
        let g = expand_grid(&[
            ("a".into(), vec![1.into(), 2.into()]),
            ("b".into(), vec!["x".into(), "y".into(), "z".into()]),
        ]);
        assert_eq!(g.len(), 6);
        assert_eq!(g[1][0].1, toml::Value::from(1));
        assert_eq!(g[1][1].1.as_str(), Some("y"));
    }

    /// The main job: transactions with aborts. `aw` supports only strict isolation and
    /// `none` cannot abort: both are adapted, the rest run as configured.
    #[test]
    fn the_main_job_adapts_what_a_protocol_cannot_run() {
        let pts = plan(&src(&[]), &[], &parse_protocols(&[]).unwrap()).unwrap();
        assert_eq!(pts[0].config.workload.kind, WorkloadKind::Txn);
        assert!(pts[0].config.workload.txn.abort_ratio > 0.0);
        for p in pts {
            let name = p.config.protocol.name.clone();
            match prepare(p, true) {
                Prepared::Run {
                    status,
                    reason,
                    point,
                } => match name.as_str() {
                    "aw" => {
                        assert_eq!(status, Status::Adapted);
                        assert!(reason.contains("strict"), "{reason}");
                        assert_eq!(
                            point.config.workload.txn.isolation,
                            workload::txn::Isolation::Strict
                        );
                    }
                    "none" => {
                        assert_eq!(status, Status::Adapted);
                        assert_eq!(point.config.workload.txn.abort_ratio, 0.0);
                    }
                    _ => assert_eq!(status, Status::Ok, "{name}: {reason}"),
                },
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    /// Without adaptation, a protocol that cannot run the workload is
    /// a row saying why, and the others still run.
    #[test]
    fn unsupported_protocols_are_rows_and_the_rest_still_run() {
        let small = [
            "workload.txn.transactions=200",
            "run.measure_recovery=false",
        ];
        let recs = sweep(
            &src(&small),
            &[],
            &["aw".into(), "scc".into()],
            false,
            2,
            &|_| {},
        )
        .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].row.protocol, "aw");
        assert_eq!(recs[0].row.status, "unsupported");
        assert!(
            recs[0].row.reason.contains("isolation"),
            "{}",
            recs[0].row.reason
        );
        assert!(recs[0].metrics.is_none());
        assert_eq!(recs[1].row.status, "ok");
        assert!(recs[1].row.committed.unwrap() > 0);
        assert!(recs[1].row.aborted.unwrap() > 0);
    }

    /// The flagcommit preset peaks at 3.2 GB, so parallel points must
    /// not multiply that past the machine's memory.
    #[test]
    fn parallel_points_are_bounded_by_memory() {
        let Some(avail) = world::config::mem_available_bytes() else {
            return; // no /proc/meminfo: nothing to bound by
        };
        let small = plan(&src(&[]), &[], &["scc".into(), "tc".into()]).unwrap();
        let prepared: Vec<Prepared> = small.into_iter().map(|p| prepare(p, true)).collect();
        assert_eq!(jobs_for(&prepared, 2), (2, None));
        // A device needing about 60 % of the available memory: one at a time.
        let mut big = plan(&src(&[]), &[], &["scc".into(), "tc".into()]).unwrap();
        let per_block = big[0].config.memory_estimate_bytes().unwrap()
            / u64::from(big[0].config.nand.blocks_per_plane);
        let blocks = (avail * 6 / 10 / per_block) as u32;
        let prepared: Vec<Prepared> = big
            .drain(..)
            .map(|mut p| {
                p.config.nand.blocks_per_plane = blocks;
                Prepared::Run {
                    point: p,
                    status: Status::Ok,
                    reason: String::new(),
                }
            })
            .collect();
        let (n, note) = jobs_for(&prepared, 2);
        assert_eq!(n, 1);
        assert!(note.unwrap().contains("GiB"));
    }

    /// `--preset openssd` stopped at cfc. A protocol refusing the
    /// device when it is built (cfc needs SLC pages) is an unsupported row, not an error.
    #[test]
    fn a_protocol_refusing_the_device_is_unsupported() {
        let s = src(&[
            "nand.cell=mlc",
            "workload.txn.transactions=50",
            "run.measure_recovery=false",
        ]);
        let recs = sweep(&s, &[], &["cfc".into(), "lighttx".into()], true, 1, &|_| {}).unwrap();
        assert_eq!(recs[0].row.status, "unsupported", "{}", recs[0].row.reason);
        assert!(recs[0].row.reason.contains("SLC"), "{}", recs[0].row.reason);
        assert_eq!(recs[1].row.status, "ok", "{}", recs[1].row.reason);
    }

    /// A value no protocol can run is bad input, found before anything runs.
    #[test]
    fn an_invalid_grid_point_is_refused_before_running() {
        let grid = vec![parse_sweep_set("ftl.gc_threshold=0.05,0.95").unwrap()];
        let e = sweep(&src(&[]), &grid, &["scc".into()], true, 1, &|_| {
            panic!("nothing may run")
        })
        .unwrap_err();
        assert!(e.contains("ftl.gc_threshold") && e.contains("0.95"), "{e}");
    }

    /// Parallel and serial runs give the same records (only wall time differs).
    #[test]
    fn results_do_not_depend_on_jobs() {
        let grid = vec![parse_sweep_set("workload.txn.size_max=4,8").unwrap()];
        let s = src(&[
            "workload.txn.transactions=150",
            "run.measure_recovery=false",
        ]);
        let strip = |rs: Vec<Record>| -> Vec<String> {
            rs.into_iter()
                .map(|mut r| {
                    r.row.wall_time_s = None;
                    r.metrics = None;
                    report::results::to_csv(&[r]).unwrap()
                })
                .collect()
        };
        let protos = vec!["tc".to_string(), "lighttx".to_string()];
        let a = strip(sweep(&s, &grid, &protos, true, 1, &|_| {}).unwrap());
        let b = strip(sweep(&s, &grid, &protos, true, 2, &|_| {}).unwrap());
        assert_eq!(a.len(), 4);
        assert_eq!(a, b);
    }
}
