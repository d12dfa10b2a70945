//! The `endpoint` fuzz target: see `../targets/endpoint.rs`, which the
//! corpus replay test (`tests/fuzz_corpus.rs`) shares.
#![no_main]

#[path = "../targets/endpoint.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
