//! mavsitl's criterion benchmarks: `cargo bench -p mavsitl-bench` (all) or
//! `cargo bench -p mavsitl-bench --bench physics_step` (one). A package of
//! their own, outside the default members, so that the test build does not
//! compile criterion; the figures are in docs/performance.md.
