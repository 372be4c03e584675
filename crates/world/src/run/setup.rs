//! Building a world: the device (in memory or file-backed), the workload driver, and the
//! world around them (`World::new`, or `World::from_prefilled` to continue from a shared
//! prefilled device).

use super::*;

/// Builds the device a configuration describes, in memory or file-backed.
pub fn build_device(cfg: &Config, image: Option<&Path>) -> Result<Device, WorldError> {
    cfg.validate()?;
    let dcfg = cfg.device();
    let cfg_err = |e: SsdError| WorldError::Config(format!("config: {e}"));
    let params = dcfg.image_params().map_err(cfg_err)?;
    let nand = match image {
        None => Nand::new(params, cfg.nand.timing.clone()).map_err(|e| cfg_err(e.into()))?,
        Some(path) => {
            let label = serde_json::to_string(cfg).map_err(|e| WorldError::Io(e.to_string()))?;
            Nand::create_file(path, params, cfg.nand.timing.clone(), &label)
                .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
        }
    };
    Device::create(&dcfg, nand).map_err(cfg_err)
}

/// Reads the configuration stored in a file image's header.
/// A PCM strategy's tier image (`media::tier_file`) keeps it in its header too.
pub fn config_of_image(path: &Path) -> Result<Config, WorldError> {
    let label = if media::tier_file::is_tier_image(path) {
        media::tier_file::peek_label(path)
            .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
    } else {
        Nand::peek_file(path)
            .map_err(|e| WorldError::Io(format!("{}: {e}", path.display())))?
            .1
    };
    serde_json::from_str(&label).map_err(|e| {
        WorldError::Io(format!(
            "{}: the image's stored configuration is unreadable: {e}",
            path.display()
        ))
    })
}

/// Builds the workload driver a configuration describes.
pub fn build_driver(
    cfg: &Config,
    logical_pages: u32,
    rng: &Rng,
) -> Result<Box<dyn Driver>, WorldError> {
    let w = &cfg.workload;
    let werr = |e: workload::WorkloadError| WorldError::Workload(e.what);
    match w.kind {
        WorkloadKind::Synthetic => Ok(Box::new(
            workload::synthetic::Synthetic::new(
                w.synthetic.clone(),
                logical_pages,
                rng.fork("workload"),
            )
            .map_err(werr)?,
        )),
        WorkloadKind::Txn => {
            let t = &w.txn;
            let stream = workload::txn::generate(t, logical_pages, &mut rng.fork("workload"))
                .map_err(werr)?;
            let conc = if t.isolation == workload::txn::Isolation::Strict {
                1
            } else {
                t.concurrency
            };
            let desc = format!(
                "txn: {} transactions of {}-{} pages ({}), {} at once, {} isolation, {:.0}% aborts, {} addresses",
                t.transactions,
                t.size_min,
                t.size_max,
                t.size_dist.name(),
                conc,
                t.isolation.name(),
                t.abort_ratio * 100.0,
                t.address.name()
            );
            Ok(Box::new(
                TxStream::new(&stream, conc, 1.0, logical_pages, desc).map_err(werr)?,
            ))
        }
        WorkloadKind::Seqwriter => {
            let s = &w.seqwriter;
            let stream = workload::txn::generate_seq_writer(s, logical_pages).map_err(werr)?;
            let desc = format!(
                "sequential writer: {} pages, a commit every {} pages",
                s.pages, s.sync_pages
            );
            Ok(Box::new(
                TxStream::new(&stream, 1, 1.0, logical_pages, desc).map_err(werr)?,
            ))
        }
        WorkloadKind::Host => Err(WorldError::Config(
            "workload.kind = \"host\" runs through world::host_run (commitlab run --host S)".into(),
        )),
        WorkloadKind::Trace => {
            let path = &w.trace.path;
            let block = match w.trace.format {
                TraceFormat::Disksim => workload::blocktrace::BlockFormat::Disksim,
                TraceFormat::Blkreplay => workload::blocktrace::BlockFormat::Blkreplay,
                TraceFormat::Msr => workload::blocktrace::BlockFormat::Msr,
                TraceFormat::Spc => workload::blocktrace::BlockFormat::Spc,
                TraceFormat::Txn => {
                    // Transactional traces are held whole: TxStream splits them into
                    // segments and chains up front (docs/TRACES.md).
                    let input = workload::blocktrace::open(path).map_err(werr)?;
                    let (cmds, lines) =
                        workload::txtrace::parse_lines(path, input).map_err(werr)?;
                    let desc = format!("txn trace {path}: {} commands", cmds.len());
                    let s = TxStream::with_lines(
                        &cmds,
                        Some(&lines),
                        w.trace.concurrency,
                        w.trace.time_scale,
                        logical_pages,
                        desc,
                    )
                    .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    return Ok(Box::new(s));
                }
                TraceFormat::Pages => {
                    // A page-access trace becomes a transactional command stream
                    // (`PageTrace::to_txn_commands`), held whole as a txn trace is.
                    let t = workload::pagetrace::read(path).map_err(werr)?;
                    // The barriers of the weakest isolation level the protocol supports
                    // (LightTx §4.2): a recorded DBMS ran its transactions concurrently.
                    let info = ssd::protocol::lookup(&cfg.protocol.name)
                        .map_err(|e| WorldError::Config(e.to_string()))?;
                    let aborted = t.txns.iter().filter(|x| x.aborted).count();
                    if aborted > 0 && !info.atomic {
                        return Err(WorldError::Config(format!(
                            "protocol {} has no atomicity and cannot abort the {aborted} aborted transactions of {path}; choose another protocol",
                            info.name
                        )));
                    }
                    use ssd::protocol::Isolation as Dev;
                    use workload::txn::Isolation;
                    let isolation = match info.isolation.iter().max() {
                        Some(Dev::Serializable) => Isolation::Serializable,
                        Some(Dev::NoPageConflict) => Isolation::NoPageConflict,
                        _ => Isolation::Strict,
                    };
                    let cmds = t
                        .to_txn_commands(cfg.nand.page_bytes, logical_pages, isolation)
                        .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    let desc = format!(
                        "page-access trace {path}: {} transactions, {} commands, barriers for {} isolation",
                        t.txns.len(),
                        cmds.len(),
                        match isolation {
                            Isolation::Serializable => "serializable",
                            Isolation::NoPageConflict => "no-page-conflict",
                            Isolation::Strict => "strict",
                        }
                    );
                    let s = TxStream::new(
                        &cmds,
                        w.trace.concurrency,
                        w.trace.time_scale,
                        logical_pages,
                        desc,
                    )
                    .map_err(|e| WorldError::Workload(format!("{path}: {}", e.what)))?;
                    return Ok(Box::new(s));
                }
            };
            // Block traces are streamed, read once and validated as they are replayed
            // (workload::disksim), so memory does not grow with the trace.
            Ok(Box::new(
                workload::blocktrace::replay(
                    path,
                    block,
                    cfg.nand.page_bytes,
                    logical_pages,
                    w.trace.time_scale,
                    w.trace.fold,
                )
                .map_err(werr)?,
            ))
        }
    }
}

