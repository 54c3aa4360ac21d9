//! `list`, `log --oneline` and `show` for people: lines that fit the terminal (or
//! `COLUMNS`), ids by their shortest unique prefix, and where a conversation came from (a
//! subagent's work, a fork) shown.

use std::path::Path;

use crate::common::TestEnv;

const SESSION: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";

/// Terminal columns of a line without colour (the titles here are ASCII and escapes, plus
/// the one-column markers `└`, `⑂` and `…`).
fn columns(line: &str) -> usize {
    line.chars().count()
}

fn with_columns(env: &TestEnv, columns: &str, args: &[&str]) -> String {
    let mut cmd = env.command(args);
    cmd.env("COLUMNS", columns);
    crate::common::run_command(cmd, "").ok().to_owned()
}

/// Three conversations with titles longer than any terminal, one with a C1 character and a
/// bidi override where a cut may fall.
fn long_titles() -> TestEnv {
    let env = TestEnv::new();
    env.new_conversation("Refactor the session store so that appends never rewrite a closed segment");
    env.run(&["append", "--user", "Go."]).ok();
    env.new_conversation("short");
    env.new_conversation(
        "escapes \u{9b}\u{9b}\u{9b}\u{9b}\u{9b} and \u{202e}\u{202e}\u{202e} in a title that runs on and on",
    );
    env
}

