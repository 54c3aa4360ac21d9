//! `grep`: hits agree with grep(1) run over the same decoded text, whole outputs for each
//! form, the filters, the compacted view, and refusals.

use std::collections::BTreeMap;
use std::process::Command;

use convo::event::parse_stored;
use convo::ops::search::searched_text;

use crate::common::TestEnv;

const SESSION: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";

/// A store with an imported Claude Code session and two hand-made conversations.
fn store() -> TestEnv {
    let env = TestEnv::new();
    let session = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION);
    env.run(&["import", session.to_str().unwrap()]).ok();
    env.new_conversation("login bug");
    let lines = [
        r#"{"type":"user","content":"fix the \"login\" bug\nplease, the file is src/login.rs"}"#,
        r#"{"type":"reasoning","content":"The login file has 128 lines; look for the error."}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"Bash","arguments":{"cmd":"grep -rn login src/","timeout":120}}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"src/login.rs:3: fn login() -> Result<(), Error>\nsrc/main.rs:9: login()?;"}"#,
        r#"{"type":"assistant","content":"Fixed the Login error in src/login.rs."}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    env.new_conversation("other");
    env.run(&["append", "--user", "Nothing to see: a.b and aXb, 404 and 500."]).ok();
    env
}

/// Each conversation's decoded text, one file per conversation, an event's text after the
/// other: what grep(1) is run over.
fn texts(env: &TestEnv, dir: &std::path::Path) -> BTreeMap<String, std::path::PathBuf> {
    let listed: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut files = BTreeMap::new();
    for row in listed {
        let id = row["id"].as_str().unwrap().to_owned();
        let stored = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
        let mut text = String::new();
        for event in parse_stored(&stored).unwrap() {
            if let Some(t) = searched_text(&event) {
                text += &t;
                text.push('\n');
            }
        }
        let path = dir.join(&id);
        std::fs::write(&path, text).unwrap();
        files.insert(id, path);
    }
    files
}

#[test]
fn counts_agree_with_grep_over_the_same_text() {
    let env = store();
    let dir = tempfile::tempdir().unwrap();
    let files = texts(&env, dir.path());
    // Patterns both regex dialects read alike; flags both tools have.
    let cases: [&[&str]; 9] = [
        &["login"],
        &["-i", "login"],
        &["-w", "login"],
        &["-i", "-w", "the"],
        &["error|warning"],
        &["[0-9]{3}"],
        &["-F", "a.b"],
        &["-F", "\""],
        &["-i", "-F", "README"],
    ];
    for case in cases {
        let (flags, pattern) = case.split_at(case.len() - 1);
        let mut expected = BTreeMap::new();
        for (id, path) in &files {
            let mut grep = Command::new("grep");
            grep.arg("-c").args(if flags.contains(&"-F") { None } else { Some("-E") }).args(flags);
            grep.arg("--").arg(pattern[0]).arg(path);
            let out = grep.output().unwrap();
            let n: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
            if n > 0 {
                expected.insert(id.clone(), n);
            }
        }
        let mut args = vec!["grep", "-c"];
        args.extend_from_slice(case);
        let run = env.run(&args);
        let got: BTreeMap<String, usize> = run
            .stdout
            .lines()
            .map(|l| {
                let (id, n) = l.split_once('\t').unwrap();
                (id.to_owned(), n.parse().unwrap())
            })
            .collect();
        assert_eq!(got, expected, "convo grep -c {case:?} against grep -c -E");
        assert_eq!(run.code, if expected.is_empty() { 1 } else { 0 }, "{case:?}");
        assert!(!expected.is_empty() || case == ["-i", "-F", "README"], "{case:?} should match somewhere");
    }
}

