//! A plugin's key press planned into a [`Launch`] on the selection — the one place that decides
//! whether a plugin may run, with the same refusals as the built-in actions.

use std::sync::Arc;

use super::model::Model;
use super::plugins::{Launch, Plugin, PluginError, Vars, checked, expand};
use super::view::{RowId, View};
use crate::fleet::{ClusterId, ClusterInfo, ObjectKey};

/// What the selection of the top view stands for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub workspace: Option<String>,
    pub cluster: Option<(ClusterId, Arc<ClusterInfo>)>,
    pub object: Option<ObjectKey>,
}

/// The workspace, cluster and object the user has selected in the view on top.
pub fn selection(model: &Model) -> Selection {
    let screen = model.screen();
    let cluster_of = |id: ClusterId| model.index().cluster(id).map(|c| (id, c.info.clone()));
    let (cluster, object) = match (&screen.view, &screen.selected) {
        (View::Detail { cluster, key }, _) => (cluster_of(*cluster), Some(key.clone())),
        (View::Fleet, _) if screen.map.is_some() => {
            let (width, height) = model.fit().map_room;
            let map = super::map::layout(model.index(), &model.rows().ids, width, height);
            let shading = super::map::Shading::of(model);
            let at = screen
                .map
                .and_then(|at| map.worst(&shading, model.index(), at));
            (at.and_then(|(id, _)| cluster_of(id)), None)
        }
        (_, Some(RowId::Object(c, k))) => (cluster_of(*c), Some(k.clone())),
        (_, Some(RowId::Cluster(c))) => (cluster_of(*c), None),
        (View::Cluster(c), _) => (cluster_of(*c), None),
        _ => (None, None),
    };
    let workspace = match (&cluster, &screen.selected) {
        (Some((_, info)), _) => Some(info.workspace.clone()),
        (None, Some(RowId::Workspace(w))) => model.index().workspace(*w).map(|w| w.name.clone()),
        (None, _) => match &screen.view {
            View::Workspace(w) => model.index().workspace(*w).map(|w| w.name.clone()),
            _ => None,
        },
    };
    Selection {
        workspace,
        cluster,
        object,
    }
}

/// Plans `plugin` on the selection: refused (with the reason the built-in actions give) when
/// it writes where the session may not, or when the selection lacks what its arguments name.
pub fn plan(model: &Model, plugin: &Plugin) -> Result<Launch, PluginError> {
    let name = &plugin.name;
    if let Some(program) = &plugin.missing {
        return Err(PluginError::NotOnPath {
            plugin: name.clone(),
            program: program.clone(),
        });
    }
    let selection = selection(model);
    let mut vars = Vars::default();
    if let Some(w) = &selection.workspace {
        vars.set("WORKSPACE", checked("workspace", w)?);
    }
    if let Some((_, info)) = &selection.cluster {
        vars.set("CLUSTER", checked("cluster name", &info.name)?);
        vars.set("CONTEXT", checked("context", &info.context)?);
    }
    if let Some(key) = &selection.object {
        vars.set("NAMESPACE", checked("namespace", &key.namespace)?);
        vars.set("NAME", checked("name", &key.name)?);
        vars.set("KIND", key.kind.as_str());
        vars.set(
            "RESOURCE",
            format!("{}.{}", key.kind.plural(), key.kind.group()),
        );
        if let Some(version) = served_version(model, &selection, key) {
            vars.set("API_VERSION", format!("{}/{version}", key.kind.group()));
        }
        let revision = selection
            .cluster
            .as_ref()
            .and_then(|(id, _)| model.index().cluster(*id))
            .and_then(|c| c.objects.get(key))
            .and_then(|o| o.revision.clone());
        if let Some(r) = revision {
            vars.set("REVISION", checked("revision", &r)?);
        }
    }
    let mut args = plugin.args.clone();
    let writes = match writable(model, plugin, &selection) {
        Ok(()) => plugin.writes,
        // Where it may not write, a plugin that can be told so runs read-only.
        Err(_) if plugin.writes && !plugin.read_only_args.is_empty() => {
            args.extend(plugin.read_only_args.iter().cloned());
            false
        }
        Err(why) if plugin.writes => return Err(why),
        Err(_) => false,
    };
    // Every argument must expand now, with a stand-in for the kubeconfig's path.
    let mut trial = vars.clone();
    if selection.cluster.is_some() {
        trial.set("KUBECONFIG", "/kubeconfig");
    }
    for arg in &args {
        expand(arg, &trial).map_err(|e| PluginError::Argument {
            plugin: name.clone(),
            error: Box::new(e),
        })?;
    }
    Ok(Launch {
        plugin: name.clone(),
        command: plugin.command.clone(),
        args,
        vars,
        cluster: selection.cluster.map(|(_, info)| info),
        object: selection.object,
        writes,
        background: plugin.background,
        user: model.settings().user.clone(),
    })
}

/// The version of `key`'s kind the cluster serves (its watch says), else the newest Flux has.
fn served_version(model: &Model, selection: &Selection, key: &ObjectKey) -> Option<String> {
    let watching = selection
        .cluster
        .as_ref()
        .and_then(|(id, _)| model.index().cluster(*id))
        .and_then(|c| {
            c.connection
                .watching
                .iter()
                .find(|served| served.kind == key.kind)
                .map(|served| served.version.to_string())
        });
    watching.or_else(|| key.kind.known_versions().first().map(|v| v.to_string()))
}

/// Whether `plugin` could write on the selection: the one door's checks for a program that
/// writes ([`crate::actions::may_run_writer`]) — the session's grant, the guardrails, the deny
/// rules, the cluster's mode — in its order and words.
fn writable(model: &Model, plugin: &Plugin, selection: &Selection) -> Result<(), PluginError> {
    use crate::actions::Refused;
    let rules = super::planning::rules(model);
    let cluster = selection.cluster.as_ref().map(|(_, info)| info.as_ref());
    let refused = crate::actions::may_run_writer(
        &rules,
        crate::fleet::verbs::Verb::Reconcile,
        cluster,
        selection.object.as_ref(),
    );
    let plugin = plugin.name.clone();
    match refused {
        Ok(()) => Ok(()),
        Err(Ok(Refused::Unreadable { why, .. })) => Err(PluginError::WritesRefused { plugin, why }),
        Err(Ok(_)) => Err(PluginError::ReadOnly { plugin }),
        Err(Err(refusal)) => Err(PluginError::Denied {
            plugin,
            why: refusal.to_string(),
        }),
    }
}
