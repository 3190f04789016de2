//! Outages: an endpoint many clusters share fails one way on some of them, until it is over.
//! Every source there whose URL names the host fails as source-controller words it (what it
//! was meant to be before is kept, and is what it returns to); what applies those sources keeps
//! its last artifact and stays as it was, as Flux does.

use super::{Controller, Key};
use crate::facts::Health;
use crate::flux::outage::{Outage, fetches, host_of};
use crate::flux::{Failure, Intent};
use crate::resources::Res;

impl Controller {
    /// `host` fails with `outage` on `clusters` now; None ends its outage wherever it was.
    pub(super) fn outage(&mut self, host: &str, outage: Option<Outage>, clusters: &[usize]) {
        match outage {
            Some(o) => {
                for &i in clusters {
                    self.outage_on(i, host, o);
                }
            }
            None => self.outage_over(host),
        }
    }

    fn outage_on(&mut self, cluster: usize, host: &str, outage: Outage) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let hit: Vec<(Key, Option<Intent>)> = c
            .store()
            .all()
            .filter_map(|o| {
                let Res::Flux(kind) = o.res else {
                    return None;
                };
                let value = o.value();
                let named =
                    fetches(kind) && !o.suspended && host_of(&value).as_deref() == Some(host);
                named.then(|| ((kind, o.namespace.clone(), o.name.clone()), o.intent))
            })
            .collect();
        let failed = Intent {
            health: Health::Failed,
            failure: Some(Failure::Outage(outage)),
        };
        for (key, before) in hit {
            let ready = Intent {
                health: Health::Ready,
                failure: None,
            };
            self.outages
                .entry((cluster, key.clone()))
                .or_insert((host.to_string(), before.unwrap_or(ready)));
            self.write(&c, &key, failed, None, None, true);
        }
    }

    fn outage_over(&mut self, host: &str) {
        let over: Vec<(usize, Key)> = self
            .outages
            .iter()
            .filter(|(_, (h, _))| h == host)
            .map(|(k, _)| k.clone())
            .collect();
        for (cluster, key) in over {
            let Some((_, before)) = self.outages.remove(&(cluster, key.clone())) else {
                continue;
            };
            if let Some(c) = self.cluster(cluster) {
                self.write(&c, &key, before, None, None, true);
            }
        }
    }
}
