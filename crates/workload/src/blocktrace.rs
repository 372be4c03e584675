//! Streamed importers for common block-trace formats: blkreplay `.load` files, MSR
//! Cambridge CSV and SPC (UMass Trace Repository) CSV. Each reads its input line by line
//! (one reused buffer; a multi-gigabyte trace is never held as text) and yields the same
//! `disksim::TraceRequest`s the DiskSim reader produces, so `disksim::DiskSimReplay` turns
//! them into exactly the `Op` stream a DiskSim trace of the same requests gives: sector
//! ranges map to the whole logical pages they touch (a sub-page or unaligned request
//! becomes a request for every page it overlaps; `with_rmw_reads` adds the read a partial
//! page write implies), addresses beyond the device fold or fail as
//! `workload.trace.fold` says, and arrival times are replayed open-loop.
//!
//! Formats (docs/TRACES.md):
//! - **blkreplay** (`.load`, as shipped by Debian's `blkreplay-examples`): a free-text
//!   preamble, a header line `start ; sector; length ; op ; …`, then
//!   `start_s ; sector ; length_sectors ; op ; replay_delay ; replay_duration` with
//!   `start_s` in seconds (decimal, up to nanoseconds), 512-byte sectors and `op` a blktrace
//!   RWBS string: `R…` reads (`R`, `RA` read-ahead, `RS` …), `W…` writes.
//! - **msr** (MSR Cambridge, SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//!   ResponseTime` with Timestamp in Windows FILETIME ticks (100 ns), Type `Read`/`Write`,
//!   Offset and Size in bytes. Times are made relative to the first request.
//! - **spc** (UMass / SPC-1 traces such as Financial1, WebSearch1):
//!   `ASU,LBA,Size,Opcode,Timestamp[,…]` with LBA in 512-byte blocks, Size in bytes, Opcode
//!   `r`/`w` (either case), Timestamp in seconds; the ASU becomes the device number.
//!
//! Byte-addressed requests (msr, spc sizes) are rounded out to the 512-byte sectors they
//! touch. Blank lines and lines starting with `#` are skipped; any other malformed line is an
//! error naming the file, the line and the problem, as are zero-length requests and arrival
//! times that go backwards. What it does not do: merge devices (the device number is kept,
//! and like DiskSim's it is ignored by the replay, so requests of different disks or ASUs
//! share one address space), or emit trims (no format here has them).

use crate::disksim::TraceRequest;
use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use std::io::BufRead;

const SECTOR_BYTES: u64 = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockFormat {
    Blkreplay,
    Msr,
    Spc,
}

impl BlockFormat {
    pub fn parse(s: &str) -> Option<BlockFormat> {
        match s {
            "blkreplay" => Some(BlockFormat::Blkreplay),
            "msr" => Some(BlockFormat::Msr),
            "spc" | "umass" => Some(BlockFormat::Spc),
            _ => None,
        }
    }
}

/// A streaming reader: an iterator of requests, stopping at the first error.
pub struct BlockTraceReader<R: BufRead> {
    name: String,
    format: BlockFormat,
    input: R,
    line: String,
    line_no: u64,
    last_ns: u64,
    /// msr: the first timestamp (times are relative to it).
    t0: Option<u64>,
    /// blkreplay: a data line has been seen (the preamble is over).
    in_data: bool,
    done: bool,
}

impl<R: BufRead> BlockTraceReader<R> {
    pub fn new(name: &str, format: BlockFormat, input: R) -> BlockTraceReader<R> {
        BlockTraceReader {
            name: name.into(),
            format,
            input,
            line: String::with_capacity(128),
            line_no: 0,
            last_ns: 0,
            t0: None,
            in_data: false,
            done: false,
        }
    }

    fn err(&self, what: impl std::fmt::Display) -> WorkloadError {
        werr(format!("{}:{}: {what}", self.name, self.line_no))
    }

    fn next_request(&mut self) -> Result<Option<TraceRequest>, WorkloadError> {
        let mut buf = std::mem::take(&mut self.line);
        let r = self.next_request_in(&mut buf);
        self.line = buf;
        r
    }

