//! msgpack-rpc over TCP, as AirSim's server speaks it: requests
//! `[0, msgid, method, params]`, responses `[1, msgid, error, result]`,
//! notifications `[2, method, params]`, back to back on one stream, with
//! several requests outstanding per connection (a client's `*Async` calls are
//! answered when their task ends, while its state queries are answered at
//! once).
//!
//! Each connection has a reader thread and a writer thread. The reader cuts
//! the stream into whole messages without decoding them ([`frame`]: the
//! markers are walked, the bytes kept, nothing allocated ahead for a length
//! the message only declares), decodes each with `rmpv` and hands it to the
//! simulation loop over a channel; the loop answers through
//! [`Server::respond`], which queues the bytes for the writer and never
//! blocks on a client. A malformed request that has an id is answered with
//! an error saying why; anything else that is not a request (bytes that are
//! not msgpack, a message without an id) closes that connection. The server
//! and the other connections go on.
//!
//! Bounds, per connection: a message of at most [`MAX_MESSAGE_BYTES`]
//! (16 MiB) and [`MAX_MESSAGE_ITEMS`] values; at most [`MAX_IN_FLIGHT`]
//! requests unanswered (past that the reader stops reading until answers go
//! out, so a client that pipelines without reading is slowed by TCP, not
//! buffered); at most [`MAX_UNSENT_BYTES`] of answers the client has not read
//! (past that it is dropped, with a warning). When the process runs out of
//! file descriptors, a waiting connection is accepted on a spare one and
//! closed at once, with a warning, rather than left hanging.

use std::collections::HashMap;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmpv::Value;

/// Connection number.
pub type ConnId = u64;

/// Largest message a client may send, bytes.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// Most values (array elements, map keys and values) in one message.
pub const MAX_MESSAGE_ITEMS: usize = 1 << 20;
/// Most requests of one connection waiting for their answers.
pub const MAX_IN_FLIGHT: usize = 4096;
/// Most bytes of answers queued for a connection that does not read them.
pub const MAX_UNSENT_BYTES: usize = 64 << 20;

/// A request waiting for its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The connection it came on.
    pub conn: ConnId,
    /// Its id, echoed in the response.
    pub msgid: u32,
    /// Method name.
    pub method: String,
    /// Arguments, in order.
    pub params: Vec<Value>,
}

/// What the loop receives.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request.
    Call(Call),
    /// A connection closed (its outstanding calls need no answer).
    Closed(ConnId),
}

/// One connection's way out: answers queued for its writer thread, and the
/// counts that bound it.
struct Conn {
    /// The stream, to shut down when the connection is dropped.
    stream: TcpStream,
    out: Sender<Vec<u8>>,
    /// Bytes queued and not yet written.
    unsent: Arc<AtomicUsize>,
    /// Requests handed to the loop and not yet answered.
    in_flight: Arc<AtomicUsize>,
}

type Streams = Arc<Mutex<HashMap<ConnId, Conn>>>;

/// The listening server.
pub struct Server {
    rx: Receiver<Incoming>,
    streams: Streams,
    local: SocketAddr,
}

impl Server {
    /// Listens on `addr` and accepts connections in the background.
    ///
    /// # Errors
    /// The address cannot be bound.
    pub fn bind(addr: SocketAddr) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        let (tx, rx) = mpsc::channel();
        let streams: Streams = Arc::default();
        let accepted = streams.clone();
        std::thread::Builder::new()
            .name("airsim-accept".into())
            .spawn(move || accept(listener, accepted, tx))?;
        Ok(Server { rx, streams, local })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next message, if one is waiting.
    pub fn try_recv(&self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }

    /// The next message, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Incoming> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Answers request `msgid` of connection `conn`: a result, or an error
    /// message. Never blocks: the answer is queued for the connection's
    /// writer; a connection that went away is forgotten, one that has left
    /// [`MAX_UNSENT_BYTES`] unread is dropped.
    pub fn respond(&self, conn: ConnId, msgid: u32, answer: Result<Value, String>) {
        let (error, result) = match answer {
            Ok(v) => (Value::Nil, v),
            Err(e) => (Value::from(e), Value::Nil),
        };
        send(&self.streams, conn, msgid, error, result, true);
    }

    /// Bytes of answers queued for `conn` and not yet written (0 for a
    /// connection that is gone).
    pub fn unsent_bytes(&self, conn: ConnId) -> usize {
        self.streams
            .lock()
            .ok()
            .and_then(|t| t.get(&conn).map(|c| c.unsent.load(Ordering::Relaxed)))
            .unwrap_or(0)
    }
}

