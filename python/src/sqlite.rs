//! `commitlab.sqlite`: a SQLite connection on an emulated device (`commitlab_sqlite`'s
//! session: the bundled SQLite through the commitlab VFS), and its device metrics.
//! The Python side (`commitlab/sqlite.py`) wraps it in a `sqlite3.Connection`-like object.

use crate::{err, source};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rusqlite::types::{Value, ValueRef};
use sqlite::run::{build_fs, Counters, Mode, Session, SqliteOptions};

create_exception!(_commitlab, SqliteError, PyException);

/// One open database on its own emulated device.
#[pyclass(unsendable, module = "commitlab._commitlab")]
pub struct SqliteConnection {
    s: Option<Session>,
    start: Counters,
    info: serde_json::Value,
}

fn to_value(x: &Bound<'_, PyAny>) -> PyResult<Value> {
    if x.is_none() {
        Ok(Value::Null)
    } else if let Ok(b) = x.downcast::<PyBytes>() {
        Ok(Value::Blob(b.as_bytes().to_vec()))
    } else if let Ok(i) = x.extract::<i64>() {
        Ok(Value::Integer(i))
    } else if let Ok(f) = x.extract::<f64>() {
        Ok(Value::Real(f))
    } else if let Ok(s) = x.extract::<String>() {
        Ok(Value::Text(s))
    } else {
        Err(SqliteError::new_err(format!(
            "parameter of type {} is not supported (None, int, float, str, bytes)",
            x.get_type().name()?
        )))
    }
}

fn to_py(py: Python<'_>, v: ValueRef<'_>) -> PyObject {
    match v {
        ValueRef::Null => py.None(),
        ValueRef::Integer(i) => i
            .into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None()),
        ValueRef::Real(f) => f
            .into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None()),
        ValueRef::Text(t) => String::from_utf8_lossy(t)
            .into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|_| py.None()),
        ValueRef::Blob(b) => PyBytes::new(py, b).into_any().unbind(),
    }
}

impl SqliteConnection {
    fn session(&self) -> PyResult<&Session> {
        self.s
            .as_ref()
            .ok_or_else(|| SqliteError::new_err("the connection is closed"))
    }
}

#[pymethods]
impl SqliteConnection {
    /// Runs one statement with positional parameters; returns (rows, column names,
    /// rowcount, lastrowid).
    #[pyo3(signature = (sql, params))]
    #[allow(clippy::type_complexity)]
    fn execute(
        &self,
        py: Python<'_>,
        sql: &str,
        params: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<(Vec<Py<PyTuple>>, Vec<String>, i64, i64)> {
        let s = self.session()?;
        let vals = params.iter().map(to_value).collect::<PyResult<Vec<_>>>()?;
        let fail = |e: rusqlite::Error| SqliteError::new_err(s.err(e));
        let mut st = s.conn.prepare(sql).map_err(fail)?;
        let names: Vec<String> = st.column_names().iter().map(|c| c.to_string()).collect();
        let n = names.len();
        let before = s.conn.total_changes();
        let mut rows = st
            .query(rusqlite::params_from_iter(vals.iter()))
            .map_err(fail)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(fail)? {
            let mut t = Vec::with_capacity(n);
            for k in 0..n {
                t.push(to_py(py, r.get_ref(k).map_err(fail)?));
            }
            out.push(PyTuple::new(py, t)?.unbind());
        }
        drop(rows);
        let rowcount = if n == 0 {
            (s.conn.total_changes() - before) as i64
        } else {
            -1
        };
        Ok((out, names, rowcount, s.conn.last_insert_rowid()))
    }

    /// Runs a script of statements (no parameters).
    fn executescript(&self, sql: &str) -> PyResult<()> {
        let s = self.session()?;
        s.conn
            .execute_batch(sql)
            .map_err(|e| SqliteError::new_err(s.err(e)))
    }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    fn in_transaction(&self) -> PyResult<bool> {
        Ok(!self.session()?.conn.is_autocommit())
    }

    /// The device metrics since the connection opened, as JSON.
    fn metrics_json(&self) -> PyResult<String> {
        let s = self.session()?;
        let mut m = s.counters().since(&self.start);
        if let (Some(o), Some(i)) = (m.as_object_mut(), self.info.as_object()) {
            for (k, v) in i {
                o.insert(k.clone(), v.clone());
            }
        }
        serde_json::to_string(&m).map_err(err)
    }

    /// Closes the database (the device and its contents go with it).
    fn close(&mut self) -> PyResult<()> {
        if let Some(s) = self.s.take() {
            s.close().map_err(SqliteError::new_err)?;
        }
        Ok(())
    }
}

/// Opens a database on a device the configuration describes (as `commitlab sqlite run`).
#[pyfunction]
#[pyo3(signature = (config_json, preset, journal, page_size, cache_pages, wal_autocheckpoint))]
pub fn sqlite_connect(
    config_json: &str,
    preset: Option<String>,
    journal: &str,
    page_size: u32,
    cache_pages: u32,
    wal_autocheckpoint: u32,
) -> PyResult<SqliteConnection> {
    let src = source(config_json, preset).map_err(err)?;
    let cfg = world::Config::load(&src).map_err(err)?;
    cfg.validate().map_err(err)?;
    let mode = Mode::parse(journal)
        .map_err(|_| err(format!("journal: unknown journal mode '{journal}' (known: delete, truncate, persist, wal, batch)")))?;
    let o = SqliteOptions {
        mode,
        page_size,
        cache_pages,
        wal_autocheckpoint,
        ..Default::default()
    };
    o.validate(&cfg).map_err(err)?;
    let mut fs = build_fs(&cfg, &o).map_err(err)?;
    // No crash images here: an overwritten page version is never read again.
    fs.opts.reclaim_versions = true;
    let s = Session::open(fs, cfg.seed, &o).map_err(SqliteError::new_err)?;
    let start = s.counters();
    let info = serde_json::json!({
        "protocol": cfg.protocol.name,
        "journal": mode.name(),
        "seed": cfg.seed,
        "sqlite_version": sqlite::vfs::sqlite_version(),
        "flash_page_bytes": cfg.nand.page_bytes,
        "sqlite_page_bytes": o.effective_page_size(cfg.nand.page_bytes).unwrap_or(0),
    });
    Ok(SqliteConnection {
        s: Some(s),
        start,
        info,
    })
}
