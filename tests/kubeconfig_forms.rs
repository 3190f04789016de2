//! Kubeconfig forms kubectl accepts, each connecting to the simulator or failing with the meaning
//! kubectl gives it, shown as the right state: a credential problem reads as one, never as a
//! network failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use fluxfleet::fleet::Phase;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_forms_connect_as_kubectl_connects_and_a_bad_one_is_a_credential_problem() {
    let sim = common::start_with(|c| {
        c.clusters = 1;
        c.workspaces = 1;
    })
    .await;
    let name = &sim.handle.cluster_names()[0];
    let (server, ca, token) = common::admin(&sim, name);
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, text: String| std::fs::write(dir.path().join(file), text).unwrap();
    // What `echo $TOKEN > file` writes, what an editor leaves, and the bare token.
    write("newline.token", format!("{token}\n"));
    write("spaces.token", format!("  {token} \r\n"));
    write("bare.token", token.clone());
    write("two-lines.token", format!("{token}\nsecond\n"));
    write("empty.token", "\n".into());
    // (context, user section, the state kubectl's meaning gives it)
    let forms: [(&str, String, Phase); 7] = [
        ("token", format!("token: {token}"), Phase::Live),
        (
            "file-newline",
            "tokenFile: newline.token".into(),
            Phase::Live,
        ),
        ("file-spaces", "tokenFile: spaces.token".into(), Phase::Live),
        ("file-bare", "tokenFile: bare.token".into(), Phase::Live),
        (
            "file-two-lines",
            "tokenFile: two-lines.token".into(),
            Phase::Invalid,
        ),
        (
            "file-empty",
            "tokenFile: empty.token".into(),
            Phase::Invalid,
        ),
        (
            "file-missing",
            "tokenFile: missing.token".into(),
            Phase::Invalid,
        ),
    ];
    let mut users = String::new();
    let mut contexts = String::new();
    for (context, user, _) in &forms {
        users.push_str(&format!("- name: {context}\n  user:\n    {user}\n"));
        contexts.push_str(&format!(
            "- name: {context}\n  context: {{cluster: sim, user: {context}}}\n"
        ));
    }
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {server}\n    \
         certificate-authority-data: {ca}\nusers:\n{users}contexts:\n{contexts}"
    );
    // Relative token files are read from the kubeconfig's own directory.
    let path = dir.path().join("forms.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let live = common::settled(&path).await;
    for (context, _, phase) in &forms {
        let c = live.index.cluster_named(context).unwrap();
        let error = c.connection.error.as_deref().unwrap_or_default();
        assert_eq!(c.connection.phase, *phase, "{context}: {error}");
        if *phase == Phase::Invalid {
            assert!(error.starts_with("tokenFile "), "{context}: {error}");
            assert!(
                !error.contains(&token),
                "{context}: the token is never shown"
            );
        }
    }
    live.shutdown().await;
    sim.handle.shutdown().await;
}
