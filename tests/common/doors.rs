//! The front doors of an action, started as a person or an assistant starts them, sharing one
//! data directory and one config: the commands, and `fluxfleet mcp` over stdio.

use std::collections::BTreeSet;
use std::path::Path;

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

use super::fluxfleet;

/// (cluster, kind, namespace, name) of each target.
pub type Targets = BTreeSet<(String, String, String, String)>;

pub fn targets_of(list: &[Value]) -> Targets {
    list.iter()
        .map(|t| {
            let field = |f: &str| t[f].as_str().unwrap_or_default().to_string();
            (
                field("cluster"),
                field("kind"),
                field("namespace"),
                field("name"),
            )
        })
        .collect()
}

/// A door: how fluxfleet is started, with the data directory and config shared by all.
pub struct Doors<'a> {
    pub fleet: &'a Path,
    pub data: &'a Path,
    pub config: &'a Path,
}

impl Doors<'_> {
    pub async fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = fluxfleet()
            .env("FLUXFLEET_DATA_DIR", self.data)
            .env("FLUXFLEET_CONFIG", self.config)
            .args(args)
            .arg("--kubeconfig-dir")
            .arg(self.fleet)
            .output()
            .await
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A command that acts, with `-o ndjson`: its stdout and its outcome lines.
    pub async fn outcomes(&self, args: &[&str]) -> (String, Vec<Value>) {
        let (code, out, err) = self.run(args).await;
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // 7 when some reconcile was handled with its object not ready, as its line says.
        let not_ready = lines
            .iter()
            .any(|l| l["result"]["status"].as_str().is_some_and(|s| s != "ready"));
        assert_eq!(code, if not_ready { 7 } else { 0 }, "{args:?}: {err}");
        (out, lines)
    }

    pub async fn mcp(&self, flag: &str) -> RunningService<rmcp::RoleClient, ()> {
        let mut cmd = fluxfleet();
        cmd.env("FLUXFLEET_DATA_DIR", self.data)
            .env("FLUXFLEET_CONFIG", self.config)
            .args(["mcp", flag, "--kubeconfig-dir"])
            .arg(self.fleet);
        ().serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap()
    }
}
