//! `commitlab._commitlab`: the Rust side of the Python bindings. It speaks JSON strings with
//! the Python package (`commitlab/__init__.py`), which turns them into dicts and pandas
//! DataFrames. Every function releases the GIL while simulating, and every error the command
//! line would report with exit 2 is raised as `commitlab.CommitlabError` (a `ValueError`)
//! with the same message.
//!
//! Configurations arrive as JSON objects, nested (`{"nand": {"channels": 4}}`) or with dotted
//! keys (`{"nand.channels": 4}`); they become `--set key=value` layers over the preset, so
//! they mean exactly what the same `--set`s mean on the command line.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use world::ConfigSource;

mod sqlite;

create_exception!(_commitlab, CommitlabError, PyValueError);

fn err(e: impl std::fmt::Display) -> PyErr {
    CommitlabError::new_err(e.to_string())
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) -> Result<(), String> {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out)?;
            }
            Ok(())
        }
        serde_json::Value::Null => Err(format!("{prefix}: None is not a configuration value")),
        other => {
            let t = toml::Value::try_from(other).map_err(|e| format!("{prefix}: {e}"))?;
            out.push(format!("{prefix}={t}"));
            Ok(())
        }
    }
}

fn source(config_json: &str, preset: Option<String>) -> Result<ConfigSource, String> {
    let v: serde_json::Value =
        serde_json::from_str(config_json).map_err(|e| format!("config: {e}"))?;
    if !v.is_object() {
        return Err("config must be a dict".into());
    }
    let mut sets = Vec::new();
    flatten("", &v, &mut sets)?;
    Ok(ConfigSource {
        preset,
        file: None,
        sets,
    })
}

