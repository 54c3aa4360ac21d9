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
//! Pure, like planning: events in, a ladder out.

use chrono::{DateTime, Utc};

use crate::compaction::{ReasoningPolicy, Summary, ToolCallPolicy};
use crate::config::Config;
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
    pub estimate: Estimate,
}

/// The steps tried for a budget, and the one chosen.
#[derive(Debug, Clone)]
pub struct Ladder {
    pub budget: u64,
    /// The view's estimated tokens now.
    pub now: u64,
    pub rungs: Vec<Rung>,
    /// The first rung that fits; with none, the one that gets closest, and `fits` is false.
    pub chosen: usize,
    pub fits: bool,
}

impl Ladder {
    pub fn chosen(&self) -> &Rung {
        &self.rungs[self.chosen]
    }
}

/// Try the steps in order on `events` until one brings the view under `budget` tokens (with
/// `all`, try every step, for `--dry-run`). The compaction event would be `id` at `ts`. A
/// model summary still to be written counts as empty, so its estimate is a lower bound.
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
    let mut rungs: Vec<Rung> = Vec::new();
    let mut chosen = None;
    for step in Step::ALL {
        let prepared = plan::place(conversation, config, request, &name, step.choice(request, profile), now)?;
        let mut candidate = prepared.compaction.clone();
        if prepared.pending.is_some() {
            candidate.summary =
                Some(Summary { text: String::new(), by: String::new(), usage: None, agent_history: None });
        }
        let estimate = plan::estimate(conversation, &candidate, id, ts)?;
        let fits = estimate.after <= budget;
        rungs.push(Rung { step, prepared, estimate });
        if fits && chosen.is_none() {
            chosen = Some(rungs.len() - 1);
            if !all {
                break;
            }
        }
    }
    let fits = chosen.is_some();
    // When none fits, the step that gets closest; never one that would make the view larger
    // (a digest of a tiny range can be longer than the range).
    let chosen = match chosen {
        Some(i) => i,
        None => {
            let (i, best) = rungs
                .iter()
                .enumerate()
                .min_by_key(|(_, r)| r.estimate.after)
                .map(|(i, r)| (i, r.estimate.after))
                .unwrap_or((0, tokens_now));
            if best >= tokens_now {
                return Err(PlanError::NothingInRange {
                    why: format!("no step makes the view (~{} tokens) smaller", thousands(tokens_now)),
                });
            }
            i
        }
    };
    Ok(Ladder { budget, now: tokens_now, chosen, rungs, fits })
}