#[test]
fn hits_show_conversation_turn_type_and_the_matching_text() {
    let env = store();
    let login = env.run(&["list", "--format", "json"]).ok().to_owned();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&login).unwrap();
    let id = rows.iter().find(|r| r["title"] == "login bug").unwrap()["id"].as_str().unwrap().to_owned();
    let mut all = String::new();
    for args in [
        vec!["grep", "login", &id],
        vec!["grep", "-i", "-w", "login", "login bug", "--type", "assistant,tool_result"],
        vec!["grep", "--tool", "Bash", "-F", "120", &id],
        vec!["grep", "bug\\nplease", &id],
        vec!["grep", "-l", "[0-9]{3}"],
        vec!["grep", "--format", "json", "-F", "\"login\""],
        vec!["grep", "-c", "--format", "json", "login"],
        vec!["grep", "--since", "1h", "login", &id],
        vec!["grep", "--until", "2000-01-01", "login", &id],
        vec!["grep", "nowhere"],
        vec!["grep", "(unclosed"],
        vec!["grep", "--since", "yesterday-ish", "x"],
    ] {
        let run = env.run(&args);
        all += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&run));
    }
    insta::assert_snapshot!("grep_forms", all);
}

#[test]
fn compacted_search_sees_what_an_llm_is_sent() {
    let env = store();
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let id = rows.iter().find(|r| r["title"] == "login bug").unwrap()["id"].as_str().unwrap().to_owned();
    let tests = [
        r#"{"type":"tool_call","call_id":"c2","name":"Bash","arguments":{"cmd":"cargo test login"}}"#,
        r#"{"type":"tool_result","call_id":"c2","content":"running 2 tests\ntest login::accepts_short ... ok\ntest login::rejects_long ... FAILED\nerror: test failed","is_error":true}"#,
    ];
    env.run_stdin(&["append", &id], &(tests.join("\n") + "\n")).ok();
    let before = env.run(&["grep", "-c", "login", &id]).ok().to_owned();
    env.run(&["compact", &id, "--to", "0", "--tools", "strip", "--reasoning", "strip", "--min-bytes", "0"]).ok();
    // The raw events are as they were; the view lost the stripped calls, result and reasoning.
    assert_eq!(env.run(&["grep", "-c", "login", &id]).ok(), before);
    let compacted = env.run(&["grep", "--compacted", "login", &id]).ok().to_owned();
    // The stripped result is searched as its placeholder reads: a command's first line that
    // reads like an error is part of it. The grep's output, which its placeholder would not
    // shorten, is searched as it is.
    let results: Vec<&str> = compacted.lines().filter(|l| l.contains("tool_result")).collect();
    assert_eq!(results.len(), 3, "{compacted}");
    assert!(results[..2].iter().all(|l| !l.contains("[compacted")), "{compacted}");
    assert!(results[2].contains("[compacted …") && results[2].contains("rejects_long ... FAILED"), "{compacted}");
    assert!(!compacted.contains("reasoning"), "{compacted}");
    assert!(compacted.contains("user") && compacted.contains("assistant"), "{compacted}");
    let stripped = env.run(&["grep", "--compacted", "-F", "] error — test login::rejects_long", &id]);
    assert_eq!(stripped.code, 0, "the status line a stripped result reads is what is searched");
}

