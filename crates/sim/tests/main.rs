//! The integration tests of `mavsitl-sim`, one test binary: each module is
//! the file of the same name beside this one.

mod battery;
mod faults;
mod lockstep;
mod physics;
mod record;
mod sensors;
mod tick;
