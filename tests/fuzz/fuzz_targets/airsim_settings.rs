//! The `airsim_settings` fuzz target: see `../targets/airsim_settings.rs`, which the
//! corpus replay test (`tests/fuzz_corpus.rs`) shares.
#![no_main]

#[path = "../targets/airsim_settings.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
