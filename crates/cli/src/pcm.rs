//! `commitlab crash --host pcmlogging`: the PCMLogging crash checker (host::pcm_check) on
//! its fixed configurations — exhaustive on the tiny one, `--schedules N` random crash
//! states on the larger one.

use crate::{ConfigArgs, Fail};
use host::pcm_check::{check, record, Mode, PcmCheckConfig};

pub fn cmd_pcm_crash(
    a: &ConfigArgs,
    protocol: &str,
    schedules: Option<u64>,
    state: Option<u64>,
) -> Result<(), Fail> {
    if a.config.is_some() || a.preset.is_some() {
        return Err(Fail(
            2,
            "--host pcmlogging runs fixed check configurations: --config and --preset are not supported yet".into(),
        ));
    }
    let mut wear_delta = None;
    for kv in &a.sets {
        match kv.split_once('=') {
            Some(("pcmlogging.wear_delta", v)) => match v.trim().parse::<u64>() {
                Ok(d) if d >= 1 => wear_delta = Some(d),
                _ => {
                    return Err(Fail(
                        2,
                        format!("--set pcmlogging.wear_delta={v}: must be a whole number of XIDs, at least 1"),
                    ))
                }
            },
            _ => {
                return Err(Fail(
                    2,
                    format!("--host pcmlogging: unsupported --set '{kv}' (only pcmlogging.wear_delta=N)"),
                ))
            }
        }
    }
    if state.is_some() {
        return Err(Fail(
            2,
            "--host pcmlogging: --state is not supported yet".into(),
        ));
    }
    if protocol != "none" {
        return Err(Fail(
            2,
            format!("--host pcmlogging runs over a Table 2 disk, not the emulated SSD: use --protocol none (got '{protocol}')"),
        ));
    }
    if schedules == Some(0) {
        return Err(Fail(2, "--schedules must be at least 1".into()));
    }
    let seed = a.seed.unwrap_or(1);
    let (cfg, mode) = match schedules {
        None => (PcmCheckConfig::tiny(), Mode::Exhaustive),
        Some(n) => (PcmCheckConfig::larger(), Mode::Random { schedules: n }),
    };
    let cfg = PcmCheckConfig { wear_delta, ..cfg };
    let rec = record(&cfg, seed)
        .map_err(|e| Fail(1, format!("recording the pcmlogging run failed: {e}")))?;
    let rep = check(&rec, mode, seed).map_err(|e| Fail(2, e))?;
    for v in rep.first.iter().take(3) {
        println!("violation (seed={seed}): {v}");
    }
    println!(
        "pcmlogging run ({} pages x {} slots, {} B PCM, {:?} disk, wear delta {:?}): {} commits, {} aborts, {} pages destaged, {} swaps, {} PCM line writes, {} disk writes",
        cfg.pages, cfg.slots_per_page, cfg.pcm_bytes, cfg.disk, cfg.wear_delta, rep.commits, rec.aborts, rec.destaged_pages, rec.swaps, rep.pcm_writes, rep.disk_writes
    );
    for (what, w) in [("all units", &rec.wear), ("record units", &rec.record_wear)] {
        println!(
            "PCM wear ({what}): {} line writes, {:.2} writes/unit on average, worst 1 % {:.1}, worst 5 % {:.1}, variance {:.1}",
            w.total_line_writes, w.mean_writes_per_unit, w.worst_1pct_mean, w.worst_5pct_mean, w.variance
        );
    }
    println!(
        "crash states checked: {}, violations: {}, longest recovery scan: {} ns",
        rep.states, rep.violations, rep.max_recovery_scan_ns
    );
    if rep.violations > 0 {
        return Err(Fail(
            1,
            format!(
                "{} crash states violate the durability contract of host pcmlogging",
                rep.violations
            ),
        ));
    }
    Ok(())
}
