//! File-backed host runs and their recovery: `commitlab run --host S --image F --ack-log A`
//! and `commitlab recover --host S --image F --verify-acks A`.
//!
//! The run keeps the emulated device in an image file written through on every media
//! operation (`media::file`, as a device-level `run --image` does), with the configuration
//! in its header, and reports every commit's issue and ack to the ack log as it happens
//! (`host::acklog`: one unbuffered line each, the ack line before the transaction's locks
//! are released). A process killed at any instant leaves an image and a log that agree with
//! some crash of the run: every media operation issued before the kill is in the image
//! (state changes apply at issue), every ack reported is in the log.
//!
//! Recovery reopens the image, runs the device's recovery and then the strategy's (its own
//! restart, as after any crash), and judges the database with the host crash checker's
//! oracle (`host::check::judge_commits`): every acked transaction's effects present, no
//! effect of a transaction that was never issued, in-flight ones all or nothing. The tag
//! table is rebuilt by re-running the image's configuration in memory (`host::acklog`).
//!
//! The PCM strategies keep their database in a PCM and on a disk, not on the flash device:
//! their image is a tier image (`media::tier_file`, the configuration in its header), to
//! which the PCM and the disk write through; their restart is the crash checker's
//! (`host::pcm_tier::recover_for`) from the PCM and disk the image rebuilds. Refused: a
//! PCM strategy whose disk is the emulated SSD (`host.pcm.external = "emulated"`: its pages
//! are on a flash device in memory), and for the others a device not in
//! `nand.data_mode = "full"` (only byte-exact images can be file-backed).

use crate::config::{Config, WorkloadKind};
use crate::run::{build_device, config_of_image, WorldError};
use host::acklog::{self, AckSummary};
use std::path::Path;

fn herr(e: host::HostError) -> WorldError {
    match e {
        host::HostError::Config { .. } | host::HostError::Workload(_) => {
            WorldError::Config(e.to_string())
        }
        host::HostError::Device { at, what, error } => WorldError::Device {
            at,
            request: what,
            error,
        },
        other => WorldError::Io(other.to_string()),
    }
}

/// Refuses what a file-backed host run cannot keep in its image.
pub fn check_file_backed(cfg: &Config) -> Result<(), WorldError> {
    if acklog::uses_pcm_tier(&cfg.host.strategy) {
        if host::external::is_emulated(&cfg.host.pcm.external) {
            return Err(WorldError::Config(format!(
                "host.pcm.external: a file-backed run of {} keeps its PCM and disk in a tier image; a disk on the emulated SSD (\"{}\") keeps its pages on a flash device in memory: use \"hdd\", \"ssd\" or \"sd-card\"",
                cfg.host.strategy, cfg.host.pcm.external
            )));
        }
        return Ok(());
    }
    if cfg.host.separate_log() {
        return Err(WorldError::Config(
            "host.log_device: a file-backed host run keeps one device image; \"separate\" puts the log on a second device, which is kept in memory only (use \"shared\")".into(),
        ));
    }
    if cfg.nand.data_mode != media::DataMode::Full {
        return Err(WorldError::Config(
            "nand.data_mode: a file-backed image needs data_mode = \"full\" (--set nand.data_mode='\"full\"')".into(),
        ));
    }
    Ok(())
}

