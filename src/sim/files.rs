//! The files `fluxfleet sim` writes for clients: kubeconfigs per cluster, for the whole fleet
//! (admin and viewer), for the management cluster, and the token for `/sim`.

use std::path::{Path, PathBuf};

use super::Error;
use super::kubeconfig::{Entry, render};
use super::world::World;

/// The files written for clients.
#[derive(Clone, Debug)]
pub struct Files {
    pub dir: PathBuf,
    /// Every workload cluster as a context, admin credentials.
    pub fleet: PathBuf,
    /// The same with read-only tokens.
    pub viewer: PathBuf,
    /// The top management cluster.
    pub management: PathBuf,
    /// Every other management cluster (nested fleets): `<name>.kubeconfig`.
    pub managements_below: Vec<PathBuf>,
    /// `kubeconfigs/<workspace>/<cluster>.yaml`, in cluster order.
    pub clusters: Vec<PathBuf>,
    /// The bearer token for `/sim/truth` and `/sim/stats`.
    pub sim_token: PathBuf,
}

/// A new directory for a simulation's files: a fresh random name under `parent`, created
/// exclusively and owner-only, removed when the handle is dropped. Nothing another local user
/// prepared (a directory of a guessable name, a symlink) is ever used.
pub fn private_dir(parent: &Path, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent)
}

/// Writes a file holding tokens: owner-only, as a new file. Whatever was at `path` (an older
/// file, or a symlink planted to have the tokens written elsewhere) is removed first, never
/// followed.
pub(super) fn write_file(path: &Path, contents: &str) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io)?;
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    // Exclusive creation does not follow a symlink: one put back meanwhile is an error.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    f.write_all(contents.as_bytes()).map_err(io)
}

pub(super) fn write_files(
    dir: &Path,
    world: &World,
    urls: &[String],
    ca: &str,
) -> Result<Files, Error> {
    let dir = dir.to_path_buf();
    let mut per_cluster = Vec::new();
    let (mut admin, mut viewer) = (Vec::new(), Vec::new());
    for c in world.workloads() {
        let url = &urls[c.index];
        let entry = Entry {
            name: &c.name,
            server: url,
            token: &c.admin_token,
            role: "admin",
        };
        let path = dir
            .join("kubeconfigs")
            .join(&c.workspace)
            .join(format!("{}.yaml", c.name));
        write_file(&path, &render(std::slice::from_ref(&entry), ca))?;
        per_cluster.push(path);
        admin.push(entry);
        viewer.push(Entry {
            name: &c.name,
            server: url,
            token: &c.viewer_token,
            role: "viewer",
        });
    }
    let fleet = dir.join("fleet.kubeconfig");
    write_file(&fleet, &render(&admin, ca))?;
    let viewer_path = dir.join("viewer.kubeconfig");
    write_file(&viewer_path, &render(&viewer, ca))?;
    let management = dir.join("management.kubeconfig");
    let mut managements_below = Vec::new();
    let top = world.management().map(|m| m.index);
    for m in world.clusters.iter().filter(|c| c.management) {
        let entry = Entry {
            name: &m.name,
            server: &urls[m.index],
            token: &m.admin_token,
            role: "admin",
        };
        let path = if Some(m.index) == top {
            management.clone()
        } else {
            dir.join(format!("{}.kubeconfig", m.name))
        };
        write_file(&path, &render(&[entry], ca))?;
        if Some(m.index) != top {
            managements_below.push(path);
        }
    }
    let sim_token = dir.join("sim-token");
    write_file(&sim_token, &world.sim_token)?;
    Ok(Files {
        dir,
        fleet,
        viewer: viewer_path,
        management,
        managements_below,
        clusters: per_cluster,
        sim_token,
    })
}
