//! The configuration reference: every key's type, default, allowed values, unit and meaning,
//! rendered as `docs/CONFIG.md` (`commitlab config --reference`) and one key at a time
//! (`commitlab config --explain KEY`).
//!
//! The descriptions are a table kept here, next to `config.rs`; everything else is derived so
//! it cannot drift: defaults come from serializing `Config::default()`, types from the
//! default's TOML type, and the tests check that
//! - every key of the configuration has exactly one entry here and every entry is a key;
//! - every listed allowed value of an enumerated key is accepted and a made-up one refused;
//! - `docs/CONFIG.md` is what `markdown()` renders (regenerate it with
//!   `cargo run -- config --reference > docs/CONFIG.md`).

use crate::Config;
use toml::{Table, Value};

/// One key's documentation.
pub struct KeyDoc {
    pub key: &'static str,
    /// Unit of a number ("" when it is a count, a fraction or has none).
    pub unit: &'static str,
    /// The accepted values of an enumerated key (empty: any value of its type).
    pub allowed: &'static [&'static str],
    pub doc: &'static str,
}

const fn k(
    key: &'static str,
    unit: &'static str,
    allowed: &'static [&'static str],
    doc: &'static str,
) -> KeyDoc {
    KeyDoc {
        key,
        unit,
        allowed,
        doc,
    }
}

