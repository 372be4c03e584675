//! The buffer pool: a fixed number of frames, each caching one DB page's current image,
//! replaced by the LRU policy (`lru.rs`).
//!
//! A frame knows whether it is dirty, its WAL page LSN and recovery LSN (the first log
//! record that dirtied it since it was last clean), the client whose active transaction
//! dirtied it (device transactions: page-level locks guarantee a single one), and when the
//! read that filled it completes (`ready_at`): until then it is pinned and a client that
//! finds it waits for that instant.
//!
//! The pool does not decide whether a dirty frame may be written back (steal / no-steal,
//! the WAL rule, SCC/BPCC's last-page rule): the engine asks the recovery strategy and
//! passes the answer to the policy.

use crate::data::{Layout, PageImage, PageNo};
use crate::lru::{self, Choice, FrameView};
use sim::SimTime;
use std::sync::Arc;

/// Where a frame's values come from while they are not built yet (`Frame::values` empty).
///
/// Most frames a TPC-C run fetches are only read (index pages, items, the read half of
/// an update's page walk) and leave the pool clean; their values are never looked at. A
/// fetch therefore installs the frame *unbuilt*: it remembers the page image the read
/// returned (shared, no copy) or that the page is in its loaded state, and the values are
/// built on the first mutable access (`Pool::frame_mut`), which every update, rollback
/// step and write-back path goes through. Building a loaded page and copying a written
/// page's image on every miss, and freeing the cold vector at eviction, were ~20 % of the
/// host bench (docs/PERFORMANCE.md).
///
/// Invariant (`check_invariants`): a dirty frame is built. Readers through `&Frame`
/// (checkpoints, commit-time forces, write-back of a removed frame) only look at the
/// values of dirty frames.
#[derive(Clone, Debug, Default)]
pub enum Unbuilt {
    /// `values` is the page's contents.
    #[default]
    Built,
    /// The contents are this image's values.
    Image(Arc<PageImage>),
    /// The contents are the page as loaded (`Layout::initial_page`).
    Loaded,
    /// The contents are the image `Core::disk` holds for the page when the frame is built,
    /// and so is the frame's `lsn` (set then; 0 after a fetch until then). Unlike `Image`, installing and evicting
    /// such a frame touches nothing of the image: the `Arc` count of a cold image was the
    /// bulk of a miss's cost (docs/PERFORMANCE.md, "Where the time goes"). Built only by
    /// `Core::frame_mut` (the pool cannot see `disk`; `Pool::frame_mut` refuses it), so
    /// only strategies whose every mutable access goes through that install it
    /// (`Core::lazy_disk`). Valid because the entry changes only when the page is written,
    /// and a page is written only from a dirty, hence built, frame.
    Disk,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub page: PageNo,
    pub values: Vec<u64>,
    /// WAL page LSN: the last log record applied to this page (0 without a log).
    pub lsn: u64,
    pub dirty: bool,
    /// WAL: LSN of the first record that dirtied the page since it was last clean.
    pub rec_lsn: u64,
    /// The client whose active transaction dirtied the page (when one is known).
    pub owner: Option<u32>,
    pub ready_at: SimTime,
    /// Not `Built`: `values` is empty and this says what it holds (`Unbuilt`).
    unbuilt: Unbuilt,
}

impl Frame {
    pub fn new(page: PageNo, values: Vec<u64>, lsn: u64, ready_at: SimTime) -> Frame {
        Frame {
            page,
            values,
            lsn,
            dirty: false,
            rec_lsn: 0,
            owner: None,
            ready_at,
            unbuilt: Unbuilt::Built,
        }
    }

    /// A frame whose values are built on first mutable access (`Unbuilt`).
    pub fn unbuilt(page: PageNo, from: Unbuilt, lsn: u64, ready_at: SimTime) -> Frame {
        let mut f = Frame::new(page, Vec::new(), lsn, ready_at);
        f.unbuilt = from;
        f
    }

    /// Are `values` the page's contents?
    pub fn is_built(&self) -> bool {
        matches!(self.unbuilt, Unbuilt::Built)
    }