fn grid(grid_json: &str) -> Result<Vec<(String, Vec<toml::Value>)>, String> {
    let v: serde_json::Value = serde_json::from_str(grid_json).map_err(|e| format!("grid: {e}"))?;
    let serde_json::Value::Array(items) = v else {
        return Err("grid must be a list of [key, values] pairs".into());
    };
    let mut out = Vec::new();
    for it in items {
        let (Some(k), Some(serde_json::Value::Array(vals))) = (it.get(0), it.get(1)) else {
            return Err("grid: each entry must be key: list of values".into());
        };
        let k = k.as_str().ok_or("grid: keys must be strings")?.to_string();
        if vals.is_empty() {
            return Err(format!("grid: {k} has no values"));
        }
        let vals = vals
            .iter()
            .map(|x| toml::Value::try_from(x).map_err(|e| format!("grid: {k}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        out.push((k, vals));
    }
    Ok(out)
}

/// Runs one configuration over the built-in defaults (as `commitlab run`); returns the
/// metrics as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, preset=None))]
fn run_json(py: Python<'_>, config_json: &str, preset: Option<String>) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    let cfg = world::Config::load(&src).map_err(err)?;
    cfg.validate().map_err(err)?;
    world::usage::check_source(&cfg, &src).map_err(err)?;
    if cfg.workload.kind == world::WorkloadKind::Host {
        // The DBMS host, sized as `commitlab run --host` sizes it: the device grows to the
        // database unless a preset or a nand key chose the geometry.
        let sizing = sizing_of(&src);
        let metrics = py
            .allow_threads(|| {
                world::host_run::run_host_sized(&cfg, None, &sizing)
                    .map(|(m, _)| m)
                    .map_err(|e| e.to_string())
            })
            .map_err(err)?;
        return serde_json::to_string(&metrics).map_err(err);
    }
    let metrics = py
        .allow_threads(|| {
            world::run(&cfg, &world::RunOptions::default())
                .map(|o| o.metrics)
                .map_err(|e| e.to_string())
        })
        .map_err(err)?;
    serde_json::to_string(&metrics).map_err(err)
}

/// A shell word (single-quoted unless it is plain).
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=,:".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The geometry a host check or run keeps: set by a `nand.*` key or a preset, else sized.
fn sizing_of(src: &ConfigSource) -> world::host_run::Sizing {
    let geometry = src
        .sets
        .iter()
        .map(|s| s.split('=').next().unwrap_or_default().trim())
        .find(|k| world::host_run::GEOMETRY_KEYS.contains(k));
    match (&src.preset, geometry) {
        (_, Some(k)) => world::host_run::Sizing::Fixed(k.to_string()),
        (Some(p), None) => world::host_run::Sizing::Fixed(format!("preset {p}")),
        (None, None) => world::host_run::Sizing::Auto,
    }
}

/// One row of `crash`: a group of crash states checked together.
#[derive(serde::Serialize)]
struct CrashRow {
    protocol: String,
    /// The host recovery strategy ("" for a device-level check).
    host: String,
    /// "exhaustive" or "random".
    mode: String,
    /// The timing profile the recording ran under (`check::timing`).
    timing: String,
    /// Random mode: the schedule numbers of this group, `first..end`.
    schedules: String,
    states: u64,
    violations: u64,
    /// The first violation's findings ("" when none).
    first_violation: String,
    /// The command that replays the first violation ("" when none).
    replay: String,
}

/// Crash-checks a configuration as `commitlab crash` does: a device protocol (the small
/// crash-check device under the configuration), or with `workload.kind = "host"` the host
/// strategy over it. Exhaustive (`schedules` None: one row per timing profile of
/// `check::timing::ADVERSARIAL`) or random (one row per batch of `check`'s 512 schedules, each
/// under its own drawn timing profile, as the command line draws them).
#[pyfunction]
#[pyo3(signature = (config_json, preset, schedules, double))]
fn crash_json(
    py: Python<'_>,
    config_json: &str,
    preset: Option<String>,
    schedules: Option<u64>,
    double: bool,
) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    if schedules == Some(0) {
        return Err(err("schedules must be at least 1"));
    }
    let probe = world::Config::load(&src).map_err(err)?;
    let protocol = probe.protocol.name.clone();
    ssd::protocol::lookup(&protocol).map_err(err)?;
    let mut sets_cli = String::new();
    if let Some(p) = &src.preset {
        sets_cli.push_str(&format!(" --preset {}", shell_word(p)));
    }
    for s in &src.sets {
        sets_cli.push_str(&format!(" --set {}", shell_word(s)));
    }
    let rows = if probe.workload.kind == world::WorkloadKind::Host {
        let strategy = probe.host.strategy.clone();
        let update = (probe.host.update != host::HostConfig::default().update)
            .then_some(probe.host.update.as_str());
        let base = world::host_run::host_crash_config_for(&strategy, &protocol, update);
        let cfg = world::Config::load_over(Some(&base), &src).map_err(err)?;
        cfg.validate().map_err(err)?;
        world::usage::check_source(&cfg, &src).map_err(err)?;
        let (cfg, _) = world::host_run::size_host(&cfg, &sizing_of(&src)).map_err(err)?;
        let mode = match schedules {
            Some(n) => host::check::Mode::Random { schedules: n },
            None => host::check::Mode::Exhaustive { max_in_flight: 10 },
        };
        let rep = py
            .allow_threads(|| {
                let rec = world::host_run::record_host(&cfg)?;
                world::host_run::check_host_with(&rec, mode, cfg.seed, None, double)
            })
            .map_err(err)?;
        let how = match schedules {
            Some(n) => format!("--schedules {n}"),
            None => "--exhaustive".into(),
        };
        let first = rep.first.first();
        vec![CrashRow {
            protocol: protocol.clone(),
            host: strategy.clone(),
            mode: if schedules.is_some() { "random" } else { "exhaustive" }.into(),
            timing: "configured".into(),
            schedules: schedules.map_or(String::new(), |n| format!("0..{n}")),
            states: rep.states,
            violations: rep.violations,
            first_violation: first.map_or(String::new(), |v| v.findings.join("; ")),
            replay: first.map_or(String::new(), |v| {
                format!(
                    "commitlab crash --host {} --protocol {protocol} --seed {} {how}{}{sets_cli} --state {}",
                    shell_word(&strategy),
                    cfg.seed,
                    if double { " --double" } else { "" },
                    v.state.index
                )
            }),
        }]
    } else {
        let base = check::small_config(&protocol);
        let cfg = world::Config::load_over(Some(&base), &src).map_err(err)?;
        cfg.validate().map_err(err)?;
        world::usage::check_source(&cfg, &src).map_err(err)?;
        let seed = cfg.seed;
        let groups: Vec<(String, check::timing::Timing, u64, u64)> = match schedules {
            None => check::timing::ADVERSARIAL
                .iter()
                .map(|(n, spec)| {
                    check::timing::Timing::parse(spec)
                        .map(|t| (n.to_string(), t, 0, 0))
                        .map_err(err)
                })
                .collect::<PyResult<_>>()?,
            Some(n) => (0..n.div_ceil(BATCH))
                .map(|b| {
                    let t = check::timing::Timing::draw(seed, b);
                    (t.spec(), t, b * BATCH, BATCH.min(n - b * BATCH))
                })
                .collect(),
        };
        let mut rows = Vec::new();
        for (name, t, lo, count) in groups {
            let mut c = cfg.clone();
            t.apply(&mut c);
            let mode = match schedules {
                Some(_) => check::Mode::Random { schedules: count },
                None => check::Mode::Exhaustive { max_in_flight: 10 },
            };
            let mut o = check::Options::new(mode, seed);
            o.first_schedule = lo;
            o.double = double;
            let rep = py
                .allow_threads(|| {
                    let rec = check::record(&c).map_err(|e| e.to_string())?;
                    check::check_with(&rec, &o, &mut |_| false)
                })
                .map_err(err)?;
            let random = schedules.is_some();
            let first = rep.first.first();
            let how = match schedules {
                Some(n) => format!("--schedules {n}"),
                None => "--exhaustive".into(),
            };
            rows.push(CrashRow {
                protocol: protocol.clone(),
                host: String::new(),
                mode: if random { "random" } else { "exhaustive" }.into(),
                timing: name.clone(),
                schedules: if random {
                    format!("{lo}..{}", lo + count)
                } else {
                    String::new()
                },
                states: rep.states,
                violations: rep.violations,
                first_violation: first.map_or(String::new(), |v| {
                    v.findings
                        .iter()
                        .map(|f| f.what.clone())
                        .collect::<Vec<_>>()
                        .join("; ")
                }),
                replay: first.map_or(String::new(), |v| {
                    format!(
                        "commitlab crash --protocol {protocol} --seed {seed} {how} --timing {}{}{sets_cli} --state {}",
                        shell_word(&name),
                        if double { " --double" } else { "" },
                        v.path(random)
                    )
                }),
            });
        }
        rows
    };
    serde_json::to_string(&rows).map_err(err)
}

/// `check`'s random schedules per recording (the command line's `crash::BATCH`).
const BATCH: u64 = 512;

/// One claim of `reproduce`, flat: both verdict axes as words.
#[derive(serde::Serialize)]
struct ClaimRow {
    paper: String,
    id: String,
    claim: String,
    paper_value: String,
    measured: String,
    direction: String,
    magnitude: String,
    ratio: Option<f64>,
    note: String,
}

/// Reproduces one paper's claims (or `all`), as `commitlab reproduce --paper P [--quick]`
/// computes them (no report files are written); returns the claims as JSON rows.
#[pyfunction]
#[pyo3(signature = (paper, quick, jobs))]
fn reproduce_json(py: Python<'_>, paper: &str, quick: bool, jobs: usize) -> PyResult<String> {
    const PAPERS: [&str; 5] = ["txflash", "lighttx", "flagcommit", "ipa", "pcmlogging"];
    let list: Vec<&str> = match paper {
        "all" => PAPERS.to_vec(),
        p if PAPERS.contains(&p) => vec![p],
        other => {
            return Err(err(format!(
            "unknown paper '{other}' (known: txflash, lighttx, flagcommit, ipa, pcmlogging, all)"
        )))
        }
    };
    let scale = if quick {
        reproduce::Scale::Quick
    } else {
        reproduce::Scale::Full
    };
    let rows = py
        .allow_threads(|| {
            let quiet = |_: &str| {};
            let progress = reproduce::Progress::new(jobs, &quiet);
            let mut rows = Vec::new();
            for p in &list {
                let o =
                    reproduce::run_paper(p, scale, &progress).map_err(|e| format!("{p}: {e}"))?;
                for c in o.claims {
                    rows.push(ClaimRow {
                        direction: c.verdict.direction_text().to_string(),
                        magnitude: c.verdict.magnitude_text(),
                        ratio: c.verdict.ratio,
                        paper: c.paper,
                        id: c.id,
                        claim: c.claim,
                        paper_value: c.paper_value,
                        measured: c.measured,
                        note: c.note,
                    });
                }
            }
            Ok::<_, String>(rows)
        })
        .map_err(err)?;
    serde_json::to_string(&rows).map_err(err)
}

/// Plans, checks and runs grid x protocols from the main job's base (as `commitlab sweep`;
/// an empty grid is `commitlab compare`); returns the records as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, preset, grid_json, protocols, jobs, adapt))]
fn study_json(
    py: Python<'_>,
    config_json: &str,
    preset: Option<String>,
    grid_json: &str,
    protocols: Vec<String>,
    jobs: usize,
    adapt: bool,
) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    let grid = grid(grid_json).map_err(err)?;
    let protocols = study::parse_protocols(&protocols).map_err(err)?;
    let recs = py
        .allow_threads(|| study::sweep(&src, &grid, &protocols, adapt, jobs, &|_| {}))
        .map_err(err)?;
    report::results::to_json(&recs).map_err(err)
}

/// Plans and checks grid x protocols without running; raises on the first invalid point.
/// Returns the points as JSON `[[swept pairs], protocol]` in run order (for the Ray engine).
#[pyfunction]
#[pyo3(signature = (config_json, preset, grid_json, protocols, adapt))]
fn plan_json(
    config_json: &str,
    preset: Option<String>,
    grid_json: &str,
    protocols: Vec<String>,
    adapt: bool,
) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    let grid = grid(grid_json).map_err(err)?;
    let protocols = study::parse_protocols(&protocols).map_err(err)?;
    let points = study::plan(&src, &grid, &protocols).map_err(err)?;
    let listed: Vec<serde_json::Value> = points
        .iter()
        .map(|p| {
            let swept: Vec<serde_json::Value> = p
                .swept
                .iter()
                .map(|(k, v)| serde_json::json!([k, v]))
                .collect();
            serde_json::json!([swept, p.config.protocol.name])
        })
        .collect();
    let prepared: Vec<study::Prepared> = points
        .into_iter()
        .map(|p| study::prepare(p, adapt))
        .collect();
    if let Some(m) = study::first_invalid(&prepared) {
        return Err(err(m));
    }
    serde_json::to_string(&listed).map_err(err)
}

