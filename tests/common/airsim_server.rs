//! `mavsitl airsim` as the AirSim tests start it: a child process, ready
//! once it prints where it listens, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A server, killed on drop.
pub struct Server(pub Option<Child>);

impl Server {
    /// Starts `mavsitl airsim --port PORT ARGS…` and waits for its banner.
    pub fn start(port: u16, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mavsitl"))
            .args(["airsim", "--port", &port.to_string()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        Server::ready(child.stdout.take(), port);
        Server(Some(child))
    }

    /// Waits for a server's banner naming `port` on its stdout.
    pub fn ready(stdout: Option<std::process::ChildStdout>, port: u16) {
        let mut line = String::new();
        BufReader::new(stdout.expect("stdout"))
            .read_line(&mut line)
            .expect("banner");
        assert!(line.contains(&format!(":{port}")), "{line}");
    }

    /// Its process id.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// The process, no longer killed on drop.
    #[allow(dead_code)]
    pub fn into_child(mut self) -> Child {
        self.0.take().expect("a running server")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
