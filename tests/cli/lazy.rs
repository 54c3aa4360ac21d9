//! Lazy clones (issue 43, `sync::lazy`): `clone --lazy` takes a hub's catalog and no
//! conversation; `list` reads the catalog; a command that reads a conversation fetches it
//! first, once, and says so; `pull` updates what was fetched (its push: `lazy_push.rs`); a
//! conversation ref that holds anything but the conversation the catalog lists is refused.

use std::path::{Path, PathBuf};

use crate::common::{Served, TestEnv, TwoPeople, conversation_dir, fan, two_people, two_people_on_disk};
use crate::hostile_remotes::{blob, git_in, git_str, read_tree, with_entry, write_tree};

/// Two people's hub holding `a`'s two conversations (ids in order); `b`, with no store yet,
/// makes a lazy clone of it with [`Team::cloned_lazily`]. Taken apart, `served` is held to
/// the end (`served: _served`).
pub(crate) struct Team {
    pub(crate) a: TestEnv,
    pub(crate) b: TestEnv,
    pub(crate) first: String,
    pub(crate) second: String,
    pub(crate) hub: PathBuf,
    pub(crate) url: String,
    pub(crate) served: Served,
}

pub(crate) fn team(people: TwoPeople) -> Team {
    let TwoPeople { a, b, hub, url, served } = people;
    let first = a.new_conversation("first talk");
    a.run(&["append", "--user", "hello one"]).ok();
    let second = a.new_conversation("second talk");
    a.run(&["append", "--user", "hello two"]).ok();
    a.run(&["append", "--assistant", "reply two"]).ok();
    a.run(&["remote", "add", "origin", &url]).ok();
    a.run(&["push"]).ok();
    Team { a, b, first, second, hub, url, served }
}

impl Team {
    pub(crate) fn cloned_lazily(self) -> Team {
        self.b.run(&["clone", "--lazy", &self.url, self.b.store.to_str().unwrap()]).ok();
        self
    }
}

/// `list --format json` without what a catalog cannot know exactly (the token estimate).
fn listed(env: &TestEnv) -> Vec<serde_json::Value> {
    let out: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    out.into_iter()
        .map(|mut row| {
            let row = row.as_object_mut().unwrap();
            for key in ["tokens", "chars", "active"] {
                row.remove(key);
            }
            serde_json::Value::Object(row.clone())
        })
        .collect()
}

#[test]
fn a_lazy_clone_lists_from_the_catalog_and_fetches_a_conversation_once_when_read() {
    let Team { a, b, first, second, served: _served, .. } = team(two_people()).cloned_lazily();
    // The catalog, no branch and no conversation.
    assert_eq!(b.git(&["for-each-ref", "--format=%(refname)"]).trim(), "refs/convo/remotes/origin/catalog");
    assert_eq!(listed(&b), listed(&a), "the catalog lists what a whole store does");
    assert!(b.run(&["list"]).ok().contains("second talk"));
    assert_eq!(b.run(&["grep", "--titles", "talk$"]).ok(), format!("{first}\tfirst talk\n{second}\tsecond talk\n"));
    assert_eq!(b.run(&["grep", "--titles", "-i", "SECOND"]).ok(), a.run(&["grep", "--titles", "-i", "SECOND"]).ok());
    b.run(&["grep", "--titles", "third"]).fails_with(1);

    // A title names a conversation of the catalog: fetched, said on stderr, then shown.
    let shown = b.run(&["show", "second"]);
    assert_eq!(shown.ok(), a.run(&["show", &second]).ok());
    assert_eq!(shown.stderr.lines().collect::<Vec<_>>(), [format!("Fetching {second} from origin (213 bytes)")]);
    // Once: the store holds it now.
    let again = b.run(&["show", &second[..8]]);
    assert_eq!(again.ok(), shown.stdout);
    assert_eq!(again.stderr, "");
    assert_eq!(
        b.git(&["for-each-ref", "--format=%(refname)"]).trim(),
        format!("refs/convo/remotes/origin/catalog\nrefs/convo/remotes/origin/conversations/{second}\nrefs/heads/main")
    );
    // Only that conversation's files, the very blobs the hub's branch holds.
    let files = b.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(files.lines().all(|p| p.starts_with(&conversation_dir(&second))), "{files}");
    assert_eq!(listed(&b), listed(&a));
    // Other readers fetch too.
    let exported = b.run(&["export", "--format", "jsonl", &first]);
    assert_eq!(exported.ok(), a.run(&["export", "--format", "jsonl", &first]).ok());
    assert!(exported.stderr.starts_with(&format!("Fetching {first} from origin")), "{}", exported.stderr);
    b.run(&["fsck"]).ok();
    assert_eq!(b.git_status(), "");
}