    /// Are the contents `Core::disk`'s image of the page (`Unbuilt::Disk`)?
    pub fn refers_to_disk(&self) -> bool {
        matches!(self.unbuilt, Unbuilt::Disk)
    }

    /// Builds `values` (a no-op when built). `layout` is needed for a loaded page.
    fn build(&mut self, layout: Option<&Layout>) {
        match std::mem::take(&mut self.unbuilt) {
            Unbuilt::Built => {}
            Unbuilt::Image(img) => {
                // The image of a strategy's own version is often unshared: take its vector.
                self.values = match Arc::try_unwrap(img) {
                    Ok(i) => i.values,
                    Err(a) => a.values.clone(),
                }
            }
            Unbuilt::Loaded => {
                self.values = layout
                    .expect("a loaded-page frame in a pool without a layout")
                    .initial_page(self.page)
            }
            Unbuilt::Disk => panic!(
                "frame of page {} refers to the disk image: build it with Core::frame_mut",
                self.page.0
            ),
        }
    }
}

/// No frame (list ends, unmapped pages).
const NIL: u32 = u32::MAX;

/// The pool. Recency is a doubly linked list through the frames (`prev`/`next`, least
/// recently used at `head`), so a hit moves its frame to the tail in O(1); page → frame is
/// a vector indexed by page number, grown on demand (4 bytes per DB page up to the highest
/// page cached; TPC-C at 20 warehouses: 1.6 MB). The first version kept an ordered set of
/// (stamp, frame) and a SipHash map: ~8 % of a TPC-C run.
pub struct Pool {
    frames: Vec<Option<Frame>>,
    map: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
    len: usize,
    free: Vec<u32>,
    /// For building `Unbuilt::Loaded` frames (set by the first fetch, `set_layout`).
    layout: Option<Arc<Layout>>,
}

impl Pool {
    pub fn new(frames: u32) -> Pool {
        Pool {
            frames: (0..frames).map(|_| None).collect(),
            map: Vec::new(),
            prev: vec![NIL; frames as usize],
            next: vec![NIL; frames as usize],
            head: NIL,
            tail: NIL,
            len: 0,
            free: (0..frames).rev().collect(),
            layout: None,
        }
    }

    /// Whether `Unbuilt::Loaded` frames may be installed (`set_layout` was called).
    pub fn has_layout(&self) -> bool {
        self.layout.is_some()
    }

    /// The layout loaded-page frames are built from.
    pub fn set_layout(&mut self, layout: Arc<Layout>) {
        self.layout = Some(layout);
    }

