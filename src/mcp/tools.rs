//! The work behind each MCP tool: plain functions from a store and a tool's parameters to a
//! JSON value, so they are tested without a protocol in between. Results are bounded: every
//! listing pages (`offset`, `limit`, `next_offset`), text is cut at `max_chars` and says
//! where to go on, and a search stops at its `limit` of hits.

use std::collections::HashMap;
use std::io::Write;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::clock::Clock;
use crate::event::{self, Event};
use crate::ops::plan::Request;
use crate::ops::{self, ForkRange};
use crate::projection;
use crate::render;
use crate::store::{LogEntry, Store};
use rmcp::schemars::{self, JsonSchema};

use super::{Failure, Host};

/// At most this many rows or hits come back from one call, whatever `limit` asks for.
const MAX_ROWS: usize = 500;
/// At most this much text comes back from one `show`, whatever `max_chars` asks for.
const MAX_CHARS: usize = 200_000;
/// A search hit's line is cut to this many characters around its first match.
const HIT_CHARS: usize = 240;

fn limit(asked: Option<u64>, default: usize) -> usize {
    asked.map_or(default, |n| usize::try_from(n).unwrap_or(MAX_ROWS)).clamp(1, MAX_ROWS)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only conversations whose title contains this text (case-insensitive)
    pub title_contains: Option<String>,
    /// Skip this many conversations (newest first)
    pub offset: Option<u64>,
    /// At most this many conversations (default 50, at most 500)
    pub limit: Option<u64>,
    /// Only the conversations of the project the server runs in (the git repository of
    /// its working directory, matched by remote URL, as `convo list --here`), with their
    /// subagents and forks
    pub here: Option<bool>,
}

/// Conversations, newest update first, a page at a time. `here` is the directory the
/// server runs in (never one a client names: a client may only ask for the server's own).
pub fn list(store: &Store, here: Option<&std::path::Path>, p: &ListParams) -> Result<Value, Failure> {
    // A lazy store lists what its hub's catalog names besides what it fetched.
    let mut summaries = ops::lazy::summaries(store)?;
    // Before the filters: a fork takes its parent's project, listed or not.
    let projects = crate::ops::project::names(&summaries);
    if p.here == Some(true) {
        let dir = here.ok_or_else(|| Failure::input("here: the server's working directory cannot be read"))?;
        summaries = ops::project::within(summaries, &ops::project::Scope::of(dir)?);
    }
    if let Some(text) = p.title_contains.as_deref().map(str::to_lowercase) {
        summaries.retain(|s| s.title.as_deref().is_some_and(|t| t.to_lowercase().contains(&text)));
    }
    summaries.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| b.id.cmp(&a.id)));
    let active = store.active()?;
    let total = summaries.len();
    let offset = usize::try_from(p.offset.unwrap_or(0)).unwrap_or(usize::MAX).min(total);
    let page: Vec<Value> = summaries
        .iter()
        .skip(offset)
        .take(limit(p.limit, 50))
        .map(|s| {
            json!({
                "id": s.id,
                "title": s.title,
                "turns": s.stats.turns,
                "events": s.stats.events,
                "tokens": s.tokens,
                "updated": s.updated,
                "project": projects.get(&s.id).cloned().flatten(),
                "active": active.as_deref() == Some(s.id.as_str()),
            })
        })
        .collect();
    let next = offset + page.len();
    Ok(json!({
        "total": total,
        "offset": offset,
        "next_offset": (next < total).then_some(next),
        "conversations": page,
    }))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// A regular expression (Rust regex syntax), or with fixed_strings the text itself
    pub pattern: String,
    /// Conversations to search (ids or titles, or unique prefixes of either); default: all
    pub ids: Option<Vec<String>>,
    /// Take the pattern as text, not a regular expression
    pub fixed_strings: Option<bool>,
    pub ignore_case: Option<bool>,
    /// Match whole words only
    pub word: Option<bool>,
    /// Only these event types: user, assistant, reasoning, tool_call, tool_result, system
    pub types: Option<Vec<String>>,
    /// Only calls of this tool and their results
    pub tool: Option<String>,
    /// Only events since then: a time ago (2h, 3days), a date or an RFC 3339 time
    pub since: Option<String>,
    /// Only events until then (as since)
    pub until: Option<String>,
    /// Search what an LLM is sent (compactions applied) instead of the raw events
    pub compacted: Option<bool>,
    /// At most this many hits (default 50, at most 500)
    pub limit: Option<u64>,
}

