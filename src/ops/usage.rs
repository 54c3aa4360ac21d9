//! `usage`: the tokens the providers reported for a store's conversations, and what they
//! cost by a price table (shipped as data, [`Prices::shipped`], overridable in config),
//! grouped by day, week, month, project, model, conversation, or person or agent (which the
//! tally does not keep: the events are read for those). Only counts an agent or a
//! provider recorded are summed (an event's `usage`); an API message spread over several
//! events counts once, by its last ([`crate::event::usage_of`]'s rule). A model the table
//! does not know is shown with its tokens and no cost, never a guess.
//!
//! The figures come from the store's usage tally (each conversation's calls summed by UTC
//! day and model, [`Store::usage_tallies`]), not from the events: every grouping is a
//! function of the day, the model and the conversation. Only a `--since`/`--until` that
//! falls inside a day needs the time of each call: the conversations with calls on such a
//! day are read call by call, the others stay whole days.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use serde::Deserialize;

use super::project;
use crate::config::PriceConfig;
use crate::event::{Event, Usage};
use crate::store::{DayUsage, Store, StoreError, Summary};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `usage` cost. A cache count the table has no price for is priced as input: the
    /// provider charged it at least as that (a cache read is never dearer).
    pub fn cost(&self, usage: &Usage) -> f64 {
        let n = |v: Option<u64>| v.unwrap_or(0) as f64;
        (n(usage.input_tokens) * self.input
            + n(usage.output_tokens) * self.output
            + n(usage.cache_read_tokens) * self.cache_read.unwrap_or(self.input)
            + n(usage.cache_write_tokens) * self.cache_write.unwrap_or(self.input))
            / 1e6
    }
}

/// The price table: convo's own, with the user's config over it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// When the shipped prices were read off the providers' pages.
    pub date: String,
    models: BTreeMap<String, Price>,
}

impl Prices {
    /// The table convo ships (`ops/prices.toml`; a unit test checks that it parses).
    pub fn shipped() -> Result<Prices, toml::de::Error> {
        toml::from_str(include_str!("prices.toml"))
    }

    /// With `overrides` (config's `[prices."model"]`) over it: a field given replaces the
    /// table's; a model the table lacks needs input and output to be priced.
    pub fn with(mut self, overrides: &BTreeMap<String, PriceConfig>) -> Prices {
        for (model, o) in overrides {
            let known = self.models.get(model).copied();
            let base = known.unwrap_or(Price { input: f64::NAN, output: f64::NAN, ..Price::default() });
            let price = Price {
                input: o.input.unwrap_or(base.input),
                output: o.output.unwrap_or(base.output),
                cache_read: o.cache_read.or(base.cache_read),
                cache_write: o.cache_write.or(base.cache_write),
            };
            if price.input.is_finite() && price.output.is_finite() {
                self.models.insert(model.clone(), price);
            }
        }
        self
    }

    /// The price of `model`: its id, or its id less a release date (`-20250514`).
    pub fn of(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.models.get(model) {
            return Some(*price);
        }
        let (family, date) = model.rsplit_once('-')?;
        (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then(|| self.models.get(family).copied())?
    }
}

/// What rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Day,
    Week,
    Month,
    Project,
    Model,
    Conversation,
    /// The person who recorded the call's event (`person`): read from the events.
    Person,
    /// The agent whose session the call came from (`agent`): read from the events.
    Agent,
}

impl By {
    /// Whether the tally (by day and model) cannot say it: the events are read.
    fn needs_events(self) -> bool {
        matches!(self, By::Person | By::Agent)
    }
}

/// Which usage counts.
#[derive(Debug, Default)]
pub struct Options {
    pub by: Vec<By>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

/// One group's tokens and cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// One value per [`Options::by`], in its order.
    pub key: Vec<String>,
    pub usage: Usage,
    /// The cost of what the table prices; `None` when none of it is priced.
    pub cost: Option<f64>,
    /// Models of this row the table does not price (their tokens count, their cost not).
    pub unpriced: Vec<String>,
}

impl Row {
    fn add(&mut self, usage: &Usage, model: &str, prices: &Prices) {
        self.usage.add(usage);
        match prices.of(model) {
            Some(price) => *self.cost.get_or_insert(0.0) += price.cost(usage),
            None if !self.unpriced.iter().any(|m| m == model) => self.unpriced.push(model.to_owned()),
            None => {}
        }
    }
}

/// The rows, ordered by key, and their total.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub total: Row,
}

