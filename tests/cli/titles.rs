//! Titles people recognise: an imported session is titled by its agent's own title or
//! summary, else by the first prompt its user typed (not a command's markup, its output, a
//! reminder, the agent's environment or instructions), one line cut at a word; never by
//! its file name. Subagents are titled by the call that started them.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

fn shared(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(path)
}

/// Import `file`; the title of each conversation it made (the main one, then its
/// subagents').
fn titles_of(env: &TestEnv, file: &Path) -> Vec<String> {
    let main = env.run(&["import", file.to_str().unwrap()]).ok().trim().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    rows.iter()
        .filter(|r| r["id"] == main.as_str() || r["subagent_of"] == main.as_str())
        .map(|r| r["title"].as_str().map_or("(none)".to_owned(), str::to_owned))
        .collect()
}

/// Import `text` as a file named `name`; its conversations' titles.
fn titles_of_text(env: &TestEnv, name: &str, text: &str) -> Vec<String> {
    let file = env.root.join(name);
    std::fs::write(&file, text).unwrap();
    titles_of(env, &file)
}

/// A Claude Code line of `kind` (`user`, `assistant`, or a record type) with `fields`.
fn claude(n: usize, kind: &str, fields: serde_json::Value) -> String {
    let mut line = serde_json::json!({
        "parentUuid": if n == 0 { None } else { Some(format!("u{}", n - 1)) },
        "isSidechain": false, "type": kind, "uuid": format!("u{n}"), "sessionId": "s",
        "timestamp": format!("2026-01-01T00:00:{n:02}Z"), "cwd": "/w", "gitBranch": "main",
    });
    for (k, v) in fields.as_object().unwrap() {
        line[k] = v.clone();
    }
    line.to_string()
}

fn user(n: usize, text: &str) -> String {
    claude(n, "user", serde_json::json!({"message": {"role": "user", "content": text}}))
}

