//! What operations need from the outside world, supplied by the CLI: API keys from the
//! environment, a yes/no on the terminal, a spinner while a model works, the user's hooks
//! around a compaction, the user's layers for automatic compaction ([`ops::auto`]), and how
//! each is said.

use std::io::Write;
use std::time::Duration;

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

    /// After a turn: automatic compaction ([`ops::auto::after_turn`]), said unless --quiet.
    /// It never fails the turn, which has landed: anything that goes wrong is a warning.
    pub fn auto_compact(&self, store: &Store, id: &str, model: Option<&str>) -> Result<(), CommandError> {
        let done = self
            .automatic(store)
            .and_then(|mut apply| Ok(ops::auto::after_turn(store, id, model, &mut apply, &self.clock)?));
        match done {
            Ok(Some(compacted)) => self.report_automatic(compacted),
            Ok(None) => {}
            Err(e) => self.ui.warning(&format!("automatic compaction failed: {}; the turn is recorded", e.message)),
        }
        Ok(())
    }

    /// What automatic compaction needs from here: the user's layers (read once) and the
    /// compaction path with its hooks, asking nothing.
    pub fn automatic(&self, store: &Store) -> Result<Automatic<'_>, CommandError> {
        let base = self.base_layers()?;
        let trusted = super::store_trusted(store.root(), &convo::config::trusted_stores(&base));
        Ok(Automatic { ctx: self, base, trusted })
    }

    /// `[context compacted …]`, after the fallback's reason when a summary failed.
    pub fn report_automatic(&self, compacted: ops::auto::Compacted) {
        if let Some(e) = compacted.fell_back {
            let why = CommandError::from(e).message;
            self.note(&format!("automatic summary failed ({why}): compacting with a digest instead"));
        }
        let planned = &compacted.planned;
        let c = &planned.prepared.compaction;
        let step = planned.ladder.as_ref().map(|l| format!(" by {}", l.chosen().step.name())).unwrap_or_default();
        // A tail given up to fit is said here too, not only in the commit message.
        let gave_up = planned
            .ladder
            .as_ref()
            .and_then(|l| l.gave_up.as_deref())
            .map(|g| format!("; gave up {g}"))
            .unwrap_or_default();
        self.note(&format!(
            "[context compacted{step}: turns {}-{}, ~{} -> ~{} tokens{gave_up}]",
            c.from_turn,
            c.to_turn,
            thousands(planned.estimate.before),
            thousands(planned.estimate.after)
        ));
        self.ui.landed(&compacted.appended.landed);
    }

    /// A provider body with no `model` (none given, no llm.model) cannot be sent as it is:
    /// say so rather than print it silently incomplete.
    pub fn warn_if_no_model(&self, body: &serde_json::Value) {
        if body.get("model").is_none_or(serde_json::Value::is_null) {
            self.ui.warning("the body names no model: --model or llm.model sets one");
        }
    }
}

/// [`ops::auto::Apply`] from the CLI.
pub struct Automatic<'a> {
    ctx: &'a Ctx,
    base: Vec<convo::config::Layer>,
    trusted: bool,
}

impl ops::auto::Apply for Automatic<'_> {
    fn config(&self, store: &Store, events: &[convo::event::Event]) -> Result<convo::config::Resolved, ops::OpsError> {
        let resolved = ops::resolve_config(store, events, &self.base, self.trusted)?;
        self.ctx.warn_ignored(&resolved.ignored);
        Ok(resolved)
    }

    fn compact(
        &mut self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &convo::config::Resolved,
        planned: Planned,
    ) -> Result<(Appended, Planned), QueryError> {
        let choice = SummaryChoice { yes: true, ..Default::default() };
        self.ctx.compact_or_why(store, id, conversation, config, planned, &choice)
    }
}
