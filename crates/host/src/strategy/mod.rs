//! Recovery strategies: how the host gets atomicity and durability, one file each plus one
//! line in `REGISTRY` (like `ssd::protocol::REGISTRY`).
//!
//! The engine calls a strategy at the points where recovery decides something:
//! `begin`, `on_update` (after a record changed in a buffered page), `evictable` and
//! `write_back` (a dirty page leaves the pool), `commit`, `abort`, and `maintain` (between
//! events: checkpoints). `recover` rebuilds the database from a crashed device alone.
//!
//! Durability contract, for every strategy: `commit` returns the instant the transaction is
//! durable (its ack); the engine releases the transaction's locks then. `abort` returns the
//! instant the rollback is complete (locks are released then); nothing of an aborted
//! transaction may ever be visible after recovery.

pub mod device_tx;
pub mod flagcommit_ex;
pub mod pcm_destage;
pub mod pcmlogging;
pub mod pcmlogging_engine;
pub mod pcmlogging_page;
pub mod scmlogging;
pub mod wal;
pub mod wal_pcm;

use crate::data::{PageImage, PageNo};
use crate::{HostError, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::hooks::{Admit, RecoverCtx, RecoveredDb, Resume, Strategy, StrategyInfo, WriteBack};

/// Every recovery strategy. One line each.
pub static REGISTRY: &[&StrategyInfo] = &[
    &wal::INFO,
    &device_tx::INFO,
    &flagcommit_ex::INFO,
    &flagcommit_ex::CFC_INFO,
    &flagcommit_ex::AFC_INFO,
    &pcmlogging_engine::INFO,
    &wal_pcm::INFO,
    &scmlogging::INFO,
    &pcmlogging_page::INFO,
];

pub fn lookup(name: &str) -> Result<&'static StrategyInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| HostError::Config {
            key: "host.strategy".into(),
            reason: format!(
                "unknown recovery strategy '{name}'{} (known: {})",
                ssd::protocol::did_you_mean(name, &names()),
                names().join(", ")
            ),
        })
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|s| s.name).collect()
}

/// Reads the data parts of every DB page from a recovered device and turns their tags back
/// into page images. Returns, per page that is not in its loaded state, the image of each
/// part (None: unmapped or holding its loaded tag, i.e. the loaded contents).
pub fn read_data_pages(
    ctx: &mut RecoverCtx<'_>,
) -> Result<BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>> {
    let mut out = BTreeMap::new();
    let parts = ctx.layout.parts;
    for p in 0..ctx.layout.pages {
        let mut imgs = Vec::with_capacity(parts as usize);
        let mut any = false;
        for k in 0..parts {
            let lpn = crate::engine::data_lpn(ctx.layout, PageNo(p), k);
            let (o, tail, t) = ctx
                .device
                .read_delta(lpn, ctx.now)
                .map_err(|e| HostError::Corrupt(format!("reading {lpn}: {e}")))?;
            ctx.now = ctx.now.max(t);
            match o {
                ssd::ReadOutcome::Unmapped => imgs.push(None),
                // The page as loaded, on a device the database was loaded onto
                // (`external::load_data_area`).
                ssd::ReadOutcome::Tag(tag)
                    if tag == crate::external::loaded_tag(lpn) && tail.is_empty() =>
                {
                    imgs.push(None)
                }
                ssd::ReadOutcome::Tag(tag)
                    if matches!(ctx.cfg.update.as_str(), "ipa" | "ipa-block") =>
                {
                    match ctx.tags.get(tag) {
                        Some(crate::data::TagContent::Data { image, part: 0 })
                            if image.page == PageNo(p) =>
                        {
                            any = true;
                            let img = crate::update::ipa::apply_tail(
                                ctx.cfg,
                                ctx.tags,
                                PageNo(p),
                                image.clone(),
                                &tail,
                            )?;
                            imgs.push(Some(img))
                        }
                        other => {
                            return Err(HostError::Corrupt(format!(
                                "{lpn} (page {p}) holds tag {tag}, which is {other:?}"
                            )))
                        }
                    }
                }
                ssd::ReadOutcome::Tag(tag) => match ctx.tags.get(tag) {
                    Some(crate::data::TagContent::Data { image, part })
                        if *part == k && image.page == PageNo(p) =>
                    {
                        any = true;
                        imgs.push(Some(image.clone()))
                    }
                    other => {
                        return Err(HostError::Corrupt(format!(
                            "{lpn} (page {p} part {k}) holds tag {tag}, which is {other:?}"
                        )))
                    }
                },
                other => {
                    return Err(HostError::Corrupt(format!(
                        "{lpn} (page {p} part {k}) reads {other:?}"
                    )))
                }
            }
        }
        if any {
            out.insert(PageNo(p), imgs);
        }
    }
    if ctx.cfg.update == "ipl" {
        crate::update::ipl::apply_logs(ctx, &mut out)?;
    }
    Ok(out)
}
