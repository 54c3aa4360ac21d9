//! `compact`: plan a compaction from a profile, flags and a range; have a model write its
//! summary when the profile asks for one; append it as one commit; or withdraw one (`--undo`).
//! Also the automatic compaction that follows a turn.

use crate::clock::Clock;
use crate::compaction::{Compaction, Record, Summary, TokenUsage, Tokens, digest, summary};
use crate::config::Resolved;
use crate::event::outline::Outlined;
use crate::event::trail::Trail;
use crate::event::{Event, Kind};
use crate::ops::budget;
use crate::ops::plan::{self, Conversation, PlanError, Prepared, Request};
use crate::projection;
use crate::projection::Estimate;
use crate::store::subject;
use crate::store::{Appended, Store, Subject, Transaction};

use super::query::{QueryError, endpoint};
use super::{OpsError, Result};

/// A compaction worked out but not yet appended, with what it would save.
#[derive(Debug, Clone)]
pub struct Planned {
    pub prepared: Prepared,
    pub estimate: Estimate,
    /// With a budget: every step tried, and which was chosen.
    pub ladder: Option<crate::ops::budget::Ladder>,
    /// The id and timestamp the compaction event will have.
    pub id: String,
    pub ts: String,
    /// With a budget: the cap at which the model's summary was cut off, when convo's digest
    /// was written in its place (see [`compact`]).
    pub digest_stood_in: Option<u64>,
}

impl Planned {
    /// A budget's cheaper step laid under a summary that covers only the oldest part of the
    /// range: a second compaction event in the same commit ([`budget`]).
    pub fn under(&self) -> Option<&budget::Under> {
        self.ladder.as_ref().and_then(|l| l.choice.under.as_ref())
    }

    /// The compaction events it appends, in order, with their ids (the one under a summary
    /// has a planning id until it is appended).
    pub fn compactions(&self) -> Vec<(String, &Compaction)> {
        let under = self.under().map(|u| (budget::under_id(&self.id), &u.compaction));
        under.into_iter().chain([(self.id.clone(), &self.prepared.compaction)]).collect()
    }

    /// The first and last turn it covers, both events together.
    pub fn turns(&self) -> (u64, u64) {
        let c = &self.prepared.compaction;
        let u = self.under().map(|u| &u.compaction);
        (c.from_turn.min(u.map_or(c.from_turn, |u| u.from_turn)), c.to_turn.max(u.map_or(c.to_turn, |u| u.to_turn)))
    }

    /// Its policies in words: one compaction's, or a summary's over the oldest part and the
    /// step under it.
    pub fn describe(&self) -> String {
        let c = &self.prepared.compaction;
        match self.under() {
            Some(u) => format!("{} over the oldest part, {} under it", c.describe(), u.compaction.describe()),
            None => c.describe(),
        }
    }
}

/// Work out the compaction `request` asks for, without writing anything (`--dry-run`).
pub fn plan_compaction(
    conversation: Conversation,
    config: &Resolved,
    request: &Request,
    clock: &Clock,
) -> Result<Planned> {
    plan_with(conversation, config, request, clock, false)
}

/// The events a plan read because it needed their text (a digest, a truncation), outlined
/// with them, so plan and compaction see one HEAD.
pub type Read = Option<(Outlined, Vec<Event>)>;

/// Plan from the outline index, and again from the events when the plan needs their text
/// ([`PlanError::NeedsEvents`]): what `compact` and the MCP `compact` tool plan with. The
/// conversation the plan was made from is [`conversation`] of `outlined` and the [`Read`].
pub fn plan_outlined(
    store: &Store,
    id: &str,
    outlined: &Outlined,
    config: &Resolved,
    request: &Request,
    clock: &Clock,
    every_step: bool,
) -> Result<(Planned, Read)> {
    // One id and time for both tries: the compaction event is the same whichever plan lands.
    let (event, now) = ((clock.new_id(), clock.timestamp()), clock.now());
    match plan_as(Conversation::outlined(outlined), config, request, event.clone(), now, every_step) {
        Err(OpsError::Plan(PlanError::NeedsEvents { .. })) => {
            let events = store.events(id)?;
            let full = Outlined::of(&events);
            let planned = plan_as(Conversation::full(&full, &events), config, request, event, now, every_step)?;
            Ok((planned, Some((full, events))))
        }
        planned => Ok((planned?, None)),
    }
}