/// Runs the host on a device kept in `image`, reporting commits to `ack_log` (module docs).
pub fn run_host_file(
    cfg: &Config,
    image: &Path,
    ack_log: Option<&Path>,
    trace: Option<&Path>,
) -> Result<host::HostMetrics, WorldError> {
    let mut cfg = cfg.clone();
    cfg.workload.kind = WorkloadKind::Host;
    cfg.validate()?;
    check_file_backed(&cfg)?;
    let sink: Option<acklog::AckSink> = match ack_log {
        None => None,
        Some(p) => {
            let mut f = std::fs::File::create(p)
                .map_err(|e| WorldError::Config(format!("--ack-log {}: {e}", p.display())))?;
            Some(Box::new(move |l: &acklog::AckLine| {
                use std::io::Write;
                let mut s = serde_json::to_string(l).map_err(std::io::Error::other)?;
                s.push('\n');
                // One write per line, unbuffered: a kill leaves every line written whole
                // or cut at its end (a cut line is no claim, `acklog::parse`).
                f.write_all(s.as_bytes())
            }))
        }
    };
    let run = if acklog::uses_pcm_tier(&cfg.host.strategy) {
        if trace.is_some() {
            return Err(WorldError::Config(format!(
                "--record: a file-backed run of {} writes no device trace (its database is on the PCM tier)",
                cfg.host.strategy
            )));
        }
        // The flash device holds nothing of a PCM strategy's database on these disks: it
        // stays in memory; the PCM and the disk write through to the tier image.
        let label = serde_json::to_string(&cfg).map_err(|e| WorldError::Io(e.to_string()))?;
        let tier = media::tier_file::TierFile::create(image, &label)
            .map_err(|e| WorldError::Io(format!("{}: {e}", image.display())))?;
        let device = build_device(&cfg, None)?;
        host::engine::run_tier_file(&cfg.host, &cfg.device(), device, cfg.seed, sink, tier)
    } else {
        let device = build_device(&cfg, Some(image))?;
        host::engine::run_acked(
            &cfg.host,
            &cfg.device(),
            device,
            cfg.seed,
            false,
            trace.is_some(),
            sink,
        )
    }
    .map_err(|e| {
        let e = herr(e);
        if matches!(e, WorldError::Config(_)) {
            // Refused before it ran: no image of a run that never was.
            let _ = std::fs::remove_file(image);
        }
        e
    })?;
    if let (Some(path), Some(cmds)) = (trace, run.trace.as_ref()) {
        crate::host_run::write_trace(path, cmds)?;
    }
    Ok(run.metrics)
}

/// What `recover --host` found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct HostRecoverReport {
    pub strategy: String,
    pub protocol: String,
    pub device_pages_read: u64,
    pub device_time_ns: u64,
    pub pages_read: u64,
    pub time_ns: u64,
    /// DB pages that differ from the loaded database after recovery.
    pub pages_changed: u64,
    /// Commits of the re-run (the whole configured run).
    pub commits_in_run: u64,
    pub acked: u64,
    pub in_flight: u64,
    pub unissued: u64,
    /// What is wrong (empty: the database is right); only with an ack log.
    pub findings: Vec<String>,
}

/// An error of `recover_host_image`: bad input (exit 2) or a recovery that failed on an image
/// a run left (exit 1).
#[derive(Debug)]
pub enum RecoverError {
    Input(String),
    Failed(String),
}

/// Recovers a file-backed host image and, with `acks`, judges it against the ack log.
pub fn recover_host_image(
    image: &Path,
    strategy: &str,
    acks: Option<&Path>,
) -> Result<HostRecoverReport, RecoverError> {
    use RecoverError::{Failed, Input};
    let cfg = config_of_image(image).map_err(|e| Input(e.to_string()))?;
    if cfg.workload.kind != WorkloadKind::Host {
        return Err(Input(format!(
            "{}: the image is from a device-level run (workload {}), not a host run; recover it without --host",
            image.display(),
            cfg.workload.kind_name()
        )));
    }
    let canon = |s: &str| {
        if s == "flagcommit-ex" {
            "cfc-ex".to_string()
        } else {
            s.to_string()
        }
    };
    if canon(strategy) != canon(&cfg.host.strategy) {
        return Err(Input(format!(
            "--host {strategy}: {} was written by host strategy {}",
            image.display(),
            cfg.host.strategy
        )));
    }
    let lines = match acks {
        None => None,
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Input(format!("--verify-acks {}: {e}", p.display())))?;
            Some(acklog::parse(&text).map_err(|e| Input(format!("{}: {e}", p.display())))?)
        }
    };
    let dcfg = cfg.device();
    // The tag table (and the run's commits) from the same configuration and seed.
    let rec = host::check::record(&cfg.host, &dcfg, cfg.seed).map_err(|e| {
        Input(format!(
            "re-running the image's configuration to rebuild its tag table failed: {e}"
        ))
    })?;
    if let Some(tier) = rec.tier.as_ref() {
        return recover_tier_image(image, &rec, tier, lines.as_ref(), acks);
    }
    let (nand, _) = media::Nand::open_file(image, dcfg.nand.timing.clone())
        .map_err(|e| Input(format!("{}: {e}", image.display())))?;
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (mut dev, rep) = ssd::Device::recover(&dcfg, nand)
            .map_err(|e| format!("device recovery failed: {e}"))?;
        let info = host::strategy::lookup(&cfg.host.strategy).map_err(|e| e.to_string())?;
        let mut ctx = host::strategy::RecoverCtx {
            cfg: &rec.cfg,
            layout: &rec.layout,
            device: &mut dev,
            log_device: None,
            tags: &rec.tags,
            now: sim::SimTime::from_ns(rep.time_ns),
            write_back: None,
        };
        let db = (info.recover)(&mut ctx).map_err(|e| format!("host recovery failed: {e}"))?;
        Ok::<_, String>((rep, db))
    }));
    let (rep, db) = match out {
        Err(_) => return Err(Failed("recovery panicked".into())),
        Ok(Err(e)) => return Err(Failed(e)),
        Ok(Ok(x)) => x,
    };
    let mut r = HostRecoverReport {
        strategy: cfg.host.strategy.clone(),
        protocol: cfg.protocol.name.clone(),
        device_pages_read: rep.pages_read,
        device_time_ns: rep.time_ns,
        pages_read: rep.pages_read + db.pages_read,
        time_ns: rep.time_ns + db.time_ns,
        pages_changed: db.pages.len() as u64,
        commits_in_run: rec.commits.len() as u64,
        ..Default::default()
    };
    if let Some(lines) = lines {
        judge_acks(&mut r, &rec, &db, &lines, acks)?;
    }
    Ok(r)
}

