//! File-backed PCM tier: the PCM and the latency-modelled disk of a PCM strategy written
//! through to one file, so that a process killed mid-run leaves an image another process
//! can open and restart from (`commitlab run --host pcmlogging --image F`, then
//! `recover --host pcmlogging --image F`).
//!
//! The PCM and the disk are not block devices with a fixed layout: the PCM is a byte array
//! written in line pieces (`Pcm::write`), the disk a map from page number to its values
//! (`Disk::write`). The file is therefore a write log from which both are rebuilt: the PCM
//! image after formatting, then every line piece and every page write in issue order.
//! State changes apply at issue (DESIGN.md, "Time"), and each write is appended before the
//! call that issued it returns, so a kill leaves the prefix of the writes issued before it:
//! a crash of the run in which every issued write persisted.
//!
//! Layout (little-endian):
//!
//! ```text
//! offset 0      magic "CMLBTIER" (8 bytes)
//!        8      format version u32 (= 1)
//!        12     label length u32 (n)
//!        16     label (n bytes: the run's configuration as JSON)
//!        16+n   CRC-32 of bytes [0, 16+n) u32
//! records, each: kind u8, payload length u32 (m), header CRC-32 u32 of (record number u64
//!                ++ kind ++ length), payload (m bytes), CRC-32 u32 of (record number u64
//!                ++ payload)
//!   kind 1  PCM base:   the whole PCM image (first record, exactly once)
//!   kind 2  PCM write:  address u64, the bytes written (inside one line)
//!   kind 3  disk write: page u64, its values u64 each
//! ```
//!
//! What opening accepts and refuses (as "Device image files: what an image may contain"
//! does for NAND images): a bad magic, version, header CRC or label is refused; a record
//! whose 9 header bytes are present but do not match their CRC, or whose payload is present
//! but does not match its CRC (a flipped bit, or bytes appended after the last record), is
//! refused, naming the record; a PCM write outside the PCM, a disk write before the base, a
//! second base, an unknown kind, are refused. The one thing a kill can leave that is not a
//! whole record is the last record cut short: fewer than its 9 header bytes, or a header
//! that matches its CRC followed by fewer bytes than its length says. That write was in
//! flight at the kill and is dropped, as the crash model lets an in-flight write be lost.
//! The header's own CRC keeps a flipped length from passing for a cut (which would drop
//! every later record); the record number in each CRC catches a record copied or moved in
//! the file. Not caught: 1 to 8 garbage bytes appended (they read as a cut header). Writes are not fsynced: the file survives a process kill, not an operating-system
//! crash.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"CMLBTIER";
const VERSION: u32 = 1;
const KIND_PCM_BASE: u8 = 1;
const KIND_PCM_WRITE: u8 = 2;
const KIND_DISK_WRITE: u8 = 3;

/// The writer of a tier image (module docs), shared by the PCM and the disk of one run.
pub struct TierFile {
    file: File,
    records: u64,
}

/// A tier image shared by the `Pcm` and the `Disk` that write through to it.
pub type TierSink = Arc<Mutex<TierFile>>;

fn header_crc(n: u64, kind: u8, len: u32) -> u32 {
    let c = sim::crc::crc32_update(0, &n.to_le_bytes());
    let c = sim::crc::crc32_update(c, &[kind]);
    sim::crc::crc32_update(c, &len.to_le_bytes())
}

fn payload_crc(n: u64, payload: &[u8]) -> u32 {
    let c = sim::crc::crc32_update(0, &n.to_le_bytes());
    sim::crc::crc32_update(c, payload)
}

/// Bytes of a record header: kind, length, CRC.
const REC_HEAD: usize = 9;

impl TierFile {
    /// Creates (truncates) `path` and writes the header with `label`.
    pub fn create(path: &Path, label: &str) -> Result<TierSink, String> {
        let mut file = File::create(path).map_err(|e| e.to_string())?;
        let mut head = Vec::with_capacity(20 + label.len());
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(label.len() as u32).to_le_bytes());
        head.extend_from_slice(label.as_bytes());
        let crc = sim::crc::crc32(&head);
        head.extend_from_slice(&crc.to_le_bytes());
        file.write_all(&head).map_err(|e| e.to_string())?;
        Ok(Arc::new(Mutex::new(TierFile { file, records: 0 })))
    }

    /// Appends one record in one `write` (a kill leaves it whole or cut at its end).
    fn record(&mut self, kind: u8, payload: &[u8]) -> Result<(), String> {
        let len = u32::try_from(payload.len())
            .map_err(|_| format!("tier image: a record of {} bytes", payload.len()))?;
        let mut r = Vec::with_capacity(payload.len() + REC_HEAD + 4);
        r.push(kind);
        r.extend_from_slice(&len.to_le_bytes());
        r.extend_from_slice(&header_crc(self.records, kind, len).to_le_bytes());
        r.extend_from_slice(payload);
        r.extend_from_slice(&payload_crc(self.records, payload).to_le_bytes());
        self.file
            .write_all(&r)
            .map_err(|e| format!("writing the tier image: {e}"))?;
        self.records += 1;
        Ok(())
    }

    pub fn pcm_base(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.record(KIND_PCM_BASE, bytes)
    }

    pub fn pcm_write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        let mut p = Vec::with_capacity(8 + data.len());
        p.extend_from_slice(&addr.to_le_bytes());
        p.extend_from_slice(data);
        self.record(KIND_PCM_WRITE, &p)
    }

    pub fn disk_write(&mut self, page: u64, values: &[u64]) -> Result<(), String> {
        let mut p = Vec::with_capacity(8 + 8 * values.len());
        p.extend_from_slice(&page.to_le_bytes());
        for v in values {
            p.extend_from_slice(&v.to_le_bytes());
        }
        self.record(KIND_DISK_WRITE, &p)
    }
}

