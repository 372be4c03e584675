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
    /// The host's update strategy ("" for a device-level check).
    update: String,
    /// The PCM strategies' external store when a host matrix cell sets it ("emulated": the
    /// emulated SSD), "" otherwise.
    external: String,
    /// The safety variant (`check::variants`: name and its `--set`s), "" for the defaults.
    variant: String,
    /// "exhaustive" or "random".
    mode: String,
    /// The timing profile the recording ran under (`check::timing`).
    timing: String,
    /// Random mode: the schedule numbers of this group, `first..end`.
    schedules: String,
    states: u64,
    /// Of `states`, the crashes inside recovery (`double`; device checks, 0 for a host
    /// check, whose report does not count them apart).
    nested_states: u64,
    violations: u64,
    /// The first violation's findings ("" when none).
    first_violation: String,
    /// The command that replays the first violation ("" when none).
    replay: String,
    /// Why the configuration cannot run (a host matrix cell the pair does not support); ""
    /// when it ran.
    refused: String,
}

impl CrashRow {
    fn empty(protocol: &str) -> CrashRow {
        CrashRow {
            protocol: protocol.to_string(),
            host: String::new(),
            update: String::new(),
            external: String::new(),
            variant: String::new(),
            mode: String::new(),
            timing: String::new(),
            schedules: String::new(),
            states: 0,
            nested_states: 0,
            violations: 0,
            first_violation: String::new(),
            replay: String::new(),
            refused: String::new(),
        }
    }
}

/// The command-line words of a configuration source (`--preset`, `--set`s).
fn source_cli(src: &ConfigSource) -> String {
    let mut out = String::new();
    if let Some(p) = &src.preset {
        out.push_str(&format!(" --preset {}", shell_word(p)));
    }
    for s in &src.sets {
        out.push_str(&format!(" --set {}", shell_word(s)));
    }
    out
}

/// What a crash check asks for, beyond the configuration.
#[derive(Clone, Copy)]
struct CrashAsk {
    schedules: Option<u64>,
    min_states: Option<u64>,
    double: bool,
}

/// A device protocol's check (`commitlab crash --protocol P`): exhaustive over every timing
/// profile of `check::timing::ADVERSARIAL` when `exhaustive`, then random schedules in
/// batches of `BATCH`, each under the profile `Timing::draw(seed, batch)` draws; with
/// `min_states`, batches go on (schedule numbers continuing) until the protocol's states
/// reach it, as the command line's `--min-states` does.
fn device_rows(
    py: Python<'_>,
    src: &ConfigSource,
    protocol: &str,
    exhaustive: bool,
    ask: CrashAsk,
    variant: &str,
) -> PyResult<Vec<CrashRow>> {
    let base = check::small_config(protocol);
    let cfg = world::Config::load_over(Some(&base), src).map_err(err)?;
    cfg.validate().map_err(err)?;
    world::usage::check_source(&cfg, src).map_err(err)?;
    let seed = cfg.seed;
    let sets_cli = source_cli(src);
    let n = ask.schedules.unwrap_or(0);
    let floor = ask.min_states.unwrap_or(0);
    let mut rows = Vec::new();
    let mut total = 0u64;
    let run = |name: String,
               t: check::timing::Timing,
               mode: check::Mode,
               lo: u64,
               upto: u64|
     -> PyResult<CrashRow> {
        let mut c = cfg.clone();
        t.apply(&mut c);
        let mut o = check::Options::new(mode, seed);
        o.first_schedule = lo;
        o.double = ask.double;
        let rep = py
            .allow_threads(|| {
                let rec = check::record(&c).map_err(|e| e.to_string())?;
                check::check_with(&rec, &o, &mut |_| false)
            })
            .map_err(err)?;
        let random = matches!(mode, check::Mode::Random { .. });
        let how = if random {
            format!("--schedules {upto}")
        } else {
            "--exhaustive".into()
        };
        let first = rep.first.first();
        let mut row = CrashRow::empty(protocol);
        row.variant = variant.to_string();
        row.mode = if random { "random" } else { "exhaustive" }.into();
        row.schedules = match mode {
            check::Mode::Random { schedules } => format!("{lo}..{}", lo + schedules),
            _ => String::new(),
        };
        row.states = rep.states;
        row.nested_states = rep.nested_states;
        row.violations = rep.violations;
        row.first_violation = first.map_or(String::new(), |v| {
            v.findings
                .iter()
                .map(|f| f.what.clone())
                .collect::<Vec<_>>()
                .join("; ")
        });
        row.replay = first.map_or(String::new(), |v| {
            format!(
                "commitlab crash --protocol {protocol} --seed {seed} {how} --timing {}{}{sets_cli} --state {}",
                shell_word(&name),
                if ask.double { " --double" } else { "" },
                v.path(random)
            )
        });
        row.timing = name;
        Ok(row)
    };
    if exhaustive {
        for (name, spec) in check::timing::ADVERSARIAL {
            let t = check::timing::Timing::parse(spec).map_err(err)?;
            let row = run(
                name.to_string(),
                t,
                check::Mode::Exhaustive { max_in_flight: 10 },
                0,
                0,
            )?;
            total += row.states;
            rows.push(row);
        }
    }
    if ask.schedules.is_some() || ask.min_states.is_some() {
        for b in 0.. {
            let lo = b * BATCH;
            if lo >= n && total >= floor {
                break;
            }
            let count = if lo < n { BATCH.min(n - lo) } else { BATCH };
            let t = check::timing::Timing::draw(seed, b);
            let row = run(
                t.spec(),
                t,
                check::Mode::Random { schedules: count },
                lo,
                (lo + count).max(n),
            )?;
            total += row.states;
            let empty = row.states == 0;
            rows.push(row);
            if empty && lo >= n {
                break; // a run with no crash states cannot reach any floor
            }
        }
    }
    Ok(rows)
}

