//! The invariants of CFC's and AFC's tables (`CommitProtocol::check_invariants`, called by
//! the FTL in debug builds after mutating operations), stated in the header of `mod.rs`.

use super::{FlagCommit, Owner, TxEntry};
use crate::core::{FtlCore, PIN_PROTO, WRITTEN};

impl FlagCommit {
    pub(super) fn check_tables(&self, core: &FtlCore) -> std::result::Result<(), String> {
        // In key order, so the first violation reported does not depend on hash order.
        let mut owner: Vec<_> = self.owner.iter().collect();
        owner.sort_unstable_by_key(|(p, _)| **p);
        let mut dirty: Vec<_> = self.dirty.iter().collect();
        dirty.sort_unstable_by_key(|(l, _)| **l);
        for (ppa, o) in owner {
            if core.page_flags(*ppa) & WRITTEN == 0 {
                return Err(format!("{ppa} ({o:?}) is tracked but not written"));
            }
            let pinned = core.page_flags(*ppa) & PIN_PROTO != 0;
            match o {
                Owner::Tx(xid) => match self.txs.get(xid) {
                    Some(TxEntry::Active(a)) => {
                        if !a.pages.iter().any(|p| p.ppa == *ppa) || !pinned {
                            return Err(format!(
                                "{ppa} of active XID {xid} not listed or not pinned"
                            ));
                        }
                    }
                    Some(TxEntry::Aborted(x)) => {
                        let listed = x.pages.contains(ppa)
                            || x.carriers.contains(ppa)
                            || x.pin == Some(*ppa);
                        if !listed {
                            return Err(format!("{ppa} of aborted XID {xid} not listed"));
                        }
                        if (x.carriers.contains(ppa) || x.pin == Some(*ppa)) != pinned {
                            return Err(format!("{ppa} of aborted XID {xid}: pin state wrong"));
                        }
                    }
                    None => return Err(format!("{ppa} owned by unknown XID {xid}")),
                },
                Owner::LastPba(lpn) => {
                    if self.dirty.get(lpn).map(|d| d.last_pba) != Some(*ppa) || !pinned {
                        return Err(format!(
                            "{ppa} is LastPBA of {lpn:?} but the table disagrees"
                        ));
                    }
                }
                Owner::Carrier { target, .. } => {
                    if !pinned || !self.carriers.get(target).is_some_and(|v| v.contains(ppa)) {
                        return Err(format!("carrier {ppa} not pinned or not listed"));
                    }
                }
            }
        }
        for (lpn, d) in dirty {
            match self.txs.get(&d.xid) {
                Some(TxEntry::Active(a)) => {
                    let m = core.lookup(*lpn);
                    if !m.is_some_and(|m| a.pages.iter().any(|p| p.ppa == m)) {
                        return Err(format!(
                            "dirty {lpn:?} maps to {m:?}, not a page of XID {}",
                            d.xid
                        ));
                    }
                }
                _ => return Err(format!("dirty {lpn:?} of inactive XID {}", d.xid)),
            }
        }
        for (xid, e) in &self.txs {
            if let TxEntry::Active(a) = e {
                for p in &a.pages {
                    if self.owner.get(&p.ppa) != Some(&Owner::Tx(*xid)) {
                        return Err(format!(
                            "page {} of XID {xid} not in the owner index",
                            p.ppa
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
