//! Which configuration keys a run uses: a key the user set (in a `--config` file, a `--set`,
//! a Python dict or a swept value) that the chosen run never reads is refused with the run
//! that would read it, rather than silently ignored (a `host.strategy` beside a device
//! workload used to run the synthetic job as if it were not there).
//!
//! Only keys the user named are judged: a preset or the main job's base sets keys for every
//! kind of run, and those are defaults, not requests. What counts as "used" follows the code
//! that reads each section: `world::run` reads `[workload]` (the section of its kind) and
//! `[run]`; `host_run` reads `[host]` and the device sections, and of `[workload]` only
//! `kind`; inside `[host]` each workload's and update strategy's subsection is read only
//! when it is chosen, `[host.pcm]` only by the PCM strategies, and the PCM strategies on a
//! Table 2 disk never build the flash device (`host::pcm_tier::check_protocol`).
//!
//! What it does not judge: single keys that a strategy ignores inside a section it reads
//! (`host.steal` under device-tx); the crash checker's and SQLite's own configurations.

use crate::config::{Config, ConfigError, ConfigSource, WorkloadKind};

/// The dotted keys `src` sets by hand: every leaf of its `--config` file (except `preset`)
/// and every `--set` key, in that order.
pub fn user_keys(src: &ConfigSource) -> Result<Vec<String>, ConfigError> {
    let mut out = Vec::new();
    if let Some(path) = &src.file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ConfigError(format!("{}: {}", path.display(), e.to_string().trim()))
        })?;
        leaves("", &toml::Value::Table(table), &mut out);
        out.retain(|k| k != "preset");
    }
    for s in &src.sets {
        let key = s.split_once('=').map_or(s.as_str(), |(k, _)| k).trim();
        // A whole section set at once (`--set 'host.tpcc={warehouses=1}'`) counts as its
        // leaves.
        match s.split_once('=').map(|(_, v)| v.trim()) {
            Some(v) if v.starts_with('{') => {
                if let Ok(t) = format!("v = {v}").parse::<toml::Table>() {
                    if let Some(inner) = t.get("v") {
                        leaves(key, inner, &mut out);
                        continue;
                    }
                }
                out.push(key.to_string());
            }
            _ => out.push(key.to_string()),
        }
    }
    Ok(out)
}

