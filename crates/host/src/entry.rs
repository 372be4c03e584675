//! Entry points of a host run, above the strategies: building an engine for a
//! configuration (`Engine::new` and its variants look the strategy up in
//! `strategy::REGISTRY`), running it (`run` and its variants), the device size a
//! configuration needs (`device_pages_needed`, which knows each strategy's layout) and the
//! recovery measured at the end of a run (`measure_recovery`). The engine itself
//! (`engine`) names no strategy; it gets the registry from here (`engine::Above`).
//! Their old paths (`engine::run`, `engine::device_pages_needed`, …) are re-exports.

use crate::engine::{parts_for, Above, Engine, HostRun};
use crate::hooks::{RecoverCtx, WriteBack};
use crate::metrics::HostMetrics;
use crate::state::Core;
use crate::{HostConfig, HostError, Result};
use sim::SimTime;
use ssd::Device;
use workload::db::TxnSource;

/// What the engine takes from above the core for `cfg`.
fn above(cfg: &HostConfig) -> Above {
    Above {
        lookup: crate::strategy::lookup,
        uses_flash_device: uses_flash_device(cfg),
    }
}

/// The PCM strategies, whose database lives on a PCM tier over an external store
/// (`host.pcm.external`): they use the flash device only when that store is the emulated SSD.
pub fn uses_flash_device(cfg: &HostConfig) -> bool {
    let pcm = matches!(
        cfg.strategy.as_str(),
        "pcmlogging" | "pcmlogging-page" | "wal-pcm" | "scmlogging"
    );
    !pcm || crate::external::is_emulated(&cfg.pcm.external)
}

/// Logical device pages the configured host run needs on a device of `flash_page_bytes`
/// pages: the database (`data_lpns`) and what the strategy lays out after it, by the same
/// rules the strategies refuse a small device with (`wal`: master and log; `cfc-ex` /
/// `afc-ex`: one data copy per version slot, master and log; `ipl`: its log regions; the
/// PCM strategies: only their external store's pages when it is the emulated SSD, else 0).
/// Learns the database's size from the workload's schema (`source::schema`: a trace's head).
pub fn device_pages_needed(cfg: &HostConfig, flash_page_bytes: u32, seed: u64) -> Result<u64> {
    if !uses_flash_device(cfg) {
        return Ok(0);
    }
    let schema = crate::source::schema(cfg, seed)?;
    device_pages_needed_with(cfg, flash_page_bytes, &schema)
}

/// `device_pages_needed` for a workload whose schema is already known (`source::schema` of
/// the same configuration and seed): a caller that sizes many configurations of one
/// workload builds its source once.
pub fn device_pages_needed_with(
    cfg: &HostConfig,
    flash_page_bytes: u32,
    schema: &workload::db::Schema,
) -> Result<u64> {
    if !uses_flash_device(cfg) {
        return Ok(0);
    }
    let parts = parts_for(cfg, flash_page_bytes)?;
    // The schema's page count is what `data_lpns` of the layout gives, without building the
    // per-page map (a database sized by a huge `max_txns` is refused before any allocation).
    let pages = schema.pages_max();
    let d = pages.saturating_mul(u64::from(parts));
    let log = u64::from(cfg.log_pages);
    Ok(match cfg.strategy.as_str() {
        "wal" => {
            let ipl = if cfg.update == "ipl" {
                crate::update::ipl::log_lpns_needed(cfg, pages, flash_page_bytes)
            } else {
                0
            };
            if cfg.separate_log() {
                // The log device has the data device's configuration: each must hold its
                // part (the data and IPL's log regions; the master and the log).
                (d + ipl).max(1 + log)
            } else {
                d + 1 + log + ipl
            }
        }
        "flagcommit-ex" | "cfc-ex" | "afc-ex" => {
            let versions = crate::strategy::flagcommit_ex::versions_for(cfg.max_c);
            d.saturating_mul(u64::from(versions)) + 1 + log
        }
        "wal-pcm" => d + log * u64::from(parts),
        _ => d,
    })
}

impl Engine {
    /// An engine on a freshly formatted `device`. `record` keeps the tag table, the commit
    /// log and the NAND operation log for the crash checker.
    pub fn new(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
    ) -> Result<Engine> {
        Engine::build(
            cfg,
            device,
            None,
            source,
            seed,
            record,
            None,
            None,
            above(cfg),
        )
    }