/// Queues a response for `conn`'s writer (`answered`: it answers a request
/// the loop was given, so one fewer is in flight).
fn send(streams: &Streams, conn: ConnId, msgid: u32, error: Value, result: Value, answered: bool) {
    let msg = Value::Array(vec![Value::from(1), Value::from(msgid), error, result]);
    let mut bytes = Vec::with_capacity(256);
    if rmpv::encode::write_value(&mut bytes, &msg).is_err() {
        return;
    }
    let Ok(mut table) = streams.lock() else {
        return;
    };
    let Some(c) = table.get(&conn) else {
        return;
    };
    if answered {
        let _ = c
            .in_flight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
    let unsent = c.unsent.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len();
    let dropped = if unsent > MAX_UNSENT_BYTES {
        tracing::warn!(
            "airsim: connection {conn} has not read {unsent} bytes of answers (at most {MAX_UNSENT_BYTES}); dropping it"
        );
        true
    } else {
        c.out.send(bytes).is_err()
    };
    if dropped {
        if let Some(c) = table.remove(&conn) {
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn accept(listener: TcpListener, streams: Streams, tx: Sender<Incoming>) {
    let mut next: ConnId = 1;
    // A descriptor held back for when the process has none left: closed to
    // accept the waiting connection and refuse it, then taken again.
    let mut spare = std::fs::File::open("/dev/null").ok();
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            Err(e)
                if e.raw_os_error() == Some(libc::EMFILE)
                    || e.raw_os_error() == Some(libc::ENFILE) =>
            {
                drop(spare.take());
                if let Ok((s, peer)) = listener.accept() {
                    tracing::warn!(
                        "airsim: out of file descriptors; refusing the connection from {peer}"
                    );
                    drop(s);
                } else {
                    std::thread::sleep(Duration::from_millis(10));
                }
                spare = std::fs::File::open("/dev/null").ok();
                continue;
            }
            Err(_) => continue,
        };
        if serve(stream, next, &streams, &tx).is_err() {
            tracing::warn!(
                "airsim: cannot serve connection {next} (no thread or descriptor left); closed it"
            );
        }
        next += 1;
    }
}

/// Starts connection `conn`'s reader and writer threads.
fn serve(
    stream: TcpStream,
    conn: ConnId,
    streams: &Streams,
    tx: &Sender<Incoming>,
) -> io::Result<()> {
    let _ = stream.set_nodelay(true);
    let reader = stream.try_clone()?;
    let mut writer = stream.try_clone()?;
    let (out, queued) = mpsc::channel::<Vec<u8>>();
    let unsent = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let written = unsent.clone();
    std::thread::Builder::new()
        .name(format!("airsim-out-{conn}"))
        .spawn(move || {
            for bytes in queued {
                if writer.write_all(&bytes).is_err() {
                    break;
                }
                written.fetch_sub(bytes.len(), Ordering::Relaxed);
            }
        })?;
    if let Ok(mut table) = streams.lock() {
        table.insert(
            conn,
            Conn {
                stream,
                out,
                unsent,
                in_flight: in_flight.clone(),
            },
        );
    }
    let (tx, streams2) = (tx.clone(), streams.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("airsim-conn-{conn}"))
        .spawn(move || read(conn, reader, &streams2, &tx, &in_flight));
    if let Err(e) = spawned {
        if let Some(c) = streams.lock().ok().and_then(|mut t| t.remove(&conn)) {
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
        }
        return Err(e);
    }
    Ok(())
}

fn read(
    conn: ConnId,
    stream: TcpStream,
    streams: &Streams,
    tx: &Sender<Incoming>,
    in_flight: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        // Backpressure: no more reading while the loop holds too many of
        // this client's requests.
        while in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
            std::thread::sleep(Duration::from_millis(1));
            if !streams.lock().is_ok_and(|t| t.contains_key(&conn)) {
                break;
            }
        }
        let value = match frame(&mut reader, &mut buf).and_then(|()| {
            rmpv::decode::read_value(&mut buf.as_slice())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
        }) {
            Ok(v) => v,
            Err(e) => {
                if !matches!(
                    e.kind(),
                    io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                ) {
                    tracing::warn!("airsim: connection {conn}: {e}; closing it");
                }
                break;
            }
        };
        // Past the cap, the buffer is not kept at a large message's size.
        if buf.capacity() > 1 << 16 {
            buf = Vec::new();
        }
        match parse(conn, value) {
            Ok(Some(call)) => {
                in_flight.fetch_add(1, Ordering::Relaxed);
                if tx.send(Incoming::Call(call)).is_err() {
                    break;
                }
            }
            Ok(None) => {}
            Err((Some(msgid), why)) => reply_error(streams, conn, msgid, &why),
            Err((None, why)) => {
                // Nothing to answer and no reason to trust what follows.
                tracing::warn!("airsim: connection {conn}: {why}; closing it");
                break;
            }
        }
    }
    if let Some(c) = streams.lock().ok().and_then(|mut t| t.remove(&conn)) {
        let _ = c.stream.shutdown(std::net::Shutdown::Both);
    }
    let _ = tx.send(Incoming::Closed(conn));
}

