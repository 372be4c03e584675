//! Streamed readers for block traces: DiskSim / MQSim ASCII, blkreplay `.load` files, MSR
//! Cambridge CSV and SPC (UMass Trace Repository) CSV. Each reads its input line by line
//! (one reused buffer; a multi-gigabyte trace is never held as text or as requests) and
//! yields `disksim::TraceRequest`s, which `disksim::DiskSimReplay` replays: sector ranges
//! map to the whole logical pages they touch, a write that covers its first or last page
//! only in part becomes a read-modify-write in the device (`Op::PartialWrite`), addresses
//! beyond the device fold or fail as `workload.trace.fold` says, and arrival times are
//! replayed open-loop. `open` reads plain or gzip-compressed files (by their magic bytes),
//! so the `.load.gz` files Debian ships replay without unpacking.
//!
//! Formats (docs/TRACES.md):
//! - **disksim**: `arrival_ns device lsn size_sectors op` (`disksim.rs`).
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
    Disksim,
    Blkreplay,
    Msr,
    Spc,
}

impl BlockFormat {
    pub fn parse(s: &str) -> Option<BlockFormat> {
        match s {
            "disksim" => Some(BlockFormat::Disksim),
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
                BlockFormat::Disksim => crate::disksim::parse_line(t).map_err(|e| self.err(e))?,
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
            let mut req = req;
            req.line = self.line_no;
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
            line: 0,
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

/// Opens a trace file for reading, plain or gzip-compressed (recognised by its first two
/// bytes, 1f 8b, whatever the file is called). Errors name the path.
pub fn open(path: &str) -> Result<Box<dyn BufRead>, WorkloadError> {
    let file = std::fs::File::open(path).map_err(|e| werr(format!("{path}: {e}")))?;
    let mut r = std::io::BufReader::with_capacity(1 << 16, file);
    let head = r.fill_buf().map_err(|e| werr(format!("{path}: {e}")))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(std::io::BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(r),
        )))
    } else {
        Ok(Box::new(r))
    }
}

