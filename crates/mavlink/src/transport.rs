//! A MAVLink peer's socket: a TCP stream or a connected UDP socket, read
//! and written the same way whichever it is (the PX4 bridge's simulator
//! link). The links that serve several peers on one unconnected UDP
//! socket (SimpleFlight's endpoint, the ground station's link to PX4)
//! keep their own.
//!
//! Framing is [`crate::wire`]'s: `frames` for a datagram, `stream_frames`
//! for a TCP byte stream with a capped buffer.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::time::Duration;

/// A connection to a MAVLink peer: a TCP stream, or a UDP socket connected
/// to the peer's port (the peer's datagrams only).
#[derive(Debug)]
pub enum Link {
    /// A TCP connection.
    Tcp(TcpStream),
    /// A UDP socket connected to the peer's port.
    Udp(UdpSocket),
}

impl Link {
    /// Writes what it can of `b` (TCP: WouldBlock when the peer is not
    /// reading; UDP: the whole datagram, or none when the peer is not up or
    /// the buffer is full, as UDP loses them).
    ///
    /// # Errors
    /// From the socket.
    pub fn write_some(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Link::Tcp(s) => s.write(b),
            // A step's messages (a few hundred bytes) go in one datagram.
            Link::Udp(s) => match s.send(b) {
                Ok(_) => Ok(b.len()),
                // The peer not up yet (ICMP port unreachable), or the socket's
                // buffer full: the datagram is lost, as UDP loses them.
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionRefused | ErrorKind::WouldBlock
                    ) =>
                {
                    Ok(b.len())
                }
                Err(e) => Err(e),
            },
        }
    }

    /// Makes the socket blocking, reads waiting up to `t`; so do TCP
    /// writes, which a PX4 that stopped reading would otherwise block for
    /// ever (the send buffer full): they come back WouldBlock, back-pressure.
    ///
    /// # Errors
    /// From the socket.
    pub fn set_timeout(&mut self, t: Duration) -> std::io::Result<()> {
        match self {
            Link::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(t))?;
                s.set_write_timeout(Some(t))
            }
            Link::Udp(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(t))
            }
        }
    }

    /// Reads what is there without blocking, whatever the socket's mode
    /// (`MSG_DONTWAIT`: one system call, no mode change): WouldBlock when
    /// nothing is, Interrupted for a UDP "connection refused".
    ///
    /// # Errors
    /// From the socket.
    pub fn read_now(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Link::Tcp(s) => s.as_raw_fd(),
            Link::Udp(s) => s.as_raw_fd(),
        };
        // SAFETY: recv into a buffer this call borrows mutably, of its length,
        // on a socket this link owns.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        match usize::try_from(n) {
            Ok(0) if matches!(self, Link::Udp(_)) => {
                Err(std::io::Error::from(ErrorKind::WouldBlock))
            }
            Ok(n) => Ok(n),
            Err(_) => {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::ConnectionRefused && matches!(self, Link::Udp(_)) {
                    Err(std::io::Error::from(ErrorKind::Interrupted))
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Reads; a UDP "connection refused" (the peer not listening yet) reads
    /// as Interrupted, a zero-length datagram as WouldBlock.
    ///
    /// # Errors
    /// From the socket.
    pub fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Link::Tcp(s) => s.read(buf),
            Link::Udp(s) => match s.recv(buf) {
                // An ICMP error from an earlier send: not data, read again.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    Err(std::io::Error::from(ErrorKind::Interrupted))
                }
                // A zero-length datagram is not an end of stream.
                Ok(0) => Err(std::io::Error::from(ErrorKind::WouldBlock)),
                r => r,
            },
        }
    }
}