/// The conversation a [`plan_outlined`] plan was made from.
pub fn conversation<'a>(outlined: &'a Outlined, read: &'a Read) -> Conversation<'a> {
    match read {
        Some((outlined, events)) => Conversation::full(outlined, events),
        None => Conversation::outlined(outlined),
    }
}

/// [`plan_compaction`]; with `every_step`, a budget's ladder tries every step (`--dry-run`
/// shows them all) but still chooses the first that fits.
pub fn plan_with(
    conversation: Conversation,
    config: &Resolved,
    request: &Request,
    clock: &Clock,
    every_step: bool,
) -> Result<Planned> {
    plan_as(conversation, config, request, (clock.new_id(), clock.timestamp()), clock.now(), every_step)
}

/// [`plan_with`] for a compaction event that will be `id` at `ts`: planning again (with
/// the events, after outlines were not enough) plans the same event.
pub fn plan_as(
    conversation: Conversation,
    config: &Resolved,
    request: &Request,
    (id, ts): (String, String),
    now: chrono::DateTime<chrono::Utc>,
    every_step: bool,
) -> Result<Planned> {
    if let Some(budget) = request.budget {
        let ladder = budget::climb(conversation, &config.config, request, budget, (&id, &ts), now, every_step)?;
        let rung = ladder.chosen().clone();
        if !ladder.fits && !request.closest_over_budget {
            let c = &rung.prepared.compaction;
            let mut how = format!("{} over turns {}-{}", rung.step.name(), c.from_turn, c.to_turn);
            if let Some(gave_up) = &ladder.gave_up {
                how.push_str(&format!(", giving up {gave_up}"));
            }
            return Err(PlanError::OverBudget { budget, now: ladder.now, smallest: rung.estimate.after, how }.into());
        }
        return Ok(Planned {
            prepared: rung.prepared,
            estimate: rung.estimate,
            ladder: Some(ladder),
            id,
            ts,
            digest_stood_in: None,
        });
    }
    let prepared = plan::prepare(conversation, &config.config, request, now)?;
    // A summary still to be written counts as empty: the estimate is a lower bound until then.
    let mut candidate = prepared.compaction.clone();
    if prepared.pending.is_some() {
        candidate.summary = Some(Summary { text: String::new(), by: String::new(), usage: None, agent_history: None });
    }
    let estimate = plan::estimate(conversation, &candidate, &id, &ts)?;
    Ok(Planned { prepared, estimate, ladder: None, id, ts, digest_stood_in: None })
}

/// A summary for a model to write: the model, the instructions, and the raw events of the
/// range as transcript chunks that each fit the model's window.
pub struct SummaryJob {
    pub model: crate::llm::Model,
    pub instructions: String,
    pub chunks: Vec<String>,
    /// Estimated tokens sent, all calls together.
    pub input_tokens: u64,
    /// The cap on each answer: `compaction.max_summary_tokens`, within the model's
    /// `max_output_tokens`.
    pub max_tokens: u64,
    /// The trail of the range the hand-off must keep: what it leaves out is asked for once
    /// more before it is stored.
    pub trail: Trail,
    /// With a budget that fits: the tokens it leaves the summary, past which no answer is
    /// asked for (the retry of one cut off included), so the view stays within it.
    pub room: Option<u64>,
}