/// A streamed replay of the trace at `path` in `format` (read once, each line validated as
/// it is replayed; see `DiskSimReplay::streamed`).
pub fn replay(
    path: &str,
    format: BlockFormat,
    page_bytes: u32,
    logical_pages: u32,
    time_scale: f64,
    fold: bool,
) -> Result<crate::disksim::DiskSimReplay, WorkloadError> {
    let p = path.to_string();
    let open_pass: crate::disksim::Opener = Box::new(move || {
        let input = open(&p)?;
        Ok(Box::new(BlockTraceReader::new(&p, format, input)) as crate::disksim::Requests)
    });
    crate::disksim::DiskSimReplay::streamed(
        path,
        open_pass,
        page_bytes,
        logical_pages,
        time_scale,
        fold,
    )
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
                read: false,
                line: reqs[0].line
            }
        );
        assert_eq!(
            reqs[199],
            TraceRequest {
                arrival_ns: 522_003_354_840,
                device: 0,
                lsn: 6_142_320,
                sectors: 1,
                read: false,
                line: reqs[199].line
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
            Op::PartialWrite {
                lpn: Lpn(0),
                pages: 1,
                head_partial: true,
                tail_partial: false,
            },
            "a one-sector write is a read-modify-write of its page"
        );
        assert_eq!(
            want[2].1,
            Op::PartialWrite {
                lpn: Lpn(0),
                pages: 2,
                head_partial: true,
                tail_partial: true,
            },
            "unaligned: both pages touched, both partly"
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
    fn reader_streams_and_stops_at_the_first_error() {
        let text = "0,1,512,r,0.0\n0,1,512,q,0.1\n0,1,512,r,0.2\n";
        let mut r = BlockTraceReader::new("t", BlockFormat::Spc, text.as_bytes());
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    /// Where Debian's `blkreplay-examples` puts its real traces (`.ci/run` installs it).
    pub(crate) const BLKREPLAY_EXAMPLES: &str =
        "/usr/share/doc/blkreplay-examples/examples/example-load/natural";

    /// Counts of a trace read in full through `open` (gzip) and the streamed reader.
    fn census(path: &str) -> (u64, u64, u64, u64) {
        let (mut n, mut reads, mut sectors, mut sub_page) = (0u64, 0u64, 0u64, 0u64);
        for r in BlockTraceReader::new(path, BlockFormat::Blkreplay, open(path).unwrap()) {
            let r = r.unwrap();
            n += 1;
            reads += u64::from(r.read);
            sectors += u64::from(r.sectors);
            let (h, t) = crate::disksim::partial_ends(r.lsn, r.sectors, 8);
            sub_page += u64::from(!r.read && (h || t));
        }
        (n, reads, sectors, sub_page)
    }

    /// The real MySQL and MS SQL Server traces of Debian's blkreplay-examples, read in full
    /// from their `.gz` files. Skipped with a message when the package is not installed.
    #[test]
    fn blkreplay_examples_mysql_and_mssql_parse_in_full() {
        let mut seen = 0;
        for (file, want) in [
            // (requests, reads) of the files, counted independently when written:
            // zcat F | awk -F';' '$1 ~ /^ *[0-9.]+ *$/ && NF>=4 {n++; if ($4 ~ /^ *R/) r++}'
            ("linux-mysql.load.gz", Some((80_794u64, 7_187u64))),
            ("windows-mssql.load.gz", Some((42_976, 2_528))),
        ] {
            let path = format!("{BLKREPLAY_EXAMPLES}/{file}");
            if !std::path::Path::new(&path).exists() {
                eprintln!("skipped: {path} is absent (apt-get install blkreplay-examples)");
                continue;
            }
            seen += 1;
            let (n, reads, sectors, sub_page) = census(&path);
            eprintln!("{file}: {n} requests, {reads} reads, {sectors} sectors, {sub_page} sub-page writes");
            assert!(n > 10_000, "{file}: {n}");
            assert!(
                reads > 0 && reads < n,
                "{file}: reads and writes both present"
            );
            if let Some((wn, wr)) = want {
                assert_eq!((n, reads), (wn, wr), "{file}");
            }
        }
        if seen == 0 {
            eprintln!("skipped: blkreplay-examples is not installed");
        }
    }

    /// Every trace of blkreplay-examples (the web server ones are large: run in release,
    /// `cargo test -p commitlab-workload --release blkreplay_examples -- --ignored
    /// --nocapture`).
    #[test]
    #[ignore]
    fn blkreplay_examples_parse_in_full() {
        let entries =
            std::fs::read_dir(BLKREPLAY_EXAMPLES).expect("blkreplay-examples is not installed");
        for e in entries {
            let path = e.unwrap().path().display().to_string();
            let (n, reads, sectors, sub_page) = census(&path);
            println!("{path}: {n} requests, {reads} reads, {sectors} sectors, {sub_page} sub-page writes");
            assert!(n > 1000);
        }
    }

    /// A request as each format writes it: (arrival in ms, byte offset, bytes, read).
    fn lines(reqs: &[(u64, u64, u64, bool)]) -> [(BlockFormat, String); 4] {
        let (mut d, mut b, mut m, mut sp) = (
            String::new(),
            String::from("start ; sector\n"),
            String::new(),
            String::new(),
        );
        for &(ms, off, len, read) in reqs {
            // Sector-granular requests so that every format can express them exactly.
            let (lsn, sectors) = (off / 512, len / 512);
            let ns = ms * 1_000_000;
            d.push_str(&format!("{ns} 0 {lsn} {sectors} {}\n", u8::from(read)));
            b.push_str(&format!(
                "{}.{:03} ; {lsn} ; {sectors} ; {} ; 0 ; 0\n",
                ms / 1000,
                ms % 1000,
                if read { "R" } else { "W" }
            ));
            m.push_str(&format!(
                "{},h,0,{},{off},{len},1\n",
                1_000_000 + ms * 10_000,
                if read { "Read" } else { "Write" }
            ));
            sp.push_str(&format!(
                "0,{lsn},{len},{},{}.{:03}\n",
                if read { "r" } else { "w" },
                ms / 1000,
                ms % 1000
            ));
        }
        [
            (BlockFormat::Disksim, d),
            (BlockFormat::Blkreplay, b),
            (BlockFormat::Msr, m),
            (BlockFormat::Spc, sp),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any sector-granular requests written in any of the four formats replay as the
        /// same ops; and a write is partial exactly when a brute-force walk over its
        /// sectors finds a page it covers only in part.
        #[test]
        fn every_format_replays_random_requests_identically(
            raw in proptest::collection::vec((0u64..50, 0u64..4000, 1u64..40, proptest::bool::ANY), 1..30),
        ) {
            // The first request at time 0: MSR times count from the first request.
            let mut t = 0;
            let reqs: Vec<(u64, u64, u64, bool)> = raw
                .iter()
                .enumerate()
                .map(|(i, &(dt, sector, sectors, read))| {
                    t += if i == 0 { 0 } else { dt };
                    (t, sector * 512, sectors * 512, read)
                })
                .collect();
            let ops = |fmt: BlockFormat, text: &str| {
                let parsed = parse("p", fmt, text.as_bytes()).unwrap();
                let mut r = DiskSimReplay::new("p", &parsed, 4096, 1000, 1.0, false).unwrap();
                let mut out = Vec::new();
                let mut now = SimTime(0);
                loop {
                    match r.step(0, now) {
                        Step::IssueThen(op, next) => { out.push((now, op)); now = next; }
                        Step::Sleep(t) => now = t,
                        _ => break,
                    }
                }
                out
            };
            let all = lines(&reqs);
            let want = ops(all[0].0, &all[0].1);
            proptest::prop_assert_eq!(want.len(), reqs.len());
            for (fmt, text) in &all[1..] {
                proptest::prop_assert_eq!(&ops(*fmt, text), &want, "{:?}", fmt);
            }
            for (&(_, off, len, read), (_, op)) in reqs.iter().zip(&want) {
                let (lsn, end) = (off / 512, (off + len) / 512);
                let pages: std::collections::BTreeMap<u64, u64> =
                    (lsn..end).fold(Default::default(), |mut m, s| { *m.entry(s / 8).or_insert(0) += 1; m });
                let any_partial = pages.values().any(|&n| n < 8);
                let is_partial = matches!(op, Op::PartialWrite { .. });
                proptest::prop_assert_eq!(is_partial, !read && any_partial, "{:?}", op);
            }
        }
    }
}