    /// As `new`; a PCM strategy's PCM and disk write through to `tier` (a file-backed run,
    /// `media::tier_file`). Refused for the strategies without a PCM tier.
    pub fn new_with_tier(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        tier: Option<media::tier_file::TierSink>,
    ) -> Result<Engine> {
        Engine::build(
            cfg,
            device,
            None,
            source,
            seed,
            record,
            tier,
            None,
            above(cfg),
        )
    }

    /// As `new`, with the log on `log_device` (`host.log_device = "separate"`, which needs
    /// one; "shared" refuses one). Both devices run on the engine's one clock.
    pub fn with_log_device(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
    ) -> Result<Engine> {
        Engine::build(
            cfg,
            device,
            log_device,
            source,
            seed,
            record,
            None,
            None,
            above(cfg),
        )
    }

    /// An engine on a recovered `device` whose restart wrote its results back (`wb`,
    /// `strategy::WriteBack`): the tag table continues the one the medium's tags come from,
    /// the data area holds `wb.disk`, the strategy takes up its restart's state, and the
    /// first transaction gets id `next_txn` (above every id the medium's log may name). A
    /// strategy whose restart left no state to resume from is refused.
    #[allow(clippy::too_many_arguments)]
    pub fn resume(
        cfg: &HostConfig,
        device: Device,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        wb: WriteBack,
        next_txn: u64,
    ) -> Result<Engine> {
        Engine::resume_with_log_device(cfg, device, None, source, seed, record, wb, next_txn)
    }

    /// As `resume`, with the recovered log device (`host.log_device = "separate"`) the
    /// restart wrote its log records and master to.
    #[allow(clippy::too_many_arguments)]
    pub fn resume_with_log_device(
        cfg: &HostConfig,
        device: Device,
        log_device: Option<Device>,
        source: Box<dyn TxnSource>,
        seed: u64,
        record: bool,
        wb: WriteBack,
        next_txn: u64,
    ) -> Result<Engine> {
        Engine::build(
            cfg,
            device,
            log_device,
            source,
            seed,
            record,
            None,
            Some((wb, next_txn)),
            above(cfg),
        )
    }
}

/// Builds an engine for `cfg` on `device` (made from `dcfg`, needed to recover it) with the
/// configured workload and runs it.
pub fn run(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
) -> Result<HostRun> {
    run_traced(cfg, dcfg, device, seed, record, false)
}

/// As `run`; with `trace`, the device commands are captured (`HostRun::trace`, in time
/// order).
pub fn run_traced(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
) -> Result<HostRun> {
    run_acked(cfg, dcfg, device, seed, record, trace, None)
}

/// As `run_traced`; with `acks`, every commit's issue and ack is reported to it as it
/// happens (`acklog`, the file-backed run's ack log).
pub fn run_acked(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
    acks: Option<crate::acklog::AckSink>,
) -> Result<HostRun> {
    run_with(cfg, dcfg, device, seed, record, trace, acks, None, None).map(|(r, _)| r)
}

/// As `run_acked`, for a PCM strategy whose PCM and disk write through to the tier image
/// `tier` (a file-backed run, `media::tier_file`).
pub fn run_tier_file(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    acks: Option<crate::acklog::AckSink>,
    tier: media::tier_file::TierSink,
) -> Result<HostRun> {
    run_with(
        cfg,
        dcfg,
        device,
        seed,
        false,
        false,
        acks,
        None,
        Some(tier),
    )
    .map(|(r, _)| r)
}

