//! The AirSim server's side of the run loop: the API's world ticked by
//! [`mavsitl_run::session::Session`], clients' calls answered between
//! ticks, the clock paused as `simPause` asks and held until whoever flies
//! the vehicle (SimpleFlight, or a PX4 that has to connect first) is
//! ready.

use std::time::Duration;

use mavsitl_run::session::{Driver, Step, World};
use mavsitl_sim::sim::{Observer, SimError, Simulation};

use crate::api::{AirSimApi, Reply};
use crate::rpc::{Incoming, Server};

/// What the loop asks of whoever flies the vehicle, besides the API.
pub trait Watch {
    /// Whether the loop may tick now (a firmware has connected); an error
    /// ends the run.
    fn ready(&mut self) -> Result<bool, String> {
        Ok(true)
    }
    /// After a tick: Some(outcome) ends the run.
    fn after_tick(&mut self, _sim: &Simulation) -> Option<Result<(), String>> {
        None
    }
    /// Why a tick failed.
    fn explain(&self, error: String) -> String {
        error
    }
}

/// SimpleFlight needs nothing watched.
impl Watch for () {}

/// The AirSim API over its world, holding the replies a tick completed
/// (a move that arrived) until they are sent.
pub struct ApiWorld<'a> {
    api: &'a mut AirSimApi,
    done: Vec<Reply>,
}

impl<'a> ApiWorld<'a> {
    /// The world `api` holds.
    pub fn new(api: &'a mut AirSimApi) -> Self {
        ApiWorld {
            api,
            done: Vec::new(),
        }
    }
}

impl World for ApiWorld<'_> {
    fn sim(&self) -> &Simulation {
        self.api.sim()
    }

    fn tick(&mut self, observer: &mut dyn Observer) -> Result<(), SimError> {
        let done = self.api.tick(observer)?;
        self.done.extend(done);
        Ok(())
    }
}

/// AirSim's clients: calls answered between ticks, the world ticking only
/// while running (not paused, the firmware connected).
pub struct ApiDriver<'a> {
    server: &'a Server,
    replies: Vec<Reply>,
    watch: &'a mut dyn Watch,
}

impl<'a> ApiDriver<'a> {
    /// The clients of `server`, the vehicle flown as `watch` says.
    pub fn new(server: &'a Server, watch: &'a mut dyn Watch) -> Self {
        ApiDriver {
            server,
            replies: Vec::new(),
            watch,
        }
    }

    fn take(&mut self, api: &mut AirSimApi, m: Incoming) {
        match m {
            Incoming::Call(call) => api.handle(call, &mut self.replies),
            Incoming::Closed(conn) => api.closed(conn),
        }
    }
}

impl<'a> Driver<ApiWorld<'a>> for ApiDriver<'_> {
    fn ready(&mut self, w: &mut ApiWorld<'a>) -> Result<bool, String> {
        // Moves a tick completed are answered before the calls that came
        // since.
        self.replies.append(&mut w.done);
        while let Some(m) = self.server.try_recv() {
            self.take(w.api, m);
        }
        for (conn, msgid, answer) in self.replies.drain(..) {
            self.server.respond(conn, msgid, answer);
        }
        Ok(w.api.running() && self.watch.ready()?)
    }

    fn idle(&mut self, w: &mut ApiWorld<'a>, d: Duration) -> Step<ApiWorld<'a>> {
        if let Some(m) = self.server.recv_timeout(d) {
            self.take(w.api, m);
        }
        Step::Go
    }

    fn after_tick(
        &mut self,
        w: &mut ApiWorld<'a>,
        tick: Result<(), SimError>,
    ) -> Step<ApiWorld<'a>> {
        if let Err(e) = tick {
            return Step::End(Err(self.watch.explain(format!("simulation stopped: {e}"))));
        }
        match self.watch.after_tick(w.api.sim()) {
            Some(outcome) => Step::End(outcome),
            None => Step::Go,
        }
    }

    fn interrupted(&mut self) -> Result<(), String> {
        Ok(())
    }
}