/// Work out the summary `planned` still needs. `model` (a flag) wins over the profile's
/// `summary.model`, which wins over `llm.model`.
pub fn summary_job(
    events: &[Event],
    planned: &Planned,
    config: &Resolved,
    model: Option<&str>,
    focus: Option<&str>,
) -> Result<SummaryJob> {
    let pending = planned.prepared.pending.as_ref().ok_or_else(|| OpsError::Invalid("no summary to write".into()))?;
    let name = model.map(str::to_owned).or_else(|| pending.model.clone());
    let model = crate::llm::resolve_model(&config.config, name.as_deref())?;
    let instructions = summary::instructions(pending.instructions.as_deref(), focus);
    let c = &planned.prepared.compaction;
    // The range's own events where they are found (a range may end inside a turn, as a
    // budget's summary over only the oldest part does), else its turns.
    let at = |id: &str| events.iter().position(|e| e.id == id);
    let span = at(&c.from_event).zip(at(&c.to_event)).filter(|(a, b)| a <= b).map(|(a, b)| a..=b);
    let turns = match &span {
        Some(span) => summary::transcript_of(events, span.clone()),
        None => summary::transcript(events, (c.from_turn, c.to_turn)),
    };
    // Leave 40% of the window for the instructions, the answer and the estimate's error.
    // (Never below 1 KiB a chunk, however small the window claims to be.)
    let max_chars = model
        .context_window
        .map(|w| ((w as f64 * 0.6) as usize).saturating_mul(4).saturating_sub(instructions.len()).max(1024));
    let chunks = summary::chunks(&turns, max_chars);
    let chars: usize = chunks.iter().map(|c| c.len() + instructions.len()).sum();
    let max_tokens = config.config.compaction.max_summary_tokens.min(model.max_output_tokens).max(1);
    let turns = crate::event::turn_numbers(events);
    let in_range: Vec<&Event> = events
        .iter()
        .zip(&turns)
        .enumerate()
        .filter(|(i, (_, t))| match &span {
            Some(span) => span.contains(i),
            None => t.is_some_and(|t| (c.from_turn..=c.to_turn).contains(&t)),
        })
        .map(|(_, (e, _))| e)
        .collect();
    let trail = Trail::worth_keeping(in_range.iter().copied());
    let room = planned.ladder.as_ref().filter(|l| l.fits).map(|l| l.budget.saturating_sub(planned.estimate.after));
    let max_tokens = room.map_or(max_tokens, |r| max_tokens.min(r).max(1));
    let input_tokens = crate::event::tokens(chars as u64);
    Ok(SummaryJob { model, instructions, chunks, input_tokens, max_tokens, trail, room })
}

