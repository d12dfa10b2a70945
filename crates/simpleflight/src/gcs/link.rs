//! The ground-station UDP endpoint: one bound, non-blocking socket used for
//! both directions (MAVSDK and QGroundControl answer to the datagram's source
//! port), fixed targets it sends to from the start (QGroundControl on 14550,
//! MAVSDK on 14540), and a table of every peer heard from in the last
//! [`PEER_TIMEOUT`], each of which gets every frame too.
//!
//! Reading never waits and a full send buffer drops the datagram, so the
//! simulation loop is never blocked by the network. Frames are MAVLink 2 out;
//! v1 and v2 in. With signing on, unsigned or badly signed frames are dropped
//! and counted.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mavsitl_mavlink::tlog::TlogWriter;
use mavsitl_mavlink::wire::{self, Encoder, Incoming, Outgoing, SigningConfig};

/// A peer silent for this long stops getting frames (fixed targets stay).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest datagram we build (frames are packed up to this size).
const MAX_DATAGRAM: usize = 1400;

/// Ground stations sent telemetry at once (QGroundControl, MAVSDK, a logger
/// and a few scripts fit; a flood of senders does not).
pub const MAX_PEERS: usize = 16;

/// Datagrams read per call of [`UdpLink::receive`]: a flood cannot hold the
/// loop; the kernel drops what does not fit its buffer.
pub const MAX_DATAGRAMS_PER_CALL: usize = 256;

/// How to set the link up.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Local address to bind.
    pub bind: SocketAddr,
    /// Addresses sent to before anything is heard.
    pub targets: Vec<SocketAddr>,
    /// Our system id.
    pub system_id: u8,
    /// Our component id.
    pub component_id: u8,
    /// MAVLink 2 signing key, if signing is on.
    pub signing_key: Option<[u8; 32]>,
}

/// Link counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// Frames decoded and handled.
    pub frames_in: u64,
    /// Frames dropped: bad or missing signature.
    pub rejected_signature: u64,
    /// Frames with a valid CRC that could not be decoded.
    pub undecodable: u64,
    /// Frames sent (each counted once however many peers get it).
    pub frames_out: u64,
    /// Datagrams dropped because the socket's buffer was full.
    pub dropped_out: u64,
    /// Senders of valid frames not taken as peers (already [`MAX_PEERS`]).
    pub peers_refused: u64,
}

/// The endpoint's socket and peers.
pub struct UdpLink {
    socket: UdpSocket,
    targets: Vec<SocketAddr>,
    peers: Vec<(SocketAddr, Duration)>,
    encoder: Encoder,
    check: Option<wire::SigningData>,
    stats: LinkStats,
    tlog: Option<TlogWriter>,
    buf: [u8; 65536],
    /// The frame being encoded.
    frame: Vec<u8>,
    /// Frames packed for the next datagram.
    datagram: Vec<u8>,
}

impl std::fmt::Debug for UdpLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpLink")
            .field("socket", &self.socket)
            .field("targets", &self.targets)
            .field("peers", &self.peers)
            .field("stats", &self.stats)
            .finish()
    }
}

