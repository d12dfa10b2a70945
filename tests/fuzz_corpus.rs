//! Every input the fuzzers keep, replayed on every test run: each target's
//! committed corpus (`tests/fuzz/corpus/<target>/`: the seeds and what
//! coverage-guided runs found worth keeping) and any crash left in
//! `tests/fuzz/artifacts/<target>/`, fed to the same code the fuzz target
//! runs (`tests/fuzz/targets/`). A panic, an assertion or a hang here is the
//! finding a fuzzer made, kept as a regression test. Live fuzzing, which
//! needs libFuzzer's instrumented build, is `tests/fuzz/run-all`.

use std::path::Path;

#[path = "fuzz/targets/airsim_rpc.rs"]
mod airsim_rpc;
#[path = "fuzz/targets/airsim_settings.rs"]
mod airsim_settings;
#[path = "fuzz/targets/endpoint.rs"]
mod endpoint;
#[path = "fuzz/targets/fault_arg.rs"]
mod fault_arg;
#[path = "fuzz/targets/mavlink_ingest.rs"]
mod mavlink_ingest;
#[path = "fuzz/targets/mission.rs"]
mod mission;
#[path = "fuzz/targets/plan_to_firmware.rs"]
mod plan_to_firmware;
#[path = "fuzz/targets/poses.rs"]
mod poses;
#[path = "fuzz/targets/scenario.rs"]
mod scenario;
#[path = "fuzz/targets/servo_packet.rs"]
mod servo_packet;
#[path = "fuzz/targets/suite_toml.rs"]
mod suite_toml;

/// Feeds every file of the target's corpus and artifacts to `run`, in
/// name order: the count fed.
fn replay(target: &str, run: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "artifacts"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        files.extend(entries.filter_map(|e| Some(e.ok()?.path())));
    }
    files.sort();
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        run(&data);
    }
    files.len()
}

#[test]
fn airsim_rpc_corpus_replays_clean() {
    assert!(replay("airsim_rpc", airsim_rpc::run) > 0);
}

#[test]
fn airsim_settings_corpus_replays_clean() {
    assert!(replay("airsim_settings", airsim_settings::run) > 0);
}

#[test]
fn endpoint_corpus_replays_clean() {
    assert!(replay("endpoint", endpoint::run) > 0);
}

#[test]
fn fault_arg_corpus_replays_clean() {
    assert!(replay("fault_arg", fault_arg::run) > 0);
}

#[test]
fn mavlink_ingest_corpus_replays_clean() {
    assert!(replay("mavlink_ingest", mavlink_ingest::run) > 0);
}

#[test]
fn mission_corpus_replays_clean() {
    assert!(replay("mission", mission::run) > 0);
}

#[test]
fn plan_to_firmware_corpus_replays_clean() {
    assert!(replay("plan_to_firmware", plan_to_firmware::run) > 0);
}

#[test]
fn poses_corpus_replays_clean() {
    assert!(replay("poses", poses::run) > 0);
}

#[test]
fn scenario_corpus_replays_clean() {
    assert!(replay("scenario", scenario::run) > 0);
}

#[test]
fn servo_packet_corpus_replays_clean() {
    assert!(replay("servo_packet", servo_packet::run) > 0);
}

#[test]
fn suite_toml_corpus_replays_clean() {
    assert!(replay("suite_toml", suite_toml::run) > 0);
}
