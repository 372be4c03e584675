//! Phase-change memory (PCMLogging §2.1, Table 1, §6.1): byte-addressable, non-volatile,
//! written and read in 64 B lines, served by a few chips in parallel, worn per allocation
//! unit.
//!
//! What it models:
//! - **Contents**: a flat byte array that survives a crash (non-volatile). State changes
//!   apply when a write is issued; the timing model says when each line write completes.
//! - **Timing**: line `l` lives on chip `l % chips`; a chip serves one line operation at a
//!   time, in issue order (read 50 ns, write 1 µs per line by default; §6.1 simulates four
//!   chips that serve at most four concurrent requests).
//! - **Wear**: one write counter per allocation unit (128 B default, §6.1), in a flat
//!   `Vec<u32>` (a 160 MB PCM is 1.25 M units), bumped once per line write touching it.
//! - **Crash model**: each line write is logged with its start and end (`PcmWrite`). At a
//!   power cut at `T`: line writes with `end <= T` persisted, those with `start <= T < end`
//!   each persisted, did not, or tore — a torn line keeps any subset of its 8-byte words
//!   (8-byte writes are atomic, nothing smaller is) — and later ones never began. A
//!   multi-line write therefore may tear at any line boundary.
//!
//! What it does not model: bit-level write skipping (differential writes), endurance
//! failure of a worn unit, energy, or a memory controller's write queue.

use sim::SimTime;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcmConfig {
    pub bytes: u64,
    pub line_bytes: u32,
    pub unit_bytes: u32,
    pub chips: u32,
    pub read_ns_per_line: u64,
    pub write_ns_per_line: u64,
}

impl Default for PcmConfig {
    fn default() -> Self {
        PcmConfig {
            bytes: 128 << 20,
            line_bytes: 64,
            unit_bytes: 128,
            chips: 4,
            read_ns_per_line: 50,
            write_ns_per_line: 1000,
        }
    }
}

impl PcmConfig {
    /// Errors name the bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.line_bytes == 0 || !self.line_bytes.is_multiple_of(8) {
            return Err(format!(
                "pcm.line_bytes = {}: must be a positive multiple of 8",
                self.line_bytes
            ));
        }
        if self.unit_bytes == 0 || !self.unit_bytes.is_multiple_of(self.line_bytes) {
            return Err(format!(
                "pcm.unit_bytes = {}: must be a positive multiple of line_bytes ({})",
                self.unit_bytes, self.line_bytes
            ));
        }
        if self.bytes == 0 || !self.bytes.is_multiple_of(u64::from(self.unit_bytes)) {
            return Err(format!(
                "pcm.bytes = {}: must be a positive multiple of unit_bytes",
                self.bytes
            ));
        }
        if self.chips == 0 {
            return Err("pcm.chips: must be at least 1".into());
        }
        Ok(())
    }

    pub fn units(&self) -> u64 {
        self.bytes / u64::from(self.unit_bytes)
    }
}

/// One logged line write: `data` written at `addr` (inside one line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcmWrite {
    pub addr: u64,
    pub data: Vec<u8>,
    pub start: SimTime,
    pub end: SimTime,
}

impl PcmWrite {
    /// The aligned 8-byte words this write touches.
    pub fn words(&self) -> u32 {
        let first = self.addr / 8;
        let last = (self.addr + self.data.len() as u64 - 1) / 8;
        (last - first + 1) as u32
    }

    /// Applies the write to `bytes` in full.
    pub fn apply(&self, bytes: &mut [u8]) {
        let a = self.addr as usize;
        bytes[a..a + self.data.len()].copy_from_slice(&self.data);
    }

