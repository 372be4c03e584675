//! What a host run holds in memory beside its device, estimated from its configuration, so
//! that the runner's admission rule (`runner::job_bytes`) charges it. A device's bytes
//! (`runner::image_bytes`) are most of a device run; a host run adds the engine's and its
//! strategy's per-page tables, which grow with the database the schema declares, not with
//! the device: before they were charged, full-scale Flag Commit's CFC_ex points ended at
//! 3.7–4.2 GB of process RSS against 2.7–3.3 GB for WAL's with the same images live
//! (docs/PERFORMANCE.md, "Full scale, measured per point").
//!
//! The estimate is an upper bound over the schema (every DB page the schema may occupy,
//! `TableDef::pages_max`, written at least once), from the sizes of the structures that hold
//! each page and record slot: the page's image as last written (`engine::Core::disk`, an
//! `Arc<PageImage>` of one `u64` value per slot, `PAGE_IMAGE_BYTES` of headers), the
//! per-page entries of the disk table, the loaded map and the pool's map
//! (`PAGE_TABLE_BYTES`), and the buffer pool's frames (`host.buffer_frames` images of the
//! largest page).
//!
//! What it does not count: the workload's generator (TPC-C's loaded names and orders), the
//! lock table, transactions in flight and the histogram (bounded by `host.clients`), the
//! allocator's free memory, and the per-slot tables of `cfc-ex` / `afc-ex`
//! (`flagcommit_ex::tables::PageMeta`: a 56-byte `SlotState` per slot of every page the run
//! wrote, and per live version an `Arc<VersionTag>` of one 48-byte `RecTag` per slot). Those
//! are the largest host structure at full scale (≈ 0.85 GiB of a 20-warehouse CFC_ex point,
//! docs/PERFORMANCE.md), but they grow with the pages the run writes, which the schema does
//! not bound usefully: over every slot of the schema (25.5 M at 20 warehouses) they come to
//! 5.1 GB at three versions a page (2.6 GB at one), 3–6 times what a full point holds.
//!
//! Memory only: the estimate decides when a job starts, never what it computes.

use world::{Config, WorkloadKind};

/// `engine::Core::disk`'s entry (an `Option<(u64, Arc<PageImage>)>`, 16 bytes), the loaded
/// map's prefix (`data::LoadedMap`, 2) and the buffer pool's page map (`buffer::Pool::map`,
/// 4), per DB page of the schema.
const PAGE_TABLE_BYTES: u64 = 22;

/// An `Arc<PageImage>`'s allocation besides its values: the two counts (16), the page
/// number, the LSN (16) and the values' `Vec` (24).
const PAGE_IMAGE_BYTES: u64 = 56;

/// Bytes per slot of a page image (`PageImage::values`: one `u64`).
const VALUE_BYTES: u64 = 8;

/// The bytes a host run of `cfg` holds beside its device (module docs); 0 for a device run
/// or when the schema cannot be built (the run then fails with that error on its own).
pub fn host_run_bytes(cfg: &Config) -> u64 {
    if cfg.workload.kind != WorkloadKind::Host {
        return 0;
    }
    match schema_sizes(cfg) {
        Some(z) => bytes_of(cfg, z),
        None => 0,
    }
}

/// `host_run_bytes` for a schema already built.
pub fn host_run_bytes_with(cfg: &Config, schema: &workload::db::Schema) -> u64 {
    bytes_of(cfg, SchemaSizes::of(schema))
}

/// What the estimate reads of a schema.
#[derive(Clone, Copy, PartialEq, Debug)]
struct SchemaSizes {
    /// DB pages the schema may occupy.
    pages: u64,
    /// Record slots over those pages.
    slots: u64,
    /// The most record slots of one page.
    slots_per_page_max: u64,
}

impl SchemaSizes {
    fn of(schema: &workload::db::Schema) -> SchemaSizes {
        let mut z = SchemaSizes {
            pages: 0,
            slots: 0,
            slots_per_page_max: 0,
        };
        for t in &schema.tables {
            let n = u64::from(t.pages_max);
            let per = u64::from(t.records_per_page);
            z.pages = z.pages.saturating_add(n);
            z.slots = z.slots.saturating_add(n.saturating_mul(per));
            z.slots_per_page_max = z.slots_per_page_max.max(per);
        }
        z
    }
}

/// The inputs of a TPC-C or TATP source (`host::source::build` reads nothing else of the
/// host configuration for these two), by which their schemas' sizes are kept.
#[derive(PartialEq)]
enum SourceKey {
    Tpcc(workload::tpcc::TpccConfig, u64),
    Tatp(workload::tatp::TatpConfig, u64),
}

/// Schema sizes already worked out. Building a TPC-C source draws the whole loaded
/// population from the seed (tens of milliseconds at 20 warehouses), and a reproduction
/// charges hundreds of host jobs over a few sources, so each source's sizes are worked out
/// once per process. A pure function's results: what is kept never changes an answer.
static SIZES: std::sync::Mutex<Vec<(SourceKey, SchemaSizes)>> = std::sync::Mutex::new(Vec::new());