/// A host strategy's check (`commitlab crash --host S --protocol P`) on the tiny host run
/// under the configuration, sized to the database as `run --host` sizes it: exhaustive, or
/// `schedules` random states; one row.
fn host_row(
    py: Python<'_>,
    src: &ConfigSource,
    strategy: &str,
    protocol: &str,
    update: Option<&str>,
    ask: CrashAsk,
) -> PyResult<CrashRow> {
    let base = world::host_run::host_crash_config_for(strategy, protocol, update);
    let cfg = world::Config::load_over(Some(&base), src).map_err(err)?;
    cfg.validate().map_err(err)?;
    world::usage::check_source(&cfg, src).map_err(err)?;
    let (cfg, _) = world::host_run::size_host(&cfg, &sizing_of(src)).map_err(err)?;
    let mode = match ask.schedules {
        Some(n) => host::check::Mode::Random { schedules: n },
        None => host::check::Mode::Exhaustive { max_in_flight: 10 },
    };
    let mut row = CrashRow::empty(protocol);
    row.host = strategy.to_string();
    row.update = cfg.host.update.clone();
    row.mode = if ask.schedules.is_some() {
        "random"
    } else {
        "exhaustive"
    }
    .into();
    row.timing = "configured".into();
    row.schedules = ask.schedules.map_or(String::new(), |n| format!("0..{n}"));
    let rec = match py.allow_threads(|| world::host_run::record_host(&cfg)) {
        Ok(r) => r,
        // The pair cannot run (the strategy refuses the protocol): a refused row, as the
        // command line's matrix lists it.
        Err(world::WorldError::Config(e)) => {
            row.refused = e;
            return Ok(row);
        }
        Err(e) => return Err(err(format!("recording the host run failed: {e}"))),
    };
    let rep = py
        .allow_threads(|| world::host_run::check_host_with(&rec, mode, cfg.seed, None, ask.double))
        .map_err(err)?;
    let how = match ask.schedules {
        Some(n) => format!("--schedules {n}"),
        None => "--exhaustive".into(),
    };
    let first = rep.first.first();
    row.states = rep.states;
    row.violations = rep.violations;
    row.first_violation = first.map_or(String::new(), |v| v.findings.join("; "));
    row.replay = first.map_or(String::new(), |v| {
        format!(
            "commitlab crash --host {} --protocol {protocol} --update {} --seed {} {how}{}{} --state {}",
            shell_word(strategy),
            shell_word(&cfg.host.update),
            cfg.seed,
            if ask.double { " --double" } else { "" },
            source_cli(src),
            v.state.index
        )
    });
    Ok(row)
}

