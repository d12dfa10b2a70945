//! Regression suites: cases of missions, vehicles, controllers, seeds and
//! faults with the outcomes they must have ([`spec`]), expanded into (case,
//! seed) pairs, filtered and sharded, and checked on what each run recorded
//! ([`check`]); the verdicts reported as a summary, JUnit XML and JSON
//! ([`report`]). Running them is the CLI's (`mavsitl test`).
//!
//! It reads suites and recordings; it runs nothing and knows no simulation
//! (naming the simulator from here does not compile, E0433):
//!
//! ```compile_fail,E0433
//! let _ = mavsitl_sim::sim::Simulation::new;
//! ```

#![warn(missing_docs)]

pub mod check;
pub mod report;
pub mod spec;

pub use check::{evaluate, Check, Evidence};
pub use spec::{Case, Controller, Expect, Suite, SuiteError, Vehicle};

/// One run: a case of a suite with one seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Index of the suite.
    pub suite: usize,
    /// Index of the case in it.
    pub case: usize,
    /// The seed.
    pub seed: u64,
}

/// Every (case, seed) pair of `suites`, in file order, whose
/// `suite/case` name contains `filter` (case-sensitive; every pair without one).
pub fn pairs(suites: &[Suite], filter: Option<&str>) -> Vec<Pair> {
    let mut out = Vec::new();
    for (si, s) in suites.iter().enumerate() {
        for (ci, c) in s.cases.iter().enumerate() {
            let name = format!("{}/{}", s.name, c.name);
            if filter.is_some_and(|f| !name.contains(f)) {
                continue;
            }
            for &seed in &c.seeds {
                out.push(Pair {
                    suite: si,
                    case: ci,
                    seed,
                });
            }
        }
    }
    out
}

/// Shard `index` (1-based) of `count`: every `count`-th pair from the
/// `index`-th. The shards partition the pairs exactly, and their sizes
/// differ by at most one.
pub fn shard<T: Clone>(pairs: &[T], index: usize, count: usize) -> Vec<T> {
    if count == 0 || index == 0 || index > count {
        return Vec::new();
    }
    pairs
        .iter()
        .skip(index - 1)
        .step_by(count)
        .cloned()
        .collect()
}

/// Parses `I/N` (1 ≤ I ≤ N).
///
/// # Errors
/// Anything else.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not a shard I/N with 1 ≤ I ≤ N, e.g. 2/3");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The shards 1/N … N/N take every pair exactly once, and their
        /// sizes differ by at most one.
        #[test]
        fn shards_partition_the_pairs(len in 0usize..500, n in 1usize..40) {
            let pairs: Vec<usize> = (0..len).collect();
            let mut all: Vec<usize> = Vec::new();
            let mut sizes = Vec::new();
            for i in 1..=n {
                let s = shard(&pairs, i, n);
                sizes.push(s.len());
                all.extend(s);
            }
            all.sort_unstable();
            prop_assert_eq!(&all, &pairs);
            let (lo, hi) = (sizes.iter().min().copied(), sizes.iter().max().copied());
            prop_assert!(hi.unwrap_or(0) - lo.unwrap_or(0) <= 1);
        }
    }

    #[test]
    fn shard_arguments_are_checked() {
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
        assert!(shard(&[1, 2, 3], 0, 2).is_empty());
    }
}
