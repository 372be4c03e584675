//! What the FTL asks of a commit protocol during GC and checkpoints (`FtlHooks`). A part of
//! the core (`core::hooks`): GC (`crate::gc`) and mapping checkpoints (`core::meta`) both
//! call it; re-exported as `gc::FtlHooks`.

use crate::core::FtlCore;
use crate::error::Result;
use media::{BlockId, Ppa};
use sim::SimTime;

/// What the FTL asks of a commit protocol during GC and checkpoints. Every method has a
/// default that suits a protocol with no such needs.
pub trait FtlHooks {
    /// Adjust the OOB of a live page's copy (CFC sets the commit flag of a committed page).
    fn migrate_oob(&mut self, _core: &FtlCore, _from: Ppa, _oob: &mut [u8]) {}
    /// A page pinned by the protocol moved from `from` to `to`.
    fn on_moved(&mut self, _core: &mut FtlCore, _from: Ppa, _to: Ppa) {}
    /// Called before `block` is erased, once its live pages are copied; may issue operations
    /// (partial programs moving commit flags) and returns when they are durable. A protocol
    /// may instead keep the block (`FtlCore::defer_erase`) and erase it later itself, once
    /// something it is waiting for is durable (AW without move records): GC then leaves the
    /// erase to it.
    fn before_erase(
        &mut self,
        _core: &mut FtlCore,
        _block: BlockId,
        ready: SimTime,
    ) -> Result<SimTime> {
        Ok(ready)
    }
    /// Called when a checkpoint starts, before it allocates its translation pages (AW
    /// gives back GC victims it keeps when the checkpoint would not fit otherwise).
    fn before_checkpoint(&mut self, _core: &mut FtlCore, _now: SimTime) -> Result<()> {
        Ok(())
    }
    /// Called when the free-block reserve does not hold (`FtlCore::reserve_shortfall`) and
    /// GC finds no victim it can collect for it: a protocol holding blocks it could give
    /// back now (AW's GC victims kept for a carrier record) gives them back.
    fn before_reserve(&mut self, _core: &mut FtlCore, _now: SimTime) -> Result<()> {
        Ok(())
    }
    /// Blocks the next checkpoint must keep in the scan set (LightTx's unavailable zone).
    fn checkpoint_blocks(&mut self, _core: &FtlCore) -> Vec<BlockId> {
        Vec::new()
    }
    /// Protocol state recorded in each root.
    fn checkpoint_blob(&mut self, _core: &FtlCore) -> Vec<u8> {
        Vec::new()
    }
    /// A checkpoint's root is durable at `at`.
    fn on_checkpoint_durable(&mut self, _core: &mut FtlCore, _at: SimTime) {}
    /// Whether the protocol wants a checkpoint taken now (LightTx's zone sliding when the
    /// available zone runs short or GC has nothing to collect, a mapping log that should be
    /// trimmed). Asked before every command that may allocate, after GC, with checkpoints on;
    /// GC runs again after the checkpoint where it is still wanted.
    fn wants_checkpoint(&mut self, _core: &FtlCore, _now: SimTime) -> bool {
        false
    }
}