    fn next_request_in(
        &mut self,
        line: &mut String,
    ) -> Result<Option<TraceRequest>, WorkloadError> {
        loop {
            line.clear();
            let n = self
                .input
                .read_line(line)
                .map_err(|e| werr(format!("{}:{}: {e}", self.name, self.line_no + 1)))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let req = match self.format {
                BlockFormat::Blkreplay => {
                    let first = t.split(';').next().unwrap_or("").trim();
                    if !self.in_data && (!t.contains(';') || parse_seconds_ns(first).is_none()) {
                        continue; // preamble and header
                    }
                    self.in_data = true;
                    self.blkreplay(t)?
                }
                BlockFormat::Msr => self.msr(t)?,
                BlockFormat::Spc => self.spc(t)?,
            };
            if req.arrival_ns > crate::MAX_TRACE_TIME_NS {
                return Err(self.err(format!(
                    "arrival time {} ns is beyond the simulator's time range (at most {})",
                    req.arrival_ns,
                    crate::MAX_TRACE_TIME_NS
                )));
            }
            if req.arrival_ns < self.last_ns {
                return Err(self.err(format!(
                    "arrival time {} ns is earlier than the previous request's {} ns",
                    req.arrival_ns, self.last_ns
                )));
            }
            self.last_ns = req.arrival_ns;
            return Ok(Some(req));
        }
    }

    fn blkreplay(&self, t: &str) -> Result<TraceRequest, WorkloadError> {
        let mut f = t.split(';').map(str::trim);
        let (Some(start), Some(sector), Some(len), Some(op)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            return Err(self.err("expected 'start ; sector ; length ; op ; …'"));
        };
        let arrival_ns = parse_seconds_ns(start)
            .ok_or_else(|| self.err(format!("start '{start}' is not a time in seconds")))?;
        let lsn = self.int(sector, "sector")?;
        let sectors = self.int(len, "length")?;
        let read = match op.as_bytes().first() {
            Some(b'R') | Some(b'r') => true,
            Some(b'W') | Some(b'w') => false,
            _ => return Err(self.err(format!("op '{op}' is neither a read (R…) nor a write (W…)"))),
        };
        self.request(arrival_ns, 0, lsn, sectors, read)
    }

    fn msr(&mut self, t: &str) -> Result<TraceRequest, WorkloadError> {
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        if f.len() < 6 {
            return Err(self.err(format!(
                "expected 7 fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {}",
                f.len()
            )));
        }
        let ts = self.int(f[0], "Timestamp")?;
        let disk = self.int(f[2], "DiskNumber")?;
        let read = if f[3].eq_ignore_ascii_case("read") {
            true
        } else if f[3].eq_ignore_ascii_case("write") {
            false
        } else {
            return Err(self.err(format!("Type '{}' is neither Read nor Write", f[3])));
        };
        let offset = self.int(f[4], "Offset")?;
        let size = self.int(f[5], "Size")?;
        let t0 = *self.t0.get_or_insert(ts);
        if ts < t0 {
            return Err(self.err(format!(
                "Timestamp {ts} is earlier than the first request's {t0}"
            )));
        }
        let arrival_ns = (ts - t0).saturating_mul(100);
        let (lsn, sectors) = self.bytes_to_sectors(offset, size)?;
        self.request(arrival_ns, disk, lsn, sectors, read)
    }

    fn spc(&self, t: &str) -> Result<TraceRequest, WorkloadError> {
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        if f.len() < 5 {
            return Err(self.err(format!(
                "expected at least 5 fields (ASU,LBA,Size,Opcode,Timestamp), found {}",
                f.len()
            )));
        }
        let asu = self.int(f[0], "ASU")?;
        let lba = self.int(f[1], "LBA")?;
        let size = self.int(f[2], "Size")?;
        let read = match f[3] {
            "r" | "R" => true,
            "w" | "W" => false,
            op => return Err(self.err(format!("Opcode '{op}' is neither r nor w"))),
        };
        let arrival_ns = parse_seconds_ns(f[4])
            .ok_or_else(|| self.err(format!("Timestamp '{}' is not a time in seconds", f[4])))?;
        if size == 0 {
            return Err(self.err("Size is 0 bytes"));
        }
        let sectors = size.div_ceil(SECTOR_BYTES);
        self.request(arrival_ns, asu, lba, sectors, read)
    }

    fn bytes_to_sectors(&self, offset: u64, size: u64) -> Result<(u64, u64), WorkloadError> {
        if size == 0 {
            return Err(self.err("Size is 0 bytes"));
        }
        let end = offset
            .checked_add(size)
            .ok_or_else(|| self.err("Offset + Size overflows"))?;
        let first = offset / SECTOR_BYTES;
        Ok((first, end.div_ceil(SECTOR_BYTES) - first))
    }