/// Appends through a shared sink; a poisoned lock is an error, not a panic.
pub fn with_sink(
    s: &TierSink,
    f: impl FnOnce(&mut TierFile) -> Result<(), String>,
) -> Result<(), String> {
    let mut g = s
        .lock()
        .map_err(|_| "tier image: its writer panicked".to_string())?;
    f(&mut g)
}

/// What a tier image holds: the PCM and disk a restart starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TierImage {
    pub label: String,
    pub pcm: Vec<u8>,
    pub disk: BTreeMap<u64, Vec<u64>>,
    /// Whole records read.
    pub records: u64,
    /// The last record was cut short (a write in flight at the kill, dropped).
    pub cut_tail: bool,
}

/// True when `path` starts with the tier image magic.
pub fn is_tier_image(path: &Path) -> bool {
    use std::io::Read;
    let mut m = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut m))
        .is_ok()
        && &m == MAGIC
}

fn header(all: &[u8]) -> Result<(String, usize), String> {
    if all.len() < 8 || &all[0..8] != MAGIC {
        return Err("not a tier image (bad magic)".into());
    }
    if all.len() < 20 {
        return Err("corrupt tier image: the header is cut short".into());
    }
    let version = u32::from_le_bytes(all[8..12].try_into().unwrap_or_default());
    if version != VERSION {
        return Err(format!(
            "corrupt tier image: format version {version}, expected {VERSION}"
        ));
    }
    let n = u32::from_le_bytes(all[12..16].try_into().unwrap_or_default()) as usize;
    let end = 16usize
        .checked_add(n)
        .filter(|e| e.checked_add(4).is_some_and(|x| x <= all.len()))
        .ok_or("corrupt tier image: the header is cut short")?;
    let crc = u32::from_le_bytes(all[end..end + 4].try_into().unwrap_or_default());
    if crc != sim::crc::crc32(&all[..end]) {
        return Err("corrupt tier image: the header's CRC does not match".into());
    }
    let label = std::str::from_utf8(&all[16..end])
        .map_err(|_| "corrupt tier image: the label is not UTF-8")?
        .to_string();
    Ok((label, end + 4))
}

/// The label (configuration) of a tier image, without reading its records.
pub fn peek_label(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut f = File::open(path).map_err(|e| e.to_string())?;
    let mut head = [0u8; 16];
    f.read_exact(&mut head)
        .map_err(|_| "corrupt tier image: the header is cut short".to_string())?;
    let n = u32::from_le_bytes(head[12..16].try_into().unwrap_or_default()) as usize;
    let mut rest = vec![0u8; n.saturating_add(4).min(1 << 26)];
    f.read_exact(&mut rest)
        .map_err(|_| "corrupt tier image: the header is cut short".to_string())?;
    let mut all = head.to_vec();
    all.extend_from_slice(&rest);
    header(&all).map(|(l, _)| l)
}

/// Opens a tier image and rebuilds the PCM and the disk from its records (module docs).
pub fn open(path: &Path) -> Result<TierImage, String> {
    let all = std::fs::read(path).map_err(|e| e.to_string())?;
    parse(&all)
}