    /// Applies only the touched words whose bit is set in `mask` (bit i: the i-th word) —
    /// a torn line write.
    pub fn apply_torn(&self, bytes: &mut [u8], mask: u64) {
        let first = self.addr / 8;
        for (i, b) in self.data.iter().enumerate() {
            let addr = self.addr + i as u64;
            let w = addr / 8 - first;
            if mask >> w & 1 == 1 {
                bytes[addr as usize] = *b;
            }
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcmCounters {
    pub line_writes: u64,
    pub line_reads: u64,
    pub bytes_written: u64,
}

/// Wear figures of Fig. 11 over the per-unit write counters.
#[derive(Clone, Debug, PartialEq)]
pub struct WearFigures {
    pub mean_writes_per_unit: f64,
    /// Mean writes of the most-written 1 % / 5 % of units.
    pub worst_1pct_mean: f64,
    pub worst_5pct_mean: f64,
    pub variance: f64,
    pub total_line_writes: u64,
    /// Writes of the most-written unit.
    pub max_unit_writes: u32,
}

impl WearFigures {
    /// The figures as integer report counters (fractions ×100), one name each, for the
    /// strategies that write PCM to export beside their own counters (Fig. 11: mean writes
    /// per unit, worst 1 % and 5 %, variance; the total traffic is `pcm_line_writes`).
    pub fn counters(&self) -> [(&'static str, u64); 5] {
        self.counters_named([
            "pcm_wear_mean_x100",
            "pcm_wear_worst_1pct_x100",
            "pcm_wear_worst_5pct_x100",
            "pcm_wear_variance_x100",
            "pcm_wear_max_unit_writes",
        ])
    }

    /// The same figures under other names (mean, worst 1 %, worst 5 %, variance, max), e.g.
    /// for a part of PCM.
    pub fn counters_named(&self, names: [&'static str; 5]) -> [(&'static str, u64); 5] {
        let x100 = |v: f64| (v * 100.0).round() as u64;
        [
            (names[0], x100(self.mean_writes_per_unit)),
            (names[1], x100(self.worst_1pct_mean)),
            (names[2], x100(self.worst_5pct_mean)),
            (names[3], x100(self.variance)),
            (names[4], u64::from(self.max_unit_writes)),
        ]
    }
}

pub struct Pcm {
    cfg: PcmConfig,
    bytes: Vec<u8>,
    unit_writes: Vec<u32>,
    chip_free: Vec<SimTime>,
    log: Option<Vec<PcmWrite>>,
    /// A file-backed run's tier image: every line piece is appended as it is issued.
    sink: Option<crate::tier_file::TierSink>,
    pub counters: PcmCounters,
}

impl Pcm {
    /// A zeroed PCM (all units free when the layout uses 0 as "free").
    pub fn new(cfg: PcmConfig) -> Result<Pcm, String> {
        cfg.validate()?;
        let n = usize::try_from(cfg.bytes).map_err(|_| "pcm.bytes too large".to_string())?;
        Ok(Pcm {
            bytes: vec![0; n],
            unit_writes: vec![0; cfg.units() as usize],
            chip_free: vec![SimTime::ZERO; cfg.chips as usize],
            log: None,
            sink: None,
            counters: PcmCounters::default(),
            cfg,
        })
    }

    /// A PCM holding `bytes` (a crash image), with fresh timing and counters.
    pub fn from_image(cfg: PcmConfig, bytes: Vec<u8>) -> Result<Pcm, String> {
        let mut p = Pcm::new(cfg)?;
        if bytes.len() != p.bytes.len() {
            return Err(format!(
                "pcm image has {} bytes, config says {}",
                bytes.len(),
                p.bytes.len()
            ));
        }
        p.bytes = bytes;
        Ok(p)
    }

    pub fn config(&self) -> &PcmConfig {
        &self.cfg
    }

    pub fn set_logging(&mut self, on: bool) {
        self.log = if on { Some(Vec::new()) } else { None };
    }

    /// Writes the PCM through to a tier image from now on: its contents now become the
    /// image's base record, every later line piece a record (`tier_file`).
    pub fn set_sink(&mut self, sink: crate::tier_file::TierSink) -> Result<(), String> {
        crate::tier_file::with_sink(&sink, |f| f.pcm_base(&self.bytes))?;
        self.sink = Some(sink);
        Ok(())
    }

    pub fn take_log(&mut self) -> Vec<PcmWrite> {
        self.log.take().unwrap_or_default()
    }

    /// The contents now (what a crash after every issued write completed would leave).
    pub fn image(&self) -> &[u8] {
        &self.bytes
    }

    fn check(&self, addr: u64, len: usize) -> Result<(), String> {
        if len == 0
            || addr
                .checked_add(len as u64)
                .is_none_or(|e| e > self.cfg.bytes)
        {
            return Err(format!(
                "pcm access [{addr}, +{len}) outside {} bytes",
                self.cfg.bytes
            ));
        }
        Ok(())
    }

    /// Splits `[addr, addr+len)` into line pieces: (addr, len). An iterator, not a vector:
    /// every PCM access splits, and most are one line.
    fn pieces(&self, addr: u64, len: usize) -> impl Iterator<Item = (u64, usize)> {
        let lb = u64::from(self.cfg.line_bytes);
        let end = addr + len as u64;
        let mut a = addr;
        std::iter::from_fn(move || {
            (a < end).then(|| {
                let e = ((a / lb + 1) * lb).min(end);
                let piece = (a, (e - a) as usize);
                a = e;
                piece
            })
        })
    }

    fn chip_of(&self, addr: u64) -> usize {
        (addr / u64::from(self.cfg.line_bytes) % u64::from(self.cfg.chips)) as usize
    }

    /// Writes `data` at `addr`; the contents change now, the result is when the last line
    /// write completes.
    pub fn write(&mut self, addr: u64, data: &[u8], now: SimTime) -> Result<SimTime, String> {
        self.check(addr, data.len())?;
        let mut done = now;
        let ub = u64::from(self.cfg.unit_bytes);
        for (a, n) in self.pieces(addr, data.len()) {
            let chip = self.chip_of(a);
            let start = now.max(self.chip_free[chip]);
            let end = start + self.cfg.write_ns_per_line;
            self.chip_free[chip] = end;
            done = done.max(end);
            let off = (a - addr) as usize;
            let piece = &data[off..off + n];
            self.bytes[a as usize..a as usize + n].copy_from_slice(piece);
            self.unit_writes[(a / ub) as usize] += 1;
            self.counters.line_writes += 1;
            self.counters.bytes_written += n as u64;
            if let Some(s) = &self.sink {
                crate::tier_file::with_sink(s, |f| f.pcm_write(a, piece))?;
            }
            if let Some(l) = self.log.as_mut() {
                l.push(PcmWrite {
                    addr: a,
                    data: piece.to_vec(),
                    start,
                    end,
                });
            }
        }
        Ok(done)
    }

    /// Writes one aligned 8-byte word (atomic under the crash model).
    pub fn write_u64(&mut self, addr: u64, v: u64, now: SimTime) -> Result<SimTime, String> {
        if !addr.is_multiple_of(8) {
            return Err(format!("pcm word write at {addr}: not 8-byte aligned"));
        }
        self.write(addr, &v.to_le_bytes(), now)
    }

    /// Reads `len` bytes at `addr`; returns them and when the last line read completes.
    pub fn read(
        &mut self,
        addr: u64,
        len: usize,
        now: SimTime,
    ) -> Result<(Vec<u8>, SimTime), String> {
        let done = self.read_lines(addr, len, now)?;
        Ok((
            self.bytes[addr as usize..addr as usize + len].to_vec(),
            done,
        ))
    }

    /// A read whose bytes the caller does not need (it knows them already): the same line
    /// reads, chip occupancy and counters as `read`, without copying the bytes out.
    pub fn read_lines(&mut self, addr: u64, len: usize, now: SimTime) -> Result<SimTime, String> {
        self.check(addr, len)?;
        let mut done = now;
        for (a, _) in self.pieces(addr, len) {
            let chip = self.chip_of(a);
            let start = now.max(self.chip_free[chip]);
            let end = start + self.cfg.read_ns_per_line;
            self.chip_free[chip] = end;
            done = done.max(end);
            self.counters.line_reads += 1;
        }
        Ok(done)
    }

    /// The contents without timing (recovery scans charge `scan_ns` instead).
    pub fn peek(&self, addr: u64, len: usize) -> &[u8] {
        &self.bytes[addr as usize..addr as usize + len]
    }

    pub fn peek_u64(&self, addr: u64) -> u64 {
        u64::from_le_bytes(self.peek(addr, 8).try_into().expect("8 bytes"))
    }

    /// Time to read `bytes` bytes sequentially with every chip busy in parallel.
    pub fn scan_ns(&self, bytes: u64) -> u64 {
        let lines = bytes.div_ceil(u64::from(self.cfg.line_bytes));
        lines.div_ceil(u64::from(self.cfg.chips)) * self.cfg.read_ns_per_line
    }

    pub fn unit_writes(&self) -> &[u32] {
        &self.unit_writes
    }

    /// Fig. 11's figures over the units' write counters.
    pub fn wear(&self) -> WearFigures {
        self.wear_of(0..self.unit_writes.len())
    }

    /// Fig. 11's figures over units `range` only (e.g. the record area); the total is the
    /// line writes counted on those units.
    pub fn wear_of(&self, range: std::ops::Range<usize>) -> WearFigures {
        let range = range.start.min(self.unit_writes.len())..range.end.min(self.unit_writes.len());
        let part = &self.unit_writes[range.clone()];
        let n = part.len().max(1);
        let mut v: Vec<u32> = part.to_vec();
        if v.is_empty() {
            v.push(0);
        }
        v.sort_unstable_by(|a, b| b.cmp(a));
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64;
        let var = v
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let top = |pct: usize| {
            let k = (n * pct).div_ceil(100).max(1);
            v[..k].iter().map(|&x| f64::from(x)).sum::<f64>() / k as f64
        };
        WearFigures {
            mean_writes_per_unit: mean,
            worst_1pct_mean: top(1),
            worst_5pct_mean: top(5),
            variance: var,
            max_unit_writes: v[0],
            total_line_writes: if range.len() == self.unit_writes.len() {
                self.counters.line_writes
            } else {
                part.iter().map(|&x| u64::from(x)).sum()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> PcmConfig {
        PcmConfig {
            bytes: 4096,
            ..PcmConfig::default()
        }
    }

    #[test]
    fn lines_on_four_chips_run_in_parallel() {
        let mut p = Pcm::new(small()).unwrap();
        // 256 B = 4 lines on 4 chips: one write latency.
        let t = p.write(0, &[7u8; 256], SimTime::ZERO).unwrap();
        assert_eq!(t, SimTime(1000));
        // 5 lines: line 4 is on chip 0 again, behind line 0.
        let mut q = Pcm::new(small()).unwrap();
        assert_eq!(
            q.write(0, &[7u8; 320], SimTime::ZERO).unwrap(),
            SimTime(2000)
        );
        // A read on a busy chip waits for it.
        let (d, t) = q.read(0, 8, SimTime(10)).unwrap();
        assert_eq!(d, vec![7u8; 8]);
        assert_eq!(t, SimTime(2050));
        assert_eq!(q.counters.line_writes, 5);
    }

    #[test]
    fn unaligned_write_splits_at_lines_and_counts_units() {
        let mut p = Pcm::new(small()).unwrap();
        p.set_logging(true);
        p.write(120, &[1u8; 16], SimTime::ZERO).unwrap();
        let log = p.take_log();
        assert_eq!(log.len(), 2);
        assert_eq!((log[0].addr, log[0].data.len()), (120, 8));
        assert_eq!((log[1].addr, log[1].data.len()), (128, 8));
        assert_eq!(&p.unit_writes()[..3], &[1, 1, 0]);
    }

    #[test]
    fn torn_line_keeps_a_subset_of_words() {
        let mut p = Pcm::new(small()).unwrap();
        p.set_logging(true);
        let data: Vec<u8> = (1..=64).collect();
        p.write(64, &data, SimTime::ZERO).unwrap();
        let w = &p.take_log()[0];
        assert_eq!(w.words(), 8);
        let mut img = vec![0u8; 4096];
        w.apply_torn(&mut img, 0b101);
        assert_eq!(&img[64..72], &data[0..8]);
        assert_eq!(&img[72..80], &[0u8; 8]);
        assert_eq!(&img[80..88], &data[16..24]);
        assert_eq!(&img[88..128], &[0u8; 40]);
    }

    #[test]
    fn bad_access_and_config_are_errors() {
        let mut p = Pcm::new(small()).unwrap();
        assert!(p.write(4090, &[0u8; 8], SimTime::ZERO).is_err());
        assert!(p.write_u64(4, 1, SimTime::ZERO).is_err());
        assert!(Pcm::new(PcmConfig {
            unit_bytes: 100,
            ..small()
        })
        .is_err());
        assert!(Pcm::new(PcmConfig {
            chips: 0,
            ..small()
        })
        .is_err());
    }

    #[test]
    fn wear_figures_by_hand() {
        let mut p = Pcm::new(PcmConfig {
            bytes: 128 * 100,
            ..small()
        })
        .unwrap();
        // unit 0 written 3 lines (2 lines + 1 line), unit 1 one line.
        p.write(0, &[1u8; 128], SimTime::ZERO).unwrap();
        p.write(0, &[1u8; 8], SimTime::ZERO).unwrap();
        p.write(128, &[1u8; 8], SimTime::ZERO).unwrap();
        let w = p.wear();
        assert_eq!(w.total_line_writes, 4);
        assert!((w.mean_writes_per_unit - 0.04).abs() < 1e-12);
        assert!((w.worst_1pct_mean - 3.0).abs() < 1e-12);
        assert!((w.worst_5pct_mean - 0.8).abs() < 1e-12);
        let var = (3.0f64 - 0.04).powi(2) / 100.0
            + (1.0f64 - 0.04).powi(2) / 100.0
            + 98.0 * 0.04f64.powi(2) / 100.0;
        assert!((w.variance - var).abs() < 1e-12);
        assert_eq!(w.max_unit_writes, 3);
        let c = w.counters();
        assert_eq!(c[0], ("pcm_wear_mean_x100", 4));
        assert_eq!(c[1], ("pcm_wear_worst_1pct_x100", 300));
        assert_eq!(c[2], ("pcm_wear_worst_5pct_x100", 80));
        assert_eq!(
            c[3],
            ("pcm_wear_variance_x100", (var * 100.0).round() as u64)
        );
        assert_eq!(c[4], ("pcm_wear_max_unit_writes", 3));
        // Units 1..3 only: counters 1 and 0.
        let r = p.wear_of(1..3);
        assert_eq!(r.total_line_writes, 1);
        assert!((r.mean_writes_per_unit - 0.5).abs() < 1e-12);
        assert!((r.worst_1pct_mean - 1.0).abs() < 1e-12);
        assert!((r.variance - 0.25).abs() < 1e-12);
    }
}
