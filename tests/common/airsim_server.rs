//! `mavsitl airsim` as the AirSim tests start it: a child process, ready
//! once it prints where it listens, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A server, killed on drop.
pub struct Server {
    child: Option<Child>,
    /// The TCP port it listens on, read from its banner.
    pub port: u16,
}

impl Server {
    /// Starts `mavsitl airsim --port 0 ARGS…` on a port the system picks,
    /// so that no other socket can hold it, and waits for its banner.
    pub fn start(args: &[&str]) -> Server {
        let child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
            .args(["airsim", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        Server::ready(child).0
    }

    /// Waits for a started server's banner on its stdout: the server, and
    /// the banner.
    pub fn ready(mut child: Child) -> (Server, String) {
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("banner");
        let port = banner_port(&line).unwrap_or_else(|| panic!("no tcp port in {line:?}"));
        let server = Server {
            child: Some(child),
            port,
        };
        (server, line)
    }

    /// Its process id.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The process, no longer killed on drop.
    #[allow(dead_code)]
    pub fn into_child(mut self) -> Child {
        self.child.take().expect("a running server")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The port in a banner's "on tcp 127.0.0.1:PORT".
fn banner_port(line: &str) -> Option<u16> {
    let after = line.split("on tcp ").nth(1)?;
    let addr = after.split([';', ' ', ',']).next()?;
    addr.rsplit(':').next()?.trim().parse().ok()
}