/// Crash-checks a configuration as `commitlab crash` does: a device protocol (the small
/// crash-check device under the configuration), or with `workload.kind = "host"` (or
/// `host`) the host strategy over it, or with `host = "all"` the host matrix
/// (`world::host_run::crash_cells`: exhaustive on the tiny run, then `schedules` random
/// states with crashes inside recovery on the larger one, as `crash --host all`), or with
/// `variants` every safety variant (`check::variants`) of the protocol (of every protocol
/// unless the configuration names one). One row per group of states checked together.
#[pyfunction]
#[pyo3(signature = (config_json, preset, schedules, double, min_states=None, variants=false, host=None))]
#[allow(clippy::too_many_arguments)]
fn crash_json(
    py: Python<'_>,
    config_json: &str,
    preset: Option<String>,
    schedules: Option<u64>,
    double: bool,
    min_states: Option<u64>,
    variants: bool,
    host: Option<String>,
) -> PyResult<String> {
    let mut src = source(config_json, preset).map_err(err)?;
    if schedules == Some(0) {
        return Err(err("schedules must be at least 1"));
    }
    let ask = CrashAsk {
        schedules,
        min_states,
        double,
    };
    let named = |k: &str| {
        src.sets
            .iter()
            .any(|s| s.split('=').next().map(str::trim) == Some(k))
    };
    let probe = world::Config::load(&src).map_err(err)?;
    let protocol = ssd::protocol::canonical(&probe.protocol.name)
        .map_err(err)?
        .to_string();
    let rows = if host.as_deref() == Some("all") {
        if variants || min_states.is_some() {
            return Err(err(
                "host=\"all\" checks the host matrix; variants and min_states are device checks",
            ));
        }
        for k in [
            "protocol.name",
            "host.strategy",
            "host.update",
            "workload.kind",
        ] {
            if named(k) {
                return Err(err(format!(
                    "host=\"all\" checks every strategy, protocol and update strategy: {k} cannot be set"
                )));
            }
        }
        let mut rows = Vec::new();
        for (strategy, protocol, update, external) in world::host_run::crash_cells() {
            let mut cell = src.clone();
            cell.sets.push("workload.kind=\"host\"".into());
            cell.sets.push(format!("host.update=\"{update}\""));
            if external.is_some() {
                cell.sets.extend(
                    world::host_run::HOST_CRASH_EMULATED
                        .iter()
                        .map(|s| s.to_string()),
                );
            }
            let exhaustive = CrashAsk {
                schedules: None,
                ..ask
            };
            let ext = external.unwrap_or_default().to_string();
            let mut row = host_row(py, &cell, strategy, protocol, Some(update), exhaustive)?;
            row.external = ext.clone();
            let refused = !row.refused.is_empty();
            rows.push(row);
            if let (Some(n), false) = (schedules, refused) {
                let mut larger = cell.clone();
                larger.sets.extend(
                    world::host_run::HOST_CRASH_LARGER
                        .iter()
                        .map(|s| s.to_string()),
                );
                let random = CrashAsk {
                    schedules: Some(n),
                    min_states: None,
                    double: true,
                };
                row = host_row(py, &larger, strategy, protocol, Some(update), random)?;
                row.external = ext.clone();
                rows.push(row);
            }
        }
        rows
    } else if host.is_some() || probe.workload.kind == world::WorkloadKind::Host {
        if variants || min_states.is_some() {
            return Err(err(
                "variants and min_states are device checks; a host check takes schedules and double",
            ));
        }
        if let Some(h) = &host {
            host::strategy::lookup(h).map_err(err)?;
            src.sets.push("workload.kind=\"host\"".into());
            src.sets
                .push(format!("host.strategy={}", toml::Value::from(h.as_str())));
        }
        let probe = world::Config::load(&src).map_err(err)?;
        let strategy = probe.host.strategy.clone();
        let update = (probe.host.update != host::HostConfig::default().update)
            .then_some(probe.host.update.as_str());
        vec![host_row(py, &src, &strategy, &protocol, update, ask)?]
    } else if variants {
        let chosen: Vec<&check::variants::Variant> = check::variants::VARIANTS
            .iter()
            .filter(|v| !named("protocol.name") || v.protocol == protocol)
            .collect();
        if chosen.is_empty() {
            return Err(err(format!(
                "protocol {protocol}: no safety variant concerns this protocol (check::variants)"
            )));
        }
        let mut rows = Vec::new();
        for v in chosen {
            let mut vsrc = src.clone();
            vsrc.sets
                .retain(|s| s.split('=').next().map(str::trim) != Some("protocol.name"));
            vsrc.sets.push(format!("protocol.name=\"{}\"", v.protocol));
            vsrc.sets.extend(v.sets.iter().map(|s| s.to_string()));
            let label = format!("{}: {}", v.name, v.sets.join(" "));
            rows.extend(device_rows(py, &vsrc, v.protocol, true, ask, &label)?);
        }
        rows
    } else {
        device_rows(py, &src, &protocol, schedules.is_none(), ask, "")?
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
    let list = paper_list(paper).map_err(err)?;
    let scale = if quick {
        reproduce::Scale::Quick
    } else {
        reproduce::Scale::Full
    };
    let rows = py
        .allow_threads(|| {
            let quiet = |_: &str| {};
            let progress = reproduce::Progress::new(jobs, &quiet);
            let mut outputs = Vec::new();
            for p in &list {
                let o =
                    reproduce::run_paper(p, scale, &progress).map_err(|e| format!("{p}: {e}"))?;
                outputs.push((p.clone(), o));
            }
            Ok::<_, String>((claim_rows(&outputs), reproduce::claims_json(&outputs)?))
        })
        .map_err(err)?;
    serde_json::to_string(&serde_json::json!({"claims": rows.0, "claims_json": rows.1}))
        .map_err(err)
}

/// The papers `paper` names (one, or `all`), or the CLI's message for an unknown one.
/// Several may be given, comma-separated (as `commitlab reproduce --engine ray` passes its
/// `--paper`s).
fn paper_list(paper: &str) -> Result<Vec<String>, String> {
    const PAPERS: [&str; 5] = ["txflash", "lighttx", "flagcommit", "ipa", "pcmlogging"];
    let mut out: Vec<String> = Vec::new();
    for p in paper.split(',').map(str::trim) {
        match p {
            "all" => out.extend(PAPERS.iter().map(|p| p.to_string())),
            p if PAPERS.contains(&p) => out.push(p.to_string()),
            other => {
                return Err(format!(
                "unknown paper '{other}' (known: txflash, lighttx, flagcommit, ipa, pcmlogging, all)"
            ))
            }
        }
    }
    out.dedup();
    Ok(out)
}

fn claim_rows(outputs: &[(String, reproduce::Output)]) -> Vec<ClaimRow> {
    let mut rows = Vec::new();
    for (_, o) in outputs {
        for c in &o.claims {
            rows.push(ClaimRow {
                direction: c.verdict.direction_text().to_string(),
                magnitude: c.verdict.magnitude_text(),
                ratio: c.verdict.ratio,
                paper: c.paper.clone(),
                id: c.id.clone(),
                claim: c.claim.clone(),
                paper_value: c.paper_value.clone(),
                measured: c.measured.clone(),
                note: c.note.clone(),
            });
        }
    }
    rows
}

/// One round of a reproduction on another engine (`reproduce::remote`): replays the papers
/// against the point results gathered so far (`results_json`: a list of what
/// `reproduce_point_json` returned) and returns `{"pending": [points to run], "claims":
/// null}`, or, once no point is pending, `{"pending": [], "claims": [rows],
/// "claims_json": the text of claims.json}`.
#[pyfunction]
#[pyo3(signature = (paper, quick, results_json))]
fn reproduce_round_json(
    py: Python<'_>,
    paper: &str,
    quick: bool,
    results_json: &str,
) -> PyResult<String> {
    let papers = paper_list(paper).map_err(err)?;
    let scale = if quick {
        reproduce::Scale::Quick
    } else {
        reproduce::Scale::Full
    };
    let remote = reproduce::remote::Remote::new();
    reproduce::remote::results_from_json(&remote, results_json).map_err(err)?;
    let out = py
        .allow_threads(|| reproduce::remote::round(&papers, scale, &remote))
        .map_err(err)?;
    let v = match out {
        None => serde_json::json!({
            "pending": remote.take_pending(),
            "claims": serde_json::Value::Null,
        }),
        Some(outputs) => serde_json::json!({
            "pending": [],
            "claims": claim_rows(&outputs),
            "claims_json": reproduce::claims_json(&outputs).map_err(err)?,
        }),
    };
    serde_json::to_string(&v).map_err(err)
}

/// Runs one point of a reproduction from its configuration and task (a pending point's
/// `config` and `task`; what a Ray task runs: `reproduce::remote::run_point`); returns its
/// result as JSON. Without a task, the point is `run_all`'s run.
#[pyfunction]
#[pyo3(signature = (config_json, task_json=None))]
fn reproduce_point_json(
    py: Python<'_>,
    config_json: &str,
    task_json: Option<&str>,
) -> PyResult<String> {
    let task: reproduce::remote::PointTask = match task_json {
        Some(t) => serde_json::from_str(t).map_err(|e| err(format!("a point's task: {e}")))?,
        None => reproduce::remote::PointTask::Run,
    };
    let r = py
        .allow_threads(|| reproduce::remote::run_point(task, config_json))
        .map_err(err)?;
    serde_json::to_string(&r).map_err(err)
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

/// The effective configuration of a dict over the built-in defaults (as `commitlab config`),
/// or over the main job's base with `main_job` (as `commitlab config --main-job`), as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, preset, main_job))]
fn config_json(config_json: &str, preset: Option<String>, main_job: bool) -> PyResult<String> {
    let src = source(config_json, preset).map_err(err)?;
    let cfg = if main_job {
        world::Config::load_under(world::presets::MAIN_JOB, &src)
    } else {
        world::Config::load(&src)
    }
    .map_err(err)?;
    serde_json::to_string(&cfg).map_err(err)
}

/// A recorded page-access trace next to the generator's TPC-C (as `commitlab trace-stats
/// --trace F`): `{"trace": stats, "generator_tpcc": stats}` (`workload::pagetrace::TraceStats`),
/// the generator drawn serially, client by client, from the configuration's `host.tpcc`.
#[pyfunction]
#[pyo3(signature = (trace, config_json, preset))]
fn trace_stats_json(
    py: Python<'_>,
    trace: &str,
    config_json: &str,
    preset: Option<String>,
) -> PyResult<String> {
    use workload::db::TxnSource;
    let src = source(config_json, preset).map_err(err)?;
    let cfg = world::Config::load(&src).map_err(err)?;
    let (recorded, generated) = py
        .allow_threads(|| {
            let t = workload::pagetrace::read(trace).map_err(|e| e.to_string())?;
            let specs: Vec<_> = (0..t.txns.len()).map(|k| t.spec(k)).collect();
            let recorded = workload::pagetrace::TraceStats::of(&t.schema(), &specs);
            let mut gen = workload::tpcc::Tpcc::new(&cfg.host.tpcc, cfg.seed)
                .map_err(|e| format!("host.tpcc: {}", e.what))?;
            let mut rng = sim::Rng::new(cfg.seed).fork("trace-stats");
            let clients = cfg.host.clients.max(1);
            let gen_specs: Vec<_> = (0..t.txns.len() as u64)
                .map(|k| workload::db::next_serial(&mut gen, (k % clients as u64) as u32, &mut rng))
                .collect();
            let generated = workload::pagetrace::TraceStats::of(gen.schema(), &gen_specs);
            Ok::<_, String>((recorded, generated))
        })
        .map_err(err)?;
    serde_json::to_string(&serde_json::json!({ "trace": recorded, "generator_tpcc": generated }))
        .map_err(err)
}

/// The presets (as `commitlab presets`): name, capacity, parallel units, page and block
/// size, cell type; a preset that does not load has its error.
#[pyfunction]
fn presets_json() -> PyResult<String> {
    let rows: Vec<serde_json::Value> = world::presets::NAMES
        .iter()
        .map(|p| {
            match world::Config::load(&ConfigSource {
                preset: Some(p.to_string()),
                ..Default::default()
            }) {
                Ok(c) => {
                    let g = c.nand.geometry();
                    serde_json::json!({
                        "preset": p,
                        "capacity_bytes": g.capacity_bytes(),
                        "planes": g.pus(),
                        "page_bytes": g.page_bytes,
                        "pages_per_block": g.pages_per_block,
                        "cell": c.nand.cell,
                        "error": "",
                    })
                }
                Err(e) => serde_json::json!({"preset": p, "error": e.to_string()}),
            }
        })
        .collect();
    serde_json::to_string(&rows).map_err(err)
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
    m.add_function(wrap_pyfunction!(config_json, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats_json, m)?)?;
    m.add_function(wrap_pyfunction!(crash_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_round_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_point_json, m)?)?;
    m.add_function(wrap_pyfunction!(soak_json, m)?)?;
    m.add_function(wrap_pyfunction!(sqlite::sqlite_connect, m)?)?;
    m.add_class::<sqlite::SqliteConnection>()?;
    m.add("SqliteError", m.py().get_type::<sqlite::SqliteError>())?;
    Ok(())
}

/// Random crash states per host batch of a soak (the command line's `soak::HOST_BATCH`).
const SOAK_HOST_BATCH: u64 = 1000;

/// A soak's progress, kept in its state file after every round: the command line's
/// `commitlab soak` state file, field for field, so either resumes the other's.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct SoakState {
    seed: u64,
    protocols: Vec<String>,
    #[serde(default)]
    hosts: Vec<String>,
    batch: u64,
    next_unit: u64,
    schedules: u64,
    states: u64,
    nested_states: u64,
    violations: u64,
    wall_s: f64,
    per_protocol: std::collections::BTreeMap<String, [u64; 3]>,
    failures: Vec<String>,
}

/// One host cell of a soak: its name, the configuration of its larger run, and the
/// command-line words that reproduce it.
struct SoakHost {
    name: String,
    cell: world::host_run::CrashCell,
    cfg: world::Config,
    sets_cli: String,
}

/// The host cells a soak covers (`soak --hosts`): the larger run of every `crash --host
/// all` cell whose configuration loads and whose run records.
fn soak_hosts(src: &ConfigSource, seed: Option<u64>) -> Vec<SoakHost> {
    world::host_run::crash_cells()
        .into_iter()
        .filter_map(|cell| {
            let (strategy, protocol, update, external) = cell;
            let base = world::host_run::host_crash_config_for(strategy, protocol, Some(update));
            let mut sets = src.sets.clone();
            sets.push(format!("host.update=\"{update}\""));
            if external.is_some() {
                sets.extend(
                    world::host_run::HOST_CRASH_EMULATED
                        .iter()
                        .map(|s| s.to_string()),
                );
            }
            sets.extend(
                world::host_run::HOST_CRASH_LARGER
                    .iter()
                    .map(|s| s.to_string()),
            );
            let cell_src = ConfigSource {
                preset: src.preset.clone(),
                file: None,
                sets: sets.clone(),
            };
            let mut with = cell_src.clone();
            with.sets.push(format!("protocol.name=\"{protocol}\""));
            with.sets.push(format!("host.strategy=\"{strategy}\""));
            let mut c = world::Config::load_over(Some(&base), &with).ok()?;
            if let Some(s) = seed {
                c.seed = s;
            }
            world::host_run::record_host(&c).ok()?;
            let name = format!(
                "host {strategy}/{protocol}/{update}{}",
                external.map(|e| format!("/{e}")).unwrap_or_default()
            );
            // The sets the replay command needs: the user's and the cell's, not `host.update`
            // (its own flag there).
            let mut cli = ConfigSource {
                preset: src.preset.clone(),
                file: None,
                sets: sets
                    .into_iter()
                    .filter(|s| !s.starts_with("host.update="))
                    .collect(),
            };
            cli.sets.retain(|s| !s.is_empty());
            Some(SoakHost {
                name,
                cell,
                cfg: c,
                sets_cli: source_cli(&cli),
            })
        })
        .collect()
}

/// Runs random double-crash schedules over protocols (and host cells) as `commitlab soak`
/// does (docs/CRASH-MODEL.md, "Crash checking on fresh seeds"): work unit u is batch u / n
/// of item u mod n (the protocols, then the host cells); a protocol's batch is `BATCH`
/// schedules under the timing `Timing::draw(seed, batch)` draws, a host cell's batch a
/// fresh recording with seed + batch and 1,000 random states; rounds of twice the worker
/// threads' units until `schedules` or `minutes`, the progress saved to `state_file` after
/// each round (an existing file is resumed). Returns the state (as JSON) with the seed and
/// the command that repeats the soak.
#[pyfunction]
#[pyo3(signature = (config_json, preset, protocols, schedules, minutes, hosts, seed, drawn, state_file))]
#[allow(clippy::too_many_arguments)]
fn soak_json(
    py: Python<'_>,
    config_json: &str,
    preset: Option<String>,
    protocols: Vec<String>,
    schedules: u64,
    minutes: Option<f64>,
    hosts: bool,
    seed: Option<u64>,
    drawn: bool,
    state_file: &str,
) -> PyResult<String> {
    use rayon::prelude::*;
    let src = source(config_json, preset).map_err(err)?;
    if schedules == 0 {
        return Err(err("schedules must be at least 1"));
    }
    if let Some(m) = minutes.filter(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(err(format!("minutes must be a positive number, not {m}")));
    }
    if seed.is_some()
        && src
            .sets
            .iter()
            .any(|s| s.split('=').next().map(str::trim) == Some("seed"))
    {
        return Err(err(
            "seed is given twice (the seed argument and the configuration's `seed`)",
        ));
    }
    let named: Vec<String> = if protocols.is_empty() {
        ssd::protocol::names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        protocols
            .iter()
            .map(|p| ssd::protocol::canonical(p).map(str::to_string))
            .collect::<Result<_, _>>()
            .map_err(err)?
    };
    let mut cfgs = Vec::new();
    for p in &named {
        let mut s = src.clone();
        s.sets.push(format!("protocol.name=\"{p}\""));
        let mut c = world::Config::load_over(Some(&check::small_config(p)), &s).map_err(err)?;
        if let Some(x) = seed {
            c.seed = x;
        }
        c.validate().map_err(err)?;
        world::usage::check_source(&c, &src).map_err(err)?;
        cfgs.push(c);
    }
    let seed = cfgs[0].seed;
    let hosts: Vec<SoakHost> = if hosts {
        py.allow_threads(|| soak_hosts(&src, Some(seed)))
    } else {
        Vec::new()
    };
    let host_names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
    let sets_cli = source_cli(&src);
    let mut again = format!("commitlab soak --seed {seed}");
    if !protocols.is_empty() {
        again.push_str(&format!(" --protocols {}", shell_word(&named.join(","))));
    }
    if !hosts.is_empty() {
        again.push_str(" --hosts");
    }
    again.push_str(&format!(" --schedules {schedules}"));
    if let Some(m) = minutes {
        again.push_str(&format!(" --minutes {m}"));
    }
    again.push_str(&sets_cli);
    let path = std::path::PathBuf::from(state_file);
    let mut st = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let st: SoakState = serde_json::from_str(&text)
                .map_err(|e| err(format!("{state_file}: not a soak state file: {e}")))?;
            if st.seed != seed
                || st.protocols != named
                || st.hosts != host_names
                || st.batch != BATCH
            {
                return Err(err(format!(
                    "{state_file}: the soak there used seed {}, protocols {} and {} host cells; resume with the same seed, protocols and hosts, or use another state_file",
                    st.seed,
                    st.protocols.join(","),
                    st.hosts.len()
                )));
            }
            st
        }
        Err(_) => SoakState {
            seed,
            protocols: named.clone(),
            hosts: host_names.clone(),
            batch: BATCH,
            ..Default::default()
        },
    };
    let resumed_schedules = st.schedules;
    let threads = rayon::current_num_threads() as u64;
    let wall = std::time::Instant::now();
    let start_wall = st.wall_s;
    let np = named.len() as u64;
    let n = np + hosts.len() as u64;
    while st.schedules < schedules {
        if minutes.is_some_and(|m| wall.elapsed().as_secs_f64() > m * 60.0) {
            break;
        }
        let units: Vec<u64> = (st.next_unit..st.next_unit + threads * 2).collect();
        let results: Vec<Result<SoakUnit, String>> = py.allow_threads(|| {
            units
                .par_iter()
                .map(|&u| {
                    let b = u / n;
                    match (u % n).checked_sub(np) {
                        Some(h) => soak_host_unit(&hosts[h as usize], seed, b),
                        None => soak_device_unit(&cfgs[(u % n) as usize], seed, b, &sets_cli),
                    }
                })
                .collect()
        });
        for (r, &u) in results.into_iter().zip(&units) {
            let r = r.map_err(err)?;
            let item = match (u % n).checked_sub(np) {
                None => named[(u % n) as usize].clone(),
                Some(h) => host_names[h as usize].clone(),
            };
            let e = st.per_protocol.entry(item).or_default();
            e[0] += r.schedules;
            e[1] += r.states;
            e[2] += r.violations;
            st.schedules += r.schedules;
            st.states += r.states;
            st.nested_states += r.nested_states;
            st.violations += r.violations;
            if let Some(x) = r.replay {
                if st.failures.len() < 50 {
                    st.failures.push(x);
                }
            }
        }
        st.next_unit += units.len() as u64;
        st.wall_s = start_wall + wall.elapsed().as_secs_f64();
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(&st).map_err(err)?;
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| err(format!("{state_file}: {e}")))?;
        py.check_signals()?;
    }
    serde_json::to_string(&serde_json::json!({
        "state": st,
        "drawn": drawn,
        "repeat": again,
        "resumed_schedules": resumed_schedules,
    }))
    .map_err(err)
}