/// Have the model write the summary: one call per chunk, then one to combine them, then
/// (when the hand-off leaves out part of the range's trail) one asking for what it left out,
/// as Gemini CLI's second pass does. An empty answer is an error like any other fault:
/// nothing is written (but a failed second pass leaves the first answer). One that does
/// not shrink the view is refused by the caller.
pub fn write_summary(
    job: &SummaryJob,
    endpoint: &crate::llm::client::Endpoint,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(String, TokenUsage), QueryError> {
    let ask = |instructions: &str, text: &str, usage: &mut TokenUsage| -> Result<String, QueryError> {
        let message = |kind| Event { id: "m".into(), ts: String::new(), kind, extra: Default::default() };
        let view =
            [message(Kind::System { content: instructions.into() }), message(Kind::User { content: text.into() })];
        let mut cap = job.max_tokens;
        let mut retried = false;
        let reply = loop {
            let body = crate::llm::request_body(&job.model, &view, false, cap);
            let reply = endpoint.complete(&body, &mut |_| {}, &|| false)?;
            usage.add(&reply.usage);
            if !reply.truncated() {
                break reply;
            }
            // Cut off: never stored as a summary. Once, a larger cap where the window has
            // room for it beside what is sent (and the model can write it).
            let sent = crate::event::tokens((instructions.len() + text.len()) as u64);
            let room = job.model.context_window.map_or(u64::MAX, |w| w.saturating_sub(sent));
            let larger =
                cap.saturating_mul(2).min(job.model.max_output_tokens).min(room).min(job.room.unwrap_or(u64::MAX));
            if retried || larger <= cap {
                return Err(QueryError::SummaryTruncated { model: job.model.name.clone(), max_tokens: cap, retried });
            }
            cap = larger;
            retried = true;
        };
        let text = reply.text.trim().to_owned();
        if text.is_empty() {
            return Err(crate::llm::client::LlmError::Malformed {
                endpoint: job.model.name.clone(),
                message: "the model returned an empty summary".into(),
            }
            .into());
        }
        Ok(text)
    };
    let mut usage = TokenUsage::default();
    let total = job.chunks.len() + usize::from(job.chunks.len() > 1);
    let mut parts = Vec::new();
    for (i, chunk) in job.chunks.iter().enumerate() {
        progress(i, total);
        parts.push(ask(&job.instructions, chunk, &mut usage)?);
    }
    let mut text = if parts.len() == 1 {
        parts.remove(0)
    } else {
        progress(total - 1, total);
        let numbered: Vec<String> = parts.iter().enumerate().map(|(i, p)| format!("Part {}:\n{p}", i + 1)).collect();
        ask(summary::COMBINE_INSTRUCTIONS, &numbered.join("\n\n"), &mut usage)?
    };
    let missing = job.trail.missing_from(&text);
    if !missing.is_empty() {
        progress(total, total + 1);
        let shown = &missing[..missing.len().min(SECOND_PASS_ITEMS)];
        // Best effort: the first answer is whole, so a second pass that fails (cut off,
        // empty, a fault on the way) leaves it as it is.
        if let Ok(fuller) = ask(summary::SECOND_PASS_INSTRUCTIONS, &summary::second_pass(&text, shown), &mut usage) {
            text = fuller;
        }
    }
    Ok((text, usage))
}

/// Convo's digest of `c`'s range within `max_tokens`: what stands in for a model's summary
/// cut off under a budget.
fn digest_over(events: &[Event], c: &Compaction, max_tokens: u64) -> String {
    let turns = crate::event::turn_numbers(events);
    let at = |id: &str| events.iter().position(|e| e.id == id);
    let span = match at(&c.from_event).zip(at(&c.to_event)).filter(|(a, b)| a <= b) {
        Some((a, b)) => a..b + 1,
        None => {
            let within = |t: &Option<u64>| t.is_some_and(|t| (c.from_turn..=c.to_turn).contains(&t));
            let a = turns.iter().position(within).unwrap_or(0);
            let b = turns.iter().rposition(within).map_or(a, |b| b + 1);
            a..b
        }
    };
    digest::fitted(&events[span.clone()], &turns[span], max_tokens)
}

/// At most this many left-out items are named in a second pass (a range may hold hundreds).
const SECOND_PASS_ITEMS: usize = 40;

/// Put a written summary into the planned compaction and estimate it anew.
pub fn fill_summary(
    conversation: Conversation,
    planned: &mut Planned,
    text: String,
    usage: TokenUsage,
    by: &str,
) -> Result<()> {
    // Nothing reported: no usage, rather than zeros that read as real.
    let usage = Some(usage).filter(|u| !u.is_empty());
    planned.prepared.compaction.summary = Some(Summary { text, by: by.to_owned(), usage, agent_history: None });
    planned.prepared.pending = None;
    planned.estimate = match planned.ladder.as_mut().filter(|l| l.choice.under.is_some()) {
        // The step under it counts too: the view is both together.
        Some(ladder) => {
            ladder.choice.prepared = planned.prepared.clone();
            budget::estimate(conversation, &ladder.choice, (&planned.id, &planned.ts))?
        }
        None => plan::estimate(conversation, &planned.prepared.compaction, &planned.id, &planned.ts)?,
    };
    Ok(())
}

/// Append a planned compaction as one commit:
/// `compact: "fix login" turns 0-9 [strip reasoning, strip tool calls] ~48,210 -> 9,874 tokens`.
pub fn apply_compaction(
    store: &Store,
    tx: Transaction<'_>,
    conversation: &str,
    planned: &Planned,
    clock: &Clock,
) -> Result<Appended> {
    if planned.prepared.pending.is_some() {
        return Err(OpsError::Invalid("the profile summarizes with a model: use `convo compact --summarize`".into()));
    }
    let c = &planned.prepared.compaction;
    let title = store.meta(conversation)?.title;
    let mut covers = c.clone();
    (covers.from_turn, covers.to_turn) = planned.turns();
    let mut text = subject::compaction(&line(conversation, title.as_deref(), &covers, &planned.estimate), None);
    if planned.under().is_some() {
        // `line` describes one compaction: say both.
        text = text.replacen(&c.describe(), &planned.describe(), 1);
    }
    // A budget that gave up part of the protected tail says so where the history is read.
    if let Some(gave_up) = planned.ladder.as_ref().and_then(|l| l.gave_up.as_deref()) {
        text.push_str(&format!(" (budget: gave up {gave_up})"));
    }
    let e = &planned.estimate;
    let mut drafts = Vec::new();
    // A cheaper step under a summary over the oldest part: appended first, at the same time
    // (so the summary, later in the stream, is on top), and undone with the summary.
    if let Some(under) = planned.under() {
        let recorded = Compaction { laid_with: Some(planned.id.clone()), ..under.compaction.clone() };
        let mut draft = Record::Apply(recorded).to_draft();
        draft.id = Some(clock.new_id());
        draft.ts = Some(planned.ts.clone());
        drafts.push(draft);
    }
    let recorded = Compaction { tokens: Some(Tokens { before: e.before, after: e.after }), ..c.clone() };
    let mut draft = Record::Apply(recorded).to_draft();
    draft.id = Some(planned.id.clone());
    draft.ts = Some(planned.ts.clone());
    drafts.push(draft);
    let subject = Subject { text, compaction: Some(planned.id.clone()) };
    Ok(store.append_as(tx, conversation, drafts, clock, Some(subject))?)
}

fn line(id: &str, title: Option<&str>, c: &Compaction, e: &Estimate) -> subject::CompactionLine {
    subject::CompactionLine {
        name: subject::name(id, title),
        from_turn: c.from_turn,
        to_turn: c.to_turn,
        policies: c.describe(),
        tokens_before: e.before,
        tokens_after: e.after,
    }
}

/// What `compact --undo` withdrew.
pub struct Undone {
    pub appended: Appended,
    pub target: String,
    pub compaction: Compaction,
    pub estimate: Estimate,
}

/// Which conversation and which compaction `compact [ID] --undo [TARGET]` means: with no
/// conversation named, a target that names no compaction in force in the active
/// conversation but names a conversation is that conversation (`compact --undo ID`, the
/// flag's optional value taking the id), its latest compaction the one withdrawn.
pub fn undo_target(store: &Store, id: Option<&str>, target: Option<&str>) -> Result<(String, Option<String>)> {
    if let (None, Some(t)) = (id, target) {
        let names_compaction = match store.resolve_or_active(None) {
            Ok(active) => projection::in_force(&store.events(&active)?)?.iter().any(|c| c.id.starts_with(t)),
            // No active conversation: nothing a compaction id could name.
            Err(_) => false,
        };
        if !names_compaction && let Ok(conversation) = store.resolve(t) {
            return Ok((conversation, None));
        }
    }
    Ok((store.resolve_or_active(id)?, target.map(str::to_owned)))
}

/// Withdraw compaction `target` (an id or unique prefix; default: the latest in force) by
/// appending a revocation. Nothing is deleted.
pub fn undo_compaction(
    store: &Store,
    tx: Transaction<'_>,
    conversation: &str,
    target: Option<&str>,
    clock: &Clock,
) -> Result<Undone> {
    let events = store.events(conversation)?;
    let in_force = projection::in_force(&events)?;
    let chosen = match target {
        None => in_force.last().ok_or(OpsError::NothingToUndo)?,
        Some(prefix) => {
            let matches: Vec<_> = in_force.iter().filter(|c| c.id.starts_with(prefix)).collect();
            match matches.as_slice() {
                [one] => *one,
                [] => {
                    let in_force = in_force.iter().map(|c| c.id.clone()).collect();
                    return Err(OpsError::NoSuchCompaction { prefix: prefix.to_owned(), in_force });
                }
                _ => {
                    let candidates = matches.iter().map(|c| c.id.clone()).collect();
                    return Err(OpsError::AmbiguousCompaction { prefix: prefix.to_owned(), candidates });
                }
            }
        }
    };
    // The compactions laid in one commit (a summary and the step under it) go together,
    // whichever of them is named; the subject names the one on top. `laid_with` is what an
    // event claims (a pulled one may name any compaction): it pairs two events only when
    // one commit added both, as the trees say.
    let mut added = std::collections::HashMap::new();
    let mut laid_together = |under: &projection::InForce, top: &str| -> Result<bool> {
        if under.compaction.laid_with.as_deref() != Some(top) {
            return Ok(false);
        }
        let mut commit = |id: &str| -> Result<Option<gix::ObjectId>> {
            if let Some(c) = added.get(id) {
                return Ok(*c);
            }
            let c = store.commit_adding(conversation, id)?;
            added.insert(id.to_owned(), c);
            Ok(c)
        };
        let under_commit = commit(&under.id)?;
        Ok(under_commit.is_some() && under_commit == commit(top)?)
    };
    let top = match &chosen.compaction.laid_with {
        Some(with) => match in_force.iter().find(|c| c.id == *with) {
            Some(top) if laid_together(chosen, &top.id)? => top,
            _ => chosen,
        },
        None => chosen,
    };
    let mut together = Vec::new();
    for c in &in_force {
        if c.id == top.id || laid_together(c, &top.id)? {
            together.push(c);
        }
    }
    // The id first, then the time, as for any one revocation.
    let (mut id, ts) = (Some(clock.new_id()), clock.timestamp());
    let mut drafts = Vec::new();
    for c in together.iter().rev() {
        let mut draft = Record::Revoke { target: c.id.clone() }.to_draft();
        draft.id = Some(id.take().unwrap_or_else(|| clock.new_id()));
        draft.ts = Some(ts.clone());
        drafts.push(draft);
    }
    let before = projection::project(&events)?;
    let mut with = events.clone();
    with.extend(drafts.iter().map(|d| d.clone().into_event(String::new(), ts.clone())));
    let estimate = projection::compare(&before, &projection::project(&with)?);
    let mut c = top.compaction.clone();
    for other in &together {
        c.from_turn = c.from_turn.min(other.compaction.from_turn);
        c.to_turn = c.to_turn.max(other.compaction.to_turn);
    }
    let title = store.meta(conversation)?.title;
    let mut text = subject::compaction(&line(conversation, title.as_deref(), &c, &estimate), Some(&top.id));
    if let Some(under) = together.iter().find(|u| u.id != top.id) {
        let both = format!("{} over the oldest part, {} under it", c.describe(), under.compaction.describe());
        text = text.replacen(&c.describe(), &both, 1);
    }
    let appended = store.append_as(tx, conversation, drafts, clock, Some(Subject { text, compaction: None }))?;
    Ok(Undone { appended, target: top.id.clone(), compaction: top.compaction.clone(), estimate })
}

/// What compacting needs from the caller: its choices for a model summary, the outside
/// world the library does not reach itself, and the user's hooks.
pub struct Summarizer<'a> {
    /// `--model`, over the profile's `summary.model`, over `llm.model`.
    pub model: Option<&'a str>,
    /// Something the summary must pay particular attention to.
    pub focus: Option<&'a str>,
    /// The value of the environment variable named, read when the call is made.
    pub key: &'a dyn Fn(&str) -> Option<String>,
    /// Asked before a call larger than `compaction.confirm_above_tokens`; `false` stops
    /// with nothing written.
    pub confirm: &'a mut dyn FnMut(&SummaryJob) -> bool,
    /// Call `i` of `n` is about to be made.
    pub progress: &'a mut dyn FnMut(&SummaryJob, usize, usize),
    /// `hooks.pre_compact` and `hooks.post_compact`, run by the caller.
    pub hooks: Hooks<'a>,
    /// Apply a model summary even when it is no smaller than what it replaces.
    pub force: bool,
}