#[test]
fn list_fits_80_columns_cutting_titles_and_dropping_columns() {
    let env = long_titles();
    let at_80 = with_columns(&env, "80", &["list"]);
    for line in at_80.lines() {
        assert!(columns(line) <= 80, "{} columns: {line}", columns(line));
    }
    insta::assert_snapshot!(at_80, @"
      01KDVDQ4 Refactor the session store so tha…   1 turn  ~1 tok  2026-01-01 00:02
      01KDVDTS short                               0 turns  ~0 tok  2026-01-01 00:03
    * 01KDVDWM escapes <U+009B><U+009B><U+009B>…   0 turns  ~0 tok  2026-01-01 00:04
    ");
    // Narrower: fewer columns, shorter titles.
    insta::assert_snapshot!(with_columns(&env, "40", &["list"]), @"
      01KDVDQ4 Refactor the session store s…
      01KDVDTS short
    * 01KDVDWM escapes <U+009B><U+009B>…
    ");
    // Piped with no COLUMNS: whole titles and every column, for scripts.
    let whole = env.run(&["list"]).ok().to_owned();
    let line = whole.lines().next().unwrap();
    assert!(line.contains("never rewrite a closed segment ") && line.contains(" 1 event "), "{whole}");
}

/// A new user's first `list` says how conversations get into a store; a script reading
/// stdout still reads nothing.
#[test]
fn list_of_an_empty_store_hints_how_to_begin() {
    let env = TestEnv::new();
    insta::assert_snapshot!(env.transcript(&env.run(&["list"])), @"
    exit 0
    --- stderr
    hint: no conversations yet: `convo new` starts one
    hint: `convo watch` imports your Claude Code, Codex, Gemini CLI and opencode sessions as they are written
    hint: `convo clone URL` copies a store you keep elsewhere
    ");
    assert_eq!(env.run(&["list", "--format", "json"]).ok(), "[]\n");
    assert_eq!(env.run(&["-q", "list"]).stderr, "");
    env.new_conversation("first");
    assert_eq!(env.run(&["list"]).stderr, "");
}

/// Wherever the width makes the cut fall, an escape marker is shown whole or not at all.
#[test]
fn title_cuts_never_split_an_escape_marker() {
    let env = long_titles();
    let marker = regex::Regex::new(r"<U\+[0-9A-F]{4}>").unwrap();
    for width in 30..=90 {
        let listed = with_columns(&env, &width.to_string(), &["list"]);
        let line = listed.lines().find(|l| l.contains("escapes")).unwrap();
        assert!(columns(line) <= width.max(40), "at {width}: {line}");
        let markers = marker.replace_all(line, "");
        assert!(!markers.contains("<U") && !markers.contains("+00") && !markers.contains("202E"), "at {width}: {line}");
    }
}

/// A terminal's own width counts when stdout is one (`script` makes one, `stty` sizes it;
/// a terminal with no rows set has no size).
#[test]
fn list_on_a_terminal_fits_its_width() {
    let env = long_titles();
    let convo = env!("CARGO_BIN_EXE_convo");
    let mut script = env.sealed("script");
    script
        .args(["-qec", &format!("stty rows 24 cols 60; {convo} --color never --no-pager list"), "/dev/null"])
        .env("CONVO_DIR", &env.store)
        // The terminal's width wins over a COLUMNS left in the environment.
        .env("COLUMNS", "200");
    let out = crate::common::run_command(script, "");
    let text = out.ok().replace('\r', "");
    for line in text.lines() {
        assert!(columns(line) <= 60, "{} columns: {line}", columns(line));
    }
    insta::assert_snapshot!(text, @"
      01KDVDQ4 Refactor the session store so that appen…  ~1 tok
      01KDVDTS short                                      ~0 tok
    * 01KDVDWM escapes <U+009B><U+009B><U+009B><U+009B>…  ~0 tok
    ");
}

#[test]
fn log_oneline_fits_80_columns() {
    let env = long_titles();
    env.run(&["switch", "Refactor the session store so that appends never rewrite a closed segment"]).ok();
    env.run(&["compact", "--to", "0", "-p", "strip"]).ok();
    let at_80 = with_columns(&env, "80", &["log", "--oneline"]);
    for line in at_80.lines() {
        assert!(columns(line) <= 80, "{} columns: {line}", columns(line));
    }
    insta::assert_snapshot!(at_80, @r#"
    c8de95b 2026-01-01 compact: "Refactor the session store so that appends never r…
    8ce7d04 2026-01-01 append: "Refactor the session store so that appends never r…
    e09803a 2026-01-01 new: "Refactor the session store so that appends never r…"
    "#);
    let whole = env.run(&["log", "--oneline"]).ok().to_owned();
    assert!(whole.lines().all(|l| l.ends_with("(chars/4)]")), "{whole}");
}

/// Conversations made in one command share all but the last character of their ULIDs: each
/// is shown by the prefix that tells it from every other, and that prefix names it.
#[test]
fn ids_show_by_their_shortest_unique_prefix() {
    let env = TestEnv::new();
    env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION).to_str().unwrap()]).ok();
    env.new_conversation("later");
    let listed = env.run(&["list"]).ok().to_owned();
    insta::assert_snapshot!(listed, @"
      01KDVDQ4 /orchestrator @CLAUDE.md を最新の状態にアップデートしてください                                       2 turns  31 events  ~5,885 tok  2025-09-07 09:54
      01KDVDQ5 └ /orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Check package configuration         1 turn   7 events    ~715 tok  2025-09-07 09:52
      01KDVDQ6 └ /orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Analyze current project structure   1 turn  15 events  ~4,000 tok  2025-09-07 09:53
    * 01KDVDRZ later                                                                                                 0 turns   0 events      ~0 tok  2026-01-01 00:02
    ");
    // With colour the unique part is highlighted (bold yellow), the rest of the column dim.
    let coloured = env.run(&["--color", "always", "list"]).ok().to_owned();
    let unique = regex::Regex::new("\x1b\\[1;33m([0-9A-Z]+)\x1b\\[0m").unwrap();
    let prefixes: Vec<&str> = unique.captures_iter(&coloured).map(|c| c.get(1).unwrap().as_str()).collect();
    insta::assert_snapshot!(prefixes.join(" "), @"01KDVDQ4 01KDVDQ5 01KDVDQ6 01KDVDR");
    for prefix in prefixes {
        let out = env.run(&["show", prefix, "--format", "jsonl"]);
        assert_eq!(out.code, 0, "{prefix} does not name one conversation: {}", out.stderr);
        let shorter = &prefix[..prefix.len() - 1];
        if shorter.len() >= 4 {
            assert_eq!(env.run(&["show", shorter]).code, 4, "{shorter} is unique: {prefix} is not the shortest");
        }
    }
}

/// A Claude Code session with subagents: each subagent's conversation is listed under its
/// parent, marked `└`; `show` names the parent; `list --format json` has `subagent_of`.
#[test]
fn subagent_import_shows_its_parent() {
    let env = TestEnv::new();
    let out = env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION).to_str().unwrap()]);
    let parent = out.ok().trim().to_owned();
    env.new_conversation("unrelated");
    insta::assert_snapshot!(with_columns(&env, "100", &["list"]), @"
      01KDVDQ4 /orchestrator @CLAUDE.md を最新の状態…  2 turns  31 events  ~5,885 tok  2025-09-07 09:54
      01KDVDQ5 └ /orchestrator @CLAUDE.md を最新の状…   1 turn   7 events    ~715 tok  2025-09-07 09:52
      01KDVDQ6 └ /orchestrator @CLAUDE.md を最新の状…   1 turn  15 events  ~4,000 tok  2025-09-07 09:53
    * 01KDVDRZ unrelated                               0 turns   0 events      ~0 tok  2026-01-01 00:02
    ");
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let subagents: Vec<&serde_json::Value> = rows.iter().filter(|r| r["subagent_of"] == parent.as_str()).collect();
    assert_eq!(subagents.len(), 2, "{rows:#?}");
    assert!(rows.iter().all(|r| r.get("forked_from").is_some()));
    let child = subagents[0]["id"].as_str().unwrap();
    let shown = env.run(&["show", child]).ok().to_owned();
    insta::assert_snapshot!(shown.lines().take(3).collect::<Vec<_>>().join("\n"), @r#"
    /orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Check package configuration 01KDVDQ5000000000000000002
    1 turn, 7 events, ~715 tokens (chars/4)
    subagent of 01KDVDQ4 "/orchestrator @CLAUDE.md を最新の状態にアップデー…"
    "#);
}

/// A fork is listed under its source, marked `⑂`, and `show` says from where and which turn.
#[test]
fn fork_shows_where_it_came_from() {
    let env = TestEnv::new();
    env.new_conversation("original");
    env.run(&["append", "--user", "one"]).ok();
    env.run(&["append", "--user", "two"]).ok();
    env.new_conversation("between");
    env.run(&["fork", "original", "--last", "1", "--title", "the copy"]).ok();
    insta::assert_snapshot!(env.run(&["list"]).ok(), @"
      01KDVDQ4 original    2 turns  2 events  ~2 tok  2026-01-01 00:03
    * 01KDVDYE ⑂ the copy   1 turn   1 event  ~1 tok  2026-01-01 00:03
      01KDVDWM between     0 turns  0 events  ~0 tok  2026-01-01 00:04
    ");
    insta::assert_snapshot!(env.run(&["show"]).ok().lines().take(3).collect::<Vec<_>>().join("\n"), @r#"
    the copy 01KDVDYEZ00000000000000001
    1 turn, 1 event, ~1 tokens (chars/4)
    forked from 01KDVDQ4 "original" at turn 1
    "#);
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let fork = rows.iter().find(|r| r["title"] == "the copy").unwrap();
    insta::assert_snapshot!(fork["forked_from"].to_string(), @r#"{"id":"01KDVDQ4K00000000000000001","turn":1}"#);
}