    fn int(&self, s: &str, what: &str) -> Result<u64, WorkloadError> {
        s.parse::<u64>()
            .map_err(|_| self.err(format!("{what} '{s}' is not a non-negative integer")))
    }

    fn request(
        &self,
        arrival_ns: u64,
        device: u64,
        lsn: u64,
        sectors: u64,
        read: bool,
    ) -> Result<TraceRequest, WorkloadError> {
        if sectors == 0 || sectors > u64::from(u32::MAX) {
            return Err(self.err(format!(
                "length must be 1..={} sectors, found {sectors}",
                u32::MAX
            )));
        }
        if lsn.checked_add(sectors).is_none() {
            return Err(self.err("sector range overflows"));
        }
        Ok(TraceRequest {
            arrival_ns,
            device: device.min(u64::from(u32::MAX)) as u32,
            lsn,
            sectors: sectors as u32,
            read,
        })
    }
}

impl<R: BufRead> Iterator for BlockTraceReader<R> {
    type Item = Result<TraceRequest, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_request() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Read a whole trace (streamed) into requests for `disksim::DiskSimReplay`.
pub fn parse(
    name: &str,
    format: BlockFormat,
    input: impl BufRead,
) -> Result<Vec<TraceRequest>, WorkloadError> {
    BlockTraceReader::new(name, format, input).collect()
}

/// The reads a device with `page_bytes` pages has to do for read-modify-write: before each
/// write that covers only part of its first or last page, a read of that page (whole), at
/// the same arrival time. Optional: without it a sub-page write costs what a whole-page
/// write does. The read and the write are issued together open-loop, so the device may
/// serve them in either order; the cost, not the dependency, is modelled.
pub fn with_rmw_reads(reqs: &[TraceRequest], page_bytes: u32) -> Vec<TraceRequest> {
    let spp = u64::from(page_bytes / 512).max(1);
    let mut out = Vec::with_capacity(reqs.len() + reqs.len() / 4);
    for r in reqs {
        if !r.read {
            let end = r.lsn + u64::from(r.sectors);
            let (first, last) = (r.lsn / spp, (end - 1) / spp);
            let head = r.lsn % spp != 0 || (first == last && end % spp != 0);
            let tail = last != first && end % spp != 0;
            for (partial, page) in [(head, first), (tail, last)] {
                if partial {
                    out.push(TraceRequest {
                        read: true,
                        lsn: page * spp,
                        sectors: spp as u32,
                        ..*r
                    });
                }
            }
        }
        out.push(*r);
    }
    out
}

/// Seconds as a non-negative decimal (`12`, `0.5`, `498.670659923`) to nanoseconds, exactly
/// (digits past the ninth decimal are truncated). `None` if it is not such a number or is
/// too large.
pub fn parse_seconds_ns(s: &str) -> Option<u64> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns = 0u64;
    let mut scale = 100_000_000u64;
    for b in frac.bytes().take(9) {
        ns += u64::from(b - b'0') * scale;
        scale /= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disksim::DiskSimReplay;
    use crate::{Driver, Op, Step};
    use sim::{Lpn, SimTime};

    const EXCERPT: &str = include_str!("../fixtures/windows-shared-server-excerpt.load");

    #[test]
    fn seconds_parse_exactly() {
        assert_eq!(parse_seconds_ns("0.000000000"), Some(0));
        assert_eq!(parse_seconds_ns("498.670659923"), Some(498_670_659_923));
        assert_eq!(parse_seconds_ns("1.5"), Some(1_500_000_000));
        assert_eq!(parse_seconds_ns("7"), Some(7_000_000_000));
        assert_eq!(parse_seconds_ns(".25"), Some(250_000_000));
        assert_eq!(parse_seconds_ns("0.1234567891"), Some(123_456_789));
        for bad in ["", ".", "-1", "1e3", "x", "1.2.3", "99999999999999999999"] {
            assert_eq!(parse_seconds_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn blkreplay_excerpt_of_a_real_trace() {
        let reqs = parse("excerpt", BlockFormat::Blkreplay, EXCERPT.as_bytes()).unwrap();
        // Facts of the excerpt (checked against the file with awk): 200 writes, 1,571
        // sectors, first and last requests as below.
        assert_eq!(reqs.len(), 200);
        assert!(reqs.iter().all(|r| !r.read));
        assert_eq!(reqs.iter().map(|r| u64::from(r.sectors)).sum::<u64>(), 1571);
        assert_eq!(
            reqs[0],
            TraceRequest {
                arrival_ns: 0,
                device: 0,
                lsn: 6_293_576,
                sectors: 8,
                read: false
            }
        );
        assert_eq!(
            reqs[199],
            TraceRequest {
                arrival_ns: 522_003_354_840,
                device: 0,
                lsn: 6_142_320,
                sectors: 1,
                read: false
            }
        );
        // The last request is one sector: a sub-page write of the page it falls in.
        let replay = DiskSimReplay::new("excerpt", &reqs, 4096, 1 << 22, 1.0, true).unwrap();
        assert_eq!(replay.len(), 200);
    }

    #[test]
    fn each_format_yields_the_op_stream_of_the_equivalent_disksim_trace() {
        // The same three requests in every format: a read of 4 KiB at byte 8192 at t=0, an
        // unaligned 1-byte write at byte 4095 at t=1.5 s, a 6 KiB write at byte 512 at t=2 s.
        let disksim = "0 0 16 8 1\n1500000000 0 7 1 0\n2000000000 0 1 12 0\n";
        let blk = "preamble text\nstart ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n\
                   0.0 ; 16 ; 8 ; RA ; 0.0 ; 0.0\n1.5 ; 7 ; 1 ; W ; 0.0 ; 0.0\n2.000000000 ; 1 ; 12 ; WS ; 0.0 ; 0.0\n";
        let msr = "128166372003061629,hm,0,Read,8192,4096,100\n\
                   128166372018061629,hm,0,Write,4095,1,100\n\
                   128166372023061629,hm,0,Write,512,6144,100\n";
        let spc = "0,16,4096,r,0.000000\n0,7,1,W,1.5\n0,1,6144,w,2.0\n";
        let want_reqs = crate::disksim::parse("d", disksim.as_bytes()).unwrap();
        let ops = |reqs: &[TraceRequest]| {
            let mut r = DiskSimReplay::new("t", reqs, 4096, 1000, 1.0, false).unwrap();
            let mut out = Vec::new();
            let mut now = SimTime(0);
            loop {
                match r.step(0, now) {
                    Step::IssueThen(op, next) => {
                        out.push((now, op));
                        now = next;
                    }
                    Step::Sleep(t) => now = t,
                    Step::Done => break,
                    s => panic!("{s:?}"),
                }
            }
            out
        };
        let want = ops(&want_reqs);
        assert_eq!(
            want[1].1,
            Op::Write {
                lpn: Lpn(0),
                pages: 1
            },
            "a one-sector write is a write of its page"
        );
        assert_eq!(
            want[2].1,
            Op::Write {
                lpn: Lpn(0),
                pages: 2
            },
            "unaligned: both pages touched"
        );
        for (fmt, text) in [
            (BlockFormat::Blkreplay, blk),
            (BlockFormat::Msr, msr),
            (BlockFormat::Spc, spc),
        ] {
            let reqs = parse("t", fmt, text.as_bytes()).unwrap();
            assert_eq!(ops(&reqs), want, "{fmt:?}");
        }
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let cases: &[(BlockFormat, &str, &str)] = &[
            (
                BlockFormat::Blkreplay,
                "start ; x\n1.0 ; 5 ; 8 ; W ; 0 ; 0\n0.5 ; 5 ; 8 ; W\n",
                "t:3: arrival time",
            ),
            (
                BlockFormat::Blkreplay,
                "1.0 ; 5 ; 8 ; X ; 0 ; 0\n",
                "t:1: op 'X'",
            ),
            (
                BlockFormat::Blkreplay,
                "1.0 ; 5 ; 0 ; W ; 0 ; 0\n",
                "t:1: length must be",
            ),
            (
                BlockFormat::Blkreplay,
                "1.0 ; 5 ; 8 ; W\nnot data\n",
                "t:2: expected 'start",
            ),
            (
                BlockFormat::Blkreplay,
                "1.0 ; -5 ; 8 ; W\n",
                "t:1: sector '-5'",
            ),
            (BlockFormat::Msr, "1,h,0,Read,0\n", "t:1: expected 7 fields"),
            (BlockFormat::Msr, "1,h,0,Trim,0,512,1\n", "t:1: Type 'Trim'"),
            (
                BlockFormat::Msr,
                "5,h,0,Read,0,512,1\n4,h,0,Read,0,512,1\n",
                "t:2: Timestamp 4",
            ),
            (BlockFormat::Msr, "5,h,0,Read,0,0,1\n", "t:1: Size is 0"),
            (
                BlockFormat::Msr,
                "5,h,0,Read,18446744073709551615,2,1\n",
                "t:1: Offset + Size",
            ),
            (BlockFormat::Spc, "0,1,512,x,0.0\n", "t:1: Opcode 'x'"),
            (BlockFormat::Spc, "0,1,512,r\n", "t:1: expected at least 5"),
            (BlockFormat::Spc, "0,1,512,r,abc\n", "t:1: Timestamp 'abc'"),
            (
                BlockFormat::Spc,
                "\n# c\n0,1,512,r,9999999999\n",
                "t:3: arrival time",
            ),
            (
                BlockFormat::Spc,
                "0,18446744073709551615,4096,r,1\n",
                "t:1: sector range",
            ),
        ];
        for (fmt, text, want) in cases {
            let e = parse("t", *fmt, text.as_bytes()).unwrap_err();
            assert!(e.what.contains(want), "{fmt:?} {text:?}: {}", e.what);
        }
    }

    #[test]
    fn rmw_reads_precede_partial_page_writes_only() {
        let w = |lsn, sectors| TraceRequest {
            arrival_ns: 5,
            device: 0,
            lsn,
            sectors,
            read: false,
        };
        let r = |lsn, sectors| TraceRequest {
            read: true,
            ..w(lsn, sectors)
        };
        // 4 KiB pages = 8 sectors.
        assert_eq!(with_rmw_reads(&[w(8, 8)], 4096), vec![w(8, 8)], "aligned");
        assert_eq!(
            with_rmw_reads(&[w(9, 1)], 4096),
            vec![r(8, 8), w(9, 1)],
            "inside one page"
        );
        assert_eq!(
            with_rmw_reads(&[w(8, 1)], 4096),
            vec![r(8, 8), w(8, 1)],
            "head of a page"
        );
        assert_eq!(
            with_rmw_reads(&[w(4, 16)], 4096),
            vec![r(0, 8), r(16, 8), w(4, 16)],
            "partial head and tail pages"
        );
        assert_eq!(
            with_rmw_reads(&[w(8, 12)], 4096),
            vec![r(16, 8), w(8, 12)],
            "tail only"
        );
        assert_eq!(
            with_rmw_reads(&[r(9, 1)], 4096),
            vec![r(9, 1)],
            "reads need none"
        );
        // 512-byte pages: every request is whole pages.
        assert_eq!(with_rmw_reads(&[w(9, 1)], 512), vec![w(9, 1)]);
    }

    #[test]
    fn reader_streams_and_stops_at_the_first_error() {
        let text = "0,1,512,r,0.0\n0,1,512,q,0.1\n0,1,512,r,0.2\n";
        let mut r = BlockTraceReader::new("t", BlockFormat::Spc, text.as_bytes());
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    /// The full traces of Debian's blkreplay-examples, when installed
    /// (`apt-get install blkreplay-examples`): `cargo test -p commitlab-workload --release
    /// blkreplay_examples -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn blkreplay_examples_parse_in_full() {
        let dir = "/usr/share/doc/blkreplay-examples/examples/example-load/natural";
        let entries = std::fs::read_dir(dir).expect("blkreplay-examples is not installed");
        for e in entries {
            let path = e.unwrap().path();
            let mut child = std::process::Command::new("zcat")
                .arg(&path)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let out = std::io::BufReader::new(child.stdout.take().unwrap());
            let name = path.display().to_string();
            let (mut n, mut reads, mut sectors) = (0u64, 0u64, 0u64);
            for r in BlockTraceReader::new(&name, BlockFormat::Blkreplay, out) {
                let r = r.unwrap();
                n += 1;
                reads += u64::from(r.read);
                sectors += u64::from(r.sectors);
            }
            child.wait().unwrap();
            println!("{name}: {n} requests, {reads} reads, {sectors} sectors");
            assert!(n > 1000);
        }
    }
}
