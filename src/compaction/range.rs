//! Range bounds (`--from`, `--to`, `--keep-last`), resolved to absolute turns when a
//! compaction or fork is made, so the stored range never moves.
//!
//! `5` is turn 5 (0-based); `-3` is the turn three before the last (so the last three stay
//! as they are); `5h`, `2days` are times ago (the first turn at or after that time for
//! `--from`, the last turn before it for `--to`); `last` is one past the highest `to_turn`
//! of the compactions in force, or 0.

use std::time::Duration;

use chrono::{DateTime, FixedOffset, Utc};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    Turn(u64),
    BeforeLast(u64),
    Ago(Duration),
    Last,
}

/// Text that is not a bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a turn (5), turns before the last (-3), a time ago (5h, 2days) or `last`")]
pub struct BoundSyntaxError;

impl Bound {
    pub fn parse(text: &str) -> Result<Bound, BoundSyntaxError> {
        let t = text.trim();
        if t == "last" {
            return Ok(Bound::Last);
        }
        if let Some(n) = t.strip_prefix('-') {
            if let Ok(n) = n.parse() {
                return Ok(Bound::BeforeLast(n));
            }
        } else if let Ok(n) = t.parse() {
            return Ok(Bound::Turn(n));
        }
        humantime::parse_duration(t).map(Bound::Ago).map_err(|_| BoundSyntaxError)
    }
}

/// Which end of a range a bound is for: durations resolve differently at each end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    From,
    To,
}

impl End {
    fn flag(self) -> &'static str {
        match self {
            End::From => "--from",
            End::To => "--to",
        }
    }
}

/// What bounds resolve against.
pub struct Turns {
    /// When each turn started (its user event), in order.
    pub starts: Vec<DateTime<FixedOffset>>,
    /// The highest `to_turn` of the compactions in force.
    pub compacted_to: Option<u64>,
    pub now: DateTime<Utc>,
}

/// A bound that cannot be used, naming the flag, what was given, and the valid range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {input}: {message}")]
pub struct RangeError {
    pub flag: String,
    pub input: String,
    pub message: String,
}

impl Turns {
    fn valid(&self) -> String {
        match self.starts.len() {
            1 => "the conversation has one turn, 0".into(),
            n => format!("the conversation has turns 0-{}", n - 1),
        }
    }

    fn error(&self, end: End, input: &str, message: impl Into<String>) -> RangeError {
        RangeError { flag: end.flag().into(), input: input.into(), message: message.into() }
    }

    /// Resolve one bound to an absolute turn.
    pub fn resolve(&self, bound: &Bound, end: End, input: &str) -> Result<u64, RangeError> {
        let Some(last) = (self.starts.len() as u64).checked_sub(1) else {
            return Err(self.error(end, input, "the conversation has no turns yet"));
        };
        match *bound {
            Bound::Turn(n) if n > last => {
                Err(self.error(end, input, format!("turn {n} is beyond the last turn ({})", self.valid())))
            }
            Bound::Turn(n) => Ok(n),
            Bound::BeforeLast(n) => last.checked_sub(n).ok_or_else(|| {
                self.error(end, input, format!("{n} turns before the last is before turn 0 ({})", self.valid()))
            }),
            Bound::Last => {
                let next = self.compacted_to.map_or(0, |t| t + 1);
                if next > last {
                    Err(self.error(
                        end,
                        input,
                        format!("every turn up to {last} is already compacted ({})", self.valid()),
                    ))
                } else {
                    Ok(next)
                }
            }
            Bound::Ago(d) => {
                let d = chrono::Duration::from_std(d).map_err(|_| self.error(end, input, "duration too large"))?;
                let cutoff = self.now - d;
                let found = match end {
                    End::From => self.starts.iter().position(|s| *s >= cutoff),
                    End::To => self.starts.iter().rposition(|s| *s < cutoff),
                };
                let what = match end {
                    End::From => "no turn started since then",
                    End::To => "no turn started before then",
                };
                found.map(|i| i as u64).ok_or_else(|| self.error(end, input, format!("{what} ({})", self.valid())))
            }
        }
    }

    /// Resolve both ends; `from` must not come after `to`.
    pub fn resolve_range(&self, from: (&Bound, &str), to: (&Bound, &str)) -> Result<(u64, u64), RangeError> {
        let a = self.resolve(from.0, End::From, from.1)?;
        let b = self.resolve(to.0, End::To, to.1)?;
        if a > b {
            return Err(self.error(End::From, from.1, format!("turn {a} is after --to {} (turn {b})", to.1)));
        }
        Ok((a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(n: usize, compacted_to: Option<u64>) -> Turns {
        let base = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap();
        Turns {
            starts: (0..n).map(|i| base + chrono::Duration::hours(i as i64)).collect(),
            compacted_to,
            now: (base + chrono::Duration::hours(n as i64)).to_utc(),
        }
    }

    fn resolve(t: &Turns, from: &str, to: &str) -> Result<(u64, u64), String> {
        let (f, o) = (Bound::parse(from).map_err(|e| e.to_string())?, Bound::parse(to).map_err(|e| e.to_string())?);
        t.resolve_range((&f, from), (&o, to)).map_err(|e| e.to_string())
    }

    #[test]
    fn bounds_resolve_as_documented() {
        let t = turns(13, Some(4));
        assert_eq!(resolve(&t, "0", "12"), Ok((0, 12)));
        assert_eq!(resolve(&t, "last", "-3"), Ok((5, 9)));
        assert_eq!(resolve(&t, "-12", "-0"), Ok((0, 12)));
        // Turn i started 13 - i hours before now.
        assert_eq!(resolve(&t, "5h", "2h"), Ok((8, 10)));
        assert_eq!(resolve(&turns(13, None), "last", "-1"), Ok((0, 11)));
    }

    #[test]
    fn bad_bounds_name_the_flag_and_the_valid_range() {
        let t = turns(13, Some(12));
        assert_eq!(
            resolve(&t, "0", "20"),
            Err("--to 20: turn 20 is beyond the last turn (the conversation has turns 0-12)".into())
        );
        assert_eq!(
            resolve(&t, "0", "-30"),
            Err("--to -30: 30 turns before the last is before turn 0 (the conversation has turns 0-12)".into())
        );
        assert_eq!(resolve(&t, "8", "5"), Err("--from 8: turn 8 is after --to 5 (turn 5)".into()));
        assert_eq!(
            resolve(&t, "last", "12"),
            Err("--from last: every turn up to 12 is already compacted (the conversation has turns 0-12)".into())
        );
        assert_eq!(
            resolve(&t, "0", "20days"),
            Err("--to 20days: no turn started before then (the conversation has turns 0-12)".into())
        );
        assert_eq!(resolve(&turns(0, None), "0", "0"), Err("--from 0: the conversation has no turns yet".into()));
        assert!(Bound::parse("yesterday").unwrap_err().to_string().starts_with("expected a turn"));
    }
}