/// `open` over the bytes of a file.
pub fn parse(all: &[u8]) -> Result<TierImage, String> {
    let (label, mut at) = header(all)?;
    let mut pcm: Option<Vec<u8>> = None;
    let mut disk = BTreeMap::new();
    let mut n = 0u64;
    let mut cut_tail = false;
    while at < all.len() {
        if all.len() - at < REC_HEAD {
            cut_tail = true;
            break;
        }
        let kind = all[at];
        let len32 = u32::from_le_bytes(all[at + 1..at + 5].try_into().unwrap_or_default());
        let hcrc = u32::from_le_bytes(all[at + 5..at + 9].try_into().unwrap_or_default());
        if hcrc != header_crc(n, kind, len32) {
            return Err(format!(
                "corrupt tier image: record {n}'s header (at byte {at}) does not match its CRC"
            ));
        }
        let len = len32 as usize;
        let Some(end) = (at + REC_HEAD)
            .checked_add(len)
            .and_then(|e| e.checked_add(4))
            .filter(|e| *e <= all.len())
        else {
            cut_tail = true;
            break;
        };
        let payload = &all[at + REC_HEAD..at + REC_HEAD + len];
        let crc = u32::from_le_bytes(all[end - 4..end].try_into().unwrap_or_default());
        if crc != payload_crc(n, payload) {
            return Err(format!(
                "corrupt tier image: record {n} (at byte {at}) does not match its CRC"
            ));
        }
        match kind {
            KIND_PCM_BASE => {
                if pcm.is_some() {
                    return Err(format!(
                        "corrupt tier image: record {n} is a second PCM base"
                    ));
                }
                pcm = Some(payload.to_vec());
            }
            KIND_PCM_WRITE => {
                let p = pcm.as_mut().ok_or(format!(
                    "corrupt tier image: record {n} writes the PCM before its base"
                ))?;
                if payload.len() < 9 {
                    return Err(format!(
                        "corrupt tier image: record {n} is an empty PCM write"
                    ));
                }
                let addr = u64::from_le_bytes(payload[..8].try_into().unwrap_or_default());
                let data = &payload[8..];
                let a = usize::try_from(addr)
                    .ok()
                    .filter(|a| a.checked_add(data.len()).is_some_and(|e| e <= p.len()))
                    .ok_or(format!(
                        "corrupt tier image: record {n} writes PCM bytes [{addr}, +{}) outside its {} bytes",
                        data.len(),
                        p.len()
                    ))?;
                p[a..a + data.len()].copy_from_slice(data);
            }
            KIND_DISK_WRITE => {
                if pcm.is_none() {
                    return Err(format!(
                        "corrupt tier image: record {n} writes the disk before the PCM base"
                    ));
                }
                if payload.len() < 8 || !(payload.len() - 8).is_multiple_of(8) {
                    return Err(format!(
                        "corrupt tier image: record {n} is a disk write of {} bytes",
                        payload.len()
                    ));
                }
                let page = u64::from_le_bytes(payload[..8].try_into().unwrap_or_default());
                let values = payload[8..]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect();
                disk.insert(page, values);
            }
            k => {
                return Err(format!(
                    "corrupt tier image: record {n} has unknown kind {k}"
                ))
            }
        }
        n += 1;
        at = end;
    }
    let pcm = pcm.ok_or("corrupt tier image: no PCM base record")?;
    Ok(TierImage {
        label,
        pcm,
        disk,
        records: n,
        cut_tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("t.tier");
        let s = TierFile::create(&p, "{\"x\":1}").unwrap();
        with_sink(&s, |f| f.pcm_base(&[0u8; 64])).unwrap();
        with_sink(&s, |f| f.pcm_write(8, &[1, 2, 3])).unwrap();
        with_sink(&s, |f| f.disk_write(5, &[7, 8])).unwrap();
        with_sink(&s, |f| f.disk_write(5, &[9, 10])).unwrap();
        p
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("tier-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_tier_image_replays_its_writes_in_order() {
        let d = tmp("replay");
        let img = open(&sample(&d)).unwrap();
        assert_eq!(img.label, "{\"x\":1}");
        assert_eq!(&img.pcm[8..11], &[1, 2, 3]);
        assert_eq!(img.disk[&5], vec![9, 10]);
        assert_eq!((img.records, img.cut_tail), (4, false));
    }

    #[test]
    fn a_record_cut_short_is_dropped_and_every_other_corruption_is_refused() {
        let d = tmp("corrupt");
        let all = std::fs::read(sample(&d)).unwrap();
        // Cut inside the last record (9 + 8 + 16 + 4 bytes): that disk write is lost,
        // nothing else.
        for cut in 1..37 {
            let img = parse(&all[..all.len() - cut]).unwrap();
            assert!(img.cut_tail, "cut {cut}");
            assert_eq!(img.disk[&5], vec![7, 8], "cut {cut}");
        }
        // A flipped bit anywhere in a whole record or the header is refused.
        for i in 0..all.len() {
            let mut b = all.clone();
            b[i] ^= 0x10;
            assert!(parse(&b).is_err(), "byte {i}");
        }
        // Whole garbage records appended are refused by their CRC.
        let mut b = all.clone();
        b.extend_from_slice(&[3, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0]);
        assert!(parse(&b).unwrap_err().contains("record 4"));
        b.truncate(all.len() + 9);
        assert!(parse(&b).unwrap_err().contains("record 4's header"));
        assert!(parse(b"CMLBNAND....").is_err());
    }
}
