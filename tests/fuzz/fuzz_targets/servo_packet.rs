//! The `servo_packet` fuzz target: see `../targets/servo_packet.rs`, which the
//! corpus replay test (`tests/fuzz_corpus.rs`) shares.
#![no_main]

#[path = "../targets/servo_packet.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