    pub fn capacity(&self) -> usize {
        self.frames.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The frame holding `page`, without touching its recency.
    pub fn find(&self, page: PageNo) -> Option<u32> {
        match self.map.get(page.0 as usize) {
            Some(&f) if f != NIL => Some(f),
            _ => None,
        }
    }

    /// Hints the CPU to fetch `page`'s entry of the page map (`find` follows soon).
    #[inline]
    pub fn prefetch(&self, page: PageNo) {
        if let Some(e) = self.map.get(page.0 as usize) {
            sim::mem::prefetch(e);
        }
    }

    fn unlink(&mut self, f: u32) {
        let (p, n) = (self.prev[f as usize], self.next[f as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[f as usize] = NIL;
        self.next[f as usize] = NIL;
    }

    fn push_tail(&mut self, f: u32) {
        self.prev[f as usize] = self.tail;
        self.next[f as usize] = NIL;
        if self.tail == NIL {
            self.head = f;
        } else {
            self.next[self.tail as usize] = f;
        }
        self.tail = f;
    }

    /// Marks `f` most recently used.
    pub fn touch(&mut self, f: u32) {
        if self.frames[f as usize].is_some() && self.tail != f {
            self.unlink(f);
            self.push_tail(f);
        }
    }

    pub fn frame(&self, f: u32) -> &Frame {
        self.frames[f as usize]
            .as_ref()
            .expect("frame index of an empty frame")
    }

    /// The frame, its values built (`Unbuilt`).
    pub fn frame_mut(&mut self, f: u32) -> &mut Frame {
        let fr = self.frames[f as usize]
            .as_mut()
            .expect("frame index of an empty frame");
        if !fr.is_built() {
            fr.build(self.layout.as_deref());
        }
        fr
    }

    /// Builds an `Unbuilt::Disk` frame from the disk image's `values` and `lsn`
    /// (`Core::frame_mut`).
    pub fn build_from_disk(&mut self, f: u32, values: Vec<u64>, lsn: u64) {
        let fr = self.frames[f as usize]
            .as_mut()
            .expect("frame index of an empty frame");
        debug_assert!(fr.refers_to_disk());
        fr.values = values;
        fr.lsn = lsn;
        fr.unbuilt = Unbuilt::Built;
    }

    /// Turns frame `f` into a clean `Unbuilt::Disk` frame and returns its values: the
    /// caller has just written them as the page's disk image (a checkpoint or a
    /// commit-time force keeps the page cached without a copy of its values).
    pub fn unbuild_to_disk(&mut self, f: u32) -> Vec<u64> {
        let fr = self.frames[f as usize]
            .as_mut()
            .expect("frame index of an empty frame");
        debug_assert!(fr.is_built());
        fr.dirty = false;
        fr.rec_lsn = 0;
        fr.unbuilt = Unbuilt::Disk;
        std::mem::take(&mut fr.values)
    }

    /// Sizes the page map for `pages` DB pages up front, in huge pages where the OS allows
    /// (`sim::mem::huge_vec`): it is read at random on every access.
    pub fn reserve_pages(&mut self, pages: u64) {
        if self.map.len() < pages as usize {
            let mut map = sim::mem::huge_vec(pages as usize, NIL);
            map[..self.map.len()].copy_from_slice(&self.map);
            self.map = map;
        }
    }

    pub fn has_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Occupied frames from least to most recently used.
    fn lru_order(&self) -> impl Iterator<Item = u32> + '_ {
        let mut f = self.head;
        std::iter::from_fn(move || {
            (f != NIL).then(|| {
                let cur = f;
                f = self.next[cur as usize];
                cur
            })
        })
    }

    /// The LRU choice among occupied frames, given whether each may be evicted now.
    pub fn choose_victim(&self, evictable: impl Fn(&Frame) -> bool) -> Choice {
        lru::choose(self.lru_order().map(|f| {
            let fr = self.frame(f);
            FrameView {
                frame: f,
                evictable: evictable(fr),
                dirty: fr.dirty,
            }
        }))
    }

    /// Takes a frame out of the pool.
    pub fn remove(&mut self, f: u32) -> Frame {
        let fr = self.frames[f as usize]
            .take()
            .expect("removing an empty frame");
        self.unlink(f);
        self.map[fr.page.0 as usize] = NIL;
        self.len -= 1;
        self.free.push(f);
        debug_assert!(fr.is_built() || !fr.dirty, "a dirty frame is built");
        fr
    }

    /// Puts `frame` into a free slot (the caller made room) and marks it most recently used.
    pub fn install(&mut self, frame: Frame) -> u32 {
        let f = self.free.pop().expect("install without a free frame");
        debug_assert!(self.find(frame.page).is_none());
        let p = frame.page.0 as usize;
        if p >= self.map.len() {
            self.map.resize(p + 1, NIL);
        }
        self.map[p] = f;
        self.frames[f as usize] = Some(frame);
        self.len += 1;
        self.push_tail(f);
        f
    }

    /// Occupied frames in frame order (for checkpoints and commit-time forces).
    pub fn occupied(&self) -> impl Iterator<Item = (u32, &Frame)> {
        self.frames
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i as u32, f)))
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        let occupied = self.frames.iter().filter(|f| f.is_some()).count();
        let listed: Vec<u32> = self.lru_order().take(self.frames.len() + 1).collect();
        if occupied != self.len
            || occupied + self.free.len() != self.frames.len()
            || listed.len() != self.len
        {
            return Err("buffer pool: frames, free list and LRU list disagree".into());
        }
        for &f in &listed {
            match &self.frames[f as usize] {
                Some(fr) if self.find(fr.page) == Some(f) => {
                    if fr.dirty && !fr.is_built() {
                        return Err(format!("buffer pool: frame {f} is dirty but not built"));
                    }
                    if !fr.is_built() && !fr.values.is_empty() {
                        return Err(format!("buffer pool: frame {f} is unbuilt with values"));
                    }
                }
                _ => return Err(format!("buffer pool: frame {f} is listed but not mapped")),
            }
        }
        let mapped = self.map.iter().filter(|&&f| f != NIL).count();
        if mapped != self.len {
            return Err(format!(
                "buffer pool: {mapped} pages mapped, {} frames occupied",
                self.len
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_unprotected() {
        let mut p = Pool::new(2);
        let a = p.install(Frame::new(PageNo(1), vec![], 0, SimTime::ZERO));
        let b = p.install(Frame::new(PageNo(2), vec![], 0, SimTime::ZERO));
        p.touch(a);
        assert_eq!(p.choose_victim(|_| true), Choice::Evict(b));
        assert_eq!(p.choose_victim(|f| f.page != PageNo(2)), Choice::Evict(a));
        let fr = p.remove(b);
        assert_eq!(fr.page, PageNo(2));
        assert!(p.has_free());
        p.check_invariants().unwrap();
    }

    fn layout() -> Layout {
        use workload::db::{Field, Schema, TableDef, TableKind};
        Layout::new(
            Schema {
                name: "t",
                page_bytes: 8192,
                tables: vec![TableDef {
                    name: "a",
                    kind: TableKind::Heap,
                    record_bytes: 100,
                    records_per_page: 7,
                    pages_initial: 3,
                    pages_max: 4,
                    fields: vec![Field {
                        name: "x",
                        offset: 0,
                        len: 8,
                    }],
                }],
            },
            1,
        )
    }

    /// Unbuilt frames read as empty until the first mutable access, which gives exactly
    /// what an eager fetch would have copied: the loaded page or the shared image (left
    /// unchanged by later updates of the frame).
    #[test]
    fn unbuilt_frames_build_on_first_mutable_access() {
        let l = layout();
        let mut p = Pool::new(3);
        p.set_layout(Arc::new(l.clone()));
        let img = Arc::new(PageImage {
            page: PageNo(1),
            lsn: 9,
            values: vec![5, 6, 7, 8, 9, 10, 11],
        });
        let a = p.install(Frame::unbuilt(PageNo(0), Unbuilt::Loaded, 0, SimTime::ZERO));
        let b = p.install(Frame::unbuilt(
            PageNo(1),
            Unbuilt::Image(img.clone()),
            9,
            SimTime::ZERO,
        ));
        let own = Arc::new(PageImage {
            page: PageNo(2),
            lsn: 0,
            values: vec![1; 7],
        });
        let c = p.install(Frame::unbuilt(
            PageNo(2),
            Unbuilt::Image(own),
            0,
            SimTime::ZERO,
        ));
        assert!(p.frame(a).values.is_empty() && !p.frame(a).is_built());
        p.check_invariants().unwrap();
        assert_eq!(p.frame_mut(a).values, l.initial_page(PageNo(0)));
        assert!(p.frame(a).values.iter().all(|v| *v != 0));
        p.frame_mut(b).values[2] = 42;
        p.frame_mut(b).dirty = true;
        assert_eq!(p.frame(b).values, vec![5, 6, 42, 8, 9, 10, 11]);
        assert_eq!(img.values[2], 7, "the shared image is not changed");
        assert_eq!(p.frame(b).lsn, 9);
        assert_eq!(p.frame_mut(c).values, vec![1; 7]);
        p.check_invariants().unwrap();
    }

    /// A dirty frame must be built: `check_invariants` says so if one is not.
    #[test]
    fn a_dirty_unbuilt_frame_breaks_the_invariants() {
        let mut p = Pool::new(1);
        let mut fr = Frame::unbuilt(PageNo(0), Unbuilt::Loaded, 0, SimTime::ZERO);
        fr.dirty = true;
        p.install(fr);
        assert!(p
            .check_invariants()
            .unwrap_err()
            .contains("dirty but not built"));
    }

    #[test]
    fn lru_order_follows_touches_removals_and_installs() {
        let mut p = Pool::new(4);
        let f: Vec<u32> = (0..4)
            .map(|i| p.install(Frame::new(PageNo(10 + i), vec![], 0, SimTime::ZERO)))
            .collect();
        // Recency now 10, 11, 12, 13; touching 10 and 12 gives 11, 13, 10, 12.
        p.touch(f[0]);
        p.touch(f[2]);
        p.touch(f[2]);
        p.check_invariants().unwrap();
        let order: Vec<u64> = p.lru_order().map(|x| p.frame(x).page.0).collect();
        assert_eq!(order, vec![11, 13, 10, 12]);
        // Removing the middle and the head, then installing, keeps the list consistent.
        p.remove(f[3]);
        p.remove(f[1]);
        assert_eq!(p.find(PageNo(13)), None);
        let g = p.install(Frame::new(PageNo(3), vec![], 0, SimTime::ZERO));
        p.check_invariants().unwrap();
        let order: Vec<u64> = p.lru_order().map(|x| p.frame(x).page.0).collect();
        assert_eq!(order, vec![10, 12, 3]);
        assert_eq!(p.find(PageNo(3)), Some(g));
        assert_eq!(p.choose_victim(|fr| fr.page.0 != 10), Choice::Evict(f[2]));
        assert_eq!(p.len(), 3);
        // Removing the tail.
        p.remove(g);
        p.install(Frame::new(PageNo(4), vec![], 0, SimTime::ZERO));
        p.check_invariants().unwrap();
        let order: Vec<u64> = p.lru_order().map(|x| p.frame(x).page.0).collect();
        assert_eq!(order, vec![10, 12, 4]);
    }

    /// A `Disk` frame is built from the values `Core::frame_mut` hands over; after a write
    /// `unbuild_to_disk` gives the values back and leaves the frame clean and unbuilt.
    #[test]
    fn disk_frames_build_from_given_values_and_unbuild_in_place() {
        let mut p = Pool::new(2);
        let f = p.install(Frame::unbuilt(PageNo(3), Unbuilt::Disk, 0, SimTime::ZERO));
        assert!(p.frame(f).refers_to_disk() && p.frame(f).values.is_empty());
        p.check_invariants().unwrap();
        p.build_from_disk(f, vec![4, 5, 6], 17);
        assert!(p.frame(f).is_built() && !p.frame(f).refers_to_disk());
        assert_eq!(p.frame(f).lsn, 17);
        let fr = p.frame_mut(f);
        fr.values[1] = 9;
        fr.dirty = true;
        fr.rec_lsn = 20;
        fr.lsn = 21;
        p.check_invariants().unwrap();
        assert_eq!(p.unbuild_to_disk(f), vec![4, 9, 6]);
        let fr = p.frame(f);
        assert!(!fr.dirty && fr.refers_to_disk() && fr.values.is_empty());
        assert_eq!((fr.rec_lsn, fr.lsn), (0, 21));
        p.check_invariants().unwrap();
    }

    /// The pool cannot see the disk: building a `Disk` frame through it is a bug.
    #[test]
    #[should_panic(expected = "build it with Core::frame_mut")]
    fn the_pool_refuses_to_build_a_disk_frame() {
        let mut p = Pool::new(1);
        let f = p.install(Frame::unbuilt(PageNo(0), Unbuilt::Disk, 0, SimTime::ZERO));
        p.frame_mut(f);
    }

    /// `reserve_pages` keeps the pages already mapped.
    #[test]
    fn reserving_the_page_map_keeps_mappings() {
        let mut p = Pool::new(2);
        let a = p.install(Frame::new(PageNo(5), vec![], 0, SimTime::ZERO));
        p.reserve_pages(100);
        assert_eq!(p.find(PageNo(5)), Some(a));
        let b = p.install(Frame::new(PageNo(99), vec![], 0, SimTime::ZERO));
        assert_eq!(p.find(PageNo(99)), Some(b));
        assert_eq!(p.find(PageNo(50)), None);
        p.check_invariants().unwrap();
    }
}