/// The usage of `conversations` (from [`Store::summaries`], filtered as the caller wants),
/// grouped as `options` says, from the store's usage tally; the events only of the
/// conversations with calls on a day the range cuts.
pub fn report(
    store: &Store,
    conversations: &[Summary],
    options: &Options,
    prices: &Prices,
) -> Result<Report, StoreError> {
    let tallies = store.usage_tallies()?;
    let projects = project::names(conversations);
    let mut groups: BTreeMap<Vec<String>, Row> = BTreeMap::new();
    let mut total = Row::default();
    let by_events = options.by.iter().any(|b| b.needs_events());
    let mut add = |day: NaiveDate, model: &str, usage: &Usage, summary: &Summary, event: Option<&Event>| {
        let project = projects.get(&summary.id).cloned().flatten();
        let key: Vec<String> =
            options.by.iter().map(|by| key_of(*by, day, model, summary, project.as_deref(), event)).collect();
        let row = groups.entry(key.clone()).or_insert_with(|| Row { key, ..Row::default() });
        row.add(usage, model, prices);
        total.add(usage, model, prices);
    };
    for summary in conversations {
        let Some(tally) = tallies.get(&summary.id) else { continue };
        // A day that does not parse is not one convo wrote: the events are read instead.
        let days: Option<Vec<(NaiveDate, Span, &DayUsage)>> = tally
            .0
            .iter()
            .map(|d| NaiveDate::parse_from_str(&d.day, "%Y-%m-%d").ok().map(|day| (day, options.span(day), d)))
            .collect();
        let whole_days = days.filter(|days| !by_events && days.iter().all(|(_, span, _)| *span != Span::Cut));
        let Some(days) = whole_days else {
            // Call by call, each at its own time.
            // A fork's copies of its parent's events count in the parent.
            let copied: HashSet<String> = match &summary.forked_from {
                Some(parent) if store.has_conversation(&parent.id)? => {
                    store.events(&parent.id)?.into_iter().map(|e| e.id).collect()
                }
                _ => HashSet::new(),
            };
            let mut events = store.events(&summary.id)?;
            events.retain(|e| !copied.contains(&e.id));
            for (event, usage) in crate::event::calls(&events) {
                let Ok(at) = DateTime::parse_from_rfc3339(&event.ts).map(|t| t.with_timezone(&Utc)) else { continue };
                if options.since.is_some_and(|s| at < s) || options.until.is_some_and(|u| at >= u) {
                    continue;
                }
                let model = event.extra.get("model").and_then(serde_json::Value::as_str).unwrap_or(UNKNOWN);
                add(at.date_naive(), model, &usage, summary, Some(event));
            }
            continue;
        };
        for (day, _, d) in days.into_iter().filter(|(_, span, _)| *span == Span::In) {
            add(day, d.model.as_deref().unwrap_or(UNKNOWN), &d.usage, summary, None);
        }
    }
    Ok(Report { rows: groups.into_values().collect(), total })
}

/// What a call whose event names no model is grouped under.
const UNKNOWN: &str = "unknown";

/// Where a UTC day stands against `--since`/`--until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    In,
    Out,
    /// Partly in: its calls are counted by their own times.
    Cut,
}

impl Options {
    fn span(&self, day: NaiveDate) -> Span {
        let start = day.and_time(chrono::NaiveTime::MIN).and_utc();
        let end = start + chrono::Days::new(1);
        let inside = |t: DateTime<Utc>| start < t && t < end;
        if self.since.is_some_and(inside) || self.until.is_some_and(inside) {
            Span::Cut
        } else if self.since.is_some_and(|s| end <= s) || self.until.is_some_and(|u| u <= start) {
            Span::Out
        } else {
            Span::In
        }
    }
}

fn key_of(
    by: By,
    day: NaiveDate,
    model: &str,
    summary: &Summary,
    project: Option<&str>,
    event: Option<&Event>,
) -> String {
    let field = |key: &str| event.and_then(|e| e.extra.get(key)?.as_str()).unwrap_or("(unknown)").to_owned();
    match by {
        By::Day => day.format("%Y-%m-%d").to_string(),
        By::Week => {
            let week = day.iso_week();
            format!("{}-W{:02}", week.year(), week.week())
        }
        By::Month => day.format("%Y-%m").to_string(),
        By::Model => model.to_owned(),
        By::Project => project.unwrap_or("(unknown)").to_owned(),
        By::Conversation => summary.id.clone(),
        By::Person => field(crate::event::who::PERSON),
        By::Agent => field(crate::event::who::AGENT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses_and_a_release_date_finds_its_family() {
        let prices = Prices::shipped().unwrap();
        assert!(!prices.date.is_empty());
        assert_eq!(prices.of("claude-sonnet-4-20250514"), prices.of("claude-sonnet-4"));
        assert!(prices.of("claude-opus-4-7").is_none(), "a newer model is not priced as an older one");
        assert!(prices.of("no-such-model").is_none());
    }

    #[test]
    fn a_day_is_cut_only_by_a_bound_strictly_inside_it() {
        let at = |t: &str| Some(DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc));
        let day = NaiveDate::from_ymd_opt(2025, 9, 7).unwrap();
        let span = |since, until| Options { since, until, ..Options::default() }.span(day);
        assert_eq!(span(None, None), Span::In);
        assert_eq!(span(at("2025-09-07T00:00:00Z"), at("2025-09-08T00:00:00Z")), Span::In);
        assert_eq!(span(at("2025-09-07T00:00:01Z"), None), Span::Cut);
        assert_eq!(span(None, at("2025-09-07T23:59:59Z")), Span::Cut);
        assert_eq!(span(at("2025-09-08T00:00:00Z"), None), Span::Out);
        assert_eq!(span(None, at("2025-09-07T00:00:00Z")), Span::Out);
    }

    #[test]
    fn cost_is_per_million_tokens_and_overrides_replace_fields() {
        let usage = Usage {
            input_tokens: Some(2_000_000),
            output_tokens: Some(1_000_000),
            cache_read_tokens: Some(10_000_000),
            cache_write_tokens: Some(1_000_000),
            reasoning_tokens: None,
        };
        let sonnet = Prices::shipped().unwrap().of("claude-sonnet-4").unwrap();
        // 2 × 3 + 1 × 15 + 10 × 0.30 + 1 × 3.75
        assert!((sonnet.cost(&usage) - 27.75).abs() < 1e-9);
        let mut overrides = BTreeMap::new();
        overrides.insert("claude-sonnet-4".to_owned(), PriceConfig { input: Some(1.0), ..Default::default() });
        overrides.insert("mine".to_owned(), PriceConfig { input: Some(1.0), ..Default::default() });
        let prices = Prices::shipped().unwrap().with(&overrides);
        assert!((prices.of("claude-sonnet-4").unwrap().cost(&usage) - 23.75).abs() < 1e-9);
        assert!(prices.of("mine").is_none(), "a model needs input and output to be priced");
    }
}
