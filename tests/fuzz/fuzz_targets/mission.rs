//! The `mission` fuzz target: see `../targets/mission.rs`, which the
//! corpus replay test (`tests/fuzz_corpus.rs`) shares.
#![no_main]

#[path = "../targets/mission.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