impl UdpLink {
    /// Binds the socket.
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub fn bind(cfg: &LinkConfig) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(cfg.bind)?;
        socket.set_nonblocking(true)?;
        let signing = cfg
            .signing_key
            .map(|k| SigningConfig::new(k, 0, true, false));
        let check = signing.clone().map(wire::SigningData::from_config);
        Ok(UdpLink {
            socket,
            targets: cfg.targets.clone(),
            peers: Vec::new(),
            encoder: Encoder::new(cfg.system_id, cfg.component_id, signing),
            check,
            stats: LinkStats::default(),
            tlog: None,
            buf: [0; 65536],
            frame: Vec::with_capacity(300),
            datagram: Vec::with_capacity(MAX_DATAGRAM),
        })
    }

    /// The bound address.
    ///
    /// # Errors
    /// From the socket.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Also write every frame in and out to `tlog`.
    pub fn record_to(&mut self, tlog: TlogWriter) {
        self.tlog = Some(tlog);
    }

    /// The tlog, if recording.
    pub fn tlog_mut(&mut self) -> Option<&mut TlogWriter> {
        self.tlog.as_mut()
    }

    /// Waits until a datagram is ready to read or `timeout` has passed, so a
    /// paced loop answers at once instead of at its next tick.
    pub fn wait_readable(&self, timeout: Duration) {
        if timeout.is_zero() {
            return;
        }
        let blocked = self.socket.set_nonblocking(false).is_ok()
            && self.socket.set_read_timeout(Some(timeout)).is_ok();
        if blocked {
            let mut probe = [0u8; 1];
            let _ = self.socket.peek_from(&mut probe);
        } else {
            std::thread::sleep(timeout);
        }
        let _ = self.socket.set_nonblocking(true);
    }

    /// Counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// Peers heard from recently.
    pub fn peers(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.peers.iter().map(|(a, _)| *a)
    }

    /// Reads the pending datagrams (at most [`MAX_DATAGRAMS_PER_CALL`]; the
    /// rest wait in the socket for the next call) and hands each decoded
    /// message, with its sender's (system, component), to `handle`.
    /// `link_now` is the link clock; `unix_us` stamps the tlog.
    ///
    /// Only a sender of a valid frame (signed, when signing is on) becomes a
    /// peer that telemetry goes to — a stray or spoofed datagram subscribes
    /// nobody — and at most [`MAX_PEERS`] at a time; silent peers expire
    /// after [`PEER_TIMEOUT`].
    pub fn receive(
        &mut self,
        link_now: Duration,
        unix_us: u64,
        mut handle: impl FnMut((u8, u8), Incoming),
    ) {
        self.peers
            .retain(|(_, t)| link_now.saturating_sub(*t) < PEER_TIMEOUT);
        for _ in 0..MAX_DATAGRAMS_PER_CALL {
            let (n, from) = match self.socket.recv_from(&mut self.buf) {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // ICMP port unreachable from a fixed target nobody listens on.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => continue,
                Err(e) => {
                    tracing::debug!(%e, "GCS socket read error");
                    break;
                }
            };
            self.stats.datagrams_in += 1;
            let Some(datagram) = self.buf.get(..n) else {
                continue;
            };
            let stats = &mut self.stats;
            let tlog = &mut self.tlog;
            let mut valid = 0u32;
            let rejected = wire::frames(datagram, self.check.as_ref(), |raw| {
                if let Some(t) = tlog.as_mut() {
                    let bytes = match raw {
                        mavlink::MAVLinkMessageRaw::V1(r) => r.raw_bytes(),
                        mavlink::MAVLinkMessageRaw::V2(r) => r.raw_bytes(),
                    };
                    let _ = t.write(unix_us, bytes);
                }
                match wire::decode(raw) {
                    Ok(m) => {
                        stats.frames_in += 1;
                        valid += 1;
                        handle((raw.system_id() as u8, raw.component_id()), m);
                    }
                    Err(e) => {
                        stats.undecodable += 1;
                        tracing::debug!(%e, id = raw.message_id(), "undecodable frame");
                    }
                }
            });
            self.stats.rejected_signature += rejected as u64;
            if valid > 0 {
                self.note_peer(from, link_now);
            }
        }
    }

    /// Refreshes `from` as a peer, or adds it if there is room.
    fn note_peer(&mut self, from: SocketAddr, link_now: Duration) {
        if let Some(p) = self.peers.iter_mut().find(|(a, _)| *a == from) {
            p.1 = link_now;
        } else if self.peers.len() < MAX_PEERS {
            tracing::info!(%from, "ground station connected");
            self.peers.push((from, link_now));
        } else {
            self.stats.peers_refused += 1;
            tracing::debug!(%from, "peer refused: {MAX_PEERS} ground stations already");
        }
    }

    /// Encodes `out` and sends it to every target and live peer, frames
    /// packed into datagrams of up to `MAX_DATAGRAM` bytes. Allocates
    /// nothing once its buffers have grown to a cycle's traffic.
    pub fn send(&mut self, out: &[Outgoing], unix_us: u64) {
        self.datagram.clear();
        for o in out {
            self.frame.clear();
            self.encoder.encode(o, &mut self.frame);
            self.stats.frames_out += 1;
            if let Some(t) = self.tlog.as_mut() {
                let _ = t.write(unix_us, &self.frame);
            }
            if self.datagram.len() + self.frame.len() > MAX_DATAGRAM {
                self.send_datagram();
            }
            self.datagram.extend_from_slice(&self.frame);
        }
        self.send_datagram();
    }

    /// Sends the packed datagram (if any) to every target, and to every peer
    /// that is not also a target, then empties it.
    fn send_datagram(&mut self) {
        if self.datagram.is_empty() {
            return;
        }
        let peers = self
            .peers
            .iter()
            .map(|(a, _)| a)
            .filter(|a| !self.targets.contains(a));
        for to in self.targets.iter().chain(peers) {
            match self.socket.send_to(&self.datagram, to) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.stats.dropped_out += 1,
                Err(e) => tracing::trace!(%e, %to, "GCS send failed"),
            }
        }
        self.datagram.clear();
    }
}
