//! The integration tests of `mavsitl-mavlink`, one test binary: each module is
//! the file of the same name beside this one.

mod mission_files;
mod mission_protocol;