#[test]
fn a_lazy_pull_updates_the_conversations_fetched_and_lists_the_rest() {
    let Team { a, b, first, second, served: _served, .. } = team(two_people_on_disk()).cloned_lazily();
    b.run(&["show", &second]).ok();

    a.run(&["switch", &second]).ok();
    a.run(&["append", "--user", "more"]).ok();
    a.run(&["switch", &first]).ok();
    a.run(&["append", "--user", "also more"]).ok();
    let third = a.new_conversation("third talk");
    a.run(&["push"]).ok();

    let pulled = b.run(&["pull"]);
    assert_eq!(pulled.ok_status(), format!("Updated {second} from origin\n"));
    assert_eq!(b.run(&["show", &second]).ok(), a.run(&["show", &second]).ok());
    assert_eq!(listed(&b), listed(&a));
    // The others stay on the hub until read.
    let refs = b.git(&["for-each-ref", "--format=%(refname)", "refs/convo/remotes/origin/conversations/"]);
    assert_eq!(refs.trim(), format!("refs/convo/remotes/origin/conversations/{second}"));
    assert!(!b.git(&["ls-tree", "-r", "--name-only", "HEAD"]).contains(&third));
    assert!(b.run(&["pull"]).ok_status().starts_with("Up to date"));
    // A fetch takes the catalog, never the hub's branch.
    assert_eq!(b.run(&["fetch"]).ok_status(), "Fetched the catalog of origin (3 conversations listed)\n");
    assert!(b.git(&["for-each-ref", "refs/remotes/"]).trim().is_empty());
    b.run(&["fsck"]).ok();
    assert_eq!(b.git_status(), "");
}

/// Point the hub's ref of conversation `id` at a commit of `tree`.
fn plant_ref(hub: &Path, id: &str, tree: &str) {
    let commit = git_str(hub, &["commit-tree", tree, "-m", &format!("convo: conversation {id}")]);
    git_in(hub, &["update-ref", &format!("refs/convo/conversations/{id}"), &commit], b"");
}

#[test]
fn a_hostile_conversation_ref_is_refused_and_the_store_is_left_as_it_was() {
    type Plant = Box<dyn Fn(&Path, &str, &str)>;
    let cases: Vec<(&str, Plant)> = vec![
        (
            "another conversation beside it",
            Box::new(|hub, id, _| plant_ref(hub, id, &git_str(hub, &["rev-parse", "refs/heads/main^{tree}"]))),
        ),
        (
            "a file outside its folder",
            Box::new(|hub, id, _| {
                let tree = git_str(hub, &["rev-parse", &format!("refs/convo/conversations/{id}^{{tree}}")]);
                let config = blob(hub, b"[llm]\nmodel = \"evil\"\n");
                plant_ref(hub, id, &with_entry(hub, &tree, &[], ("100644".into(), b"convo.toml".to_vec(), config)));
            }),
        ),
        (
            "the other conversation under its name",
            Box::new(|hub, id, other| {
                let theirs = git_str(hub, &["rev-parse", &format!("refs/heads/main:{}", conversation_dir(other))]);
                let mut tree = theirs;
                for name in [id, fan(id), "conversations"] {
                    tree = write_tree(hub, &[("040000".into(), name.as_bytes().to_vec(), tree)]);
                }
                plant_ref(hub, id, &tree);
            }),
        ),
        (
            "the other conversation, as it is",
            Box::new(|hub, id, other| {
                let commit = git_str(hub, &["rev-parse", &format!("refs/convo/conversations/{other}")]);
                git_in(hub, &["update-ref", &format!("refs/convo/conversations/{id}"), &commit], b"");
            }),
        ),
    ];
    for (what, plant) in cases {
        let t = team(two_people_on_disk());
        plant(&t.hub, &t.first, &t.second);
        assert!(!read_tree(&t.hub, &format!("refs/convo/conversations/{}^{{tree}}", t.first)).is_empty());
        let Team { b, first, second, served: _served, .. } = t.cloned_lazily();
        b.run(&["list"]).ok();
        let before = b.snapshot();
        let refused = b.run(&["show", &first]);
        assert_ne!(refused.code, 0, "{what}");
        let stderr = refused.stderr.lines().collect::<Vec<_>>();
        assert_eq!(stderr[0], format!("Fetching {first} from origin (104 bytes)"), "{what}");
        assert!(
            stderr[1].starts_with(&format!("error: refusing the hub's conversation {first}")),
            "{what}: {}",
            refused.stderr
        );
        assert_eq!(b.snapshot(), before, "{what}: the store is as it was");
        // The honest one still comes.
        b.run(&["show", &second]).ok();
    }
}