/// The user's commands around a compaction (`hooks.*`), which the caller runs: the library
/// runs no process. Each gets a [`HookDocument`].
pub struct Hooks<'a> {
    /// Before anything is summarized or written. `Err(why)` vetoes the compaction: nothing
    /// is written. `Ok(text)`: what the hook printed, added to a model summary's focus.
    pub pre: &'a mut dyn FnMut(&HookDocument) -> Result<String, HookFailure>,
    /// After the commit. It cannot fail the compaction, which has landed: what goes wrong
    /// is the caller's to report.
    pub post: &'a mut dyn FnMut(&HookDocument),
}

/// Why a hook failed, to follow "the pre_compact hook".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookFailure {
    #[error("could not be started (`sh -c {command}`): {message}")]
    NotStarted { command: String, message: String },
    #[error("exited with status {0}")]
    Exited(i32),
    #[error("was killed by signal {0}")]
    Killed(i32),
    #[error("timed out after {}", humantime::format_duration(*.0))]
    TimedOut(std::time::Duration),
}

/// Which hook a [`HookDocument`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookPoint {
    PreCompact,
    PostCompact,
}

impl HookPoint {
    /// Its config key under `hooks.`: `pre_compact`.
    pub fn name(self) -> &'static str {
        match self {
            HookPoint::PreCompact => "pre_compact",
            HookPoint::PostCompact => "post_compact",
        }
    }
}