/// What one work unit of a soak checked.
struct SoakUnit {
    schedules: u64,
    states: u64,
    nested_states: u64,
    violations: u64,
    /// The command that replays the unit's first violation.
    replay: Option<String>,
}

/// Batch `b` of a protocol's soak: `BATCH` random double-crash schedules from schedule
/// `b × BATCH` under the timing `Timing::draw(seed, b)`.
fn soak_device_unit(
    cfg: &world::Config,
    seed: u64,
    b: u64,
    sets_cli: &str,
) -> Result<SoakUnit, String> {
    let protocol = &cfg.protocol.name;
    let t = check::timing::Timing::draw(seed, b);
    let mut c = cfg.clone();
    t.apply(&mut c);
    let rec = check::record(&c).map_err(|e| {
        format!(
            "{protocol}: recording the run (timing {}) failed: {e}",
            t.spec()
        )
    })?;
    let mut o = check::Options::new(check::Mode::Random { schedules: BATCH }, seed);
    o.first_schedule = b * BATCH;
    o.double = true;
    let rep = check::check_with(&rec, &o, &mut |_| false)?;
    let replay = rep.first.first().map(|v| {
        format!(
            "commitlab crash --protocol {protocol} --seed {seed}{sets_cli} --double --schedules {} --timing {} --state {}",
            (b + 1) * BATCH,
            shell_word(&t.spec()),
            v.path(true)
        )
    });
    Ok(SoakUnit {
        schedules: BATCH,
        states: rep.states,
        nested_states: rep.nested_states,
        violations: rep.violations,
        replay,
    })
}

/// Batch `b` of a host cell's soak: a fresh recording with seed `seed + b`, 1,000 random
/// crash states.
fn soak_host_unit(h: &SoakHost, seed: u64, b: u64) -> Result<SoakUnit, String> {
    let mut c = h.cfg.clone();
    c.seed = seed.wrapping_add(b);
    let rec =
        world::host_run::record_host(&c).map_err(|e| format!("{} seed {}: {e}", h.name, c.seed))?;
    let rep = world::host_run::check_host_with(
        &rec,
        host::check::Mode::Random {
            schedules: SOAK_HOST_BATCH,
        },
        c.seed,
        None,
        false,
    )
    .map_err(|e| format!("{} seed {}: {e}", h.name, c.seed))?;
    let (strategy, protocol, update, _) = h.cell;
    let replay = rep.first.first().map(|v| {
        format!(
            "commitlab crash --host {strategy} --protocol {protocol} --update {update} --seed {} --schedules {SOAK_HOST_BATCH}{} --state {}",
            c.seed, h.sets_cli, v.state.index
        )
    });
    Ok(SoakUnit {
        schedules: SOAK_HOST_BATCH,
        states: rep.states,
        nested_states: 0,
        violations: rep.violations,
        replay,
    })
}
