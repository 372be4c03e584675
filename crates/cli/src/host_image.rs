//! `run --host` with a file-backed device and `recover --host` (`world::host_image`), and the
//! flags each mode of `run`, `crash` and `recover` does not use, refused with exit 2 rather
//! than silently ignored.

use crate::{bad, ConfigArgs, Fail};
use std::path::{Path, PathBuf};

/// The flags a `run` was given beyond its configuration.
pub(crate) struct RunFlags<'a> {
    pub protocol: &'a Option<String>,
    pub trace: &'a Option<PathBuf>,
    pub trace_format: &'a Option<String>,
    pub record: &'a Option<PathBuf>,
    pub json: &'a Option<PathBuf>,
    pub image: &'a Option<PathBuf>,
    pub ack_log: &'a Option<PathBuf>,
    /// `--workload W` (= host.workload).
    pub workload: &'a Option<String>,
}

/// A device-level `run` refuses the host's flags and a trace format without a trace.
pub(crate) fn check_device_run(a: &ConfigArgs, f: &RunFlags<'_>) -> Result<(), Fail> {
    if a.update.is_some() {
        return Err(bad(
            "--update: the update strategy is the DBMS host's; a device-level run has none (add --host S)",
        ));
    }
    if f.trace_format.is_some() && f.trace.is_none() {
        return Err(bad("--trace-format: no --trace to read"));
    }
    Ok(())
}

/// `run --host S`: in memory, or file-backed with `--image` (and `--ack-log`).
pub(crate) fn cmd_host_run(a: &ConfigArgs, strategy: &str, f: &RunFlags<'_>) -> Result<(), Fail> {
    let trace = host_trace_sets(a, f)?;
    let Some(image) = f.image else {
        if f.ack_log.is_some() {
            return Err(bad(
                "--ack-log: the ack log is verified against a device image; add --image F",
            ));
        }
        return crate::cmd_host_run(
            a, strategy, f.protocol, f.workload, &trace, f.json, f.record,
        );
    };
    let mut extra = vec![
        "workload.kind=\"host\"".to_string(),
        format!("host.strategy=\"{strategy}\""),
    ];
    if let Some(p) = f.protocol {
        extra.push(format!("protocol.name=\"{p}\""));
    }
    if let Some(w) = f.workload {
        extra.push(format!("host.workload={}", toml::Value::String(w.clone())));
    }
    extra.extend(trace.iter().cloned());
    let cfg = crate::load(a, None, &extra)?;
    check_host_trace(&cfg, f.trace.is_some())?;
    crate::Out::check(f.json)?;
    cfg.validate().map_err(bad)?;
    crate::check_used(a, &cfg)?;
    world::host_image::check_file_backed(&cfg).map_err(bad)?;
    let m =
        world::host_image::run_host_file(&cfg, image, f.ack_log.as_deref(), f.record.as_deref())
            .map_err(|e| match e {
                // The device failed under the run: a check failed (exit 1). An image or ack
                // log that cannot be written is the environment's fault (exit 2).
                world::WorldError::Device { .. } => Fail(1, e.to_string()),
                other => bad(other),
            })?;
    crate::print_host_metrics(&m);
    crate::write_json(f.json, &m)
}

