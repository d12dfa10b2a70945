//! The integration tests of `mavsitl-guidance`, one test binary: each module is
//! the file of the same name beside this one.

mod control_reference;
mod guidance_closed_loop;
mod pid_reference;
mod scurve_properties;
mod scurve_reference;
