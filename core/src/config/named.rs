//! Enumerations written as fixed lowercase words in YAML.
//!
//! Every such enum is declared once with [`named_enum!`], which gives it its
//! YAML spelling, `Display`, `Serialize` and the list of allowed words that
//! error messages show. Nothing else spells these words out.

/// A closed set of values, each written as one fixed word in YAML.
pub trait Named: Sized + Copy + 'static {
    /// What one value is called in messages, e.g. `protocol` or `layout`.
    const NOUN: &'static str;
    /// Every value with its YAML spelling, in the order the documentation uses.
    const ALL: &'static [(Self, &'static str)];

    /// The YAML spelling of this value.
    fn as_str(self) -> &'static str;

    /// The value spelled `word` (exact, lowercase), if there is one.
    fn from_name(word: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, name)| *name == word)
            .map(|(value, _)| *value)
    }

    /// The allowed spellings joined with `, `, for messages and documentation.
    fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|(_, name)| *name).collect();
        names.join(", ")
    }
}

/// Declares an enum whose values are written as fixed words in YAML.
///
/// `$noun` names a value in messages ("unknown protocol ...").
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($noun:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $crate::config::named::Named for $name {
            const NOUN: &'static str = $noun;
            const ALL: &'static [(Self, &'static str)] = &[ $( ($name::$variant, $word), )+ ];

            fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::config::named::Named::as_str(*self))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::config::named::Named::as_str(*self))
            }
        }
    };
}

pub(crate) use named_enum;