/// What a compaction hook reads on stdin, as JSON. Token estimates before a model summary is
/// written count it as empty (a lower bound, as `--dry-run` shows).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookDocument {
    pub hook: HookPoint,
    pub conversation: String,
    pub title: Option<String>,
    pub range: HookRange,
    /// [`Compaction::describe`]: `strip reasoning, strip tool calls`.
    pub policies: String,
    pub profile: Option<String>,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The compaction's commit (post_compact only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// A budget's summary over only the oldest part of the range (`range`, `policies`) lays
    /// a cheaper step under it over the whole range, in the same commit: that step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under: Option<HookPart>,
}

/// The cheaper step under a summary in a [`HookDocument`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookPart {
    pub range: HookRange,
    pub policies: String,
}

/// A compaction's range in a [`HookDocument`]: turns for people, event ids for programs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookRange {
    pub from_turn: u64,
    pub to_turn: u64,
    pub from_event: String,
    pub to_event: String,
}

impl HookDocument {
    fn of(hook: HookPoint, conversation: &str, title: Option<String>, planned: &Planned) -> HookDocument {
        let c = &planned.prepared.compaction;
        let range = |c: &Compaction| HookRange {
            from_turn: c.from_turn,
            to_turn: c.to_turn,
            from_event: c.from_event.clone(),
            to_event: c.to_event.clone(),
        };
        HookDocument {
            hook,
            conversation: conversation.to_owned(),
            title,
            range: range(c),
            under: planned.under().map(|u| HookPart { range: range(&u.compaction), policies: u.compaction.describe() }),
            policies: c.describe(),
            profile: c.profile.clone(),
            tokens_before: planned.estimate.before,
            tokens_after: planned.estimate.after,
            commit: None,
        }
    }
}