/// Runs one point (swept pairs as JSON `[[key, value], ...]`, one protocol); returns its
/// record as JSON. What a Ray task runs: the same code path as the local engine.
#[pyfunction]
#[pyo3(signature = (config_json, preset, swept_json, protocol, adapt))]
fn point_json(
    py: Python<'_>,
    config_json: &str,
    preset: Option<String>,
    swept_json: &str,
    protocol: &str,
    adapt: bool,
) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    let v: serde_json::Value = serde_json::from_str(swept_json).map_err(err)?;
    let mut swept = Vec::new();
    for it in v.as_array().cloned().unwrap_or_default() {
        let k = it.get(0).and_then(|k| k.as_str()).unwrap_or("").to_string();
        let x = it.get(1).cloned().unwrap_or(serde_json::Value::Null);
        swept.push((k, toml::Value::try_from(&x).map_err(err)?));
    }
    let config = study::point_config(&src, &swept, Some(protocol)).map_err(err)?;
    let rec = py.allow_threads(|| {
        study::run_prepared(study::prepare(study::Point { swept, config }, adapt))
    });
    serde_json::to_string(&rec).map_err(err)
}

/// The registered protocol names.
#[pyfunction]
fn protocols() -> Vec<&'static str> {
    ssd_names()
}

fn ssd_names() -> Vec<&'static str> {
    world::config_doc::KEYS
        .iter()
        .find(|k| k.key == "protocol.name")
        .map(|k| k.allowed.to_vec())
        .unwrap_or_default()
}

/// One configuration key explained (as `commitlab config --explain KEY`).
#[pyfunction]
fn explain(key: &str) -> PyResult<String> {
    world::config_doc::explain(key).map_err(err)
}

#[pymodule]
fn _commitlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CommitlabError", m.py().get_type::<CommitlabError>())?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(study_json, m)?)?;
    m.add_function(wrap_pyfunction!(plan_json, m)?)?;
    m.add_function(wrap_pyfunction!(point_json, m)?)?;
    m.add_function(wrap_pyfunction!(protocols, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(crash_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(sqlite::sqlite_connect, m)?)?;
    m.add_class::<sqlite::SqliteConnection>()?;
    m.add("SqliteError", m.py().get_type::<sqlite::SqliteError>())?;
    Ok(())
}
