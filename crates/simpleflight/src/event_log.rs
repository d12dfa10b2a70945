//! A bounded log that readers follow by absolute position.
//!
//! SimpleFlight's event log and its list of items reached grew with every
//! item a looping mission reached, for as long as `serve` ran. [`EventLog`]
//! keeps the newest [`EventLog::CAPACITY`] entries; readers remember the
//! absolute position they have read up to ([`EventLog::end`]) and ask for
//! what came since ([`EventLog::since`]), so dropping the oldest entries
//! never shifts what a reader sees next.

use std::collections::VecDeque;

/// The newest entries of an unbounded stream.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLog<T> {
    items: VecDeque<T>,
    /// Absolute position of `items[0]`.
    first: usize,
}

impl<T> Default for EventLog<T> {
    fn default() -> Self {
        EventLog {
            items: VecDeque::new(),
            first: 0,
        }
    }
}

impl<T> EventLog<T> {
    /// Entries kept.
    pub const CAPACITY: usize = 4096;

    /// Appends an entry, dropping the oldest when full.
    pub fn push(&mut self, item: T) {
        if self.items.len() == Self::CAPACITY {
            self.items.pop_front();
            self.first += 1;
        }
        self.items.push_back(item);
    }

    /// The absolute position after the newest entry (what a reader that has
    /// read everything remembers).
    pub fn end(&self) -> usize {
        self.first + self.items.len()
    }

    /// The entries from absolute position `seen` on (those still kept).
    pub fn since(&self, seen: usize) -> impl Iterator<Item = &T> {
        self.items.iter().skip(seen.saturating_sub(self.first))
    }

    /// The entries kept, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    /// The newest entry.
    pub fn last(&self) -> Option<&T> {
        self.items.back()
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing was ever kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::EventLog;

    #[test]
    fn readers_keep_their_place_while_the_oldest_go() {
        let mut log = EventLog::default();
        let mut seen = 0;
        let mut read = Vec::new();
        for i in 0..10_000usize {
            log.push(i);
            if i % 7 == 0 {
                read.extend(log.since(seen).copied());
                seen = log.end();
            }
        }
        read.extend(log.since(seen).copied());
        assert_eq!(
            read,
            (0..10_000).collect::<Vec<_>>(),
            "nothing read twice or lost"
        );
        assert_eq!(log.len(), EventLog::<usize>::CAPACITY);
        assert_eq!(log.iter().next(), Some(&(10_000 - 4096)));
    }
}