/// The sizes of `cfg`'s schema, or `None` when it cannot be built.
fn schema_sizes(cfg: &Config) -> Option<SchemaSizes> {
    let h = &cfg.host;
    let key = match h.workload.as_str() {
        "tpcc" => Some(SourceKey::Tpcc(h.tpcc.clone(), cfg.seed)),
        "tatp" => Some(SourceKey::Tatp(h.tatp.clone(), cfg.seed)),
        _ => None,
    };
    if let Some(k) = &key {
        // The same refusals as a build.
        host::source::validate(h).ok()?;
        let kept = SIZES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, z)) = kept.iter().find(|(x, _)| x == k) {
            return Some(*z);
        }
    }
    let z = SchemaSizes::of(&host::source::schema(h, cfg.seed).ok()?);
    if let Some(k) = key {
        SIZES.lock().unwrap_or_else(|e| e.into_inner()).push((k, z));
    }
    Some(z)
}

fn bytes_of(cfg: &Config, z: SchemaSizes) -> u64 {
    let images = z
        .pages
        .saturating_mul(PAGE_TABLE_BYTES + PAGE_IMAGE_BYTES)
        .saturating_add(z.slots.saturating_mul(VALUE_BYTES));
    let frames = u64::from(cfg.host.buffer_frames)
        .saturating_mul(PAGE_IMAGE_BYTES + z.slots_per_page_max * VALUE_BYTES);
    images.saturating_add(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flag Commit's full-scale point (32 GiB of 2 KiB pages in tag mode, TPC-C with 20
    /// warehouses sized for 100,000 transactions) under `strategy`.
    fn flagcommit_full(strategy: &str) -> Config {
        let mut c = Config::load(&world::ConfigSource {
            preset: Some("flagcommit".into()),
            file: None,
            sets: vec![
                "nand.data_mode=\"tag\"".into(),
                "nand.append_bytes=8".into(),
                format!("host.strategy=\"{strategy}\""),
                "host.workload=\"tpcc\"".into(),
                "host.tpcc.warehouses=20".into(),
                "host.tpcc.max_txns=100000".into(),
                "host.buffer_frames=512".into(),
                "host.max_c=3".into(),
            ],
        })
        .unwrap();
        c.workload.kind = WorkloadKind::Host;
        if strategy == "device-tx" {
            c.protocol.name = "cfc".into();
        }
        c
    }

    /// A host job is charged its engine's tables beside its device: every page image the
    /// schema may hold (one `u64` per record slot) and the buffer pool's frames; a device
    /// run is charged its device alone.
    #[test]
    fn a_host_job_is_charged_its_tables_beside_its_device() {
        let job = crate::runner::job_bytes;
        let image = crate::runner::image_bytes;
        let wal = flagcommit_full("wal");
        let schema = host::source::schema(&wal.host, wal.seed).unwrap();
        let slots: u64 = schema
            .tables
            .iter()
            .map(|t| u64::from(t.pages_max) * u64::from(t.records_per_page))
            .sum();
        for s in ["wal", "cfc-ex", "device-tx"] {
            let c = flagcommit_full(s);
            assert!(host_run_bytes(&c) >= 8 * slots, "{s}");
            assert_eq!(job(&c), image(&c) + host_run_bytes(&c), "{s}");
        }
        // 20 warehouses: about 25.5 M record slots, ≥ 204 MB of page images.
        assert!(slots > 25_000_000, "{slots}");
        let mut big = wal.clone();
        big.host.buffer_frames = 4096;
        assert!(host_run_bytes(&big) > host_run_bytes(&wal));
        let mut dev = wal.clone();
        dev.workload.kind = WorkloadKind::Txn;
        dev.run.measure_recovery = false;
        assert_eq!(host_run_bytes(&dev), 0);
        assert_eq!(job(&dev), image(&dev));
    }

    #[test]
    #[ignore]
    fn print_full_scale_estimates() {
        for s in ["cfc-ex", "afc-ex", "wal", "device-tx"] {
            let c = flagcommit_full(s);
            let t = std::time::Instant::now();
            let h = host_run_bytes(&c);
            eprintln!(
                "{s}: image {} host {} job {} ({:.3} s)",
                crate::runner::image_bytes(&c),
                h,
                crate::runner::job_bytes(&c),
                t.elapsed().as_secs_f64()
            );
        }
        let c = flagcommit_full("cfc-ex");
        let schema = host::source::schema(&c.host, c.seed).unwrap();
        for t in &schema.tables {
            eprintln!(
                "{} pages_max {} per_page {}",
                t.name, t.pages_max, t.records_per_page
            );
        }
    }

    /// The kept sizes are the ones a fresh build gives, for every source the key names,
    /// and another seed or warehouse count is another key.
    #[test]
    fn kept_schema_sizes_are_a_fresh_builds() {
        for (wh, seed) in [(2u32, 1u64), (2, 2), (3, 1), (2, 1)] {
            let mut c = flagcommit_full("wal");
            c.host.tpcc.warehouses = wh;
            c.seed = seed;
            let fresh = SchemaSizes::of(&host::source::schema(&c.host, c.seed).unwrap());
            assert_eq!(schema_sizes(&c), Some(fresh), "{wh} {seed}");
            assert_eq!(schema_sizes(&c), Some(fresh), "{wh} {seed}, kept");
            assert_eq!(
                host_run_bytes(&c),
                host_run_bytes_with(&c, &host::source::schema(&c.host, c.seed).unwrap())
            );
        }
        let mut bad = flagcommit_full("wal");
        bad.host.tpcc.warehouses = 0;
        assert_eq!(schema_sizes(&bad), None);
    }
}
