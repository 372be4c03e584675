//! Scripted recordings: drive a device command by command at chosen instants, record what a
//! `world` run would (the NAND op log and the host log), and hand it to the crash checker.
//! For interleavings the workload generators cannot produce (e.g. a transaction writing a
//! page whose previous commit is not acked yet).

#![allow(dead_code)]

use commitlab_check::Recording;
use sim::{Lpn, SimTime, TxId};
use ssd::Device;
use std::collections::BTreeMap;
use world::HostEvent;

pub struct Script {
    pub dev: Device,
    cfg: world::Config,
    base: media::NandImage,
    host: Vec<HostEvent>,
    inst: BTreeMap<u64, u64>,
    next_inst: u64,
    next_tag: u64,
}

pub fn us(x: u64) -> SimTime {
    SimTime(x * 1_000)
}

impl Script {
    pub fn new(cfg: &world::Config) -> Script {
        let mut dev = Device::in_memory(&cfg.device()).unwrap();
        let base = dev.core.nand.image().clone();
        dev.core.nand.enable_log();
        Script {
            dev,
            cfg: cfg.clone(),
            base,
            host: Vec::new(),
            inst: BTreeMap::new(),
            next_inst: 1,
            next_tag: 1,
        }
    }

    fn tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag
    }

    /// A plain write; returns its ack.
    pub fn plain(&mut self, lpn: u32, at: SimTime) -> SimTime {
        let tag = self.tag();
        let ack = self.dev.write_plain(Lpn(lpn), tag, at).unwrap();
        self.host.push(HostEvent::Plain {
            lpn: Lpn(lpn),
            tag,
            issue: at,
            ack,
        });
        ack
    }

    pub fn begin(&mut self, tx: u64, at: SimTime) {
        self.dev.begin(TxId(tx), at).unwrap();
        self.inst.insert(tx, self.next_inst);
        self.next_inst += 1;
    }

    pub fn write(&mut self, tx: u64, lpn: u32, at: SimTime) -> SimTime {
        let tag = self.tag();
        let t = self.dev.write(TxId(tx), Lpn(lpn), tag, at).unwrap();
        self.host.push(HostEvent::TxWrite {
            inst: self.inst[&tx],
            lpn: Lpn(lpn),
            tag,
            issue: at,
        });
        t
    }

    pub fn commit(&mut self, tx: u64, at: SimTime) -> SimTime {
        let ack = self.dev.commit(TxId(tx), at).unwrap();
        self.host.push(HostEvent::Commit {
            inst: self.inst[&tx],
            issue: at,
            ack,
        });
        ack
    }

    pub fn abort(&mut self, tx: u64, at: SimTime) -> SimTime {
        let ack = self.dev.abort(TxId(tx), at).unwrap();
        self.host.push(HostEvent::Abort {
            inst: self.inst[&tx],
            issue: at,
            ack,
        });
        ack
    }

    /// Keeps the array of the unit holding `lpn`'s mapped page busy (timed reads).
    pub fn busy_reads(&mut self, lpn: u32, n: u32, at: SimTime) {
        for _ in 0..n {
            self.dev.read(Lpn(lpn), at).unwrap();
        }
    }

    pub fn recording(mut self) -> Recording {
        let ops = self.dev.core.nand.take_log();
        let atomic = self.dev.info().atomic;
        Recording {
            cfg: self.cfg,
            base: self.base,
            ops,
            host: self.host,
            atomic,
        }
    }
}
