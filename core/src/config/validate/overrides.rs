//! `REDIO_<SECTION>_<KEY>` variables over the file's values.
//!
//! An empty variable is ignored, as if it were unset. Values are taken
//! literally (no `${VAR}` interpolation: the shell has already expanded
//! them). Keys that hold lists cannot be set this way; naming one is an
//! error, as is any `REDIO_<SECTION>_…` name that is not a key.

use super::{Origin, Resolver};
use crate::config::diagnostics::{did_you_mean, Diagnostic};
use crate::config::env::{config_key_of, env_var_name};
use crate::config::keys::{Scalar, SECTIONS};

/// Ends the message about a variable that names a list.
const USE_THE_FILE: &str = "cannot be set from the environment (set it in the configuration file)";

impl Resolver<'_> {
    /// Applies the variables of scalar keys, then reports the variables that
    /// name lists and, among `names`, those that name no key.
    pub(super) fn read_env(&mut self, scalars: &[Scalar], names: &[String]) {
        for scalar in scalars {
            let name = env_var_name(scalar.section, scalar.key);
            if let Some(value) = self.var(&name) {
                let origin = Origin::Env {
                    name,
                    value: value.clone(),
                };
                self.apply(scalar, &value, origin);
            }
        }
        let list_keys = SECTIONS
            .iter()
            .flat_map(|(section, keys)| keys.iter().map(move |key| (*section, *key)))
            .filter(|(section, key)| {
                !scalars
                    .iter()
                    .any(|s| s.section == *section && s.key == *key)
            });
        for (section, key) in list_keys {
            let name = env_var_name(section, key);
            if let Some(value) = self.var(&name) {
                let message = format!("{section}.{key} is a list and {USE_THE_FILE}");
                self.diagnostics
                    .push(Diagnostic::env(&name, &value, message));
            }
        }
        for name in names {
            if let (Some((section, key)), Some(value)) = (config_key_of(name), self.var(name)) {
                if let Some(message) = unknown_variable(name, section, &key) {
                    self.diagnostics
                        .push(Diagnostic::env(name, &value, message));
                }
            }
        }
    }

    /// The variable's value, unless it is unset or empty.
    fn var(&self, name: &str) -> Option<String> {
        (self.lookup)(name).filter(|value| !value.is_empty())
    }
}

/// What is wrong with the configuration variable `name` (of `section`,
/// naming `key`), or `None` when it names a real key.
fn unknown_variable(name: &str, section: &str, key: &str) -> Option<String> {
    let known = SECTIONS
        .iter()
        .find(|(s, _)| *s == section)
        .map_or(&[][..], |(_, keys)| *keys);
    if known.is_empty() {
        return Some(format!(
            "{section} is a list of mappings and {USE_THE_FILE}"
        ));
    }
    if known.contains(&key) && env_var_name(section, key) == name {
        return None;
    }
    let variables: Vec<String> = known.iter().map(|k| env_var_name(section, k)).collect();
    let mut message = format!(
        "unknown setting {section}.{key} (the variables for {section} are {})",
        variables.join(", ")
    );
    if let Some(close) = did_you_mean(key, known) {
        message.push_str(&format!("; did you mean {}?", env_var_name(section, close)));
    }
    Some(message)
}
