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
    let metrics = py
        .allow_threads(|| {
            world::run(&cfg, &world::RunOptions::default())
                .map(|o| o.metrics)
                .map_err(|e| e.to_string())
        })
        .map_err(err)?;
    serde_json::to_string(&metrics).map_err(err)
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
    m.add_function(wrap_pyfunction!(sqlite::sqlite_connect, m)?)?;
    m.add_class::<sqlite::SqliteConnection>()?;
    m.add("SqliteError", m.py().get_type::<sqlite::SqliteError>())?;
    Ok(())
}