/// Reads one whole msgpack message from `r` into `buf` (cleared first)
/// without decoding it: each marker says how many bytes and how many
/// values follow, and the bytes are read as they arrive (`take` +
/// `read_to_end`), so a message that declares a 4 GiB string or array costs
/// nothing until its bytes come — and no more than [`MAX_MESSAGE_BYTES`]
/// and [`MAX_MESSAGE_ITEMS`] at all.
///
/// # Errors
/// `UnexpectedEof` when the stream ends (between messages: a clean close),
/// `InvalidData` for a reserved marker or a message over the bounds.
pub fn frame(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    let too_big = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message over {what}; the limits are {MAX_MESSAGE_BYTES} bytes and {MAX_MESSAGE_ITEMS} values"),
        )
    };
    let mut pending: usize = 1;
    let mut items: usize = 0;
    while pending > 0 {
        pending -= 1;
        let marker = read_n(r, buf, 1)?[0];
        // (bytes of a length field, bytes of payload, values that follow)
        let (len_bytes, fixed, values): (usize, usize, usize) = match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0, 0),
            0x80..=0x8f => (0, 0, 2 * usize::from(marker & 0x0f)),
            0x90..=0x9f => (0, 0, usize::from(marker & 0x0f)),
            0xa0..=0xbf => (0, usize::from(marker & 0x1f), 0),
            0xcc | 0xd0 => (0, 1, 0),
            0xcd | 0xd1 => (0, 2, 0),
            0xca | 0xce | 0xd2 => (0, 4, 0),
            0xcb | 0xcf | 0xd3 => (0, 8, 0),
            0xd4 => (0, 2, 0),
            0xd5 => (0, 3, 0),
            0xd6 => (0, 5, 0),
            0xd7 => (0, 9, 0),
            0xd8 => (0, 17, 0),
            0xc4 | 0xd9 => (1, 0, 0),
            0xc5 | 0xda => (2, 0, 0),
            0xc6 | 0xdb => (4, 0, 0),
            0xc7 => (1, 1, 0), // ext 8: length, then type
            0xc8 => (2, 1, 0),
            0xc9 => (4, 1, 0),
            0xdc => (2, 0, 0),
            0xdd => (4, 0, 0),
            0xde => (2, 0, 0),
            0xdf => (4, 0, 0),
            0xc1 => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not msgpack (reserved marker 0xc1)",
                ))
            }
        };
        let declared = if len_bytes > 0 {
            let b = read_n(r, buf, len_bytes)?;
            b.iter().fold(0usize, |n, x| (n << 8) | usize::from(*x))
        } else {
            0
        };
        let (payload, children) = match marker {
            0xdc | 0xdd => (fixed, declared),
            0xde | 0xdf => (fixed, declared.saturating_mul(2)),
            _ => (fixed + declared, values),
        };
        items = items.saturating_add(children);
        if items > MAX_MESSAGE_ITEMS {
            return Err(too_big("its value count"));
        }
        if buf.len().saturating_add(payload) > MAX_MESSAGE_BYTES {
            return Err(too_big("its size"));
        }
        read_n(r, buf, payload)?;
        pending = pending.saturating_add(children);
    }
    Ok(())
}

/// Appends exactly `n` bytes from `r` to `buf`, as they arrive, and returns
/// them.
fn read_n<'a>(r: &mut impl Read, buf: &'a mut Vec<u8>, n: usize) -> io::Result<&'a [u8]> {
    let start = buf.len();
    let got = r.by_ref().take(n as u64).read_to_end(buf)?;
    if got < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(&buf[start..])
}

