//! `compact --budget TOKENS` and the automatic compaction: the least compaction that brings
//! the projected view under a token budget. Candidates are tried in a fixed order, each one
//! giving up more than the one before, and the first whose estimate fits is chosen:
//!
//! 1. `truncate`: tool output over `min_bytes` cut to `max_lines` lines (head and tail kept);
//! 2. `micro`: tool requests and results over `min_bytes` replaced by a status line;
//! 3. `reasoning`: `micro`, and reasoning stripped;
//! 4. `tool-calls`: every tool request and result in range stripped, and reasoning;
//! 5. `summary`: the range replaced by a summary: the model's when the profile (or
//!    `--summarize`) asks for one, else convo's own digest.
//!
//! Truncation comes first because it keeps the start and end of each output, where
//! replacing keeps nothing. Tools hinted `keep` stay whole at every step; the range comes
//! from the same bounds as any compaction (`--from`, `--keep-recent-tools`, `--keep-first`...).
//!
//! The step that fits then spends what is left: it covers only the oldest part of the range
//! it needs (the newer part stays as it is, which keeps all of its trail), found by bisection
//! on the range's last event, or, where that spends more, keeps the whole range with its
//! threshold raised (`min_bytes` for micro and reasoning, `max_lines` for truncation); a
//! digest may take whatever the rest of the view leaves of the budget, not
//! `max_summary_tokens` (which bounds a model's summary). A digest that fits over the whole
//! range spends the room it leaves on the end of the range as it was, cut to fit (not for
//! automatic compaction, which keeps that room as headroom under its trigger).
//!
//! A digest may also cover only the oldest part with the rest at a cheaper step's view:
//! two compaction events in one commit, as the spec allows (only summary ranges may not
//! partly overlap): the cheaper step over the whole range first, then the digest over its
//! oldest part, which beats it there (a summary beats per-type policies, and it is later in
//! the stream at the same time). For each cheaper step, the digest's last event is the
//! earliest (bisection over events, with the same estimate; a turn may be one long agent
//! turn) at which the two fit, and the digest then takes the room the budget leaves. Of the
//! one-event choice and these, the one keeping the most trail wins, then the one spending
//! the most of the budget. The cheaper step's event names the digest's (`laid_with`):
//! `compact --undo` withdraws both at once, whichever is named. A model's summary, whose
//! text does not exist while planning, is planned the same way with its room reserved at
//! `max_summary_tokens` (its output's cap), and the model is sent the oldest part alone.
//! A model that writes past that room (also on the retry) gets convo's digest of the same
//! part in its place, fitted to the room, and the command says so (`compact::compact`).
//!
//! When no step fits with the protected tail (`keep_recent_tools`, `keep_last`, both from
//! config), the tail is given up step by step: its tool outputs truncated, then fewer kept
//! calls, then fewer kept turns, the last user message and the last tool result last. The
//! ladder says which protection it gave up; with none left that fits, planning fails naming
//! the smallest view reachable ([`PlanError::OverBudget`]). Flags that set the range's end
//! (`--to`, `--keep-last`, `--keep-recent-tools`) are the user's word and are never given up.
//! Pure, like planning: events in, a ladder out.

use chrono::{DateTime, Utc};

use crate::compaction::{Compaction, ReasoningPolicy, Record, Summary, ToolCallPolicy};
use crate::config::Config;
use crate::event::Shape;
use crate::event::trail::{self, Trail};
use crate::ops::plan::{self, Choice, Conversation, PlanError, Policies, Prepared, Request};
use crate::projection::{self, Estimate};
use crate::store::subject::thousands;

/// `min_bytes` and `max_lines` for the ladder's steps when neither flags nor the profile
/// set them: seed 002's 800 bytes, and 20 lines (10 from each end).
const MIN_BYTES: u64 = 800;
const MAX_LINES: u64 = 20;

/// One step of the ladder, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    Truncate,
    Micro,
    Reasoning,
    ToolCalls,
    Summary,
}

impl Step {
    pub const ALL: [Step; 5] = [Step::Truncate, Step::Micro, Step::Reasoning, Step::ToolCalls, Step::Summary];

