//! Tag mode's stored bytes per page (raw-byte pages and the appended tails of tagged pages),
//! indexed by block: per block, the pages holding bytes as a vector sorted by page index.
//!
//! A read of a page with bytes (`NandImage::view`, every read of a page holding IPA delta
//! records or Flag Commit's appended flags) finds them with one index into the block table
//! and a search among at most a block's pages, where an ordered map of every page on the
//! device descended a tree of cache-missing nodes (5.4 % of an IPA TPC-C point). An erase
//! drops its block's vector. The block table is allocated at the first page stored, so a
//! device that stores no bytes (LightTx, TxFlash) pays nothing; per stored page it costs
//! the entry (page index and boxed bytes, 24 bytes), less than an ordered map's share of a
//! node.

/// Stored bytes per page, by block (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Payloads {
    pages_per_block: u32,
    blocks: usize,
    /// Per block, (page within the block, bytes), sorted by page; empty until the first
    /// insert.
    table: Vec<Vec<(u16, Box<[u8]>)>>,
    len: usize,
}

impl Payloads {
    pub(crate) fn new(blocks: usize, pages_per_block: u32) -> Payloads {
        Payloads {
            pages_per_block: pages_per_block.max(1),
            blocks,
            table: Vec::new(),
            len: 0,
        }
    }

    #[inline]
    fn split(&self, page: u32) -> (usize, u16) {
        (
            (page / self.pages_per_block) as usize,
            (page % self.pages_per_block) as u16,
        )
    }

    /// The bytes stored for `page`, if any.
    #[inline]
    pub(crate) fn get(&self, page: u32) -> Option<&[u8]> {
        let (b, p) = self.split(page);
        let v = self.table.get(b)?;
        v.binary_search_by_key(&p, |e| e.0)
            .ok()
            .map(|k| &v[k].1[..])
    }

    pub(crate) fn contains_key(&self, page: u32) -> bool {
        self.get(page).is_some()
    }

    /// Stores `bytes` for `page`, replacing what it held.
    pub(crate) fn insert(&mut self, page: u32, bytes: Box<[u8]>) {
        let (b, p) = self.split(page);
        if self.table.is_empty() {
            self.table.resize_with(self.blocks, Vec::new);
        }
        let Some(v) = self.table.get_mut(b) else {
            return;
        };
        // Pages are programmed in order within a block: almost always a push.
        match v.last() {
            Some(e) if e.0 >= p => match v.binary_search_by_key(&p, |e| e.0) {
                Ok(k) => v[k].1 = bytes,
                Err(k) => {
                    v.insert(k, (p, bytes));
                    self.len += 1;
                }
            },
            _ => {
                v.push((p, bytes));
                self.len += 1;
            }
        }
    }

    /// Drops every page's bytes in `block` (an erase).
    pub(crate) fn clear_block(&mut self, block: usize) {
        if let Some(v) = self.table.get_mut(block) {
            self.len -= v.len();
            *v = Vec::new();
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every (page, bytes) in page order.
    fn entries(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let ppb = self.pages_per_block;
        self.table.iter().enumerate().flat_map(move |(b, v)| {
            v.iter()
                .map(move |(p, bytes)| (b as u32 * ppb + u32::from(*p), &bytes[..]))
        })
    }
}

/// Equal when the same pages hold the same bytes (whether or not the block table has been
/// allocated).
impl PartialEq for Payloads {
    fn eq(&self, other: &Payloads) -> bool {
        self.len == other.len && self.entries().eq(other.entries())
    }
}
impl Eq for Payloads {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_found_replaced_and_erased_by_block() {
        let mut p = Payloads::new(4, 8);
        assert!(p.is_empty() && p.get(3).is_none());
        assert_eq!(p, Payloads::new(4, 8));
        p.insert(9, vec![1].into());
        p.insert(15, vec![2].into());
        p.insert(10, vec![3].into());
        p.insert(9, vec![4, 5].into());
        assert_eq!(p.get(9), Some(&[4u8, 5][..]));
        assert_eq!(p.get(10), Some(&[3u8][..]));
        assert_eq!(p.get(15), Some(&[2u8][..]));
        assert!(p.get(8).is_none() && p.get(11).is_none() && p.get(31).is_none());
        // Beyond the device: nothing stored, nothing found.
        assert!(p.get(1 << 20).is_none());
        p.insert(1 << 20, vec![6].into());
        assert!(p.get(1 << 20).is_none());
        assert_eq!(
            p.entries().map(|(k, _)| k).collect::<Vec<_>>(),
            vec![9, 10, 15]
        );
        p.insert(2, vec![7].into());
        p.clear_block(1);
        assert!(p.get(9).is_none() && p.get(15).is_none());
        assert_eq!(p.get(2), Some(&[7u8][..]));
        p.clear_block(0);
        assert!(p.is_empty());
        assert_eq!(p, Payloads::new(4, 8));
    }
}
