//! Bad input never panics: every parser fed thousands of corrupted versions of
//! valid files (bytes deleted, replaced, duplicated, truncated) returns a value
//! or an error — never a panic.

use mavsitl_mavlink::mission::Mission;
use mavsitl_sim::replay::Trajectory;
use mavsitl_sim::scenario::{Scenario, ScenarioSource};
use mavsitl_simpleflight::params::ParamStore;
use proptest::prelude::*;

fn corpus() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut v = Vec::new();
    for dir in ["missions", "scenarios"] {
        for e in std::fs::read_dir(format!("{root}/{dir}")).expect("dir") {
            v.push(std::fs::read_to_string(e.expect("entry").path()).expect("file"));
        }
    }
    v.push("QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.39\t8.54\t488\t1\n1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n2\t0\t3\t177\t1\t2\t0\t0\t0\t0\t0\t1\n".into());
    v.push("#timestamp [ns],x,y,z,qw,qx,qy,qz\n0,0,0,0,1,0,0,0\n1000000,1,0,0,1,0,0,0\n2000000,2,0,0,0.7071,0,0,0.7071\n".into());
    v.push("timestamp,x,y,z,qx,qy,qz,qw\n5,0,0,0,0,0,0,1\n10,1,2,3,0,0,0,1\n".into());
    v.push("WP_SPEED 3\nMPC_XY_P,0.9\n1\t1\tRTL_RETURN_ALT\t40\t9\n".into());
    v
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Replace(usize, u8),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (
            any::<usize>(),
            prop_oneof![
                Just(b'{'),
                Just(b'}'),
                Just(b'['),
                Just(b','),
                Just(b'"'),
                Just(b'-'),
                Just(b'9'),
                Just(b'\n'),
                Just(b'\t'),
                Just(b'e'),
                Just(0xFF),
                any::<u8>()
            ]
        )
            .prop_map(|(a, b)| Edit::Replace(a, b)),
        (any::<usize>(), 1usize..80).prop_map(|(a, n)| Edit::Duplicate(a, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut b = text.as_bytes().to_vec();
    for e in edits {
        if b.is_empty() {
            break;
        }
        let len = b.len();
        match *e {
            Edit::Delete(a, n) => {
                let a = a % len;
                b.drain(a..(a + n).min(len));
            }
            Edit::Replace(a, c) => b[a % len] = c,
            Edit::Duplicate(a, n) => {
                let a = a % len;
                let chunk: Vec<u8> = b[a..(a + n).min(len)].to_vec();
                b.splice(a..a, chunk);
            }
            Edit::Truncate(a) => b.truncate(a % len),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(0xBAD_1A9), ..ProptestConfig::default() })]

    #[test]
    fn parsers_survive_corruption(which in 0usize..64, edits in proptest::collection::vec(edit(), 1..6)) {
        let corpus = corpus();
        let text = apply(&corpus[which % corpus.len()], &edits);
        let src = ScenarioSource { name: "fuzz".into(), base_dir: std::env::temp_dir() };
        let _ = Mission::parse(&text, "fuzz");
        if let Ok(s) = Scenario::from_json(&text, &src) {
            // A scenario that validates also builds (or says why not), without a panic.
            let _ = s.build(&src);
        }
        let _ = Trajectory::parse(&text, "fuzz");
        let _ = ParamStore::default().load(&text, "fuzz");
    }
}
