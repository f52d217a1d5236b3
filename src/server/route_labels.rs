//! The route label of a request: the metric label and log field the edge gives it, and whether
//! it is behind the request limits, found without the router (see `server::edge`).

use crate::metrics::{RouteSeries, UNMATCHED_ROUTE};

/// The route label of a request path: the app's routes are all static paths, apart from one
/// catch-all under a prefix (the API reference's assets). Built once per app, from the lists the
/// router is built from.
#[derive(Debug, Clone, Default)]
pub struct RouteLabels {
    /// Paths served as they are, each with whether it is behind the concurrency and time limits
    /// (the API), and its metric series.
    exact: Vec<(Box<str>, bool, RouteSeries)>,
    /// `(prefix, template)`: any path under `prefix` is labelled `template`.
    prefixed: Vec<(Box<str>, Box<str>)>,
}

impl RouteLabels {
    /// No routes: every path is [`UNMATCHED_ROUTE`].
    pub fn new() -> RouteLabels {
        RouteLabels::default()
    }

    /// Adds paths served as they are; `guarded` puts them behind the request limits.
    pub fn exact<S: AsRef<str>>(
        mut self,
        paths: impl IntoIterator<Item = S>,
        guarded: bool,
    ) -> Self {
        self.exact.extend(
            paths
                .into_iter()
                .map(|p| (p.as_ref().into(), guarded, RouteSeries::default())),
        );
        self
    }

    /// Labels every path under `prefix` as `template` (a catch-all route).
    pub fn prefixed(mut self, prefix: &str, template: &str) -> Self {
        self.prefixed.push((prefix.into(), template.into()));
        self
    }

    /// The paths served as they are.
    #[cfg(test)]
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.exact.iter().map(|(path, _, _)| &**path)
    }

    /// The label of `path`, [`UNMATCHED_ROUTE`] for paths the app does not serve; never the path
    /// itself unless it is one of the app's routes.
    #[cfg(test)]
    pub fn label(&self, path: &str) -> &str {
        self.route(path).0
    }

    /// The label, whether the route is guarded, and its series when it is one of the exact
    /// routes.
    pub(super) fn route(&self, path: &str) -> (&str, bool, Option<&RouteSeries>) {
        if let Some((route, guarded, series)) =
            self.exact.iter().find(|(route, _, _)| **route == *path)
        {
            return (route, *guarded, Some(series));
        }
        let template = self
            .prefixed
            .iter()
            .find(|(prefix, _)| path.starts_with(&**prefix))
            .map_or(UNMATCHED_ROUTE, |(_, template)| template);
        (template, false, None)
    }
}