impl World {
    pub fn new(cfg: &Config, opts: &RunOptions) -> Result<World, WorldError> {
        let device = build_device(cfg, opts.image.as_deref())?;
        World::with_device(cfg, opts, device)
    }

    /// A world that continues from a prefilled device instead of building and prefilling
    /// its own (see `Prefilled`): `run_measured` then runs exactly what `run` would have
    /// run after its prefill. `prefilled` must come from a configuration with the same
    /// `prefill_key`; the options must not record anything (the prefill's writes are not
    /// in this world's logs).
    pub fn from_prefilled(
        cfg: &Config,
        opts: &RunOptions,
        prefilled: Prefilled,
    ) -> Result<World, WorldError> {
        cfg.validate()?;
        if opts.record
            || opts.image.is_some()
            || opts.ack_log.is_some()
            || opts.record_trace.is_some()
        {
            return Err(WorldError::Config(
                "a run from a shared prefilled device cannot record, write an image, an ack log or a trace".into(),
            ));
        }
        if prefill_key(cfg) != prefilled.key {
            return Err(WorldError::Config(
                "the prefilled device was made for a different device, seed or prefill".into(),
            ));
        }
        let mut w = World::with_device(cfg, opts, prefilled.device)?;
        w.next_tag = prefilled.next_tag;
        w.prefill_total = prefilled.writes;
        w.begin_measuring(prefilled.now);
        Ok(w)
    }

    pub(super) fn with_device(
        cfg: &Config,
        opts: &RunOptions,
        mut device: Device,
    ) -> Result<World, WorldError> {
        let mut base_image = None;
        if opts.record {
            base_image = Some(device.core.nand.image().clone());
            device.core.nand.enable_log();
        }
        let rng = Rng::new(cfg.seed);
        let driver = build_driver(cfg, device.logical_pages(), &rng)?;
        let ack_log = match &opts.ack_log {
            Some(p) => Some(
                std::fs::File::create(p)
                    .map_err(|e| WorldError::Io(format!("{}: {e}", p.display())))?,
            ),
            None => None,
        };
        let clients = vec![ClientState::Running; driver.clients() as usize];
        let trace_out = match &opts.record_trace {
            Some(p) => {
                let f = std::fs::File::create(p)
                    .map_err(|e| WorldError::Io(format!("{}: {e}", p.display())))?;
                let mut w = std::io::BufWriter::new(f);
                use std::io::Write;
                writeln!(w, "{}", workload::txtrace::HEADER)
                    .map_err(|e| WorldError::Io(e.to_string()))?;
                Some(w)
            }
            None => None,
        };
        Ok(World {
            cfg: cfg.clone(),
            device,
            driver,
            queue: EventQueue::new(),
            clients,
            outstanding: 0,
            barrier_waiters: Vec::new(),
            next_tag: 1,
            requests: 0,
            lat_all: Histogram::new(),
            lat_read: Histogram::new(),
            lat_write: Histogram::new(),
            lat_tx: Histogram::new(),
            lat_commit: Histogram::new(),
            lat_queue: Histogram::new(),
            lat_response: Histogram::new(),
            tx_begin: BTreeMap::new(),
            tx_arrival: BTreeMap::new(),
            dram_peak: BTreeMap::new(),
            protocol_dram_peak: 0,
            measuring: false,
            committed: 0,
            aborted: 0,
            trace_out,
            record: opts.record,
            host_log: Vec::new(),
            tx_inst: BTreeMap::new(),
            next_inst: 1,
            ack_log,
            ack_tx_pages: BTreeMap::new(),
            now: SimTime::ZERO,
            base_image,
            base_nand: NandCounters::default(),
            base_ftl: FtlStats::default(),
            start: SimTime::ZERO,
            measured_from_request: 0,
            wall_start: std::time::Instant::now(),
            cpu_start_ns: crate::bench::cpu_time_ns(),
            progress: None,
            prefill_total: 0,
        })
    }

    /// Reports progress to `f` while running (see `Progress`).
    pub fn set_progress(&mut self, f: Box<dyn FnMut(Progress)>) {
        self.progress = Some(f);
    }
}