/// The MCP server of a lazy store lists the catalog and fetches a conversation it shows; its
/// search says how many conversations it could not search (`not_fetched`).
#[test]
fn an_mcp_client_of_a_lazy_store_lists_the_catalog_and_reads_a_conversation_fetched_on_demand() {
    let Team { b, first, second, served: _served, .. } = team(two_people_on_disk()).cloned_lazily();
    let mut server = crate::common::McpPipe::start(&b);
    let mut ask = |line: &str, answer: bool| server.ask(line, answer);
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}"#,
        true,
    );
    ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false);
    let listed = ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_conversations","arguments":{}}}"#,
        true,
    )
    .unwrap();
    let ids: Vec<&str> = listed["result"]["structuredContent"]["conversations"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&first.as_str()) && ids.contains(&second.as_str()), "{listed}");
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"show","arguments":{{"id":"{second}"}}}}}}"#
    );
    let shown = ask(&call, true).unwrap();
    assert_ne!(shown["result"]["isError"], true, "{shown}");
    assert!(shown.to_string().contains("reply two"), "{shown}");
    // Its search reads what was fetched, and says how many it could not.
    let call =
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"pattern":"hello"}}}"#;
    let found = ask(call, true).unwrap();
    let found = &found["result"]["structuredContent"];
    let hits: Vec<&str> = found["hits"].as_array().unwrap().iter().map(|h| h["line"].as_str().unwrap()).collect();
    assert_eq!(hits, ["hello two"], "{found}");
    assert_eq!(found["not_fetched"], 1, "{found}");
    assert!(server.finish());
    assert_eq!(
        b.git(&["for-each-ref", "--format=%(refname)", "refs/convo/remotes/origin/conversations/"]).trim(),
        format!("refs/convo/remotes/origin/conversations/{second}")
    );
}

#[test]
fn status_in_a_lazy_store_counts_each_conversation_against_its_fetch() {
    let Team { a, b, first, second, served: _served, .. } = team(two_people()).cloned_lazily();
    b.run(&["show", &first]).ok();
    b.run(&["show", &second]).ok();
    let catalog =
        |env: &TestEnv| env.git(&["rev-parse", "--short=7", "refs/convo/remotes/origin/catalog"]).trim().to_owned();
    // What was fetched is what the hub has: nothing to push, nothing to pull.
    assert_eq!(
        b.run(&["status"]).ok(),
        format!(
            "No active conversation.\nUp to date with origin (a lazy clone; its catalog as last fetched: {}).\nNo failed captures.\n",
            catalog(&b)
        )
    );
    // One appended here, one appended on the hub by the teammate.
    b.run(&["append", &first, "--user", "mine"]).ok();
    a.run(&["append", &second, "--user", "theirs one"]).ok();
    a.run(&["append", &second, "--assistant", "theirs two"]).ok();
    a.run(&["push"]).ok();
    b.run(&["fetch"]).ok();
    assert_eq!(
        b.run(&["status"]).ok(),
        format!(
            "No active conversation.\nAgainst origin (a lazy clone; its catalog as last fetched: {}):\n  \
             \"first talk\": 1 event here since fetched\n  \"second talk\": 2 events on origin not pulled\n  \
             (`convo pull` brings in; `convo push` sends what was added here)\nNo failed captures.\n",
            catalog(&b)
        )
    );
}