/// As `run`, keeping the metrics as they were when `warmup` transactions had been handed
/// out (`Engine::set_snapshot_at`; None if the run has no more than `warmup`).
pub fn run_with_snapshot(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    warmup: u64,
) -> Result<(HostRun, Option<HostMetrics>)> {
    run_with(
        cfg,
        dcfg,
        device,
        seed,
        false,
        false,
        None,
        Some(warmup),
        None,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_with(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    device: Device,
    seed: u64,
    record: bool,
    trace: bool,
    acks: Option<crate::acklog::AckSink>,
    snapshot_at: Option<u64>,
    tier: Option<media::tier_file::TierSink>,
) -> Result<(HostRun, Option<HostMetrics>)> {
    let wall = std::time::Instant::now();
    let mut source: Box<dyn TxnSource> = crate::source::build(cfg, seed)?;
    // A recorded TPC-C run keeps the journal of its generator's calls: a run on its
    // recovered medium takes up the committed view from it (`source::take_up`).
    let mut journal = None;
    if record && cfg.workload == "tpcc" {
        let (j, log) = crate::source::Journaled::new(source);
        source = Box::new(j);
        journal = Some(log);
    }
    let protocol = device.info().name;
    let log_device = if cfg.separate_log() {
        if trace {
            return Err(HostError::Config {
                key: "host.log_device".into(),
                reason: "a captured txn trace is one device's commands; \"separate\" issues them to two devices (use \"shared\" to capture a trace)".into(),
            });
        }
        Some(
            Device::in_memory(&log_device_config(dcfg)).map_err(|e| HostError::Config {
                key: "host.log_device".into(),
                reason: format!("building the log device: {e}"),
            })?,
        )
    } else {
        None
    };
    let mut e = Engine::build(
        cfg,
        device,
        log_device,
        source,
        seed,
        record,
        tier,
        None,
        above(cfg),
    )?;
    e.journal = journal;
    if trace {
        e.capture_trace();
    }
    if let Some(s) = acks {
        e.set_ack_sink(s);
    }
    if let Some(n) = snapshot_at {
        e.set_snapshot_at(n);
    }
    e.run()?;
    let snapshot = e.take_snapshot();
    let mut m = e.metrics(protocol, wall.elapsed().as_secs_f64());
    if cfg.measure_recovery {
        let now = e.now;
        m.recovery = Some(match e.strat.tier() {
            Some(t) => t.measure_recovery(now)?,
            None => measure_recovery(cfg, dcfg, &mut e.core, now)?,
        });
    }
    Ok((e.into_run(m), snapshot))
}

/// The configuration of the log device (`host.log_device = "separate"`): a fresh device of
/// the data device's configuration (same preset, geometry, timing and FTL; the plain FTL,
/// which is what `wal` runs on).
pub fn log_device_config(dcfg: &ssd::DeviceConfig) -> ssd::DeviceConfig {
    let mut d = dcfg.clone();
    d.protocol.name = "none".into();
    d
}

/// Cuts power at the end of a run (nothing in flight is lost: the image is taken after every
/// command was issued, so in-flight operations count as persisted) and restarts: the device's
/// recovery, then the strategy's.
///
/// The run is over, so the restart takes the medium itself (`Nand::take_for_restart`), not a
/// copy: a copy of a 32 GiB device's image beside the live one, plus the restarted device,
/// was most of a recovery point's peak memory. The restart sees the same pages with idle
/// resources and zero counters either way, so the figures are the same. A recorded run (its
/// operation log belongs to the crash checker) or an image file (a restart must not write
/// it) is copied as before.
pub(crate) fn measure_recovery(
    cfg: &HostConfig,
    dcfg: &ssd::DeviceConfig,
    core: &mut Core,
    now: SimTime,
) -> Result<crate::metrics::HostRecoveryMetrics> {
    let wall = std::time::Instant::now();
    let live = &mut core.device.core.nand;
    let nand = match live.take_for_restart() {
        Some(n) => n,
        None => media::Nand::from_image(live.image().clone(), live.timing().clone()),
    };
    let (mut dev, mut rep) =
        Device::recover(dcfg, nand).map_err(Core::dev_err(now, "device recovery after the run"))?;
    // The log device restarts beside the data device: the two scans overlap (independent
    // devices), so the device phase takes the longer one and reads the pages of both.
    let mut log_dev = match core.log_device.as_mut() {
        Some(l) => {
            let live = &mut l.core.nand;
            let nand = match live.take_for_restart() {
                Some(n) => n,
                None => media::Nand::from_image(live.image().clone(), live.timing().clone()),
            };
            let (d, r) = Device::recover(&log_device_config(dcfg), nand)
                .map_err(Core::dev_err(now, "log device recovery after the run"))?;
            rep.time_ns = rep.time_ns.max(r.time_ns);
            rep.pages_read += r.pages_read;
            Some(d)
        }
        None => None,
    };
    let info = crate::strategy::lookup(&cfg.strategy)?;
    let mut ctx = RecoverCtx {
        cfg,
        layout: &core.layout,
        device: &mut dev,
        log_device: log_dev.as_mut(),
        tags: &core.tags,
        now: SimTime::from_ns(rep.time_ns),
        write_back: None,
    };
    let db = (info.recover)(&mut ctx)?;
    Ok(crate::metrics::HostRecoveryMetrics {
        device_time_ns: rep.time_ns,
        device_pages_read: rep.pages_read,
        time_ns: rep.time_ns + db.time_ns,
        pages_read: rep.pages_read + db.pages_read,
        wall_time_s: wall.elapsed().as_secs_f64(),
    })
}
