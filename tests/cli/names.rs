//! Naming a conversation: by id or title, or a unique prefix of either, ids first; and
//! what `rename` says when its new title stops naming one.

use std::path::Path;

use crate::common::TestEnv;

const SESSION: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";

/// The conversation `show QUERY` shows (its title and id), or the error.
fn named(env: &TestEnv, query: &str) -> String {
    let out = env.run(&["show", query]);
    match out.code {
        0 => out.stdout.lines().next().unwrap_or_default().to_owned(),
        _ => env.transcript(&out),
    }
}

#[test]
fn a_unique_title_prefix_names_a_conversation_as_an_id_prefix_does() {
    let env = TestEnv::new();
    let refactor = env.new_conversation("Refactor the store");
    env.run(&["append", "--user", "refactor"]).ok();
    env.new_conversation("Release notes");
    env.run(&["append", "--user", "release"]).ok();
    // A title that starts like an id: the id prefix wins.
    env.new_conversation(&format!("{} look-alike", &refactor[..7]));
    env.run(&["append", "--user", "look-alike"]).ok();
    env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION).to_str().unwrap()]).ok();

    insta::assert_snapshot!(named(&env, "Ref"), @"Refactor the store 01KDVDQ4K00000000000000001");
    // Lower case matches either case (smart case, as ripgrep's); an upper-case letter asks
    // for it.
    insta::assert_snapshot!(named(&env, "rel"), @"Release notes 01KDVDTSS00000000000000001");
    assert_eq!(env.run(&["show", "rEL"]).code, 4);
    insta::assert_snapshot!(named(&env, &refactor[..7]), @"Refactor the store 01KDVDQ4K00000000000000001");
    insta::assert_snapshot!(named(&env, "01KDVDQ look"), @"01KDVDQ look-alike 01KDVDYEZ00000000000000001");
    // The session's subagents are titled after it: its title's prefix names the session, a
    // longer one a subagent.
    insta::assert_snapshot!(named(&env, "/orch"), @"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください 01KDVE24500000000000000001");
    insta::assert_snapshot!(named(&env, "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください: C"), @"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Check package configuration 01KDVE25000000000000000002");
    // Two that came from nowhere else: neither is named, both are listed.
    insta::assert_snapshot!(named(&env, "Re"), @r#"
    exit 4
    --- stderr
    error: `Re` is ambiguous: 2 conversations match
    hint: candidates: 01KDVDQ4K00000000000000001 "Refactor the store", 01KDVDTSS00000000000000001 "Release notes"
    "#);

    // Every command that takes a name takes a title prefix.
    env.run(&["switch", "ref"]).ok();
    insta::assert_snapshot!(env.run(&["show"]).ok().lines().next().unwrap(), @"Refactor the store 01KDVDQ4K00000000000000001");
    env.run(&["rename", "release", "Release notes, final"]).ok();
    env.run(&["rm", "Release notes, f"]).ok();
    assert_eq!(env.run(&["show", "rel"]).code, 4);
}

/// A title is a name only while no other conversation has it: taking one that is taken
/// works, and says so.
#[test]
fn rename_to_a_title_another_has_warns_and_still_renames() {
    let env = TestEnv::new();
    env.new_conversation("login bug");
    let second = env.new_conversation("login bug, part 2");
    let out = env.run(&["rename", &second, "login bug"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDRZ600000000000000001 3013ef1] rename: "login bug, part 2" -> "login bug"
    warning: another conversation is titled "login bug" too (01KDVDQ4): the title alone names none of them now
    "#);
    insta::assert_snapshot!(named(&env, "login bug"), @r#"
    exit 4
    --- stderr
    error: `login bug` is ambiguous: 2 conversations match
    hint: candidates: 01KDVDQ4K00000000000000001 "login bug", 01KDVDRZ600000000000000001 "login bug"
    "#);
}

/// `rename TITLE` renames the active conversation, which a forgotten argument also leads to
/// (`convo rename "login bug"`, meant as a name): a line says which conversation it was.
#[test]
fn rename_with_one_argument_says_which_conversation_it_renamed() {
    let env = TestEnv::new();
    env.new_conversation("login bug");
    let out = env.run(&["rename", "login bug, part 2"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 1d8892d] rename: "login bug" -> "login bug, part 2"
    renamed the active conversation 01KDVDQ4: "login bug" -> "login bug, part 2"
    "#);
    // Named explicitly, it needs no such line.
    let out = env.run(&["rename", "login", "login bug, part 3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 5ce3aa0] rename: "login bug, part 2" -> "login bug, part 3"
    "#);
}

/// The ids `list` shows (the first word of each line after the marker).
fn listed_ids(env: &TestEnv) -> Vec<String> {
    let listed = env.run(&["list"]).ok().to_owned();
    listed.lines().map(|line| line[2..].split(' ').next().unwrap().to_owned()).collect()
}

/// An import makes its conversations in one instant; each still gets an id that differs
/// from every other within 8 characters, so `list` shows ids people can type, and each one
/// shown names its conversation wherever an id does.
#[test]
fn an_imports_conversations_list_by_short_ids_every_command_takes() {
    let env = TestEnv::new();
    let other = "../shared/corpus/claude-code/ccviewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    for session in [SESSION, other] {
        env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(session).to_str().unwrap()]).ok();
    }
    env.new_conversation("made after");
    let shown = listed_ids(&env);
    assert_eq!(shown.len(), 10);
    for id in &shown {
        assert!(id.len() <= 8, "{id} is longer than 8 characters: {shown:?}");
    }
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    for (short, row) in shown.iter().zip(&rows) {
        let id = row["id"].as_str().unwrap();
        assert!(id.starts_with(short.as_str()), "{short} shown for {id}");
        let header = env.run(&["show", short]).ok().lines().next().unwrap().to_owned();
        assert!(header.ends_with(id), "show {short}: {header}");
        env.run(&["log", short]).ok();
        env.run(&["export", "--format", "markdown", short]).ok();
        env.run(&["switch", short]).ok();
        assert_eq!(env.run(&["list", "--format", "json"]).ok().matches("\"active\": true").count(), 1);
        env.run(&["resume", "--in", "claude-code", short]).ok();
        env.run(&["rename", short, &format!("renamed {short}")]).ok();
    }
    // Taken out and brought back by it too; ids made after the import are as short.
    let last = shown.last().unwrap();
    env.run(&["rm", last]).ok();
    env.run(&["restore", last]).ok();
    env.new_conversation("later still");
    assert!(listed_ids(&env).iter().all(|id| id.len() <= 8), "{:?}", listed_ids(&env));
}