    pub fn name(self) -> &'static str {
        match self {
            Step::Truncate => "truncate",
            Step::Micro => "micro",
            Step::Reasoning => "reasoning",
            Step::ToolCalls => "tool-calls",
            Step::Summary => "summary",
        }
    }

    fn choice(self, request: &Request, profile: &crate::config::Profile) -> Choice {
        let min_bytes = Some(request.min_bytes.or(profile.min_bytes).unwrap_or(MIN_BYTES));
        let max_lines = Some(request.max_lines.or(profile.max_lines).unwrap_or(MAX_LINES));
        let strip = Some(ToolCallPolicy::Strip { request: true, response: true });
        let reasoning = Some(ReasoningPolicy::Strip);
        let policies = match self {
            Step::Truncate => Policies { min_bytes, max_lines, ..Default::default() },
            Step::Micro => Policies { tool_calls: strip, min_bytes, ..Default::default() },
            Step::Reasoning => Policies { tool_calls: strip, min_bytes, reasoning, ..Default::default() },
            Step::ToolCalls => Policies { tool_calls: strip, reasoning, ..Default::default() },
            Step::Summary => {
                // The model's summary when one is asked for, else the digest.
                let asked = Choice::of(request, profile);
                return match asked.pending {
                    Some(pending) => Choice { pending: Some(pending), ..Default::default() },
                    None => Choice { digest: true, ..Default::default() },
                };
            }
        };
        Choice { policies, ..Default::default() }
    }
}

/// A step tried, with what the view would cost after it.
#[derive(Debug, Clone)]
pub struct Rung {
    pub step: Step,
    pub prepared: Prepared,
    /// The view with the whole rung applied (`under` too).
    pub estimate: Estimate,
    /// A summary over the oldest part of the range only: the cheaper step laid under it
    /// over the whole range, so the newer part stays at that step's view.
    pub under: Option<Under>,
}

/// The cheaper step under a summary that covers only the oldest part of the range: its own
/// compaction event, laid first, in the same commit.
#[derive(Debug, Clone)]
pub struct Under {
    pub step: Step,
    pub compaction: Compaction,
}

impl Rung {
    /// The compaction events it lays, in the order they are appended: the cheaper step under
    /// the summary first (the summary, later in the stream, is the one people name).
    pub fn compactions(&self) -> Vec<&Compaction> {
        self.under.iter().map(|u| &u.compaction).chain([&self.prepared.compaction]).collect()
    }
}

/// The id of the cheaper step's event under a summary over part of the range, while planning
/// (the event appended has one of its own): it only needs to differ from the summary's.
pub fn under_id(id: &str) -> String {
    format!("{id}-under")
}

/// The steps tried for a budget, and the compaction chosen.
#[derive(Debug, Clone)]
pub struct Ladder {
    pub budget: u64,
    /// The view's estimated tokens now.
    pub now: u64,
    /// Each step over the whole range the bounds give, with the protected tail as configured
    /// (every step with `all`, else up to the first that fits).
    pub rungs: Vec<Rung>,
    /// The compaction chosen: the first step that fits, over only the oldest part it needs;
    /// with none, the one that gets closest, and `fits` is false.
    pub choice: Rung,
    pub fits: bool,
    /// The protection of the recent tail given up to fit, in words, when one was.
    pub gave_up: Option<String>,
}

impl Ladder {
    pub fn chosen(&self) -> &Rung {
        &self.choice
    }

    /// Whether the chosen compaction covers less than its step would over the whole range.
    pub fn partial(&self) -> bool {
        self.choice.under.is_some()
            || self.rungs.iter().any(|r| {
                r.step == self.choice.step
                    && self.gave_up.is_none()
                    && r.prepared.compaction.to_event != self.choice.prepared.compaction.to_event
            })
    }
}

/// One size of the protected tail: the request that sets it, what it gives up, and the
/// steps tried at it.
struct Level {
    request: Request,
    gave_up: Option<String>,
    steps: &'static [Step],
    /// The last user message, which a summary at this level must not swallow.
    keep: Option<usize>,
}

