//! What operations need from the outside world, supplied by the CLI: API keys from the
//! environment, a yes/no on the terminal, a spinner while a model works, the user's hooks
//! around a compaction; and the one automatic-compaction path that follows a turn (`append`,
//! `query`).

use std::io::Write;
use std::time::Duration;

use convo::event::outline::Outlined;
use convo::ops::plan::Conversation;
use convo::ops::{self, HookDocument, HookFailure, Hooks, Planned, QueryError, Summarizer, SummaryJob};
use convo::render::{escape, thousands};
use convo::store::{Appended, Store};

use super::Ctx;
use super::command_error::CommandError;
use super::ui;

/// The value of environment variable `var` (an API key), read only when a call is made.
pub fn env_key(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Choices for a model summary from the command line.
#[derive(Default)]
pub struct SummaryChoice {
    pub model: Option<String>,
    pub focus: Option<String>,
    /// Skip the question before a large call.
    pub yes: bool,
    /// Apply a model summary even when it is no smaller than what it replaces.
    pub force: bool,
}

impl Ctx {
    /// [`ops::compact::compact`] with the terminal's question before a large call (unless
    /// `choice.yes`), a spinner while the model writes, and `hooks.pre_compact` and
    /// `hooks.post_compact` from `config` (which holds them only from the user's own layers).
    pub fn compact(
        &self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &convo::config::Resolved,
        planned: Planned,
        choice: &SummaryChoice,
    ) -> Result<(Appended, Planned), CommandError> {
        self.compact_or_why(store, id, conversation, config, planned, choice).map_err(|e: QueryError| e.into())
    }

    /// [`Ctx::compact`], with the library's error, for callers that decide by its kind.
    fn compact_or_why(
        &self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &convo::config::Resolved,
        planned: Planned,
        choice: &SummaryChoice,
    ) -> Result<(Appended, Planned), QueryError> {
        let mut spinner = None;
        let mut confirm = |job: &SummaryJob| {
            choice.yes
                || ui::confirm(&format!(
                    "Send ~{} tokens to {} to summarize?",
                    thousands(job.input_tokens),
                    job.model.name
                )) != Some(false)
        };
        let quiet = self.ui.quiet;
        let mut progress = |job: &SummaryJob, i: usize, n: usize| {
            let message = if n > 1 {
                format!("summarizing with {} ({}/{n})", job.model.name, i + 1)
            } else {
                format!("summarizing with {}", job.model.name)
            };
            match &spinner {
                Some(s) => indicatif::ProgressBar::set_message(s, message),
                None => spinner = ui::spinner(quiet, message),
            }
        };
        let hooks = &config.config.hooks;
        let timeout = Duration::from_secs(hooks.timeout_secs);
        let mut pre = |doc: &HookDocument| match &hooks.pre_compact {
            Some(command) if !command.trim().is_empty() => self.run_hook(command, doc, timeout),
            _ => Ok(String::new()),
        };
        let mut post = |doc: &HookDocument| {
            if let Some(command) = hooks.post_compact.as_deref().filter(|c| !c.trim().is_empty())
                && let Err(why) = self.run_hook(command, doc, timeout)
            {
                self.ui.warning(&format!("the post_compact hook {why}; the compaction has landed"));
            }
        };
        let mut summarizer = Summarizer {
            model: choice.model.as_deref(),
            focus: choice.focus.as_deref(),
            key: &env_key,
            confirm: &mut confirm,
            progress: &mut progress,
            hooks: Hooks { pre: &mut pre, post: &mut post },
            force: choice.force,
        };
        let result = ops::compact::compact(store, id, conversation, config, planned, &mut summarizer, &self.clock);
        if let Some(s) = spinner {
            s.finish_and_clear();
        }
        result
    }

    /// Run hook `command` with `doc` as JSON on stdin (see [`super::hooks`]): what it
    /// printed on stdout, or why it failed. Its stderr is the hook's word to the user: shown
    /// (escaped: it may quote stored text) when it failed, and unless --quiet when it did not.
    fn run_hook(&self, command: &str, doc: &HookDocument, timeout: Duration) -> Result<String, HookFailure> {
        // A document of plain strings and numbers always serialises.
        let mut input = serde_json::to_vec(doc).unwrap_or_default();
        input.push(b'\n');
        let outcome = super::hooks::run(command, &input, timeout)
            .map_err(|e| HookFailure::NotStarted { command: command.to_owned(), message: e.to_string() })?;
        let failure = outcome.failure();
        if !outcome.stderr.is_empty() && (failure.is_some() || !self.ui.quiet) {
            let text = String::from_utf8_lossy(&outcome.stderr);
            let mut err = self.ui.stderr();
            let _ = write!(err, "{}", escape(&text));
            if !text.ends_with('\n') {
                let _ = writeln!(err);
            }
        }
        match failure {
            Some(why) => Err(why),
            None => Ok(String::from_utf8_lossy(&outcome.stdout).into_owned()),
        }
    }

    /// After a turn: with `compaction.auto.enabled`, compact when the conversation nears
    /// `model`'s (or llm.model's) context window ([`ops::compact::auto_plan`]), through the
    /// same path as `compact` (hooks included; no question before a summary call), and say
    /// so unless --quiet. It never fails the turn, which has landed: a model summary that
    /// fails falls back to the digest, and anything else that goes wrong is a warning.
    /// Enabled is checked first without the conversation's own `config` events, which would
    /// cost a read of every event on each append.
    pub fn auto_compact(&self, store: &Store, id: &str, model: Option<&str>) -> Result<(), CommandError> {
        if let Err(e) = self.try_auto_compact(store, id, model) {
            self.ui.warning(&format!("automatic compaction failed: {}; the turn is recorded", e.message));
        }
        Ok(())
    }

    fn try_auto_compact(&self, store: &Store, id: &str, model: Option<&str>) -> Result<(), CommandError> {
        let quick = self.config_quietly(store, &[])?;
        if !quick.config.compaction.auto.enabled {
            return Ok(());
        }
        let events = store.events(id)?;
        let outlined = Outlined::of(&events);
        let conversation = Conversation::full(&outlined, &events);
        let config = self.config(store, &events)?;
        let window = convo::llm::resolve_model(&config.config, model).ok().and_then(|m| m.context_window);
        let Some(planned) = ops::compact::auto_plan(conversation, &config, window, &self.clock)? else {
            return Ok(());
        };
        self.apply_automatic(store, id, conversation, &config, planned)
    }

    /// Before a request that would not fit the window (or after the server said it did
    /// not): with `compaction.auto.enabled`, compact until the view is under `budget`, as
    /// automatic compaction does (its profile, its digest fallback), and say so. `false`:
    /// compaction is off, or nothing was left to compact.
    pub fn compact_to_fit(&self, store: &Store, id: &str, budget: u64, why: &str) -> Result<bool, CommandError> {
        let events = store.events(id)?;
        let config = self.config(store, &events)?;
        if !config.config.compaction.auto.enabled {
            return Ok(false);
        }
        let label = format!("what fits the window ({why})");
        let outlined = Outlined::of(&events);
        let conversation = Conversation::full(&outlined, &events);
        let Some(planned) = ops::compact::plan_under(conversation, &config, budget, label, &self.clock)? else {
            return Ok(false);
        };
        self.apply_automatic(store, id, conversation, &config, planned)?;
        Ok(true)
    }

    /// Apply a compaction automatic compaction planned: a model summary that fails falls
    /// back to the digest; say what was done.
    fn apply_automatic(
        &self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &convo::config::Resolved,
        planned: Planned,
    ) -> Result<(), CommandError> {
        let choice = SummaryChoice { yes: true, ..Default::default() };
        let summarizing = planned.prepared.pending.is_some();
        let (appended, planned) = match self.compact_or_why(store, id, conversation, config, planned, &choice) {
            Ok(done) => done,
            // A hook's veto is the user's word, not a fault to work around.
            Err(e) if summarizing && !matches!(e, QueryError::Ops(ops::OpsError::Vetoed { .. })) => {
                let Some(fallback) = ops::compact::auto_fallback(conversation, config, &self.clock)? else {
                    return Err(e.into());
                };
                let why = CommandError::from(e).message;
                self.note(&format!("automatic summary failed ({why}): compacting with a digest instead"));
                self.compact(store, id, conversation, config, fallback, &choice)?
            }
            Err(e) => return Err(e.into()),
        };
        let c = &planned.prepared.compaction;
        let step = planned.ladder.as_ref().map(|l| format!(" by {}", l.chosen().step.name())).unwrap_or_default();
        self.note(&format!(
            "[context compacted{step}: turns {}-{}, ~{} -> ~{} tokens]",
            c.from_turn,
            c.to_turn,
            thousands(planned.estimate.before),
            thousands(planned.estimate.after)
        ));
        self.ui.landed(&appended.landed);
        Ok(())
    }

    /// A provider body with no `model` (none given, no llm.model) cannot be sent as it is:
    /// say so rather than print it silently incomplete.
    pub fn warn_if_no_model(&self, body: &serde_json::Value) {
        if body.get("model").is_none_or(serde_json::Value::is_null) {
            self.ui.warning("the body names no model: --model or llm.model sets one");
        }
    }
}