/// `recover [--host S]`: a host image needs `--host`, a device image refuses it.
pub(crate) fn cmd_recover(
    image: &Path,
    host: &Option<String>,
    verify: &Option<PathBuf>,
    json: &Option<PathBuf>,
) -> Result<(), Fail> {
    let Some(strategy) = host else {
        if let Ok(cfg) = world::config_of_image(image) {
            if cfg.workload.kind == world::WorkloadKind::Host {
                return Err(bad(format!(
                    "{}: the image is from a DBMS host run (strategy {}); recover it with --host {}",
                    image.display(),
                    cfg.host.strategy,
                    cfg.host.strategy
                )));
            }
        }
        return crate::cmd_recover(image, verify, json);
    };
    host::strategy::lookup(strategy).map_err(bad)?;
    crate::Out::check(json)?;
    use world::host_image::RecoverError;
    let r =
        world::host_image::recover_host_image(image, strategy, verify.as_deref()).map_err(|e| {
            match e {
                RecoverError::Input(m) => Fail(2, m),
                RecoverError::Failed(m) => Fail(1, format!("{}: {m}", image.display())),
            }
        })?;
    println!("host {} on {}", r.strategy, r.protocol);
    println!(
        "recovery: {} pages read ({} by the device), {:.3} ms simulated; {} DB pages differ from the loaded database",
        r.pages_read,
        r.device_pages_read,
        r.time_ns as f64 / 1e6,
        r.pages_changed
    );
    if verify.is_some() {
        println!(
            "ack log: {} acked, {} in flight, {} of the run's {} commits never issued; {} findings",
            r.acked,
            r.in_flight,
            r.unissued,
            r.commits_in_run,
            r.findings.len()
        );
        for f in r.findings.iter().take(10) {
            println!("  {f}");
        }
        if !r.findings.is_empty() {
            crate::write_json(json, &r)?;
            return Err(Fail(
                1,
                format!(
                    "the recovered database breaks the ack log ({} findings): acked transactions lost or unacked ones visible",
                    r.findings.len()
                ),
            ));
        }
    }
    crate::write_json(json, &r)
}

/// `crash` refuses the flags of the other mode: `--update` without `--host` (a device-level
/// check has no update strategy), and with `--host`, `--exhaustive` beside `--schedules` (a
/// host check runs one or the other).
pub(crate) fn check_crash_flags(a: &crate::crash::CrashArgs) -> Result<(), Fail> {
    if a.host.is_none() && a.cfg.update.is_some() {
        return Err(bad(
            "--update: the update strategy is the DBMS host's; a device-level crash check has none (add --host S)",
        ));
    }
    if a.host.is_some() && a.host.as_deref() != Some("all") && a.exhaustive && a.schedules.is_some()
    {
        return Err(bad(
            "--exhaustive with --schedules: a host crash check runs one of them (exhaustive without --schedules)",
        ));
    }
    Ok(())
}

/// `run --host S --trace F`: the settings that replay the page-access trace F through the
/// host (`host.workload = "trace"`, `host.trace.path`); the trace format, if given, must be
/// `pages` (the only one a host replays). Without `--trace`, none.
pub(crate) fn host_trace_sets(a: &ConfigArgs, f: &RunFlags<'_>) -> Result<Vec<String>, Fail> {
    let Some(t) = f.trace else {
        if f.trace_format.is_some() {
            return Err(bad("--trace-format: no --trace to read"));
        }
        return Ok(Vec::new());
    };
    if let Some(fmt) = f.trace_format {
        if fmt != "pages" {
            return Err(bad(format!(
                "--trace-format {fmt}: a host run replays page-access traces (pages) only; replay a {fmt} trace at device level (without --host)"
            )));
        }
    }
    let mut sets = vec![format!(
        "host.trace.path={}",
        toml::Value::String(t.display().to_string())
    )];
    // `--trace` alone picks the trace workload; an explicit one must be "trace" (checked
    // after loading by `check_host_trace`).
    let explicit = f.workload.is_some()
        || a.sets
            .iter()
            .any(|s| s.trim_start().starts_with("host.workload"));
    if !explicit {
        sets.push("host.workload=\"trace\"".into());
    }
    Ok(sets)
}

/// A `--trace` with a host workload other than "trace" would be ignored: refused.
pub(crate) fn check_host_trace(cfg: &world::Config, traced: bool) -> Result<(), Fail> {
    if traced && cfg.host.workload != "trace" {
        return Err(bad(format!(
            "--trace: host.workload is \"{}\"; a page-access trace replays with host.workload = \"trace\"",
            cfg.host.workload
        )));
    }
    Ok(())
}