/// A store with one debugging session: two failed tool results, the word `login` in a
/// result, an answer and the next question.
fn session() -> (TestEnv, String) {
    let env = TestEnv::new();
    let id = env.new_conversation("ci fails");
    let lines = [
        r#"{"type":"user","content":"the build fails on CI"}"#,
        r#"{"type":"assistant","content":"Let me look."}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"Bash","arguments":{"cmd":"cargo build"}}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"error[E0425]: cannot find value `x`\n1 error","is_error":true}"#,
        r#"{"type":"assistant","content":"A typo; fixing it."}"#,
        r#"{"type":"tool_call","call_id":"c2","name":"Edit","arguments":{"path":"src/lib.rs"}}"#,
        r#"{"type":"tool_result","call_id":"c2","content":"ok"}"#,
        r#"{"type":"user","content":"and the tests?"}"#,
        r#"{"type":"tool_call","call_id":"c3","name":"Bash","arguments":{"cmd":"cargo test"}}"#,
        r#"{"type":"tool_result","call_id":"c3","content":"test login ... FAILED\n1 failed","is_error":true}"#,
        r#"{"type":"assistant","content":"One test fails: login."}"#,
        r#"{"type":"user","content":"fix login please"}"#,
        r#"{"type":"assistant","content":"Done."}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    (env, id)
}

/// -A, -B and --context show the events around each hit as grep shows context lines: `:`
/// after a hit's turn, `-` after an event around one, `--` between groups that are not next
/// to each other; an event is shown once however many hits need it. In JSON, an event shown
/// around a hit says so (`"context": true`).
#[test]
fn context_flags_show_the_events_around_each_hit() {
    let (env, id) = session();
    let mut all = String::new();
    for args in [
        vec!["grep", "-A", "1", "cargo", &id],
        vec!["grep", "-B", "2", "E0425", &id],
        vec!["grep", "--context", "1", "login", &id],
        vec!["grep", "--context", "1", "--type", "user", "fix", &id],
        vec!["grep", "-A", "0", "-B", "0", "cargo"],
        vec!["grep", "--format", "json", "-B", "1", "One test"],
        vec!["grep", "-c", "-A", "1", "cargo"],
    ] {
        let run = env.run(&args);
        all += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&run));
    }
    insta::assert_snapshot!("grep_context", all);
}

/// --failed searches only the tool results that reported an error; alone it shows every
/// one of them, with a pattern only those that match, and it goes with the other flags.
#[test]
fn failed_finds_the_tool_results_that_reported_an_error() {
    let (env, id) = session();
    let mut all = String::new();
    for args in [
        vec!["grep", "--failed"],
        vec!["grep", "--failed", "FAILED"],
        vec!["grep", "--failed", "typo"],
        vec!["grep", "--failed", "-c"],
        vec!["grep", "--failed", "-B", "1", "", &id],
        vec!["grep", "--failed", "--format", "json", "-i", "e0425"],
        vec!["grep"],
    ] {
        let run = env.run(&args);
        all += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&run));
    }
    insta::assert_snapshot!("grep_failed", all);
}

/// Hit lines fit the terminal as `list`'s do: with `COLUMNS` set (or on a terminal) the
/// heading's title and each hit's text are cut with `…`, counted in terminal columns (a CJK
/// character takes two, a tab shows as a space); piped with no `COLUMNS`, lines are whole.
#[test]
fn hit_lines_fit_the_terminal_width() {
    let env = TestEnv::new();
    env.new_conversation("日本語のタイトル: a title long enough to need cutting at fifty columns");
    let lines = [
        r#"{"type":"user","content":"ログインのエラーを直してください。needle はこのあたり、そのあとも長く続く文です。"}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"Bash","arguments":{"cmd":"grep -rn needle src/ | sort | uniq -c | sort -rn | head -n 100"}}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"src/a.rs:1:\tlet needle = \"x\";\t\t// and a long comment after it"}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    let at = |width: &str| {
        let mut cmd = env.command(&["grep", "needle"]);
        cmd.env("COLUMNS", width);
        crate::common::run_command(cmd, "").ok().to_owned()
    };
    for width in [50, 64] {
        let out = at(&width.to_string());
        for line in out.lines() {
            let columns: usize = line.chars().map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)).sum();
            assert!(columns <= width && !line.contains('\t'), "{columns} columns at {width}: {line}");
        }
    }
    insta::assert_snapshot!(at("50"), @r#"
    01KDVDQ4K00000000000000001 日本語のタイトル: a ti…
          0  user             …てください。needle は…
          0  tool_call Bash   grep -rn needle src/ | …
          0  tool_result Bash …a.rs:1: let needle = "…
    "#);
    // Piped, no COLUMNS: every line whole.
    let whole = env.run(&["grep", "needle"]).ok().to_owned();
    assert!(whole.contains("at fifty columns\n") && whole.contains("head -n 100\n"), "{whole}");
}
