//! PX4's simulator port: the listening socket (TCP 4560 + instance) or the
//! UDP socket, and a connection waiting for the next bridge.

use mavsitl_core::shared::Shared;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::time::{Duration, Instant};

use mavsitl_mavlink::transport::{bound_send_buffer, Link};

use super::Px4Stats;

/// The TCP send buffer asked for, bytes: lockstep keeps one step (a few
/// hundred bytes) in flight, so 64 KiB (some 250 steps) is ample, and a PX4
/// that stops reading is noticed in seconds rather than after the kernel's
/// autotuned megabytes.
pub(super) const SEND_BUFFER_BYTES: i32 = 64 * 1024;

/// The listening socket and a connection waiting to be taken, shared by the
/// bridges of successive runs (a restarted PX4 connects to the same port and
/// the harness starts a fresh simulation for it).
#[derive(Debug)]
pub struct Px4Socket {
    pub(super) listener: Option<TcpListener>,
    pub(super) pending: Option<Link>,
    udp_local: Option<SocketAddr>,
    pub(super) stats: Px4Stats,
}

/// Shared handle on the socket.
pub type Px4Port = Shared<Px4Socket>;

impl Px4Socket {
    /// Listens on `addr`.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub fn listen(addr: SocketAddr) -> std::io::Result<Px4Port> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Shared::new(Px4Socket {
            listener: Some(listener),
            pending: None,
            udp_local: None,
            stats: Px4Stats::default(),
        }))
    }

    /// The UDP variant: a socket bound at `local`, sending to PX4's
    /// `simulator_mavlink -u` port at `px4`.
    ///
    /// # Errors
    /// When the socket cannot be bound.
    pub fn udp(local: SocketAddr, px4: SocketAddr) -> std::io::Result<Px4Port> {
        let s = UdpSocket::bind(local)?;
        s.connect(px4)?;
        let udp_local = s.local_addr().ok();
        Ok(Shared::new(Px4Socket {
            listener: None,
            pending: Some(Link::Udp(s)),
            udp_local,
            stats: Px4Stats {
                connections: 1,
                ..Px4Stats::default()
            },
        }))
    }

    /// The listening address (TCP) or the local UDP address.
    ///
    /// # Errors
    /// From the socket.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match (&self.listener, self.udp_local) {
            (Some(l), _) => l.local_addr(),
            (None, Some(a)) => Ok(a),
            (None, None) => Err(std::io::Error::from(ErrorKind::NotConnected)),
        }
    }

    /// Waits up to `timeout` (None: forever) for PX4 to connect again; the
    /// connection goes to the next bridge. Returns whether one came.
    pub fn wait_for_connection(&mut self, timeout: Option<Duration>) -> bool {
        let start = Instant::now();
        let Some(listener) = self.listener.as_ref() else {
            // UDP: PX4 is back when a datagram arrives.
            let Some(Link::Udp(s)) = self.pending.as_ref() else {
                return false;
            };
            let mut probe = [0u8; 1];
            loop {
                let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
                if left.is_some_and(|l| l.is_zero()) {
                    return false;
                }
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(left.unwrap_or(Duration::from_secs(1))));
                match s.peek(&mut probe) {
                    Ok(_) => return true,
                    Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(_) => {}
                }
            }
        };
        loop {
            match listener.accept() {
                Ok((s, from)) => {
                    if let Err(e) = bound_send_buffer(&s, SEND_BUFFER_BYTES) {
                        tracing::debug!("SO_SNDBUF not set: {e}");
                    }
                    let ok = s.set_nodelay(true).is_ok() && s.set_nonblocking(false).is_ok();
                    if ok {
                        tracing::info!(%from, "PX4 connected again");
                        self.pending = Some(Link::Tcp(s));
                        self.stats.connections += 1;
                        return true;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => tracing::debug!(%e, "accept failed"),
            }
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Counters of the latest bridge (kept across restarts).
    pub fn stats(&self) -> Px4Stats {
        self.stats
    }
}