/// Write the summary a planned compaction still needs, then append the compaction under the
/// store's lock. The model is called without the lock held: the compaction covers its range
/// by event ids, so turns appended meanwhile do not disturb it. What `compact`,
/// `fork --compact` and `query --compact` run. The pre_compact hook runs first, before the
/// question and any call (so a veto costs nothing); post_compact after the lock is released
/// (so a hook may run convo itself).
pub fn compact(
    store: &Store,
    id: &str,
    conversation: Conversation,
    config: &Resolved,
    mut planned: Planned,
    summarizer: &mut Summarizer<'_>,
    clock: &Clock,
) -> Result<(Appended, Planned), QueryError> {
    let title = store.meta(id)?.title;
    let pre = HookDocument::of(HookPoint::PreCompact, id, title.clone(), &planned);
    let said =
        (summarizer.hooks.pre)(&pre).map_err(|why| OpsError::Vetoed { hook: HookPoint::PreCompact.name(), why })?;
    if planned.prepared.pending.is_some() {
        let focus = [summarizer.focus.unwrap_or_default(), said.trim()]
            .into_iter()
            .filter(|f| !f.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let focus = Some(focus.as_str()).filter(|f| !f.is_empty());
        // The range's text, which outlines do not hold.
        let read;
        let events = match conversation.events {
            Some(events) => events,
            None => {
                read = store.events(id)?;
                &read
            }
        };
        let job = summary_job(events, &planned, config, summarizer.model, focus)?;
        let limit = config.config.compaction.confirm_above_tokens;
        if job.input_tokens > limit && !(summarizer.confirm)(&job) {
            return Err(OpsError::Declined.into());
        }
        let endpoint = endpoint(&job.model, summarizer.key)?;
        let written = write_summary(&job, &endpoint, &mut |i, n| (summarizer.progress)(&job, i, n));
        // Planned with an empty summary: what the range leaves behind. The summary is what
        // filling it adds; the range, what emptying it took away.
        let (before, emptied) = (planned.estimate.before, planned.estimate.after);
        let (text, usage, by) = match (written, job.room) {
            (Ok((text, usage)), _) => (text, usage, job.model.name.clone()),
            // Under a budget the room is all the summary may take: a model that writes past
            // it (small ones write until any cap) gets convo's digest over the same part in
            // its place, fitted to that room, as automatic compaction falls back to it.
            (Err(QueryError::SummaryTruncated { max_tokens, .. }), Some(room)) => {
                planned.digest_stood_in = Some(max_tokens);
                (digest_over(events, &planned.prepared.compaction, room), TokenUsage::default(), digest::BY.into())
            }
            (Err(e), _) => return Err(e),
        };
        fill_summary(Conversation { events: Some(events), ..conversation }, &mut planned, text, usage, &by)?;
        if planned.estimate.after >= before && !summarizer.force {
            return Err(OpsError::SummaryNotSmaller {
                model: job.model.name.clone(),
                summary: planned.estimate.after.saturating_sub(emptied),
                replaced: before.saturating_sub(emptied),
            }
            .into());
        }
    }
    let appended = apply_compaction(store, store.transaction()?, id, &planned, clock)?;
    let mut post = HookDocument::of(HookPoint::PostCompact, id, title, &planned);
    post.commit = Some(appended.commit.to_string());
    (summarizer.hooks.post)(&post);
    Ok((appended, planned))
}

/// After a turn: when `compaction.auto` is enabled, the projected view passes
/// `trigger_ratio` of the model's window and there are more than `min_turns` turns, the
/// least compaction that brings the view back under that mark, from a budget ladder (see
/// [`budget`]) over what is not compacted yet (`--from last`) with `compaction.auto.profile`:
/// the cheap steps first, a model summary only when they are not enough and the profile asks
/// for one. `None` when it does not fire (or cannot: the window is unknown) or nothing is
/// left to compact.
pub fn auto_plan(
    conversation: Conversation,
    config: &Resolved,
    context_window: Option<u64>,
    clock: &Clock,
) -> Result<Option<Planned>> {
    let auto = &config.config.compaction.auto;
    let Some(window) = context_window.filter(|_| auto.enabled) else { return Ok(None) };
    let turns = conversation.outlined.outlines.iter().filter(|o| o.starts_turn()).count() as u64;
    if turns <= auto.min_turns {
        return Ok(None);
    }
    let budget = (window as f64 * auto.trigger_ratio) as u64;
    plan_under(
        conversation,
        config,
        budget,
        format!("compaction.auto.trigger_ratio = {} of {window}", auto.trigger_ratio),
        clock,
    )
}

/// The least compaction (automatic compaction's ladder and profile, over what is not
/// compacted yet) that brings the view under `budget`, `label` naming where the budget came
/// from; `None` when it is under already or nothing is left to compact. Used where a
/// request would not fit the window, before it is sent or after the server says so.
pub fn plan_under(
    conversation: Conversation,
    config: &Resolved,
    budget: u64,
    label: String,
    clock: &Clock,
) -> Result<Option<Planned>> {
    let auto = &config.config.compaction.auto;
    let request = Request {
        profile: Some(auto.profile.clone()),
        from: Some("last".into()),
        budget: Some(budget),
        budget_label: Some(label),
        closest_over_budget: true,
        budget_headroom: true,
        ..Default::default()
    };
    match plan_compaction(conversation, config, &request, clock) {
        Ok(planned) => Ok(Some(planned)),
        // Under the mark, or nothing left to compact: not an error.
        Err(OpsError::Plan(PlanError::Range(_) | PlanError::NothingInRange { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What automatic compaction falls back to when the model summary it chose fails: convo's
/// own digest over the same range, which needs no network.
pub fn auto_fallback(conversation: Conversation, config: &Resolved, clock: &Clock) -> Result<Option<Planned>> {
    let auto = &config.config.compaction.auto;
    let request =
        Request { profile: Some(auto.profile.clone()), from: Some("last".into()), digest: true, ..Default::default() };
    match plan_compaction(conversation, config, &request, clock) {
        Ok(planned) => Ok(Some(planned)),
        Err(OpsError::Plan(PlanError::Range(_) | PlanError::NothingInRange { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}
