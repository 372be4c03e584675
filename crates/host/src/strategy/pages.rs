//! What the strategies that keep the database in the engine's data area share at restart:
//! reading every DB page's parts back from a recovered device (`read_data_pages`), through
//! the update strategy's own format (IPA's appended deltas, IPL's log regions).

use crate::data::{PageImage, PageNo};
use crate::hooks::RecoverCtx;
use crate::{HostError, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

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
                    if tag == crate::data::loaded_tag(lpn) && tail.is_empty() =>
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