/// `convo serve` in a lazy store lists the catalog's conversations, and a conversation's page
/// fetches it first, once, as `show` does; a fetch that fails is a 502 page saying why, the
/// store as it was.
#[test]
fn serve_in_a_lazy_store_lists_the_catalog_and_a_page_fetches_its_conversation_once() {
    use crate::serve::{Server, get};
    let Team { a, b, first, second, served, .. } = team(two_people()).cloned_lazily();
    let server = Server::start(&b, &[]);
    let (status, _, list) = get(&server, "/", &[]);
    assert_eq!(status, 200, "{list}");
    assert!(list.contains("first talk") && list.contains("second talk"), "{list}");

    let (status, _, page) = get(&server, &format!("/c/{second}"), &[]);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("reply two"), "{page}");
    assert_eq!(b.run(&["show", &second]).ok(), a.run(&["show", &second]).ok());
    // Once: opened again (and its diff), nothing more is fetched or committed.
    let head = b.git(&["rev-parse", "HEAD"]);
    assert_eq!(get(&server, &format!("/c/{}", &second[..8]), &[]).0, 200);
    assert_eq!(get(&server, &format!("/c/{second}/diff"), &[]).0, 200);
    assert_eq!(b.git(&["rev-parse", "HEAD"]), head);

    // The hub gone: the page of a conversation not fetched yet says why, in one line.
    drop(served);
    let before = b.snapshot();
    let (status, _, page) = get(&server, &format!("/c/{first}"), &[]);
    assert_eq!(status, 502, "{page}");
    assert!(page.contains("Could not fetch the conversation"), "{page}");
    let why = page.split("<pre>").nth(1).and_then(|p| p.split("</pre>").next()).unwrap_or_else(|| panic!("{page}"));
    assert!(!why.contains('\n') && why.starts_with("git fetch: "), "{why}");
    assert_eq!(b.snapshot(), before, "the store is as it was");
    drop(server);
}

/// Plain `grep PATTERN` in a lazy store searches the conversations fetched so far (fetching
/// them all would undo the lazy clone), and says so: on stderr after the results, as a last
/// line in JSON, even when nothing matched; not when conversations are named, nor in a whole
/// store.
#[test]
fn grep_in_a_lazy_store_says_how_many_conversations_it_did_not_search() {
    let Team { a, b, second, served: _served, .. } = team(two_people()).cloned_lazily();
    b.run(&["show", &second]).ok();
    let found = b.run(&["grep", "hello"]);
    insta::assert_snapshot!(b.transcript(&found), @"
    exit 0
    --- stdout
    01KDVDTSS00000000000000001 second talk
          0  user             hello two
    --- stderr
    searched 1 fetched conversation; 1 listed on origin is not fetched (convo grep --titles searches every title; convo show ID fetches one)
    ");
    let json = b.run(&["grep", "hello", "--format", "json"]);
    assert_eq!(json.ok().lines().last(), Some(r#"{"searched":1,"not_fetched":1,"remote":"origin"}"#));
    let none = b.run(&["grep", "nowhere"]);
    insta::assert_snapshot!(b.transcript(&none), @"
    exit 1
    --- stderr
    searched 1 fetched conversation; 1 listed on origin is not fetched (convo grep --titles searches every title; convo show ID fetches one)
    ");
    assert_eq!(b.run(&["grep", "hello", &second]).ok_status(), "");
    assert_eq!(a.run(&["grep", "hello"]).ok_status(), "");
}

#[test]
fn a_lazy_pull_refuses_a_catalog_file_changed_into_what_convo_does_not_write() {
    let Team { a, b, first, second, hub, served: _served, .. } = team(two_people()).cloned_lazily();
    b.run(&["show", &second]).ok();
    // A teammate's push changes one fan file; the hub then serves it with a bad line added.
    a.run(&["append", &first, "--user", "more"]).ok();
    a.run(&["push"]).ok();
    let fan_file = format!("{}.jsonl", fan(&first));
    let text = git_str(&hub, &["cat-file", "blob", &format!("refs/convo/catalog:{fan_file}")]);
    let planted = blob(&hub, format!("{text}\n{{\"id\":\"not one\"}}\n").as_bytes());
    let tree = git_str(&hub, &["rev-parse", "refs/convo/catalog^{tree}"]);
    let entries: Vec<_> = read_tree(&hub, &tree)
        .into_iter()
        .map(
            |(mode, name, id)| {
                if name == fan_file.as_bytes() { (mode, name, planted.clone()) } else { (mode, name, id) }
            },
        )
        .collect();
    let message = git_in(&hub, &["log", "-1", "--format=%B", "refs/convo/catalog"], b"");
    let parent = git_str(&hub, &["rev-parse", "refs/heads/main"]);
    let tree = write_tree(&hub, &entries);
    let commit = git_str(&hub, &["commit-tree", &tree, "-p", &parent, "-m", String::from_utf8_lossy(&message).trim()]);
    git_in(&hub, &["update-ref", "refs/convo/catalog", &commit], b"");

    let before = b.snapshot();
    let refused = b.run(&["pull"]);
    assert_eq!(refused.code, 6, "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with(&format!("error: refusing commit {}: {fan_file} line ", &commit[..7])),
        "{}",
        refused.stderr
    );
    assert_eq!(b.snapshot(), before, "the store is as it was");
}