/// A decoded message as a [`Call`]; `Ok(None)` for a notification (AirSim's
/// client sends none that need acting on); the error carries the request's id
/// when it has one.
///
/// # Errors
/// (id, why) for anything that is not a well-formed request.
pub fn parse(conn: ConnId, value: Value) -> Result<Option<Call>, (Option<u32>, String)> {
    let Value::Array(mut parts) = value else {
        return Err((None, "a message that is not an array".into()));
    };
    let kind = parts.first().and_then(Value::as_u64);
    if kind == Some(2) {
        return Ok(None);
    }
    let msgid = parts
        .get(1)
        .and_then(Value::as_u64)
        .and_then(|m| u32::try_from(m).ok());
    if kind != Some(0) || parts.len() != 4 {
        return Err((
            msgid,
            "not a msgpack-rpc request [0, msgid, method, params]".into(),
        ));
    }
    let Some(msgid) = msgid else {
        return Err((None, "a request without a valid msgid".into()));
    };
    let params = match parts.pop() {
        Some(Value::Array(p)) => p,
        Some(Value::Nil) => Vec::new(),
        _ => return Err((Some(msgid), "params is not an array".into())),
    };
    let method = match parts.pop() {
        Some(Value::String(s)) => s.into_str().unwrap_or_default(),
        Some(Value::Binary(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => return Err((Some(msgid), "method is not a string".into())),
    };
    Ok(Some(Call {
        conn,
        msgid,
        method,
        params,
    }))
}

fn reply_error(streams: &Streams, conn: ConnId, msgid: u32, why: &str) {
    send(streams, conn, msgid, Value::from(why), Value::Nil, false);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(msgid: u32, method: &str, params: Vec<Value>) -> Vec<u8> {
        let v = Value::Array(vec![
            Value::from(0),
            Value::from(msgid),
            Value::from(method),
            Value::Array(params),
        ]);
        let mut b = Vec::new();
        rmpv::encode::write_value(&mut b, &v).expect("encode");
        b
    }

    fn answer(s: &mut TcpStream) -> Value {
        rmpv::decode::read_value(s).expect("answer")
    }

    #[test]
    fn requests_arrive_in_order_and_answers_find_their_connection() {
        let server = Server::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let mut c = TcpStream::connect(server.local_addr()).expect("connect");
        let mut bytes = request(7, "ping", vec![]);
        bytes.extend(request(
            8,
            "armDisarm",
            vec![Value::from(true), Value::from("")],
        ));
        c.write_all(&bytes).expect("send");
        let mut got = Vec::new();
        while got.len() < 2 {
            if let Some(Incoming::Call(call)) = server.recv_timeout(Duration::from_secs(5)) {
                got.push(call);
            }
        }
        assert_eq!(got[0].method, "ping");
        assert_eq!((got[1].msgid, got[1].params.len()), (8, 2));
        // Answered out of order, as a long task would be.
        server.respond(got[1].conn, 8, Ok(Value::from(true)));
        server.respond(got[0].conn, 7, Err("no".into()));
        let a = answer(&mut c);
        assert_eq!(a[1].as_u64(), Some(8));
        assert_eq!(a[3].as_bool(), Some(true));
        let b = answer(&mut c);
        assert_eq!((b[1].as_u64(), b[2].as_str()), (Some(7), Some("no")));
    }

    #[test]
    fn framing_allocates_for_bytes_that_came_not_for_lengths_declared() {
        // A str32 declaring 8 MiB, then the stream ends: an EOF, and the
        // buffer holds only the bytes that came.
        let mut buf = Vec::new();
        let mut r: &[u8] = &[0xdb, 0x00, 0x80, 0x00, 0x00, b'a', b'b'];
        let e = frame(&mut r, &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(buf.capacity() < 1 << 16, "{}", buf.capacity());
        // Declaring 4 GiB is refused at once.
        let mut r: &[u8] = &[0xdb, 0xff, 0xff, 0xff, 0xff, b'a', b'b'];
        let e = frame(&mut r, &mut buf).unwrap_err();
        assert!(e.to_string().contains("its size"), "{e}");
        // Arrays declaring 2^32 - 1 elements, nested: refused by the value
        // count before anything is read for them.
        let mut r: &[u8] = &[0xdd, 0xff, 0xff, 0xff, 0xff, 0xdd, 0xff, 0xff, 0xff, 0xff];
        let e = frame(&mut r, &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("value count"), "{e}");
        // A bin32 of 17 MiB: over the size limit.
        let mut big = vec![0xc6];
        big.extend_from_slice(&(17u32 << 20).to_be_bytes());
        let e = frame(&mut big.as_slice(), &mut buf).unwrap_err();
        assert!(e.to_string().contains("its size"), "{e}");
        // Two requests back to back come out one at a time, byte-exact,
        // and decode to what was sent.
        let mut two = request(7, "ping", vec![Value::from(1.5), Value::from("x")]);
        let second = request(8, "simPause", vec![Value::from(true)]);
        two.extend_from_slice(&second);
        let mut r = two.as_slice();
        frame(&mut r, &mut buf).expect("first");
        assert_eq!(buf.len(), two.len() - second.len());
        frame(&mut r, &mut buf).expect("second");
        assert_eq!(buf, second);
        let v = rmpv::decode::read_value(&mut buf.as_slice()).expect("decode");
        assert_eq!(v[2].as_str(), Some("simPause"));
        assert_eq!(
            frame(&mut r, &mut buf).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn a_client_that_never_reads_is_slowed_then_dropped_and_others_go_on() {
        let server = Server::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let mut greedy = TcpStream::connect(server.local_addr()).expect("connect");
        let mut bytes = Vec::new();
        for id in 0..(MAX_IN_FLIGHT as u32 + 2000) {
            bytes.extend(request(id, "ping", vec![]));
        }
        let writer = std::thread::spawn(move || {
            let _ = greedy.write_all(&bytes);
            greedy
        });
        // Unanswered, the greedy client's requests stop at MAX_IN_FLIGHT.
        let mut calls = Vec::new();
        while let Some(Incoming::Call(c)) = server.recv_timeout(Duration::from_millis(500)) {
            calls.push(c);
        }
        assert_eq!(calls.len(), MAX_IN_FLIGHT);
        // Another client is served meanwhile.
        let mut polite = TcpStream::connect(server.local_addr()).expect("connect");
        polite.write_all(&request(1, "ping", vec![])).expect("send");
        let call = loop {
            match server.recv_timeout(Duration::from_secs(5)) {
                Some(Incoming::Call(c)) if c.method == "ping" && c.conn != calls[0].conn => {
                    break c
                }
                Some(_) => {}
                None => panic!("the polite client was not heard"),
            }
        };
        server.respond(call.conn, 1, Ok(Value::from(true)));
        assert_eq!(answer(&mut polite)[3].as_bool(), Some(true));
        // Answers the greedy client never reads pile up to the cap, then it
        // is dropped; the server does not block on it.
        let greedy_conn = calls[0].conn;
        let blob = Value::Binary(vec![0; 1 << 20]);
        for c in calls.iter().take(100) {
            server.respond(greedy_conn, c.msgid, Ok(blob.clone()));
        }
        assert_eq!(server.unsent_bytes(greedy_conn), 0, "dropped");
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let mut gone = false;
        while !gone && std::time::Instant::now() < until {
            gone = matches!(
                server.recv_timeout(Duration::from_millis(100)),
                Some(Incoming::Closed(c)) if c == greedy_conn
            );
        }
        assert!(gone);
        drop(writer.join());
    }

    #[test]
    fn garbage_closes_only_its_connection() {
        let server = Server::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
        let mut bad = TcpStream::connect(server.local_addr()).expect("connect");
        // A well-formed message that is not a request gets an error answer.
        let mut b = Vec::new();
        rmpv::encode::write_value(
            &mut b,
            &Value::Array(vec![Value::from(0), Value::from(3), Value::from(5)]),
        )
        .expect("encode");
        bad.write_all(&b).expect("send");
        let a = answer(&mut bad);
        assert!(
            a[2].as_str().is_some_and(|e| e.contains("msgpack-rpc")),
            "{a}"
        );
        // Then bytes that are not msgpack: the connection is closed.
        bad.write_all(&[0xc1, 0xc1, 0xc1]).expect("send");
        let closed = (0..50).any(|_| {
            matches!(
                server.recv_timeout(Duration::from_millis(100)),
                Some(Incoming::Closed(_))
            )
        });
        assert!(closed);
        let mut good = TcpStream::connect(server.local_addr()).expect("connect");
        good.write_all(&request(1, "ping", vec![])).expect("send");
        assert!(matches!(
            server.recv_timeout(Duration::from_secs(5)),
            Some(Incoming::Call(c)) if c.method == "ping"
        ));
    }
}
