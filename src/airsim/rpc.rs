//! msgpack-rpc over TCP, as AirSim's server speaks it: requests
//! `[0, msgid, method, params]`, responses `[1, msgid, error, result]`,
//! notifications `[2, method, params]`, back to back on one stream, with
//! several requests outstanding per connection (a client's `*Async` calls are
//! answered when their task ends, while its state queries are answered at
//! once).
//!
//! Each connection has a reader thread that decodes whole messages (with
//! `rmpv`) and hands them to the simulation loop over a channel; the loop
//! answers through [`Server::respond`]. A malformed request that has an id is
//! answered with an error saying why; anything else that is not a request
//! (bytes that are not msgpack, a message without an id) closes that
//! connection. The server and the other connections go on.

use std::collections::HashMap;
use std::io::{self, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmpv::Value;

/// Connection number.
pub type ConnId = u64;

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

type Streams = Arc<Mutex<HashMap<ConnId, TcpStream>>>;

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
    /// message. A connection that went away is forgotten.
    pub fn respond(&self, conn: ConnId, msgid: u32, answer: Result<Value, String>) {
        let (error, result) = match answer {
            Ok(v) => (Value::Nil, v),
            Err(e) => (Value::from(e), Value::Nil),
        };
        let msg = Value::Array(vec![Value::from(1), Value::from(msgid), error, result]);
        let mut bytes = Vec::with_capacity(256);
        if rmpv::encode::write_value(&mut bytes, &msg).is_err() {
            return;
        }
        let Ok(mut streams) = self.streams.lock() else {
            return;
        };
        let gone = match streams.get_mut(&conn) {
            Some(s) => s.write_all(&bytes).is_err(),
            None => false,
        };
        if gone {
            streams.remove(&conn);
        }
    }
}

fn accept(listener: TcpListener, streams: Streams, tx: Sender<Incoming>) {
    let mut next: ConnId = 1;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let (Ok(reader), Ok(mut table)) = (stream.try_clone(), streams.lock()) else {
            continue;
        };
        table.insert(next, stream);
        drop(table);
        let (tx, streams, conn) = (tx.clone(), streams.clone(), next);
        let spawned = std::thread::Builder::new()
            .name(format!("airsim-conn-{conn}"))
            .spawn(move || read(conn, reader, &streams, &tx));
        if spawned.is_err() {
            tracing::warn!("airsim: cannot serve connection {conn}");
        }
        next += 1;
    }
}

fn read(conn: ConnId, stream: TcpStream, streams: &Streams, tx: &Sender<Incoming>) {
    let mut reader = BufReader::new(stream);
    loop {
        let value = match rmpv::decode::read_value(&mut reader) {
            Ok(v) => v,
            Err(e) => {
                if !is_eof(&e) {
                    tracing::warn!("airsim: connection {conn}: not msgpack ({e}); closing it");
                }
                break;
            }
        };
        match parse(conn, value) {
            Ok(Some(call)) => {
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
    if let Ok(mut table) = streams.lock() {
        table.remove(&conn);
    }
    let _ = tx.send(Incoming::Closed(conn));
}

fn is_eof(e: &rmpv::decode::Error) -> bool {
    match e {
        rmpv::decode::Error::InvalidMarkerRead(io) | rmpv::decode::Error::InvalidDataRead(io) => {
            io.kind() == io::ErrorKind::UnexpectedEof || io.kind() == io::ErrorKind::ConnectionReset
        }
        _ => false,
    }
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
    let msg = Value::Array(vec![
        Value::from(1),
        Value::from(msgid),
        Value::from(why),
        Value::Nil,
    ]);
    let mut bytes = Vec::new();
    if rmpv::encode::write_value(&mut bytes, &msg).is_err() {
        return;
    }
    if let Ok(mut table) = streams.lock() {
        if let Some(s) = table.get_mut(&conn) {
            let _ = s.write_all(&bytes);
        }
    }
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