/// Every key, in the order `commitlab config` prints them.
pub const KEYS: &[KeyDoc] = &[
    k("seed", "", &[], "Root of every random stream; same configuration and seed give byte-identical results."),
    k("nand.channels", "", &[], "Channels; chips on one channel share its bus."),
    k("nand.chips_per_channel", "", &[], "Chips (packages) per channel."),
    k("nand.dies_per_chip", "", &[], "Dies per chip."),
    k("nand.planes_per_die", "", &[], "Planes per die; a plane is a parallel unit unless `nand.timing.interleave = \"die\"`."),
    k("nand.blocks_per_plane", "", &[], "Erase blocks per plane."),
    k("nand.pages_per_block", "", &[], "Pages per erase block."),
    k("nand.page_bytes", "bytes", &[], "Data area of a page."),
    k("nand.oob_bytes", "bytes", &[], "Out-of-band (spare) area of a page; must hold the protocol's OOB layout."),
    k("nand.cell", "", &["slc", "mlc"], "Cell type. MLC pages allow one program each (LSB/MSB pairs); SLC pages allow `nand.nop` partial programs."),
    k("nand.nop", "", &[], "Partial programs allowed per SLC (or LSB) page between erases (NOP)."),
    k("nand.in_order_program", "", &[], "Pages of a block must be programmed in page order."),
    k("nand.endurance", "P/E cycles", &[], "Erases after which a block is bad."),
    k("nand.data_mode", "", &["tag", "full"], "`tag` stores a content tag per page (fast, small); `full` stores every byte (needed for file images)."),
    k("nand.append_bytes", "bytes", &[], "Bytes at the end of a page's data area left erased for in-place appends (less than half a page)."),
    k("nand.timing.read_ns", "ns", &[], "Array read (sense) time of a page."),
    k("nand.timing.program_ns", "ns", &[], "Array program time of a page."),
    k("nand.timing.partial_program_ns", "ns", &[], "Array time of a partial program."),
    k("nand.timing.erase_ns", "ns", &[], "Block erase time."),
    k("nand.timing.channel_mbps", "MB/s", &[], "Channel bandwidth (10^6 bytes per second); 0 makes transfers free."),
    k("nand.timing.interleave", "", &["plane", "die"], "The array resource: each plane, or each die (planes of a die then serialize)."),
    k("nand.timing.jitter_ns", "ns", &[], "Extra array time per program, partial program or erase, uniform in [0, jitter_ns] (0: none); the crash checker's timing profiles use it."),
    k("nand.timing.jitter_seed", "", &[], "Seed of the jitter stream (drawn per operation from it and the operation's sequence number)."),
    k("nand.timing.program_msb_ns", "ns", &[], "MLC: program time of an MSB (odd) page; `program_ns` is then the LSB page's. 0: `program_ns` for every page."),
    k("ftl.over_provisioning", "fraction", &[], "Fraction of usable physical pages not exported as logical space, in [0, 0.95)."),
    k("ftl.gc_threshold", "fraction", &[], "GC runs in a parallel unit when its free blocks fall below this fraction of its blocks, in [0, 0.9)."),
    k("ftl.gc_min_free_blocks", "blocks", &[], "Lower bound on the GC threshold per parallel unit (at least 2)."),
    k("ftl.capacity_gc_threshold", "fraction", &[], "The GC threshold the exported logical capacity is sized with (it keeps that many blocks free in every unit); negative (default -1): ftl.gc_threshold itself. A GC-threshold sweep sets it to its smallest threshold so every point has the same capacity (LightTx Figs. 13-16)."),
    k("ftl.gc_policy", "", &["greedy", "cost-benefit", "wear-aware"], "Which block GC reclaims: fewest valid pages, cost-benefit (age x free space), or greedy weighted by wear."),
    k("ftl.gc_copyback", "", &[], "GC copies a live page inside its plane by copyback (only the OOB crosses the channel); off by default as in MQSim (the data would skip the controller's ECC)."),
    k("ftl.striping", "", &["channel-first", "plane-first", "least-busy"], "How host writes are spread over parallel units: round robin channels first, planes first, or the unit free soonest."),
    k("ftl.dynamic_wear_leveling", "", &[], "Allocate the free block with the lowest erase count (otherwise first in, first out)."),
    k("ftl.static_wear_leveling", "", &[], "Periodically move cold data out of the least-worn block."),
    k("ftl.static_wl_threshold", "erases", &[], "Static wear leveling acts when max - min erase count exceeds this."),
    k("ftl.static_wl_interval", "erases", &[], "Static wear leveling checks the gap every this many erases (at least 1)."),
    k("ftl.summary_pages", "", &[], "Write the OOB of a block's pages into its last page (faster recovery scans)."),
    k("ftl.checkpoint_interval", "host page writes", &[], "Persist the mapping table every this many host page writes (0: never; recovery scans the whole device)."),
    k("ftl.checkpoint_window_blocks", "blocks", &[], "Blocks per parallel unit reserved (and recorded) for writes after a checkpoint."),
    k("ftl.map_journal", "", &[], "Checkpoints journal changed mapping entries instead of rewriting whole translation pages when that writes fewer pages."),
    k("ftl.map_journal_pages", "pages", &[], "Most journal pages before translation pages are rewritten (0: as many as there are translation pages)."),
    k("ftl.map_placement", "", &["one-unit", "striped"], "Where checkpoints program their translation and journal pages: one unit's map block filled before another is opened (a checkpoint's pages queue on one plane), or striped over the parallel units like host pages (every unit then keeps an open map block; measured slower, docs/FTL.md \"Mapping checkpoint placement\")."),
    k("ftl.max_tx_pages", "pages", &[], "Largest transaction the device accepts."),
    k("ftl.max_active_txs", "", &[], "Most transactions active at once."),
    k("ftl.interface_mbps", "MB/s", &[], "Host interface bandwidth for moving a page into the device (0: free)."),
    k("ftl.mlc_mode", "", &["mlc", "pslc", "odd-mlc"], "MLC block mode (in-place-appends.md §3): mlc = one program per page, no appends; pslc = LSB pages only, NOP programs each, half the capacity; odd-mlc = all pages, appends on LSB pages only. SLC devices take only mlc."),
    k("protocol.name", "", &["none", "tc", "scc", "bpcc", "cfc", "afc", "lighttx", "aw", "mhl-d", "mhl-m"], "The commit protocol (`commitlab protocols` lists them with their isolation levels)."),
    k("protocol.scc_erase_at_abort", "", &[], "SCC: erase an aborted transaction's intentions in the background from ABORT on, not on the next writer's path (TxFlash §3.2 only needs the erase before a newer version is written)."),
    k("protocol.block_flags", "", &[], "CFC / AFC: the block-based flag technique of Flag Commit §3.4 (on by default: §5.1 evaluated with it)."),
    k("protocol.cfc_flag_reprogram", "", &[], "CFC: set the commit flag by a separate partial program even when the last page arrives with COMMIT (off by default: Flag Commit §3.3 programs that page with its flag TRUE; on is an ablation of that saving)."),
    k("protocol.log_heads", "", &[], "MHL-D / MHL-M: number of log heads, and so the most transactions active at once (LightTx §4.1 uses 8)."),
    k("protocol.aw_log_chains", "", &[], "AW: mapping-log chains its records are spread over, at least 1, capped at the parallel units (default 8, one per package of LightTx's Table 2 device; 1 is a single serial chain)."),
    k("protocol.aw_gc_move_records", "", &[], "AW and MHL-M: a move record per GC victim that the victim's erase waits for (true), or the moved entries carried by the next commit record with the victim kept un-erased until it (or a checkpoint) is durable (false, the default: LightTx's AW baseline writes mapping pages at commits only, Fig. 19)."),
    k("protocol.bpcc_srs", "", &["pruned", "until-erased"], "BPCC: straddle responsibility sets pruned by TxFlash §3.3's three rules (pruned), or the BPCC LightTx §4.3 compares against, where every committed straddler holds an uncommitted intention until that intention is erased, so invalid straddlers are moved by GC (until-erased; LightTx's reproduction uses it)."),
    k("workload.kind", "", &["synthetic", "txn", "seqwriter", "trace", "host"], "What drives the device: page-level synthetic requests, synthetic transactions, the sequential writer of TxFlash Fig. 6, a trace file, or the DBMS host (`[host]`, `run --host S`)."),
    k("workload.prefill", "fraction", &[], "Fraction of the logical space written sequentially before measuring, in [0, 1] (trace replays too)."),
    k("workload.age", "factor", &[], "After the prefill, random overwrites of the prefilled pages, this many times their number, so GC is active from the first measured request (the papers' steady state)."),
    k("workload.warmup_requests", "requests", &[], "Requests run before measuring starts (counters and latencies reset after them)."),
    k("workload.synthetic.requests", "requests", &[], "Requests to issue."),
    k("workload.synthetic.read_ratio", "fraction", &[], "Fraction of requests that are reads."),
    k("workload.synthetic.trim_ratio", "fraction", &[], "Fraction of requests that are trims (the protocol must support TRIM)."),
    k("workload.synthetic.address", "", &["uniform", "sequential", "hot-cold", "zipf"], "Address distribution."),
    k("workload.synthetic.span", "fraction", &[], "Fraction of the logical space addressed (from page 0), in (0, 1]."),
    k("workload.synthetic.hot_fraction", "fraction", &[], "hot-cold: fraction of pages that are hot."),
    k("workload.synthetic.hot_access", "fraction", &[], "hot-cold: fraction of accesses that go to hot pages."),
    k("workload.synthetic.zipf_theta", "", &[], "zipf: skew parameter."),
    k("workload.synthetic.request_pages_min", "pages", &[], "Smallest request."),
    k("workload.synthetic.request_pages_max", "pages", &[], "Largest request (sizes are uniform in [min, max])."),
    k("workload.synthetic.queue_depth", "requests", &[], "Closed loop: number of clients, each with one outstanding request."),
    k("workload.synthetic.interarrival_ns", "ns", &[], "Open loop when > 0: mean time between arrivals."),
    k("workload.synthetic.arrival", "", &["exponential", "fixed"], "Open loop: distribution of the time between arrivals."),
    k("workload.synthetic.think_ns", "ns", &[], "Closed loop: pause between a completion and the client's next request."),
    k("workload.txn.transactions", "transactions", &[], "Transactions to run."),
    k("workload.txn.size_dist", "", &["fixed", "uniform", "exponential"], "Transaction size: always size_max, uniform in [size_min, size_max], or exponential with mean size_mean clamped to that range."),
    k("workload.txn.size_min", "pages", &[], "Smallest transaction."),
    k("workload.txn.size_max", "pages", &[], "Largest transaction."),
    k("workload.txn.size_mean", "pages", &[], "Mean size for size_dist = \"exponential\"."),
    k("workload.txn.abort_ratio", "fraction", &[], "Fraction of transactions that end in ABORT (the protocol must be atomic)."),
    k("workload.txn.concurrency", "transactions", &[], "Transactions run at once (clients)."),
    k("workload.txn.isolation", "", &["strict", "no-page-conflict", "serializable"], "Isolation level the generator respects (LightTx §4.2); the protocol must support it."),
    k("workload.txn.interarrival_ns", "ns", &[], "Open loop when > 0: mean time between transaction starts (exponential)."),
    k("workload.txn.address", "", &["uniform", "sequential", "hot-cold", "zipf"], "Address distribution of transactional writes."),
    k("workload.txn.span", "fraction", &[], "Fraction of the logical space addressed, in (0, 1]."),
    k("workload.txn.hot_fraction", "fraction", &[], "hot-cold: fraction of pages that are hot."),
    k("workload.txn.hot_access", "fraction", &[], "hot-cold: fraction of accesses that go to hot pages."),
    k("workload.txn.zipf_theta", "", &[], "zipf: skew parameter."),
    k("workload.txn.plain_write_ratio", "fraction", &[], "Fraction of commands that are plain single-page writes between transactions, in [0, 1)."),
    k("workload.txn.commit_write_ratio", "fraction", &[], "Fraction of committing transactions whose last page is sent with the COMMIT (`COMMIT lpn 1` in a txn trace; Flag Commit §3.3's buffered last page), spread evenly, in [0, 1]."),
    k("workload.seqwriter.pages", "pages", &[], "Pages the sequential writer writes."),
    k("workload.seqwriter.sync_pages", "pages", &[], "Pages per commit (the sync interval sets the transaction size)."),
    k("workload.trace.path", "", &[], "The trace file (`--trace PATH` sets it and workload.kind)."),
    k("workload.trace.format", "", &["disksim", "txn", "blkreplay", "msr", "spc", "pages"], "DiskSim/MQSim ASCII block trace, commitlab's transactional trace, a blkreplay `.load` file, MSR Cambridge CSV, SPC/UMass CSV or a DBMS's page-access trace (replayed as device transactions) (docs/TRACES.md); plain or gzip. Block traces are streamed; their sub-page or unaligned writes are read-modify-writes in the device."),
    k("workload.trace.time_scale", "factor", &[], "Multiplies arrival times (0.5 replays twice as fast); a decimal number such as 0.0142857, not a fraction like 1/70."),
    k("workload.trace.fold", "", &[], "Block traces (disksim, blkreplay, msr, spc): fold addresses beyond the device modulo its logical pages; false makes them an error."),
    k("workload.trace.concurrency", "transactions", &[], "txn traces: transactions replayed at once."),
    k("host.strategy", "", &["wal", "device-tx", "flagcommit-ex", "cfc-ex", "afc-ex", "pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"], "Recovery strategy of the DBMS host: ARIES-style WAL over the plain FTL, force-at-commit through the device's transactions, Flag Commit §4's no-force redo-only log with pending records and on-flash commit flags (cfc-ex, afc-ex; flagcommit-ex is cfc-ex; they need nand.append_bytes > 0), or record-level PCMLogging over a PCM tier and a Table 2 disk (pcmlogging; [host.pcm]), page-level PCMLogging with whole dirty pages in PCM and page locks (pcmlogging-page, §3.1-3.2), and PCMLogging's two WAL baselines over the same tier (§6.1): wal-pcm (PCM as a dirty-page cache plus a log buffer, the log archived to the disk) and scmlogging (the whole log in PCM, pages stolen to the disk). The PCM strategies run with protocol none."),
    k("host.clients", "clients", &[], "Concurrent clients, each running one transaction at a time (Flag Commit: 50)."),
    k("host.transactions", "transactions", &[], "Transactions to run, each counted once however often it restarts."),
    k("host.think_ns", "ns", &[], "Mean (exponential) think time between a client's transactions; 0: none."),
    k("host.op_cpu_ns", "ns", &[], "CPU time charged per record operation."),
    k("host.lock_level", "", &["auto", "page", "record"], "Strict 2PL granularity; auto is record for wal and page for device-tx (Flag Commit §5.2)."),
    k("host.deadlock", "", &["detect", "wait-die"], "Wait-for-graph detection (youngest in the cycle restarts) or wait-die (PCMLogging's setting)."),
    k("host.backoff_ns_max", "ns", &[], "A restarted transaction waits a uniform random time up to this."),
    k("host.buffer_frames", "pages", &[], "LRU buffer pool size in DB pages (Flag Commit: 512)."),
    k("host.steal", "", &[], "wal: dirty pages of uncommitted transactions may be written back (device-tx always steals)."),
    k("host.force", "", &[], "wal: a transaction's dirty pages are written at commit (device-tx always forces)."),
    k("host.page_bytes", "bytes", &[], "Logical DB page size, laid over page_bytes / nand.page_bytes device pages."),
    k("host.log_record_bytes", "bytes", &[], "wal: size of one log record on the device (Flag Commit Table 2: 50 B)."),
    k("host.log_pages", "pages", &[], "wal: device pages of the circular log area after the data pages."),
    k("host.checkpoint_log_bytes", "bytes", &[], "wal: take a fuzzy checkpoint after this much log (0: never)."),
    k("host.log_device", "", &["shared", "separate"], "wal: where the log and its master record live: after the data pages on the one device (shared), or on a second device of the same configuration, same clock and power domain (separate; the data device then holds the database and IPL's log regions only; its counters exclude the log, which is reported in log_device)."),
    k("host.max_c", "transactions", &[], "cfc-ex/afc-ex: at most this many transactions have pending records on one DB page (Flag Commit max_c; beyond it the updater blocks, Algorithm 1). Each DB page gets max(3, max_c) version slots."),
    k("host.fc_no_merge_reads", "", &[], "cfc-ex/afc-ex ablation (off by default): a buffer miss reads only the page's newest version, not every version holding its live committed records (Flag Commit §4.3's merge; §5.3.1 names its cost)."),
    k("host.fc_reuse_slots_first", "", &[], "cfc-ex/afc-ex ablation (off by default): a page's new version takes the slot of its oldest version that Flag Commit §4.3 allows reclaiming before a free slot, so fewer out-of-date versions stay mapped and are copied by the FTL's GC (by default a free slot first)."),
    k("host.workload", "", &["bank", "tpcc", "tpcb", "tatp", "records", "trace"], "The host's transaction source: bank (transfers between accounts plus a history insert), TPC-C, TPC-B, TATP, synthetic records, or a page-access trace recorded from a real DBMS (trace), each configured by its [host.<name>] section."),
    k("host.trace.path", "", &[], "trace: the page-access trace file (plain or gzip; docs/TRACES.md, \"Page-access traces of a real DBMS\"); `run --host S --trace F` sets it. host.transactions may not exceed the transactions it holds."),
    k("host.update", "", &["out-of-place", "ipa", "ipa-block", "ipl"], "Update strategy (wal only, protocol none): whole-page writes out of place; In-Place Appends' N×M delta records by write_delta (ipa) or as whole pages the FTL programs in place when it can (ipa-block; both: host.page_bytes = nand.page_bytes, nand.append_bytes ≥ N×(13+3M), MLC needs ftl.mlc_mode); or In-Page Logging (ipl, host.ipl)."),
    k("host.pcm.dram_bytes", "bytes", &[], "pcmlogging, pcmlogging-page: DRAM for the buffer pool and the PCM tables (Mapping/Dirty Page/Transaction Table, reserved at their largest, §6.1); 0: 128 MiB per 2.4 GB of database (§6.1's ratio). Replaces host.buffer_frames."),
    k("host.pcm.pcm_bytes", "bytes", &[], "pcmlogging, pcmlogging-page: PCM size; 0: 128 MiB per 2.4 GB of database (§6.1's ratio), at least 4 KiB."),
    k("host.pcm.unit_bytes", "bytes", &[], "pcmlogging: PCM allocation unit, one record each (§6.1: 128 B)."),
    k("host.pcm.chips", "chips", &[], "pcmlogging, pcmlogging-page: PCM chips serving 64 B line requests in parallel (§6.1: 4)."),
    k("host.pcm.external", "", &["hdd", "ssd", "sd-card", "emulated"], "pcmlogging, pcmlogging-page, wal-pcm, scmlogging: the external store, Table 2 latencies per 8 KiB page (HDD 8.05/8.20 ms, SATA SSD 25/50 µs, SD card 1.47/200.1 ms), or `emulated`: commitlab's own emulated SSD (the device the configuration describes, e.g. `--preset txflash` for 32 GiB of eight 4 GiB packages, on the `none` FTL) with its own timing, queues and GC; DB pages sit where `wal` puts them (host::external)."),
    k("host.pcm.record_bytes", "bytes", &[], "pcmlogging: record payload written after the 32 B PCM record header (the paper's 117 B average less the header)."),
    k("host.pcm.destage", "", &["adaptive", "watermark"], "pcmlogging, pcmlogging-page: destaging policy — §5.2's cost-based adaptive rate (μ0 from the measured λ0 and f(k), g(k) = 1, from 2.5 % free; the paper's setting for all PCMLogging results) or §5.1's high-low watermark (Fig. 12's baseline)."),
    k("host.pcm.segment_bytes", "bytes", &[], "Adaptive destaging: the birth-death model's segment (§6.4: 640 KB); shrunk to 1/40 of a PCM smaller than 40 segments."),
    k("host.pcm.destage_interval_ns", "ns", &[], "Interval of the destage I/O series (Fig. 12b) summarised in the destage_io_* counters."),
    k("host.pcm.high_watermark", "fraction", &[], "pcmlogging, pcmlogging-page (destage = watermark): destaging starts at this PCM occupancy (§5.1: 0.99)."),
    k("host.pcm.low_watermark", "fraction", &[], "pcmlogging, pcmlogging-page (destage = watermark): destaging stops below this occupancy (§5.1: 0.975)."),
    k("host.pcm.wear_delta", "XIDs", &[], "pcmlogging: wear leveling's swapping threshold δ (§4.2, Algorithm 4); 0: off. An XID is a transaction's number, kept across wait-die restarts, so δ counts transactions."),
    k("host.pcm.xid_per_attempt", "", &[], "pcmlogging: every attempt of a transaction gets its own XID (the engine's attempt id), so wait-die restarts advance wear leveling's XID clock (the rule before the paper's; docs/HOST.md \"PCMLogging's XID clock\"). Off: a restart keeps its XID."),
    k("host.pcm.relocate_every", "writes", &[], "pcmlogging: relocate the ActiveTxList and FreeSlotBitmap to the next metadata region (§4.1) after this many metadata word writes; 0: never."),
    k("host.pcm.meta_regions", "regions", &[], "pcmlogging: metadata regions the §4.1 relocation rotates through (2 to 64)."),
    k("host.pcm.table_entry_bytes", "bytes", &[], "pcmlogging: DRAM reserved per PCM unit for its Mapping Table / Dirty Page Table entry."),
    k("host.pcm.tx_entry_bytes", "bytes", &[], "pcmlogging: DRAM reserved per client for its Transaction Table entry."),
    k("host.pcm.log_buffer_pages", "pages", &[], "wal-pcm: PCM log-buffer pages of host.page_bytes, each archived to the disk when full (asynchronously; a page is reused once its archive write completed); 2 = the page being filled and the one being archived (§6.1), Fig. 14's 1 MB buffer is 128 pages of 8 KiB."),
    k("host.pcm.checkpoint_interval_ms", "ms", &[], "wal-pcm, scmlogging: a fuzzy checkpoint every this much simulated time (§6.2.4: PostgreSQL's default, 300000 = 5 minutes), or earlier once half the log area (wal-pcm: host.log_pages on the disk; scmlogging: the PCM) was written since the last one. Recovery time is the analysis/redo/undo I/O since the last checkpoint."),
    k("host.device_tx.pin", "", &["last", "all"], "device-tx: pages of an in-progress transaction kept in the buffer pool. last (Flag Commit §5.1): under scc and bpcc the transaction's last shadow page (the page of its latest update, written last at commit) stays resident and every other dirty page may be stolen, written as an uncommitted intention of its device transaction; other protocols pin nothing. all: no-steal under every protocol (the rule scc and bpcc ran under before; docs/HOST.md measures the difference)."),
    k("host.ipa.n", "records", &[], "ipa: N, delta records a page may hold before it is written out of place."),
    k("host.ipa.m", "bytes", &[], "ipa: M, changed bytes (⟨offset, value⟩ pairs) one delta record may hold (≤ 127)."),
    k("host.ipl.unit_pages", "pages", &[], "ipl: DB pages per erase unit sharing one log region (Lee & Moon: 15 pages of 8 KiB in a 128 KiB unit)."),
    k("host.ipl.log_sectors", "sectors", &[], "ipl: log sectors in an erase unit's log region; a write-back that finds it full merges the unit (16)."),
    k("host.ipl.sector_bytes", "bytes", &[], "ipl: bytes of a log sector and of a buffered page's in-memory log sector; divides the flash page (512)."),
    k("host.ipl.record_header_bytes", "bytes", &[], "ipl: bytes of an update log record besides its changed bytes (8; the original is silent)."),
    k("host.ipl.layout", "", &["in-block", "separate"], "ipl: where each erase unit's log region lives: in-block (Lee & Moon, in-place-appends.md §1: in the unit's own flash block, host-managed on protocol none; a merge programs the unit into a fresh block and erases the old one; needs unit_pages × DB page parts + log pages ≤ a block's pages, sectors per flash page ≤ nand.nop, no ftl.checkpoint_interval, SLC or pSLC) or separate (log pages as FTL logical pages past the WAL log; merges rewrite out of place and GC erases later)."),
    k("host.bank.accounts", "records", &[], "bank: number of accounts."),
    k("host.bank.records_per_page", "records", &[], "bank: account records per DB page."),
    k("host.bank.history_pages", "pages", &[], "bank: pages of the history table (inserts wrap around)."),
    k("host.bank.reads", "records", &[], "bank: accounts read per transaction."),
    k("host.bank.updates", "records", &[], "bank: accounts updated per transaction (at least 2)."),
    k("host.bank.rollback_ratio", "fraction", &[], "bank: fraction of transactions that roll back after their updates."),
    k("host.tpcc.warehouses", "warehouses", &[], "tpcc: scale (each with 10 districts, 30,000 customers, 100,000 stock rows; Flag Commit: 20)."),
    k("host.tpcc.delta_abort", "fraction", &[], "tpcc: δ, a further fraction of transactions that roll back after their operations (Flag Commit §5), in [0, 0.5]."),
    k("host.tpcc.max_txns", "transactions", &[], "tpcc: transactions the insert regions are sized for (worst case); past it inserts overwrite old rows."),
    k("host.tpcc.customers_per_district", "customers", &[], "tpcc: 3,000 in the spec; smaller only for tiny crash-check databases."),
    k("host.tpcc.items", "items", &[], "tpcc: items and stock rows per warehouse; 100,000 in the spec."),
    k("host.tpcc.min_pages_written", "pages", &[], "tpcc: run only transactions writing at least this many distinct pages (0: no bound); with max_pages_written, Flag Commit Fig. 18's split by transaction size λ (short λ ≤ 10, long λ > 10)."),
    k("host.tpcc.max_pages_written", "pages", &[], "tpcc: run only transactions writing at most this many distinct pages (0: no bound)."),
    k("host.tpcb.branches", "branches", &[], "tpcb: scale (each with 10 tellers)."),
    k("host.tpcb.accounts_per_branch", "accounts", &[], "tpcb: 100,000 in the spec."),
    k("host.tpcb.delta_abort", "fraction", &[], "tpcb: δ, fraction of transactions that roll back after their operations, in [0, 0.5]."),
    k("host.tpcb.max_txns", "transactions", &[], "tpcb: transactions the history table is sized for; past it appends wrap."),
    k("host.tatp.subscribers", "subscribers", &[], "tatp: population P."),
    k("host.tatp.nonuniform", "", &[], "tatp: the spec's non-uniform subscriber ids (uniform when false)."),
    k("host.tatp.delta_abort", "fraction", &[], "tatp: δ, a further fraction of transactions that roll back, in [0, 0.5]."),
    k("host.records.records", "records", &[], "records: table size."),
    k("host.records.record_bytes", "bytes", &[], "records: record size."),
    k("host.records.reads_per_txn", "records", &[], "records: reads per transaction."),
    k("host.records.updates_per_txn", "records", &[], "records: updates per transaction."),
    k("host.records.update_bytes", "bytes", &[], "records: payload bytes each update overwrites (0: only the counter)."),
    k("host.records.address", "", &["uniform", "sequential", "hot-cold", "zipf"], "records: which records transactions touch."),
    k("host.records.zipf_theta", "", &[], "records: zipf skew."),
    k("host.records.hot_fraction", "fraction", &[], "records: hot-cold: fraction of records that are hot."),
    k("host.records.hot_access", "fraction", &[], "records: hot-cold: fraction of accesses to hot records."),
    k("host.records.distinct", "", &[], "records: a transaction touches distinct records."),
    k("host.records.sorted", "", &[], "records: a transaction's records in key order (no deadlocks)."),
    k("host.records.delta_abort", "fraction", &[], "records: fraction of transactions that roll back after their operations."),
    k("host.measure_recovery", "", &[], "After the run, cut power, restart (device, then strategy) and report the cost; keeps in memory the image of every page version still on the medium (every version with ipa, ipl and the PCM strategies)."),
    k("host.data", "", &["tag", "full"], "Record contents the host crash checker judges: tag (digests compared with the serial replay) or full (also decode each record's fields and check TPC-C consistency conditions 1-4 / TPC-B balance sums on the recovered database)."),
    k("run.measure_recovery", "", &[], "After the run, cut power and recover, reporting recovery cost."),
    k("run.check_invariants_every", "requests", &[], "Check every FTL and protocol invariant every this many requests (0: never)."),
    k("run.recovery_reads", "", &["overlapped", "serial"], "How the recovery measured after a device-level run issues its reads: every read of a scan at once, overlapping across planes and channels, or each after the one before it (recovery time = the sum of the reads' latencies; the same pages are read). Timing only; refused for host runs."),
];

