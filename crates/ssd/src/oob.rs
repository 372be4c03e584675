//! Byte-level functions for OOB layouts, and the page kinds and layouts the FTL itself owns.
//!
//! Every OOB layout starts with a one-byte page kind so that recovery can tell what a page is
//! before it knows which protocol fields follow. An erased page reads 0xFF there.
//!
//! Layouts owned by the FTL (bytes not listed are left erased, 0xFF):
//!
//! ```text
//! SUMMARY  [0] = 0x02
//! MAP      [0] = 0x03   [1..5] chunk index u32   [5..9] checkpoint sequence u32
//! META     [0] = 0x04   [1..5] record sequence u32  [5..7] page index u16  [7..9] page count u16
//! ```
//!
//! Protocols own kinds DATA (0x01) and RECORD (0x05, commit records and mapping logs) and
//! every byte after the kind byte of those pages. All integers are little-endian.

/// Page kinds (byte 0 of every OOB layout).
pub mod kind {
    pub const DATA: u8 = 0x01;
    pub const SUMMARY: u8 = 0x02;
    pub const MAP: u8 = 0x03;
    pub const META: u8 = 0x04;
    pub const RECORD: u8 = 0x05;
    /// A page of a host-managed erase unit (`device::native`).
    pub const NATIVE: u8 = 0x06;
    pub const ERASED: u8 = 0xFF;
}

/// OOB bytes the FTL needs for its own page kinds; every layout is at least this wide.
pub const CORE_OOB_BYTES: u32 = 9;

#[inline]
pub fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}
#[inline]
pub fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
#[inline]
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}
#[inline]
pub fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

/// A growable little-endian writer for record payloads.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
}

/// A bounds-checked little-endian reader: running past the end is an error, never a panic,
/// because recovery reads records from images that may be corrupt.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    /// Bytes past the stored slice read as 0xFF (the erased state), like the medium.
    fn take(&mut self, n: usize) -> Option<[u8; 8]> {
        let mut out = [0xFF; 8];
        if n > 8 {
            return None;
        }
        for (k, o) in out.iter_mut().enumerate().take(n) {
            if let Some(b) = self.buf.get(self.pos + k) {
                *o = *b;
            }
        }
        self.pos += n;
        Some(out)
    }
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|a| a[0])
    }
    pub fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|a| u16::from_le_bytes([a[0], a[1]]))
    }
    pub fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|a| u32::from_le_bytes([a[0], a[1], a[2], a[3]]))
    }
    pub fn u64(&mut self) -> Option<u64> {
        self.take(8).map(u64::from_le_bytes)
    }
    /// `n` raw bytes (0xFF-padded past the stored slice).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let v = (0..n)
            .map(|k| *self.buf.get(self.pos + k).unwrap_or(&0xFF))
            .collect();
        self.pos += n;
        v
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_pads_with_erased_bytes_instead_of_panicking() {
        let mut r = Reader::new(&[1, 0]);
        assert_eq!(r.u16(), Some(1));
        assert_eq!(r.u32(), Some(u32::MAX));
        assert_eq!(r.bytes(2), vec![0xFF, 0xFF]);
    }
}
