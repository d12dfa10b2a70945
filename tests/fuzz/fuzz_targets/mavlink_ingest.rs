//! The `mavlink_ingest` fuzz target: see `../targets/mavlink_ingest.rs`, which the
//! corpus replay test (`tests/fuzz_corpus.rs`) shares.
#![no_main]

#[path = "../targets/mavlink_ingest.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