fn leaves(prefix: &str, t: &Table, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(sub) => leaves(&key, sub, out),
            other => out.push((key, other.clone())),
        }
    }
}

/// Every key of the configuration with its default value.
pub fn defaults() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Ok(t) = Table::try_from(Config::default()) {
        leaves("", &t, &mut out);
    }
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Integer(_) => "integer",
        Value::Float(_) => "float",
        Value::Boolean(_) => "boolean",
        Value::Datetime(_) => "datetime",
        Value::Array(_) => "array",
        Value::Table(_) => "table",
    }
}

fn section_of(key: &str) -> &str {
    key.rsplit_once('.').map_or("", |(s, _)| s)
}

/// The reference as Markdown (what docs/CONFIG.md holds).
pub fn markdown() -> String {
    let defaults = defaults();
    let mut s = String::from(
        "# Configuration reference\n\n\
         Generated by `commitlab config --reference` from `crates/world/src/config_doc.rs`; a test\n\
         fails when this file is out of date. Keys are set in a TOML file (`--config`), by a\n\
         preset (`--preset`), or with `--set key=value`; `commitlab config --explain KEY`\n\
         prints one entry. Defaults are the built-in ones (`commitlab compare` layers its\n\
         transactional main job over them: see `crates/world/src/presets.rs`, `MAIN_JOB`).\n",
    );
    let mut section = None;
    for d in KEYS {
        let sec = section_of(d.key);
        if section != Some(sec) {
            let title = if sec.is_empty() { "top level" } else { sec };
            s.push_str(&format!(
                "\n## `{title}`\n\n| key | type | default | allowed | unit | meaning |\n|---|---|---|---|---|---|\n"
            ));
            section = Some(sec);
        }
        let v = defaults.iter().find(|(k, _)| k == d.key).map(|(_, v)| v);
        let (ty, def) = v.map_or(("?", "?".to_string()), |v| (type_name(v), v.to_string()));
        let allowed = if d.allowed.is_empty() {
            String::new()
        } else {
            d.allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        s.push_str(&format!(
            "| `{}` | {ty} | `{}` | {allowed} | {} | {} |\n",
            d.key,
            def.replace('|', "\\|"),
            d.unit,
            d.doc.replace('|', "\\|")
        ));
    }
    s
}

/// The known keys (and sections) nearest to a misspelt `key`: by edit distance over the
/// whole dotted key (a typo anywhere: `nand.chanels`), else keys whose last part is the
/// given last part misspelt or the whole of it (`chanels`, `channels`). Containment of a
/// short part is not enough (`n` is in `chanels`, and `host.ipa.n` is no suggestion).
fn near_keys(key: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = KEYS.iter().map(|d| d.key).collect();
    for d in KEYS {
        let mut k = d.key;
        while let Some((head, _)) = k.rsplit_once('.') {
            names.push(head);
            k = head;
        }
    }
    names.sort_unstable();
    names.dedup();
    let within = |a: &str, b: &str| {
        let d = strsim::levenshtein(a, b);
        d <= (a.chars().count().min(b.chars().count()) / 4).max(1)
    };
    let mut best: Vec<(usize, &str)> = names
        .iter()
        .filter(|k| within(key, k))
        .map(|k| (strsim::levenshtein(key, k), *k))
        .collect();
    if best.is_empty() {
        let last = key.rsplit('.').next().unwrap_or(key);
        best = names
            .iter()
            .filter(|k| k.rsplit('.').next().is_some_and(|l| within(last, l)))
            .map(|k| (0, *k))
            .collect();
    }
    best.sort();
    best.into_iter().map(|(_, k)| k).take(5).collect()
}

/// One key, or every key under a section, in words; an unknown key is an error that names
/// the nearest keys.
pub fn explain(key: &str) -> Result<String, String> {
    let key = key.trim();
    let defaults = defaults();
    let hits: Vec<&KeyDoc> = KEYS
        .iter()
        .filter(|d| d.key == key || d.key.starts_with(&format!("{key}.")))
        .collect();
    if hits.is_empty() {
        let near = near_keys(key);
        let hint = if near.is_empty() {
            "; `commitlab config --reference` lists every key".to_string()
        } else {
            format!("; did you mean {}?", near.join(", "))
        };
        return Err(format!("unknown configuration key '{key}'{hint}"));
    }
    let mut s = String::new();
    for d in hits {
        let v = defaults.iter().find(|(k, _)| k == d.key).map(|(_, v)| v);
        s.push_str(&format!("{}\n  {}\n", d.key, d.doc));
        if let Some(v) = v {
            s.push_str(&format!("  type: {}, default: {v}", type_name(v)));
        }
        if !d.unit.is_empty() {
            s.push_str(&format!(", unit: {}", d.unit));
        }
        s.push('\n');
        if !d.allowed.is_empty() {
            s.push_str(&format!("  allowed: {}\n", d.allowed.join(", ")));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConfigSource;

    #[test]
    fn a_misspelt_key_suggests_the_key_meant() {
        let e = explain("nand.chanels").unwrap_err();
        assert!(e.contains("did you mean nand.channels"), "{e}");
        assert!(!e.contains("host.ipa.n"), "{e}");
        let e = explain("chanels").unwrap_err();
        assert!(e.contains("nand.channels"), "{e}");
        let e = explain("host.tpcc.warehouse").unwrap_err();
        assert!(e.contains("host.tpcc.warehouses"), "{e}");
    }

    #[test]
    fn every_key_is_documented_once_and_every_entry_is_a_key() {
        let keys: Vec<String> = defaults().into_iter().map(|(k, _)| k).collect();
        for k in &keys {
            let n = KEYS.iter().filter(|d| d.key == k).count();
            assert_eq!(n, 1, "{k} is documented {n} times in config_doc::KEYS");
        }
        for d in KEYS {
            assert!(keys.iter().any(|k| k == d.key), "{} is not a key", d.key);
        }
    }

    #[test]
    fn allowed_values_are_exactly_accepted() {
        let load = |set: String| {
            Config::load(&ConfigSource {
                sets: vec![set],
                ..Default::default()
            })
        };
        for d in KEYS.iter().filter(|d| !d.allowed.is_empty()) {
            for a in d.allowed {
                let c = load(format!("{}=\"{a}\"", d.key));
                assert!(c.is_ok(), "{} = {a}: {:?}", d.key, c.err());
            }
            if d.key == "protocol.name" {
                let names = ssd::protocol::names();
                assert_eq!(d.allowed, names.as_slice(), "protocol.name's list");
                continue;
            }
            // Refused when loaded (an enum) or when validated (a registry name).
            assert!(
                load(format!("{}=\"no-such-value\"", d.key))
                    .and_then(|c| c.validate())
                    .is_err(),
                "{} accepts a value not listed",
                d.key
            );
        }
    }

    /// Fails when docs/CONFIG.md is out of date; regenerate it with
    /// `cargo run -- config --reference > docs/CONFIG.md`.
    #[test]
    fn docs_config_md_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/CONFIG.md");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == markdown(),
            "docs/CONFIG.md is out of date: run `cargo run -- config --reference > docs/CONFIG.md`"
        );
    }

    #[test]
    fn explain_names_type_default_allowed_and_unit() {
        let e = explain("ftl.gc_policy").unwrap();
        assert!(
            e.contains("default: \"greedy\"") && e.contains("cost-benefit"),
            "{e}"
        );
        let e = explain("nand.timing.read_ns").unwrap();
        assert!(e.contains("unit: ns") && e.contains("25000"), "{e}");
        let e = explain("workload.trace").unwrap();
        assert!(e.contains("workload.trace.time_scale"), "{e}");
        let e = explain("ftl.gc_polcy").unwrap_err();
        assert!(
            e.contains("unknown configuration key 'ftl.gc_polcy'"),
            "{e}"
        );
    }
}