fn assistant(n: usize, text: &str) -> String {
    claude(
        n,
        "assistant",
        serde_json::json!({"message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}),
    )
}

/// The real sessions of ../shared: what each is titled (the main conversation; its
/// subagents after it).
#[test]
fn corpus_sessions_are_titled_by_the_agent_or_the_first_real_prompt() {
    let env = TestEnv::new();
    let mut out = String::new();
    for file in [
        // The only prompt is `/orchestrator …` and its expansion (`isMeta`): the command line;
        // its subagents by their `Task` descriptions.
        "corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        // A `summary` record.
        "corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        // Prompts, then `/exit` with its caveat and output: the first prompt.
        "corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
        // A long first prompt, cut at a word.
        "corpus-current/claude-code/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        // `<environment_context>` first, then an IDE's context around the request.
        "corpus-current/codex/vibecodingtracker__codex-0.39.jsonl",
        "corpus/codex/agent-sessions__stage0_codex_small.SCHEMA-FIXTURE.jsonl",
        "corpus/openhands/openhands__tests_runtime_trajs__basic_gui_mode.json",
    ] {
        out += &format!("{}\n", Path::new(file).file_name().unwrap().to_str().unwrap());
        for title in titles_of(&env, &shared(file)) {
            out += &format!("  {title}\n");
        }
    }
    insta::assert_snapshot!(out, @r"
    ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl
      /orchestrator @CLAUDE.md を最新の状態にアップデートしてください
      /orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Check package configuration
      /orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Analyze current project structure
    ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl
      Empty Repo Setup: CLAUDE.md Foundation Created
      Empty Repo Setup: CLAUDE.md Foundation Created: Build TODO components
      Empty Repo Setup: CLAUDE.md Foundation Created: Setup Next.js project
      Empty Repo Setup: CLAUDE.md Foundation Created: Create data models
      Empty Repo Setup: CLAUDE.md Foundation Created: Implement state management
      Empty Repo Setup: CLAUDE.md Foundation Created: Create main page integration
    03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl
      Ok, so there's isn't much to see here, mostly one idea about how to organize…
    ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl
      OK, we're going to make a little experiment here. Pretend we have a list of…
    vibecodingtracker__codex-0.39.jsonl
      幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?
    agent-sessions__stage0_codex_small.SCHEMA-FIXTURE.jsonl
      List the files
    openhands__tests_runtime_trajs__basic_gui_mode.json
      I want to create a VueJS app that allows me to:
    ");
}

/// Each wrapper Claude Code puts in the user's place, before the user's first words.
#[test]
fn claude_code_wrappers_never_title_a_session() {
    let env = TestEnv::new();
    let wrappers = [
        (
            "command",
            user(
                0,
                "<command-message>init is running…</command-message>\n<command-name>/init</command-name>\n<command-args></command-args>",
            ),
        ),
        ("command output", user(0, "<local-command-stdout>See ya!</local-command-stdout>")),
        (
            "caveat",
            user(
                0,
                "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
            ),
        ),
        (
            "caveat element",
            user(
                0,
                "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>",
            ),
        ),
        (
            "reminder",
            user(0, "<system-reminder>\nThe user opened the file src/main.rs in the IDE.\n</system-reminder>"),
        ),
        (
            "meta line",
            claude(
                0,
                "user",
                serde_json::json!({"isMeta": true, "message": {"role": "user", "content": [{"type": "text", "text": "Split complex tasks into independent subtasks."}]}}),
            ),
        ),
    ];
    let mut out = String::new();
    for (n, (name, first)) in wrappers.iter().enumerate() {
        let text = [
            first.clone(),
            user(1, "<system-reminder>x</system-reminder>Port the parser to nom\nDetails follow."),
            assistant(2, "OK."),
        ]
        .join("\n");
        out += &format!("{name}: {:?}\n", titles_of_text(&env, &format!("w{n}.jsonl"), &text));
    }
    insta::assert_snapshot!(out, @r#"
    command: ["Port the parser to nom"]
    command output: ["Port the parser to nom"]
    caveat: ["Port the parser to nom"]
    caveat element: ["Port the parser to nom"]
    reminder: ["Port the parser to nom"]
    meta line: ["Port the parser to nom"]
    "#);
}

/// Claude Code's title records, in the order it shows them: the user's `/rename`
/// (`custom-title`, the last one), its generated `ai-title`, a `summary`; a prompt last.
#[test]
fn title_records_win_in_claude_codes_order() {
    let env = TestEnv::new();
    let custom = |n, t: &str| claude(n, "custom-title", serde_json::json!({"customTitle": t}));
    let ai = |n, t: &str| claude(n, "ai-title", serde_json::json!({"aiTitle": t}));
    let summary = |t: &str| serde_json::json!({"type": "summary", "summary": t, "leafUuid": "u0"}).to_string();
    let sessions = [
        ("prompt only", vec![user(0, "Fix the flaky test"), assistant(1, "Done.")]),
        ("summary", vec![summary("Flaky test fixed"), user(0, "Fix the flaky test"), assistant(1, "Done.")]),
        ("ai-title", vec![user(0, "Fix the flaky test"), ai(1, "Fix flaky test"), summary("Flaky test fixed")]),
        (
            "renamed twice",
            vec![
                custom(0, "first name"),
                user(1, "Fix the flaky test"),
                ai(2, "Fix flaky test"),
                custom(3, "flaky-test"),
            ],
        ),
    ];
    let mut out = String::new();
    for (n, (name, lines)) in sessions.iter().enumerate() {
        out += &format!("{name}: {:?}\n", titles_of_text(&env, &format!("r{n}.jsonl"), &(lines.join("\n") + "\n")));
    }
    insta::assert_snapshot!(out, @r#"
    prompt only: ["Fix the flaky test"]
    summary: ["Flaky test fixed"]
    ai-title: ["Fix flaky test"]
    renamed twice: ["flaky-test"]
    "#);
}

/// What Codex sends as the user before the user's words: its environment, the user's
/// instructions, AGENTS.md.
#[test]
fn codex_wrappers_never_title_a_session() {
    let env = TestEnv::new();
    let message = |text: &str| {
        serde_json::json!({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
        .to_string()
    };
    let lines = [
        serde_json::json!({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}})
            .to_string(),
        message("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nRun the tests.\n</INSTRUCTIONS>"),
        message("<user_instructions>\nBe brief.\n</user_instructions>"),
        message("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        message("\n\nWhy does the build take ten minutes? It used to take two."),
    ];
    insta::assert_snapshot!(format!("{:?}", titles_of_text(&env, "rollout.jsonl", &(lines.join("\n") + "\n"))), @r#"["Why does the build take ten minutes? It used to take two."]"#);
}

/// A session with no prompt of the user's has no title: not its file name (an id).
#[test]
fn a_session_without_a_prompt_is_untitled_not_named_after_its_file() {
    let env = TestEnv::new();
    let text = [user(0, "<local-command-stdout>See ya!</local-command-stdout>"), assistant(1, "Bye.")].join("\n");
    assert_eq!(titles_of_text(&env, "0b9f5c1e-6d0a-4c39-9a57-5a0d3c3b8e21.jsonl", &text), ["(none)"]);
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"* 01KDVDQ4 (untitled)  1 turn  2 events  ~14 tok  2026-01-01 00:00");
}