/// Hits in every conversation asked for, in store order, up to the limit.
pub fn search(store: &Store, now: chrono::DateTime<chrono::Utc>, p: &SearchParams) -> Result<Value, Failure> {
    let pattern = ops::search::Pattern::new(
        &p.pattern,
        p.fixed_strings.unwrap_or(false),
        p.ignore_case.unwrap_or(false),
        p.word.unwrap_or(false),
    )
    .map_err(|e| Failure::input(format!("pattern: {e}")))?;
    let when = |name: &str, text: &Option<String>| {
        text.as_deref()
            .map(|t| ops::search::parse_when(t, now).map_err(|e| Failure::input(format!("{name}: {e}"))))
            .transpose()
    };
    let filter = ops::search::Filter {
        types: p.types.clone().unwrap_or_default(),
        tool: p.tool.clone(),
        since: when("since", &p.since)?,
        until: when("until", &p.until)?,
        compacted: p.compacted.unwrap_or(false),
        failed: false,
        author: None,
    };
    let ids = match &p.ids {
        Some(queries) => queries.iter().map(|q| store.resolve(q)).collect::<Result<Vec<_>, _>>()?,
        None => store.conversation_ids()?,
    };
    let titles: HashMap<String, Option<String>> = store.summaries()?.into_iter().map(|s| (s.id, s.title)).collect();
    let max = limit(p.limit, 50);
    let mut hits = Vec::new();
    let mut truncated = false;
    // One more than the limit from a conversation says whether there were more.
    ops::search::search_all(
        store.root(),
        &ids,
        &pattern,
        &filter,
        ops::search::Mode::Hits(max + 1),
        &mut |i, found| {
            for hit in found.hits {
                if hits.len() == max {
                    truncated = true;
                    return Ok(false);
                }
                let (line, matched) = around_first_match(&hit.line, &hit.matches);
                hits.push(json!({
                    "conversation": ids[i],
                    "title": titles.get(&ids[i]).cloned().flatten(),
                    "turn": hit.turn,
                    "type": hit.kind,
                    "tool": hit.tool,
                    "event": hit.event,
                    "ts": hit.ts,
                    "line": line,
                    "match": matched,
                }));
            }
            Ok(true)
        },
    )?;
    let mut result = json!({ "hits": hits, "truncated": truncated });
    // A lazy store holds only the conversations fetched so far: say how many it could not search.
    if p.ids.is_none()
        && let Some(u) = ops::lazy::unfetched(store)?.filter(|u| u.count > 0)
    {
        result["not_fetched"] = json!(u.count);
    }
    Ok(result)
}