/// Judges a recovered database against the ack log (`--verify-acks`).
fn judge_acks(
    r: &mut HostRecoverReport,
    rec: &host::check::HostRecording,
    db: &host::strategy::RecoveredDb,
    lines: &[acklog::AckLine],
    acks: Option<&Path>,
) -> Result<(), RecoverError> {
    use RecoverError::Input;
    {
        let (
            commits,
            t,
            AckSummary {
                acked,
                in_flight,
                unissued,
            },
        ) = acklog::commits_as_logged(&rec.layout, &rec.commits, lines).map_err(|e| {
            Input(format!(
                "{}: {e}",
                acks.map(|p| p.display().to_string()).unwrap_or_default()
            ))
        })?;
        r.acked = acked;
        r.in_flight = in_flight;
        r.unissued = unissued;
        r.findings = host::check::judge_commits(&rec.layout, &commits, t, &db.pages);
    }
    Ok(())
}

/// `recover_host_image` of a PCM strategy's tier image: the PCM and the disk rebuilt from
/// the image's records, the strategy's restart from them alone (the crash checker's,
/// `pcm_tier::recover_for`), then the ack log's verdict.
fn recover_tier_image(
    image: &Path,
    rec: &host::check::HostRecording,
    tier: &host::pcm_tier::TierLog,
    lines: Option<&Vec<acklog::AckLine>>,
    acks: Option<&Path>,
) -> Result<HostRecoverReport, RecoverError> {
    use RecoverError::{Failed, Input};
    if !media::tier_file::is_tier_image(image) {
        return Err(Input(format!(
            "{}: a {} run keeps its PCM and disk in a tier image; this is a device image",
            image.display(),
            rec.cfg.strategy
        )));
    }
    let img =
        media::tier_file::open(image).map_err(|e| Input(format!("{}: {e}", image.display())))?;
    let pcm = media::pcm::Pcm::from_image(tier.pcm_cfg.clone(), img.pcm)
        .map_err(|e| Input(format!("{}: {e}", image.display())))?;
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        host::pcm_tier::recover_for(rec, &pcm, &img.disk)
    }));
    let db = match out {
        Err(_) => return Err(Failed("recovery panicked".into())),
        Ok(Err(e)) => return Err(Failed(format!("host recovery failed: {e}"))),
        Ok(Ok(db)) => db,
    };
    let mut r = HostRecoverReport {
        strategy: rec.cfg.strategy.clone(),
        protocol: rec.dcfg.protocol.name.clone(),
        pages_read: db.pages_read,
        time_ns: db.time_ns,
        pages_changed: db.pages.len() as u64,
        commits_in_run: rec.commits.len() as u64,
        ..Default::default()
    };
    if let Some(lines) = lines {
        judge_acks(&mut r, rec, &db, lines, acks)?;
    }
    Ok(r)
}
