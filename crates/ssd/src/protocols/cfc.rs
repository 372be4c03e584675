//! `cfc`: commit-based flag commit (Flag Commit, On et al., §3.1), a device-level commit
//! protocol. The machinery it shares with `afc` (page format, chains, tables, GC hooks,
//! recovery) is in `flagchain/`; this file holds its registry entry and its argument.
//!
//! Every WRITE of a transaction programs a *shadow page* at once (the paper's write-through
//! exposition, §3). Its OOB records the logical page, a version, the transaction's XID, a
//! *physical* Link to the transaction's preceding shadow page and a one-bit commit flag,
//! initially FALSE. COMMIT sets the flag of the chain's head page to TRUE by partial
//! programming. A transaction is committed iff its chain holds a TRUE flag (Definition 3.1;
//! here: every head of its chain pieces holds one, see "Recovery").
//!
//! # OOB layout (26 bytes, shared with `afc`; all integers little-endian)
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..5]    LBA: the logical page, u32
//! [5..13]   Version #: device-wide write sequence, u64 (strictly increasing per host write;
//!           GC copies keep it)
//! [13..17]  XID: transaction id, u32, unique for the device's lifetime (recovery resumes
//!           above the largest on flash; a plain write takes one too)
//! [17..21]  Link: physical page of the preceding shadow page of the same transaction, u32;
//!           0xFFFF_FFFF = NULL (first page, or a page whose chain GC cut, see §3.4)
//! [21..25]  Ord: the page's position among its transaction's writes, u32 (0 = first)
//! [25]      commit flag byte. CFC uses bit 0: 1 = FALSE, 0 = TRUE (§3.1: "bit 0 represents
//!           TRUE"), FALSE→TRUE by a partial program that clears only that bit; bits 7..1
//!           stay 1. (AFC uses bits 1..0, see `afc.rs`.)
//! ```
//!
//! Only the flag byte ever changes after the first program, and only by clearing bits; a
//! torn partial program therefore leaves the flag either FALSE or TRUE and every other field
//! intact. The per-block summary page (footnote 7) copies these 26 bytes when the block fills;
//! the flag in it may be stale (see "Recovery").
//!
//! # Decisions the paper leaves open
//!
//! - **Version #** is a device-wide write sequence, not a per-page update count: recovery needs
//!   only "newest committed version wins", the sequence orders writes to one page exactly as
//!   a count would (page-level concurrency control: no two active transactions write one
//!   page), and it needs neither a per-page DRAM count nor a read of the old page's OOB.
//! - **Ord** is an addition. Physical links dangle once their target's block is erased, and
//!   the address can be reused, even by a page of the same transaction (a GC copy). A link is
//!   followed only if its target has the same XID and a smaller Ord; this makes a reused
//!   address harmless and the chain structure acyclic.
//! - **Mapping at write time** (§3.1.1 step 4): the direct mapping points at the newest shadow
//!   page, the previous version is the dirty page table's LastPBA, pinned so GC keeps it.
//!   READ of a dirty page returns its LastPBA, the newest *committed* version (the device
//!   contract); device reads are not transactional, so a transaction does not read its own
//!   writes through READ. ABORT maps LastPBA back. COMMIT unpins LastPBA with
//!   `durable_at` = the commit's ack, so its block is not erased before the commit is durable.
//!   The mapping lives in DRAM only (no checkpoints are needed: recovery rebuilds it from the
//!   chains; if the FTL's checkpoints are on anyway, recovery ignores them and scans every
//!   block).
//! - **Plain writes** are one-page transactions programmed with the flag already TRUE: the
//!   device holds the whole transaction, so the program is the commit (the buffered last page
//!   of §3.3). A plain write to a page an active transaction wrote is committed before that
//!   transaction; it becomes the page's LastPBA, and the transaction, at COMMIT, rewrites its
//!   version of the page as one more shadow page so its version number orders after the
//!   plain write (commit order is the order of COMMITs).
//! - **Isolation**: the paper assumes page-level concurrency control. Strict and
//!   no-page-conflict are supported; a transactional WRITE to a page another active
//!   transaction wrote returns `Unsupported`.
//!
//! # Tables (DRAM, reported by `dram_bytes`)
//!
//! - Transaction table: active transactions (pages with Link and Ord, LastPage, NPage =
//!   pages, their dirty logical pages, when all their pages are durable) and aborted ones
//!   (their pages on flash; dropped when NPage reaches 0). A transaction absent from it is
//!   committed (§3.1). Inconsistent transactions found by recovery also keep a pinned FALSE
//!   page and the set of their TRUE pages (see case 6).
//! - Dirty page table: LastPBA per logical page written by an active transaction.
//! - An index from tracked physical page to owner, for GC; CFC carriers by target; commits
//!   in flight; one reprogram watermark (u16) per block.
//!
//! # Normal processing (§3.1.1)
//!
//! WRITE programs the shadow page (Link = LastPage, flag FALSE), pins it, maps it, records
//! LastPBA. COMMIT issues, with `ready` = the instant every page of the transaction (and every
//! GC copy of one, and every erase that removes a stale copy) is durable, one partial program
//! per *head* of the transaction's pages: without GC there is one head, LastPage (§3.1.1); GC
//! relocation of an active page makes its copy another head ("their head pages are traced by
//! the transaction table", §3.1.3). The ack is when the last flag is durable. ABORT writes
//! nothing: every page of it is FALSE.
//!
//! **The last page written at commit** (§3.3: "if the last shadow page of a transaction is
//! buffered, the commit flag can be updated in main memory and then flushed to the disk.
//! Hence, a page-reprogramming operation is saved"). A host that had the last page buffered
//! sends it with the COMMIT (`Device::commit_write`). That page is programmed with its flag
//! already TRUE, with `ready` = the instant every earlier page of the transaction (every GC
//! copy of one, every erase of a stale copy, every restamp) is durable; its program replaces
//! the head's partial program. Source groups other than the one it heads — a chain GC split,
//! or §3.4's case of a last page that joins a cluster some other cluster links into — still
//! get one partial program each, issued once the last page is durable too. A page sent with
//! COMMIT after pages written long before (stolen pages) saves the program all the same; a
//! transaction whose last write came before COMMIT gets the partial program (§3.3 and
//! §3.4's "a page-reprogramming operation is still needed"). `protocol.cfc_flag_reprogram`
//! restores the earlier rule (the page written FALSE, then the flag by a partial program).
//!
//! # Garbage collection (§3.1.2, footnote 6, §3.4)
//!
//! A page is reclaimable if it is uncommitted (an aborted transaction's, never an active
//! one's: those are pinned) or committed and out of date. Before a block is erased
//! (`before_erase`), for every dropped committed page the chain is followed inside the block
//! to the first page outside it; that page becomes a head, so it gets TRUE (a partial
//! program) unless it is TRUE already or a copy made in this relocation links to it. The
//! flag is durable before the erase starts (footnote 6). Case 1 and case 2 of §3.1.2 are the
//! same rule: the preceding page gets the flag. A relocated live page of a committed
//! transaction gets TRUE in its copy (`migrate_oob`) and keeps its Link, so the copy heads
//! the rest of the chain. With `protocol.block_flags` (§3.4) links inside a block form
//! clusters, recovery works on clusters (a head cluster needs one TRUE page), and a copy's
//! Link is set to the first page outside the victim along its cluster, so one valid page of
//! a cluster keeps the cluster it links to from becoming a head: no reprogramming of other
//! pages (Fig. 9b).
//!
//! **NOP.** At run time a CFC page is reprogrammed at most once (FALSE→TRUE), so NOP 2 (the
//! flagcommit preset) suffices. After a crash the count is unknown: a torn partial program
//! may have changed no visible bit. Recovered pages are therefore never reprogrammed (a
//! per-block watermark marks pages programmed since the last recovery). When a page that
//! must get TRUE cannot be reprogrammed, the dropped page whose link points at it is copied
//! instead, with TRUE and that Link: a *carrier*, pinned, so the target is not a head. A
//! carrier is released (unpinned) when its target's block is erased, after that erase is
//! durable; by then the carrier's link dangles and it is a TRUE head of nothing but itself.
//! Carriers go to the victim's unit if GC can still write there, else to any unit with room
//! beyond its last free block.
//!
//! **Relevance.** Right after a crash every flag move would need a carrier, which can run a
//! unit out of space (found by the crash checker). But a transaction found by recovery matters
//! only while its status can change what recovery maps: a committed one while one of its pages
//! is current, an uncommitted one while one of its pages is newer than the current version of
//! its logical page (were it ever taken as committed, that page would win). Current versions
//! only get newer, so a transaction that does not matter at recovery never will. Recovery keeps
//! a bit per recovered XID; GC makes no carrier for a transaction that does not matter, and
//! recovery neither tracks nor pins its pages.
//!
//! # Recovery (§3.1.3)
//!
//! S = the readable data pages; R = pages some page of S links to validly; heads U = S − R,
//! at cluster granularity with §3.4. A head's flag is read from the page itself unless the
//! scan already shows TRUE or read the page directly (a summary written before the flag was
//! set shows FALSE). U⁺ / U⁻ = heads with / without TRUE; a transaction with heads in both is
//! inconsistent and treated as aborted; S⁺ = everything reachable from the remaining U⁺
//! (which is every page of each committed transaction). Each logical page maps to its
//! committed page with the largest version. Flag reads are issued together when the scan is
//! done (their addresses come from it) and queue per plane. The transaction table is rebuilt
//! with every uncommitted transaction that matters (see "Relevance") as aborted. Every
//! unmapped data page of a transaction that matters is pinned until `after_recovery`, so that
//! the FTL files its block as full rather than free: a free block is erased without
//! `before_erase`, which would skip the flag maintenance; then GC runs where it is due (the
//! FTL writes its post-recovery checkpoint before any command would run GC).
//!
//! # Why it is atomic and durable, case by case
//!
//! Let T be a transaction. Recovery decides per transaction, so whatever it decides, T is
//! all or nothing: committed T puts every page of it into S⁺ (each page reaches a head by
//! following links backwards, the graph being acyclic and finite).
//!
//! 1. *Crash before COMMIT.* No page of T carries TRUE: flags become TRUE only at COMMIT
//!    (a partial program, or the last page's own program with `commit_write`), in GC for
//!    committed transactions, and in copies of committed pages. T has at least one
//!    head, FALSE: not committed. Its pages are invisible; the LastPBAs were pinned, so the
//!    previous versions are on flash and win.
//! 2. *Crash during COMMIT.* The flags were issued after every page of T, every GC copy of
//!    one and every erase of a stale copy was durable. If every head's flag persisted, T is
//!    committed, all of it; if some did and some did not, T is inconsistent and aborted, none
//!    of it; a torn flag is TRUE or FALSE, one of these cases. Both outcomes are allowed for
//!    a commit in flight. With a last page written TRUE at commit (`commit_write`): its
//!    program started only after every other page of T was durable, and the other heads'
//!    flags only after it; so a crash leaves (a) the last page absent or torn (unreadable,
//!    not in S): no page of T is TRUE and its other pages' heads are FALSE — not committed;
//!    or (b) the last page durable and TRUE with every other page of T on flash: committed
//!    if every other head is TRUE, inconsistent (aborted) otherwise. Had the TRUE page been
//!    durable while an earlier page was not, recovery would follow the chain from a TRUE head
//!    and commit T without that page (planted as mutant `flag-commit-early`, which starts the
//!    TRUE page's program at once as it starts the flags; the crash checker finds it).
//! 3. *Crash after the ack.* Every head of T is TRUE, and stays so: (a) a head's flag never
//!    changes back; (b) a new head appears only when a page that links to an older page
//!    leaves the flash, i.e. when its block is erased, and `before_erase` first makes that
//!    older page TRUE (footnote 6) or keeps a page linking to it (a copy or a carrier), durable
//!    before the erase starts; (c) a copy of a committed page is TRUE; (d) a stale copy of an
//!    active transaction's page (left in a victim until its erase completes) is gone before
//!    T's flags are issued; (e) GC flags of a commit still in flight wait for its ack. If the
//!    chain "dangles" because the older page was erased earlier, GC waits until that earlier
//!    erase is durable (found by the crash checker: otherwise a crash could bring back the
//!    older page, FALSE, after the newer one's block was erased). Conversely, the blocks
//!    holding the pages a victim's dropped pages link to are not erased before the victim's
//!    erase is durable: a crash that kept that later erase and lost the victim's would bring
//!    back a dropped page whose link dangles, a FALSE head. "Durable" is a bound on the
//!    erase's end that includes the NAND model's largest jitter (`erase_end`): with the
//!    shortest erase as the bound, two overlapping erases (block 3 still in flight when block
//!    15's started) let a crash keep the second and lose the first, and transaction #14,
//!    acked, was lost (found by the crash checker's timing exploration, seed=1, profile
//!    channel=553,erase=3573190,jitter=178567,think=1666). The previous versions T
//!    replaced were unpinned with `durable_at` = the ack, so they are not erased earlier.
//! 4. *A later transaction T' overwrites T's pages.* Its pages carry larger versions; T's
//!    versions stay the newest committed ones until T' commits (cases 1-3 for T').
//! 5. *Aborted T.* All its pages are FALSE forever (GC never flags an aborted transaction's
//!    pages: they are in the transaction table). Any head of it is FALSE: never committed.
//! 6. *Inconsistent T found by recovery* (some heads TRUE): it must stay aborted through
//!    later crashes although its TRUE pages remain until GC drops them. Recovery pins one
//!    page of a FALSE head; a pinned page is relocated, never dropped, and its copy keeps
//!    the FALSE flag and is a head. The pin is released once every TRUE page of T is gone and
//!    the erases that removed them are durable. (If T does not matter, see "Relevance", it is
//!    not tracked at all: whatever it is taken for, none of its pages can win.)
//! 7. *Torn operations.* A torn program reads uncorrectable and is not in S (it was not
//!    acked; the chain above it, if any, is all in T's case 1 or 2). A torn partial program
//!    is case 2 (a commit flag) or leaves a GC flag TRUE or FALSE before an erase that has
//!    not started. A torn erase leaves pages unreadable or erased; before the erase started,
//!    everything it depended on was durable.
//! 8. *Reused XIDs and addresses.* XIDs never repeat while a page of them is on flash (the
//!    counter resumes above the largest found). A link to a reused address is ignored unless
//!    the page there has T's XID and a smaller Ord; then it only merges two pieces of T's own
//!    chain, which can remove a head but never add one, and T's pages are all in S⁺ or none.
//!
//! Assumptions about the medium: partial programs of the flag byte are atomic per bit (a
//! torn one clears a subset of the bits it would clear) and do not disturb other bytes;
//! operations on one plane execute in issue order; GC copies stay in the victim's plane.

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo};
use crate::core::FtlCore;
use crate::error::Result;
use crate::protocols::flagchain::{self, FlagCommit, Variant};
use crate::recovery::RecoveryCtx;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "cfc",
    summary: "commit-based flag commit (Flag Commit §3.1): shadow pages chained by physical links, a TRUE commit flag per chain",
    oob_bytes: flagchain::OOB_BYTES,
    atomic: true,
    needs_checkpoints: false,
    supports_checkpoints: true,
    isolation: &[Isolation::Strict, Isolation::NoPageConflict],
    supports_trim: false,
    create,
    recover,
};

fn create(cfg: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    FlagCommit::create(Variant::Cfc, cfg, core)
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    flagchain::recover(Variant::Cfc, ctx)
}