/// `line` cut to [`HIT_CHARS`] characters around its first match, and the matched text.
fn around_first_match(line: &str, matches: &[(usize, usize)]) -> (String, String) {
    let (start, end) = matches.first().copied().unwrap_or((0, 0));
    let matched: String = line.get(start..end).unwrap_or_default().chars().take(HIT_CHARS).collect();
    if line.chars().count() <= HIT_CHARS {
        return (line.to_owned(), matched);
    }
    let before: Vec<(usize, char)> = line[..start].char_indices().collect();
    let from = before.len().saturating_sub(HIT_CHARS / 3);
    let from = before.get(from).map_or(start, |(at, _)| *at);
    let cut: String = line[from..].chars().take(HIT_CHARS).collect();
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    shown.push_str(&cut);
    if from + cut.len() < line.len() {
        shown.push('…');
    }
    (shown, matched)
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShowFormat {
    /// For reading: turn headers, roles, indented content
    #[default]
    Text,
    /// The events as JSON lines (`append` reads them back)
    Jsonl,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// What an LLM is sent (compactions applied) instead of the raw events
    pub compacted: Option<bool>,
    /// First turn to show (0 is the first)
    pub from_turn: Option<u64>,
    /// Last turn to show
    pub to_turn: Option<u64>,
    pub format: Option<ShowFormat>,
    /// Skip this many characters of the output (to read on where the last call stopped)
    pub offset: Option<u64>,
    /// At most this many characters (default 20000, at most 200000)
    pub max_chars: Option<u64>,
}

/// At most this many characters of event text are read for one `show`: a longer turn range
/// is refused, with the hint to ask for fewer turns.
const MAX_RANGE_CHARS: u64 = 16 << 20;

/// A conversation (or a turn range of it) as text or JSON lines, a window of it at a time.
/// Decided from the outline index; only the events of the turns asked for are read.
pub fn show(store: &Store, p: &ShowParams) -> Result<Value, Failure> {
    let id = store.resolve_or_active(p.id.as_deref())?;
    let at = store.outlined(&id)?;
    let outlines = &at.outlined.outlines;
    let turns = at.outlined.turns();
    let count = turns.iter().flatten().max().map_or(0, |t| t + 1);
    let ranged = p.from_turn.is_some() || p.to_turn.is_some();
    let (from, to) = (p.from_turn.unwrap_or(0), p.to_turn.unwrap_or(u64::MAX));
    if from > to {
        return Err(Failure::input(format!("from_turn {from} is after to_turn {to}")));
    }
    // Events before the first turn (a system prompt) belong to a view from its start.
    let wanted = |turn: Option<u64>| match turn {
        Some(t) => (from..=to).contains(&t),
        None => !ranged || from == 0,
    };
    let compacted = p.compacted.unwrap_or(false);
    let items: Vec<projection::Item> = if compacted {
        projection::view(&at.outlined)?.into_iter().filter(|item| wanted(item.turn())).collect()
    } else {
        (0..outlines.len())
            .filter(|i| wanted(turns[*i]))
            .map(|index| projection::Item::Raw { index, edit: projection::Edit::None, turn: turns[index] })
            .collect()
    };
    let raw: Vec<usize> = items
        .iter()
        .filter_map(|item| match item {
            projection::Item::Raw { index, .. } => Some(*index),
            projection::Item::Synthetic(_) => None,
        })
        .collect();
    let (first, last) = (raw.iter().min().copied(), raw.iter().max().copied());
    let size: u64 = first.map_or(0, |f| outlines[f..=last.unwrap_or(f)].iter().map(|o| o.chars).sum());
    if size > MAX_RANGE_CHARS {
        return Err(Failure::input(format!(
            "the turns asked for hold ~{} characters of text, more than one show reads",
            render::thousands(size)
        ))
        .hint(format!("ask for fewer turns with from_turn and to_turn (the conversation has {count})")));
    }
    let events = match (first, last) {
        (Some(first), Some(last)) => store.events_at_indices(&at, first..=last)?,
        _ => Vec::new(),
    };
    let shown = projection::materialise_from(&items, &events, first.unwrap_or(0));
    let mut bytes = Vec::new();
    match p.format.unwrap_or_default() {
        ShowFormat::Text => {
            let (events, labels) = render::marked(&shown);
            render::conversation(&mut bytes, &events, &labels, render::Detail::default(), render::Theme::default())?;
        }
        ShowFormat::Jsonl if compacted => render::projected_jsonl(&mut bytes, &shown)?,
        ShowFormat::Jsonl => {
            for v in &shown {
                bytes.write_all(v.event.to_line().as_bytes())?;
            }
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let (window, next, total) = window(&text, p.offset, p.max_chars);
    let title = store.meta(&id)?.title;
    Ok(json!({
        "id": id,
        "title": title,
        "turns": count,
        "events_shown": shown.len(),
        "total_chars": total,
        "next_offset": next,
        "text": window,
    }))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowEventsParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// Event ids, each whole, a unique prefix, or a unique end as a compacted view names
    /// the events a placeholder or a summary stands for (`…1a2b3c4d`); at most 50
    pub events: Vec<String>,
}

/// At most this many events come back from one `show_events`.
const MAX_EVENTS: usize = 50;

/// Events whole, as stored, by their ids: what a compacted view's placeholders and
/// summaries hid, for an agent working from that view.
pub fn show_events(store: &Store, p: &ShowEventsParams) -> Result<Value, Failure> {
    if p.events.is_empty() || p.events.len() > MAX_EVENTS {
        return Err(Failure::input(format!("events: give 1 to {MAX_EVENTS} event ids, not {}", p.events.len())));
    }
    let id = store.resolve_or_active(p.id.as_deref())?;
    let at = store.outlined(&id)?;
    let ids: Vec<&str> = at.outlined.outlines.iter().map(|o| o.id.as_str()).collect();
    let turns = at.outlined.turns();
    let kept = ops::select::select(&ids, &turns, &ops::select::Selection::Events(p.events.clone()))?;
    let mut events = Vec::with_capacity(kept.len());
    for index in kept {
        for event in store.events_at_indices(&at, index..=index)? {
            events.push(json!({"turn": turns[index], "event": serde_json::from_str::<Value>(&event.to_line())?}));
        }
    }
    Ok(json!({"id": id, "events": events}))
}

/// Characters `offset..offset + max` of `text`, where to go on (if anywhere), and the
/// length in characters.
fn window(text: &str, offset: Option<u64>, max: Option<u64>) -> (String, Option<usize>, usize) {
    let total = text.chars().count();
    let offset = usize::try_from(offset.unwrap_or(0)).unwrap_or(usize::MAX).min(total);
    let max = max.map_or(20_000, |m| usize::try_from(m).unwrap_or(MAX_CHARS)).clamp(1, MAX_CHARS);
    let window: String = text.chars().skip(offset).take(max).collect();
    let end = offset + window.chars().count();
    (window, (end < total).then_some(end), total)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// Events in convo's schema, e.g. {"type":"user","content":"…"}, {"type":"assistant",
    /// "content":"…"}, {"type":"tool_call","name":"…","call_id":"…","arguments":{…}},
    /// {"type":"tool_result","call_id":"…","content":"…","is_error":false}; `id` and `ts`
    /// are filled in when missing
    pub events: Vec<serde_json::Map<String, Value>>,
}

/// Append events as one commit, checked whole first: one bad event and nothing is written.
pub fn append(store: &Store, clock: &Clock, p: &AppendParams) -> Result<Value, Failure> {
    if p.events.is_empty() {
        return Err(Failure::input("events: no events to append"));
    }
    let mut drafts = Vec::with_capacity(p.events.len());
    for (n, object) in p.events.iter().enumerate() {
        let line = Value::Object(object.clone()).to_string();
        let draft = event::parse_input_line(&line, n + 1)
            .map_err(|e| Failure::input(format!("events[{n}]: {}", e.kind)))?
            .ok_or_else(|| Failure::input(format!("events[{n}]: empty")))?;
        drafts.push(draft);
    }
    let lock = store.lock()?;
    let id = store.resolve_or_active(p.id.as_deref())?;
    let mut appending = store.begin_append(&lock, &id, clock)?;
    if let Err(e) = store.append_more(&mut appending, drafts, clock) {
        store.discard_append(&appending);
        return Err(e.into());
    }
    let appended = store.finish_append(&lock, appending, clock)?;
    Ok(json!({
        "id": id,
        "commit": appended.commit.to_string(),
        "subject": appended.subject,
        "added": appended.added.iter().map(|a| json!({"id": a.id, "type": a.kind, "turn": a.turn})).collect::<Vec<_>>(),
        "turns": appended.stats.turns,
        "events": appended.stats.events,
    }))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewParams {
    /// The new conversation's title
    pub title: Option<String>,
}

/// A new, empty conversation (not made active: that is the user's choice).
pub fn new(store: &Store, clock: &Clock, p: &NewParams) -> Result<Value, Failure> {
    let created = store.create(store.transaction()?, p.title.as_deref(), clock)?;
    Ok(json!({ "id": created.id, "commit": created.commit.to_string(), "subject": created.subject }))
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolsPolicy {
    /// Empty requests and replace responses with a status line
    Strip,
    StripRequests,
    StripResponses,
    /// Leave calls and results out
    Omit,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// Profile to apply (default: compaction.default_profile)
    pub profile: Option<String>,
    /// First turn: 5, -3 (turns before the last), 5h (a time ago) or `last`
    pub from: Option<String>,
    /// Last turn, same forms (default: leave compaction.keep_last turns)
    pub to: Option<String>,
    /// Leave the last N turns as they are
    pub keep_last: Option<u64>,
    /// Replace the range with this summary (write it yourself: the server calls no model)
    pub summary: Option<String>,
    /// Replace the range with a digest convo writes, one line per turn
    pub digest: Option<bool>,
    /// What to do with tool calls in the range, over the profile
    pub tools: Option<ToolsPolicy>,
    /// Leave reasoning in the range out of the view
    pub strip_reasoning: Option<bool>,
    /// Choose the least compaction that brings the view under this many tokens
    pub budget: Option<u64>,
    /// Say what would be done, and write nothing
    pub dry_run: Option<bool>,
}

impl CompactParams {
    fn request(&self) -> Result<Request, Failure> {
        if self.summary.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Err(Failure::input("summary: the summary is empty"));
        }
        if self.budget.is_some() && (self.summary.is_some() || self.digest.is_some() || self.tools.is_some()) {
            return Err(Failure::input("budget chooses the steps itself: leave out summary, digest and tools"));
        }
        Ok(Request {
            profile: self.profile.clone(),
            from: self.from.clone(),
            to: self.to.clone(),
            keep_last: self.keep_last,
            reasoning: self.strip_reasoning.filter(|s| *s).map(|_| crate::compaction::ReasoningPolicy::Strip),
            tool_calls: self.tools.map(|t| match t {
                ToolsPolicy::Strip => crate::compaction::ToolCallPolicy::Strip { request: true, response: true },
                ToolsPolicy::StripRequests => {
                    crate::compaction::ToolCallPolicy::Strip { request: true, response: false }
                }
                ToolsPolicy::StripResponses => {
                    crate::compaction::ToolCallPolicy::Strip { request: false, response: true }
                }
                ToolsPolicy::Omit => crate::compaction::ToolCallPolicy::Omit,
            }),
            summary: self.summary.as_ref().map(|s| s.trim_end().to_owned()),
            digest: self.digest.unwrap_or(false),
            budget: self.budget,
            budget_label: self.budget.map(|b| format!("budget {b}")),
            ..Default::default()
        })
    }
}

/// Plan a compaction, and unless `dry_run` append it (through the host, which runs the
/// user's hooks around it).
pub fn compact(host: &dyn Host, store: &Store, p: &CompactParams) -> Result<Value, Failure> {
    let request = p.request()?;
    let id = store.resolve_or_active(p.id.as_deref())?;
    // Planned as `convo compact` plans: from the outline index, the events read only when
    // the plan needs their text.
    let at = store.outlined(&id)?;
    let config = host.config(store, &at.outlined.configs)?;
    let clock = host.clock();
    let dry_run = p.dry_run.unwrap_or(false);
    let planned = ops::compact::plan_outlined(store, &id, &at.outlined, &config, &request, clock, dry_run);
    let (planned, read) = match planned {
        Err(ops::OpsError::Plan(e @ ops::plan::PlanError::NothingInRange { .. })) => {
            return Ok(json!({ "id": id, "compacted": false, "why": e.to_string() }));
        }
        planned => planned?,
    };
    let conversation = ops::compact::conversation(&at.outlined, &read);
    if planned.prepared.pending.is_some() {
        return Err(Failure::input("this profile asks a model for the summary, which the MCP server does not call")
            .hint("pass summary (your own text) or digest: true, or another profile"));
    }
    let c = &planned.prepared.compaction;
    let mut result = json!({
        "id": id,
        "from_turn": c.from_turn,
        "to_turn": c.to_turn,
        "policies": c.describe(),
        "tokens_before": planned.estimate.before,
        "tokens_after": planned.estimate.after,
    });
    // With a budget: the protection of the recent tail given up to fit it, as `compact`
    // says it (null when none was).
    if let Some(ladder) = &planned.ladder {
        result["gave_up"] = json!(ladder.gave_up);
    }
    // A summary over the oldest part only: the cheaper step laid under it, in one commit.
    if planned.under().is_some() {
        let (from_turn, to_turn) = planned.turns();
        result["from_turn"] = json!(from_turn);
        result["to_turn"] = json!(to_turn);
        result["policies"] = json!(planned.describe());
    }
    if dry_run {
        // What `compact --dry-run` prints, turn by turn.
        let mut plan = Vec::new();
        let name = crate::store::subject::name(&id, store.meta(&id)?.title.as_deref());
        render::compare::plan(
            &mut plan,
            &render::compare::Plan {
                name: &name,
                compaction: c,
                under: planned.under().map(|u| &u.compaction),
                widened_from: planned.prepared.widened.then_some(planned.prepared.requested),
                estimate: &planned.estimate,
                every_turn: false,
            },
        )?;
        result["dry_run"] = json!(true);
        result["plan"] = json!(String::from_utf8_lossy(&plan));
        return Ok(result);
    }
    // Appended under the store's lock, taken there, with the user's hooks around it.
    let (appended, planned) = host.compact(store, &id, conversation, &config, planned)?;
    result["compacted"] = json!(true);
    result["compaction"] = json!(planned.id);
    result["commit"] = json!(appended.commit.to_string());
    result["subject"] = json!(appended.subject);
    // Under a budget: the cap at which the model's summary was cut off, the digest written
    // in its place.
    if let Some(cap) = planned.digest_stood_in {
        result["digest_stood_in_for_summary_cut_off_at"] = json!(cap);
    }
    Ok(result)
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// Take the last N turns
    pub last: Option<u64>,
    /// First turn to take: 5, -3, 5h (default 0)
    pub from: Option<String>,
    /// Last turn to take, same forms (default: the last turn)
    pub to: Option<String>,
    /// Title of the fork (default: the source's title with " (fork)")
    pub title: Option<String>,
}

/// A new conversation from (part of) another; the active conversation stays as it was.
pub fn fork(store: &Store, clock: &Clock, p: &ForkParams) -> Result<Value, Failure> {
    let range = match (p.last, &p.from, &p.to) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(Failure::input("last: give last, or from and to, not both"));
        }
        (Some(n), None, None) => ForkRange::Last(n),
        (None, None, None) => ForkRange::All,
        (None, from, to) => ForkRange::Bounds {
            from: from.clone().unwrap_or_else(|| "0".into()),
            to: to.clone().unwrap_or_else(|| "-0".into()),
        },
    };
    let tx = store.transaction()?;
    let source = store.resolve_or_active(p.id.as_deref())?;
    let title = match &p.title {
        Some(t) => t.clone(),
        None => format!("{} (fork)", store.meta(&source)?.title.unwrap_or_else(|| source.clone())),
    };
    let created = ops::fork::fork(store, tx, &source, range, Some(&title), clock)?;
    Ok(json!({
        "id": created.id,
        "forked_from": source,
        "title": title,
        "commit": created.commit.to_string(),
        "subject": created.subject,
    }))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogParams {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    pub id: Option<String>,
    /// At most this many commits, newest first (default 20, at most 500)
    pub limit: Option<u64>,
}

/// A conversation's history, newest first; withdrawn compactions marked `undone`.
pub fn log(store: &Store, p: &LogParams) -> Result<Value, Failure> {
    let id = store.resolve_or_active(p.id.as_deref())?;
    let max = limit(p.limit, 20);
    // One more than asked says whether there is more.
    let mut entries: Vec<LogEntry> = store.log(&id, Some(max + 1))?;
    let more = entries.len() > max;
    entries.truncate(max);
    if entries.iter().any(|e| e.compaction.is_some()) {
        let events: Vec<Event> = store.events(&id)?;
        let records = crate::compaction::records(&events)?;
        let revoked = crate::compaction::revoked(&records);
        for e in &mut entries {
            e.undone = e.compaction.as_ref().is_some_and(|c| revoked.contains(c));
        }
    }
    Ok(json!({ "id": id, "commits": entries, "more": more }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_counts_characters_not_bytes() {
        let text = "日本語のテキスト";
        assert_eq!(window(text, Some(2), Some(3)), ("語のテ".to_owned(), Some(5), 8));
        assert_eq!(window(text, Some(5), Some(100)), ("キスト".to_owned(), None, 8));
        assert_eq!(window(text, Some(50), None), (String::new(), None, 8));
    }

    #[test]
    fn a_long_hit_is_cut_around_its_match() {
        let line = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let (shown, matched) = around_first_match(&line, &[(500, 506)]);
        assert_eq!(matched, "needle");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains("needle"));
        assert_eq!(shown.chars().count(), HIT_CHARS + 2);
    }
}