/// Try the steps in order on `events` until one brings the view under `budget` tokens (with
/// `all`, try every step, for `--dry-run`), then cut its range back to the oldest part that
/// still fits; with none, give up the protected tail step by step. The compaction event
/// would be `id` at `ts`. A model summary still to be written is counted at
/// `max_summary_tokens` while the range is cut back, and as empty otherwise (a lower bound).
pub fn climb(
    conversation: Conversation,
    config: &Config,
    request: &Request,
    budget: u64,
    (id, ts): (&str, &str),
    now: DateTime<Utc>,
    all: bool,
) -> Result<Ladder, PlanError> {
    let outlined = conversation.outlined;
    let items = projection::view(outlined)?;
    let chars = match projection::item_chars_by_turn(&items, &outlined.outlines) {
        Some(by_turn) => by_turn.values().sum(),
        None => projection::project(conversation.events.ok_or(PlanError::NeedsEvents { why: "a truncation's size" })?)?
            .iter()
            .map(|p| p.event.visible_chars())
            .sum(),
    };
    let tokens_now = crate::event::tokens(chars);
    if tokens_now <= budget {
        return Err(PlanError::NothingInRange {
            why: format!(
                "the view is ~{} tokens, within the budget of {}{}",
                thousands(tokens_now),
                thousands(budget),
                request.budget_label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default()
            ),
        });
    }
    let (name, profile) = plan::profile_of(config, request)?;
    // A model summary's text is not known while planning: its room is reserved.
    let reserve = |step: Step, prepared: &Prepared| {
        if step == Step::Summary && prepared.pending.is_some() { config.compaction.max_summary_tokens } else { 0 }
    };
    let attempt = |step: Step, request: &Request, cap: Option<u64>, fill: bool| -> Result<Option<Rung>, PlanError> {
        let mut choice = step.choice(request, profile);
        if choice.digest {
            choice.digest_tokens = cap;
            choice.digest_fill = fill;
        }
        let prepared = match plan::place(conversation, config, request, &name, choice, now) {
            Ok(prepared) => prepared,
            Err(PlanError::NothingInRange { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut candidate = prepared.compaction.clone();
        if prepared.pending.is_some() {
            candidate.summary =
                Some(Summary { text: String::new(), by: String::new(), usage: None, agent_history: None });
        }
        let estimate = plan::estimate(conversation, &candidate, id, ts)?;
        Ok(Some(Rung { step, prepared, estimate, under: None }))
    };
    let fits = |r: &Rung| r.estimate.after + reserve(r.step, &r.prepared) <= budget;

    let levels = levels(conversation, config, request, profile);
    let mut rungs: Vec<Rung> = Vec::new();
    let mut closest: Option<(Rung, Option<String>)> = None;
    let mut fallbacks: Vec<(Rung, Option<String>)> = Vec::new();
    for (depth, level) in levels.iter().enumerate() {
        let mut found = None;
        for &step in level.steps {
            // A digest as long as it wants to be: whether it fits decides.
            let full = match attempt(step, &level.request, Some(u64::MAX), false) {
                Ok(Some(rung)) => rung,
                Ok(None) => continue,
                Err(e) => return Err(e),
            };
            if step == Step::Summary && level.keep.is_some_and(|k| covers(conversation, &full, k)) {
                continue;
            }
            let cut = step == Step::Summary && !fits(&full);
            let full = match (step, fits(&full)) {
                // A digest that does not fit whole keeps what the rest of the view leaves.
                (Step::Summary, false) if full.prepared.pending.is_none() => {
                    capped(&attempt, &level.request, &full, budget)?
                }
                _ => full,
            };
            if closest.as_ref().is_none_or(|(c, _)| full.estimate.after < c.estimate.after) {
                closest = Some((full.clone(), level.gave_up.clone()));
            }
            let fitting = fits(&full) && !cut;
            if depth == 0 {
                rungs.push(full.clone());
            }
            // A summary that fits only cut short (a digest losing its oldest lines, a model
            // summary with less room than `max_summary_tokens`) loses trail that a smaller
            // tail might keep: the tail is given up first, and this is the last resort.
            if !fitting && step == Step::Summary && full.estimate.after <= budget {
                fallbacks.push((full.clone(), level.gave_up.clone()));
            }
            if fitting && found.is_none() {
                found = Some(full);
                if !(all && depth == 0) {
                    break;
                }
            }
        }
        if let Some(full) = found {
            let narrowed = oldest_needed(conversation, &attempt, &level.request, full.clone(), &fits)?;
            let loosened = loosest(&attempt, &level.request, profile, full, &fits)?;
            // Whichever spends more of the budget: the step over the oldest part alone, or
            // over the whole range with its size threshold raised.
            let choice = if loosened.estimate.after > narrowed.estimate.after { loosened } else { narrowed };
            let choice = if request.budget_headroom {
                choice
            } else {
                filled(conversation, &attempt, &level.request, choice, budget)?
            };
            let choice = match choice.step {
                Step::Summary => {
                    // Whether a cheaper step can keep the newer part is read from the text
                    // (a digest has it already; a model summary planned from outlines not).
                    if conversation.events.is_none() {
                        return Err(PlanError::NeedsEvents { why: "a summary over part of the range" });
                    }
                    let layered =
                        layered(conversation, &attempt, &level.request, level.steps, budget, (id, ts), &fits)?;
                    most_trail(conversation, choice, layered, (id, ts))?
                }
                _ => choice,
            };
            return Ok(Ladder { budget, now: tokens_now, rungs, choice, fits: true, gave_up: level.gave_up.clone() });
        }
    }
    // Of those, the one that keeps the most trail; the least tail given up among equals.
    let mut best: Option<(usize, Rung, Option<String>)> = None;
    for (rung, gave_up) in fallbacks {
        let kept = trail_kept(conversation, &rung, (id, ts))?;
        if best.as_ref().is_none_or(|(k, _, _)| kept > *k) {
            best = Some((kept, rung, gave_up));
        }
    }
    if let Some((_, choice, gave_up)) = best {
        return Ok(Ladder { budget, now: tokens_now, rungs, choice, fits: true, gave_up });
    }
    match closest {
        Some((choice, gave_up)) if choice.estimate.after < tokens_now => {
            Ok(Ladder { budget, now: tokens_now, rungs, choice, fits: false, gave_up })
        }
        Some(_) => Err(PlanError::NothingInRange {
            why: format!("no step makes the view (~{} tokens) smaller", thousands(tokens_now)),
        }),
        // No level had anything in range: the bounds' own words say why.
        None => plan::place(conversation, config, request, &name, Step::Truncate.choice(request, profile), now)
            .and(Err(PlanError::NothingInRange { why: "nothing in range".into() })),
    }
}

/// One step placed and estimated for a request, a digest bounded by the tokens given;
/// `None` when the request's bounds leave nothing in range.
type Attempt<'a> = dyn Fn(Step, &Request, Option<u64>, bool) -> Result<Option<Rung>, PlanError> + 'a;

/// How many items of the conversation's trail (paths, commands, errors, commits) the view
/// shows with `rung` applied; 0 without the events' text.
fn trail_kept(conversation: Conversation, rung: &Rung, (id, ts): (&str, &str)) -> Result<usize, PlanError> {
    let Some(events) = conversation.events else { return Ok(0) };
    let view = |events: &[crate::event::Event]| -> Result<Vec<crate::event::Event>, PlanError> {
        Ok(projection::project(events)?.into_iter().map(|p| p.event).collect())
    };
    let trail = Trail::of(&view(events)?);
    let with = applied(events, rung, (id, ts));
    let missing = trail.missing_from(&trail::text_of(&view(&with)?)).len();
    Ok(trail.items.len() - missing)
}

/// Whether `rung`'s range holds the raw event at `index`.
fn covers(conversation: Conversation, rung: &Rung, index: usize) -> bool {
    let outlines = &conversation.outlined.outlines;
    let at = |id: &str| outlines.iter().position(|o| o.id == id);
    let c = &rung.prepared.compaction;
    matches!((at(&c.from_event), at(&c.to_event)), (Some(a), Some(b)) if (a..=b).contains(&index))
}

/// A digest over `full`'s range, bounded by what the rest of the view leaves of `budget`.
fn capped(attempt: &Attempt, request: &Request, full: &Rung, budget: u64) -> Result<Rung, PlanError> {
    let bare = attempt(Step::Summary, request, Some(0), false)?.unwrap_or_else(|| full.clone());
    let mut cap = budget.saturating_sub(bare.estimate.after);
    let mut best = bare;
    // The estimate rounds per view, not per line: a few tries settle it.
    for _ in 0..4 {
        let Some(rung) = attempt(Step::Summary, request, Some(cap), false)? else { break };
        if rung.estimate.after <= budget {
            return Ok(rung);
        }
        cap = cap.saturating_sub(rung.estimate.after - budget);
        best = rung;
    }
    Ok(best)
}

/// A digest that fits with room to spare given that room: it fills it with the end of its
/// range as it was ([`crate::compaction::digest::filled`]). Other steps are left as they are.
fn filled(
    conversation: Conversation,
    attempt: &Attempt,
    request: &Request,
    rung: Rung,
    budget: u64,
) -> Result<Rung, PlanError> {
    let Some(text) = rung.prepared.compaction.summary.as_ref().map(|s| &s.text) else { return Ok(rung) };
    if rung.step != Step::Summary || rung.prepared.pending.is_some() || rung.estimate.after >= budget {
        return Ok(rung);
    }
    // The range as chosen (a narrowed one ends earlier than the request's).
    let outlines = &conversation.outlined.outlines;
    let Some(end) = outlines.iter().position(|o| o.id == rung.prepared.compaction.to_event) else { return Ok(rung) };
    let request = &Request { end_by: Some(request.end_by.map_or(end, |e| e.min(end))), ..request.clone() };
    let mut cap = crate::event::tokens(text.chars().count() as u64) + (budget - rung.estimate.after);
    // The estimate rounds per view, not per line: a few tries settle it.
    for _ in 0..4 {
        let Some(more) = attempt(Step::Summary, request, Some(cap), true)? else { break };
        if more.estimate.after <= budget {
            let same = more.prepared.compaction.to_event == rung.prepared.compaction.to_event;
            return Ok(if same && more.estimate.after > rung.estimate.after { more } else { rung });
        }
        cap = cap.saturating_sub(more.estimate.after - budget);
    }
    Ok(rung)
}

/// `full` with its threshold loosened as far as the budget allows: `min_bytes` raised (micro
/// and reasoning strip only larger parts) or `max_lines` (truncation keeps more lines), by
/// bisection; the other steps have no threshold and stay as they are.
fn loosest(
    attempt: &Attempt,
    request: &Request,
    profile: &crate::config::Profile,
    full: Rung,
    fits: &dyn Fn(&Rung) -> bool,
) -> Result<Rung, PlanError> {
    const MAX: u64 = 1 << 24;
    let step = full.step;
    let with = |n: u64| match step {
        Step::Micro | Step::Reasoning => Some(Request { min_bytes: Some(n), ..request.clone() }),
        Step::Truncate => Some(Request { max_lines: Some(n), ..request.clone() }),
        _ => None,
    };
    let (mut lo, mut hi) = match full.step {
        Step::Micro | Step::Reasoning => (request.min_bytes.or(profile.min_bytes).unwrap_or(MIN_BYTES), MAX),
        Step::Truncate => (request.max_lines.or(profile.max_lines).unwrap_or(MAX_LINES), MAX),
        _ => return Ok(full),
    };
    let mut best = full;
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let Some(req) = with(mid) else { break };
        match attempt(best.step, &req, None, false)? {
            Some(rung) if fits(&rung) => {
                lo = mid;
                best = rung;
            }
            _ => hi = mid - 1,
        }
    }
    Ok(best)
}

/// `full` cut back to the oldest part of its range that still fits: the first last event
/// (by bisection) at which it does. The newer part stays as it is.
fn oldest_needed(
    conversation: Conversation,
    attempt: &Attempt,
    request: &Request,
    full: Rung,
    fits: &dyn Fn(&Rung) -> bool,
) -> Result<Rung, PlanError> {
    // A digest cut to fit its budget already covers the whole range it may.
    if !fits(&full) {
        return Ok(full);
    }
    let outlines = &conversation.outlined.outlines;
    let index = |id: &str| outlines.iter().position(|o| o.id == id);
    let c = &full.prepared.compaction;
    let (Some(mut lo), Some(mut hi)) = (index(&c.from_event), index(&c.to_event)) else { return Ok(full) };
    let mut best = full;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let narrowed = Request { end_by: Some(request.end_by.map_or(mid, |e| e.min(mid))), ..request.clone() };
        match attempt(best.step, &narrowed, Some(u64::MAX), false)? {
            Some(rung) if fits(&rung) => {
                hi = index(&rung.prepared.compaction.to_event).unwrap_or(mid).min(mid);
                best = rung;
            }
            _ => lo = mid + 1,
        }
    }
    Ok(best)
}

/// The sizes of the protected tail to try, the configured one first. Only a tail from config
/// shrinks: an explicit end is the user's word.
fn levels(
    conversation: Conversation,
    config: &Config,
    request: &Request,
    profile: &crate::config::Profile,
) -> Vec<Level> {
    let mut levels = vec![Level { request: request.clone(), gave_up: None, steps: &Step::ALL, keep: None }];
    if request.to.is_some() || request.keep_last.is_some() || request.keep_recent_tools.is_some() {
        return levels;
    }
    let outlines = &conversation.outlined.outlines;
    // The last user message and the last tool call (with its result) go last: the range
    // ends before the call, and a summary may not swallow the message (the other steps leave
    // user text alone).
    let last_user = outlines.iter().rposition(|o| o.starts_turn());
    // In a one-turn session the configured range already holds the only user message.
    let first_user = outlines.iter().position(|o| o.starts_turn());
    let last_call = outlines.iter().rposition(|o| matches!(o.shape, Shape::ToolCall { .. }));
    let Some(limit) = last_call.or(last_user).and_then(|i| i.checked_sub(1)) else {
        return levels;
    };
    let calls = outlines.iter().filter(|o| matches!(o.shape, Shape::ToolCall { .. })).count() as u64;
    let tail = |request: Request, gave_up: String, steps: &'static [Step]| Level {
        request: Request { end_by: Some(limit), ..request },
        gave_up: Some(gave_up),
        steps,
        keep: last_user.filter(|u| Some(*u) != first_user),
    };
    let kept_calls = profile.keep_recent_tools.filter(|t| calls > *t && *t > 0);
    let keep_last = config.compaction.keep_last;
    let protected = match kept_calls {
        Some(t) => format!("the last {} kept whole", plural(t, "tool call")),
        None => format!("the last {} kept", plural(keep_last, "turn")),
    };
    levels.push(tail(
        Request { keep_recent_tools: Some(0), ..request.clone() },
        format!("{protected}: their tool outputs truncated"),
        &[Step::Truncate],
    ));
    if let Some(t) = kept_calls {
        let mut n = t / 2;
        while n >= 1 {
            levels.push(tail(
                Request { keep_recent_tools: Some(n), ..request.clone() },
                format!("the last {} kept whole: only {n}", plural(t, "tool call")),
                &Step::ALL,
            ));
            n /= 2;
        }
    }
    for n in (1..keep_last).rev() {
        levels.push(tail(
            Request { keep_last: Some(n), ..request.clone() },
            format!("{protected}: only the last {} kept", plural(n, "turn")),
            &Step::ALL,
        ));
    }
    levels.push(tail(
        Request { keep_recent_tools: Some(0), ..request.clone() },
        format!("{protected}: only the last user message and the last tool call kept"),
        &Step::ALL,
    ));
    levels
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

/// `events` with `rung`'s compaction events appended, as planned with `id` at `ts`; a model
/// summary still to be written counts as empty.
fn applied(events: &[crate::event::Event], rung: &Rung, (id, ts): (&str, &str)) -> Vec<crate::event::Event> {
    let mut with = events.to_vec();
    for c in rung.compactions() {
        let top = std::ptr::eq(c, &rung.prepared.compaction);
        let mut c = c.clone();
        if top && rung.prepared.pending.is_some() && c.summary.is_none() {
            c.summary = Some(Summary { text: String::new(), by: String::new(), usage: None, agent_history: None });
        }
        let id = if top { id.to_owned() } else { under_id(id) };
        with.push(Record::Apply(c).to_draft().into_event(id, ts.into()));
    }
    with
}

/// The view before and after `rung`, both its events applied (a model summary once written
/// is estimated again with the step under it).
pub fn estimate(conversation: Conversation, rung: &Rung, at: (&str, &str)) -> Result<Estimate, PlanError> {
    let events = conversation.events.ok_or(PlanError::NeedsEvents { why: "a summary over part of the range" })?;
    Ok(projection::compare(&projection::project(events)?, &projection::project(&applied(events, rung, at))?))
}

/// A digest over only the oldest part of the range, with a cheaper step laid under it over
/// the whole range so the rest stays at that step's view rather than being digested: for
/// each cheaper step of the level, the digest's last event is the first (by bisection) at
/// which the two together fit, and the digest then takes what the budget leaves (filled
/// with the end of its part as it was, unless automatic compaction keeps that headroom).
/// Needs the events (a digest does).
fn layered(
    conversation: Conversation,
    attempt: &Attempt,
    request: &Request,
    steps: &[Step],
    budget: u64,
    (id, ts): (&str, &str),
    fits: &dyn Fn(&Rung) -> bool,
) -> Result<Vec<Rung>, PlanError> {
    let Some(events) = conversation.events else { return Ok(Vec::new()) };
    let before = projection::project(events)?;
    let outlines = &conversation.outlined.outlines;
    let index = |id: &str| outlines.iter().position(|o| o.id == id);
    let mut found = Vec::new();
    for &step in steps.iter().filter(|s| **s != Step::Summary) {
        let Some(under) = attempt(step, request, None, false)? else { continue };
        let under = Under { step, compaction: under.prepared.compaction };
        let (Some(first), Some(last)) = (index(&under.compaction.from_event), index(&under.compaction.to_event)) else {
            continue;
        };
        // The digest over events up to `end` on top of `under`, estimated together.
        let on_top = |end: usize, cap: Option<u64>, fill: bool| -> Result<Option<Rung>, PlanError> {
            let narrowed = Request { end_by: Some(request.end_by.map_or(end, |e| e.min(end))), ..request.clone() };
            let Some(top) = attempt(Step::Summary, &narrowed, cap, fill)? else { return Ok(None) };
            let mut rung = Rung { under: Some(under.clone()), ..top };
            rung.estimate = projection::compare(&before, &projection::project(&applied(events, &rung, (id, ts)))?);
            Ok(Some(rung))
        };
        let (mut lo, mut hi) = (first, last);
        let mut best = None;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match on_top(mid, Some(u64::MAX), false)? {
                Some(rung) if fits(&rung) => {
                    hi = index(&rung.prepared.compaction.to_event).unwrap_or(mid).min(mid);
                    best = Some(rung);
                }
                _ => lo = mid + 1,
            }
        }
        // Over the whole range the digest alone does what the summary step does already.
        let Some(mut rung) = best.filter(|r| r.prepared.compaction.to_event != under.compaction.to_event) else {
            continue;
        };
        // A model summary is bounded by `max_summary_tokens`, not by the room left.
        if !request.budget_headroom && rung.estimate.after < budget && rung.prepared.pending.is_none() {
            let end = index(&rung.prepared.compaction.to_event).unwrap_or(last);
            let text = rung.prepared.compaction.summary.as_ref().map_or(0, |s| s.text.chars().count() as u64);
            let mut cap = crate::event::tokens(text) + (budget - rung.estimate.after);
            // The estimate rounds per view, not per line: a few tries settle it.
            for _ in 0..4 {
                let Some(more) = on_top(end, Some(cap), true)? else { break };
                if more.estimate.after <= budget {
                    if more.estimate.after > rung.estimate.after
                        && more.prepared.compaction.to_event == rung.prepared.compaction.to_event
                    {
                        rung = more;
                    }
                    break;
                }
                cap = cap.saturating_sub(more.estimate.after - budget);
            }
        }
        found.push(rung);
    }
    Ok(found)
}

/// Of `single` (one compaction) and the `layered` ones, the one that keeps the most trail;
/// among equals, the one that spends the most of the budget, `single` first.
fn most_trail(
    conversation: Conversation,
    single: Rung,
    layered: Vec<Rung>,
    at: (&str, &str),
) -> Result<Rung, PlanError> {
    let mut best = (trail_kept(conversation, &single, at)?, single.estimate.after, single);
    for rung in layered {
        let key = (trail_kept(conversation, &rung, at)?, rung.estimate.after);
        if key > (best.0, best.1) {
            best = (key.0, key.1, rung);
        }
    }
    Ok(best.2)
}