fn leaves(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&key, x, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

fn under(key: &str, section: &str) -> bool {
    key == section
        || key
            .strip_prefix(section)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The device-level workload subsections and the kind that reads each.
const WORKLOAD_SECTIONS: [(&str, WorkloadKind, &str); 4] = [
    ("workload.synthetic", WorkloadKind::Synthetic, "synthetic"),
    ("workload.txn", WorkloadKind::Txn, "txn"),
    ("workload.seqwriter", WorkloadKind::Seqwriter, "seqwriter"),
    ("workload.trace", WorkloadKind::Trace, "trace"),
];

/// The DBMS host's workload subsections (`host.workload`).
const HOST_WORKLOADS: [&str; 5] = ["tpcc", "tpcb", "tatp", "bank", "records"];

/// Why `cfg`'s run does not use `key`, naming what would; None when it does.
pub fn unused_reason(cfg: &Config, key: &str) -> Option<String> {
    let kind = cfg.workload.kind;
    let kind_name = cfg.workload.kind_name();
    if under(key, "host") {
        if kind != WorkloadKind::Host {
            return Some(format!(
                "{key}: the [host] section is read only by DBMS host runs (`run --host S`, or workload.kind = \"host\" in run, compare, sweep and Python), but this run's workload is {kind_name}"
            ));
        }
        let h = &cfg.host;
        for w in HOST_WORKLOADS {
            if under(key, &format!("host.{w}")) && h.workload != w {
                return Some(format!(
                    "{key}: read only when host.workload = \"{w}\" (--workload {w}), but this run's host workload is {}",
                    h.workload
                ));
            }
        }
        if under(key, "host.ipa") && !matches!(h.update.as_str(), "ipa" | "ipa-block") {
            return Some(format!(
                "{key}: read only by the ipa and ipa-block update strategies (--update ipa), but this run's is {}",
                h.update
            ));
        }
        if under(key, "host.ipl") && h.update != "ipl" {
            return Some(format!(
                "{key}: read only by the ipl update strategy (--update ipl), but this run's is {}",
                h.update
            ));
        }
        if under(key, "host.pcm") && !host::acklog::uses_pcm_tier(&h.strategy) {
            return Some(format!(
                "{key}: the PCM tier is read only by the PCM strategies (pcmlogging, pcmlogging-page, wal-pcm, scmlogging), but this run's strategy is {}",
                h.strategy
            ));
        }
        if under(key, "host.device_tx") && h.strategy != "device-tx" {
            return Some(format!(
                "{key}: read only by the device-tx strategy, but this run's strategy is {}",
                h.strategy
            ));
        }
        return None;
    }
    if under(key, "workload") {
        if key == "workload.kind" {
            return None;
        }
        if kind == WorkloadKind::Host {
            return Some(format!(
                "{key}: a DBMS host run draws its transactions from host.workload and reads no [workload] key but kind; {key} is read by device-level runs (run without --host, or compare/sweep without workload.kind = \"host\")"
            ));
        }
        for (section, k, name) in WORKLOAD_SECTIONS {
            if under(key, section) && kind != k {
                return Some(format!(
                    "{key}: read only when workload.kind = \"{name}\", but this run's workload is {kind_name}"
                ));
            }
        }
        return None;
    }
    if under(key, "run") && kind == WorkloadKind::Host {
        return Some(format!(
            "{key}: the [run] section is read by device-level runs; a DBMS host run has its own (host.measure_recovery)"
        ));
    }
    if kind == WorkloadKind::Host
        && host::acklog::uses_pcm_tier(&cfg.host.strategy)
        && cfg.host.pcm.external != "emulated"
        && ["nand", "ftl", "protocol"].iter().any(|s| under(key, s))
    {
        return Some(format!(
            "{key}: host {} keeps its database in PCM and on the {} disk (host.pcm.external); the flash device is read only with host.pcm.external = \"emulated\"",
            cfg.host.strategy, cfg.host.pcm.external
        ));
    }
    None
}

/// Refuses the first of `keys` that `cfg`'s run does not use.
pub fn check_used(cfg: &Config, keys: &[String]) -> Result<(), ConfigError> {
    for k in keys {
        if let Some(why) = unused_reason(cfg, k) {
            return Err(ConfigError(why));
        }
    }
    Ok(())
}

/// `user_keys` then `check_used`.
pub fn check_source(cfg: &Config, src: &ConfigSource) -> Result<(), ConfigError> {
    check_used(cfg, &user_keys(src)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(sets: &[&str]) -> (Config, ConfigSource) {
        let src = ConfigSource {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        (Config::load(&src).unwrap(), src)
    }

    fn refused(sets: &[&str]) -> String {
        let (c, s) = cfg(sets);
        check_source(&c, &s).unwrap_err().to_string()
    }

    fn accepted(sets: &[&str]) {
        let (c, s) = cfg(sets);
        check_source(&c, &s).unwrap();
    }

    #[test]
    fn host_keys_need_a_host_run() {
        let e = refused(&["host.strategy=\"wal\"", "host.workload=\"tpcc\""]);
        assert!(e.contains("host.strategy") && e.contains("--host S"), "{e}");
        accepted(&["workload.kind=\"host\"", "host.strategy=\"wal\""]);
    }

    #[test]
    fn each_workload_section_needs_its_kind() {
        let e = refused(&["workload.txn.concurrency=2"]);
        assert!(e.contains("workload.kind = \"txn\""), "{e}");
        accepted(&["workload.kind=\"txn\"", "workload.txn.concurrency=2"]);
        let e = refused(&["workload.kind=\"host\"", "workload.prefill=0.3"]);
        assert!(e.contains("host.workload"), "{e}");
        let e = refused(&["workload.kind=\"host\"", "run.measure_recovery=false"]);
        assert!(e.contains("host.measure_recovery"), "{e}");
    }

    #[test]
    fn host_subsections_need_their_choice() {
        let e = refused(&["workload.kind=\"host\"", "host.tpcc.warehouses=2"]);
        assert!(e.contains("host.workload = \"tpcc\""), "{e}");
        accepted(&[
            "workload.kind=\"host\"",
            "host.workload=\"tpcc\"",
            "host.tpcc.warehouses=2",
        ]);
        let e = refused(&["workload.kind=\"host\"", "host.ipa.n=2"]);
        assert!(e.contains("--update ipa"), "{e}");
        let e = refused(&["workload.kind=\"host\"", "host.pcm.external=\"ssd\""]);
        assert!(e.contains("PCM strategies"), "{e}");
        let e = refused(&[
            "workload.kind=\"host\"",
            "host.strategy=\"pcmlogging\"",
            "nand.channels=4",
        ]);
        assert!(e.contains("emulated"), "{e}");
        accepted(&[
            "workload.kind=\"host\"",
            "host.strategy=\"pcmlogging\"",
            "host.pcm.external=\"emulated\"",
            "nand.channels=4",
        ]);
    }

    #[test]
    fn a_whole_section_counts_as_its_leaves() {
        let e = refused(&["host={strategy=\"wal\"}"]);
        assert!(e.contains("host.strategy"), "{e}");
    }
}