/// Asks for a TCP send buffer of `bytes`: a peer that stops reading is then
/// noticed (writes come back WouldBlock) in seconds rather than after the
/// kernel's autotuned megabytes.
///
/// # Errors
/// When the kernel refuses (the stream then keeps its own size).
pub fn bound_send_buffer(s: &TcpStream, bytes: i32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let size: libc::c_int = bytes;
    // SAFETY: setsockopt on a socket this stream owns, with a c_int value of
    // the size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            std::ptr::addr_of!(size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Link, UdpSocket) {
        let peer = UdpSocket::bind("127.0.0.1:0").expect("peer");
        let s = UdpSocket::bind("127.0.0.1:0").expect("socket");
        s.connect(peer.local_addr().expect("addr"))
            .expect("connect");
        peer.connect(s.local_addr().expect("addr"))
            .expect("connect");
        (Link::Udp(s), peer)
    }

    #[test]
    fn a_udp_link_reads_what_came_and_would_block_on_nothing() {
        let (mut link, peer) = pair();
        let mut buf = [0u8; 16];
        let e = link.read_now(&mut buf).expect_err("nothing yet");
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
        peer.send(&[1, 2, 3]).expect("send");
        link.set_timeout(Duration::from_secs(1)).expect("timeout");
        assert_eq!(link.read(&mut buf).expect("read"), 3);
        assert_eq!(&buf[..3], &[1, 2, 3]);
        assert_eq!(link.write_some(&[9; 5]).expect("write"), 5);
        assert_eq!(peer.recv(&mut buf).expect("recv"), 5);
    }

    #[test]
    fn a_udp_peer_not_up_loses_the_datagram_and_reads_as_interrupted() {
        let gone = UdpSocket::bind("127.0.0.1:0").expect("peer");
        let addr = gone.local_addr().expect("addr");
        drop(gone);
        let s = UdpSocket::bind("127.0.0.1:0").expect("socket");
        s.connect(addr).expect("connect");
        let mut link = Link::Udp(s);
        // Sent into the void: the whole datagram counts as written.
        assert_eq!(link.write_some(&[7; 4]).expect("write"), 4);
        // The ICMP port-unreachable comes back as an interrupted read, not
        // as data nor as a failed link (polled: it arrives asynchronously).
        let mut buf = [0u8; 8];
        let start = std::time::Instant::now();
        let kind = loop {
            let kind = link.read_now(&mut buf).expect_err("no data").kind();
            if kind != ErrorKind::WouldBlock || start.elapsed() > Duration::from_secs(5) {
                break kind;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(kind, ErrorKind::Interrupted);
        // Reported once; then there is simply nothing to read.
        let kind = link.read_now(&mut buf).expect_err("no data").kind();
        assert_eq!(kind, ErrorKind::WouldBlock);
    }

    /// A link to a port nobody listens on, once the kernel has the ICMP
    /// port-unreachable of a first datagram (polled: it comes
    /// asynchronously).
    fn refused() -> Link {
        let gone = UdpSocket::bind("127.0.0.1:0").expect("peer");
        let addr = gone.local_addr().expect("addr");
        drop(gone);
        let s = UdpSocket::bind("127.0.0.1:0").expect("socket");
        s.connect(addr).expect("connect");
        s.send(&[0]).expect("first datagram");
        // Wait for the refusal without taking it: poll reports it as POLLERR.
        let mut fd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&s),
            events: 0,
            revents: 0,
        };
        // SAFETY: poll on one pollfd this function owns, for up to 5 s.
        let n = unsafe { libc::poll(&mut fd, 1, 5000) };
        assert!(n == 1 && fd.revents & libc::POLLERR != 0, "no refusal came");
        Link::Udp(s)
    }

    /// A refused datagram is lost and counts as written; any other error
    /// (a datagram too large for UDP) is an error.
    #[test]
    fn a_refused_udp_write_is_a_lost_datagram_and_other_errors_are_errors() {
        let mut link = refused();
        assert_eq!(link.write_some(&[7; 4]).expect("lost"), 4);
        let (mut ok, _peer) = pair();
        let e = ok.write_some(&vec![0u8; 70_000]).expect_err("too large");
        assert_ne!(e.kind(), ErrorKind::ConnectionRefused);
    }

    /// `read`: a refusal reads as Interrupted, a zero-length datagram as
    /// WouldBlock, a timeout as what the socket says (not Interrupted).
    #[test]
    fn a_udp_read_tells_refusal_empty_datagrams_and_timeouts_apart() {
        let mut link = refused();
        link.set_timeout(Duration::from_millis(20))
            .expect("timeout");
        let mut buf = [0u8; 8];
        assert_eq!(
            link.read(&mut buf).expect_err("refused").kind(),
            ErrorKind::Interrupted
        );
        let (mut link, peer) = pair();
        link.set_timeout(Duration::from_millis(20))
            .expect("timeout");
        peer.send(&[]).expect("empty datagram");
        assert_eq!(
            link.read(&mut buf).expect_err("empty").kind(),
            ErrorKind::WouldBlock
        );
        let e = link.read(&mut buf).expect_err("nothing");
        assert!(
            matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "{e}"
        );
        // read_now: an empty datagram is nothing to read; the next one is.
        peer.send(&[]).expect("empty datagram");
        peer.send(&[5]).expect("datagram");
        let start = std::time::Instant::now();
        let got = loop {
            match link.read_now(&mut buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                other => break other.map_err(|e| e.kind()),
            }
            assert!(start.elapsed() < Duration::from_secs(5), "nothing came");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!((got, buf[0]), (Ok(1), 5));
    }

    /// A TCP stream's end reads as 0 bytes, not as WouldBlock.
    #[test]
    fn a_closed_tcp_stream_reads_as_its_end() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let s = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        drop(listener.accept().expect("accept"));
        let mut link = Link::Tcp(s);
        link.set_timeout(Duration::from_secs(5)).expect("timeout");
        let mut buf = [0u8; 8];
        assert_eq!(link.read(&mut buf).expect("end"), 0);
        assert_eq!(link.read_now(&mut buf).expect("end"), 0);
    }

    /// The timeout is set on a socket that was non-blocking: reads (and TCP
    /// writes) then wait for it.
    #[test]
    fn set_timeout_makes_the_socket_wait_that_long() {
        // A whole number of the kernel's ticks (1, 4 or 10 ms): read back as set.
        let t = Duration::from_millis(200);
        let (link, _peer) = pair();
        let Link::Udp(s) = link else { unreachable!() };
        s.set_nonblocking(true).expect("nonblocking");
        let mut link = Link::Udp(s);
        link.set_timeout(t).expect("timeout");
        let Link::Udp(s) = &link else { unreachable!() };
        assert_eq!(s.read_timeout().expect("read timeout"), Some(t));
        let mut buf = [0u8; 1];
        // Blocking again: a recv waits (for its timeout), it does not fail at once.
        let e = s.recv(&mut buf).expect_err("nothing");
        assert!(
            matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "{e}"
        );

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let tcp = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let mut link = Link::Tcp(tcp);
        link.set_timeout(t).expect("timeout");
        let Link::Tcp(s) = &link else { unreachable!() };
        assert_eq!(
            (s.read_timeout().ok(), s.write_timeout().ok()),
            (Some(Some(t)), Some(Some(t)))
        );
    }

    /// Linux keeps twice the size asked for (for its bookkeeping).
    #[test]
    fn a_bounded_send_buffer_is_the_size_asked() {
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let s = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        bound_send_buffer(&s, 8192).expect("set");
        let mut size: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt on a socket this test owns, into a c_int of its size.
        let r = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                std::ptr::addr_of_mut!(size).cast(),
                &mut len,
            )
        };
        assert_eq!((r, size), (0, 2 * 8192));
    }
}
