//! Serde readers that take a JSON object only. A derived `Deserialize` for a struct also
//! accepts an array of its fields in order (`["k", "kailai", "Kailai", "human"]` for a
//! speaker), which no user means and which would store a value of the wrong shape; these
//! refuse it as `expected an object, found an array`, with the field's path.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// `T`, read from a JSON object only (for top-level arguments: `Object<NewPeerMessage>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(Object)
    }
}

struct ObjectOnly<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// For `#[serde(deserialize_with = "object")]`: the field's struct, from an object only.
pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectOnly(PhantomData))
}

/// [`object`] for an optional field: `null` (or absent, with `#[serde(default)]`) is `None`.
pub(crate) fn optional_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    struct Optional<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Optional<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object or null")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            object(d).map(Some)
        }
    }
    d.deserialize_option(Optional(PhantomData))
}

/// [`object`] for each item of an array field.
pub fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Items<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Items<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(Object(item)) = seq.next_element::<Object<T>>()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    d.deserialize_seq(Items(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Speaker {
        id: String,
        name: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Message {
        #[serde(deserialize_with = "object")]
        speaker: Speaker,
        #[serde(default, deserialize_with = "optional_object")]
        parent: Option<Speaker>,
        #[serde(default, deserialize_with = "objects")]
        seen: Vec<Speaker>,
    }

    fn read(text: &str) -> Result<Object<Message>, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn objects_are_read_as_the_derive_reads_them() {
        let Object(m) = read(
            r#"{"speaker": {"id": "k", "name": "kailai"}, "parent": null,
                "seen": [{"id": "m", "name": "max"}]}"#,
        )
        .unwrap();
        assert_eq!(m.speaker.name, "kailai");
        assert_eq!(m.parent, None);
        assert_eq!(m.seen.len(), 1);
    }

    #[test]
    fn an_array_where_an_object_belongs_is_refused_at_its_path() {
        let cases = [
            (r#"["x"]"#, "."),
            (r#"{"speaker": ["k", "kailai"]}"#, "speaker"),
            (
                r#"{"speaker": {"id": "k", "name": "k"}, "parent": ["k", "k"]}"#,
                "parent",
            ),
            (
                r#"{"speaker": {"id": "k", "name": "k"}, "seen": [["m", "max"]]}"#,
                "seen[0]",
            ),
        ];
        for (text, path) in cases {
            let error = read(text).unwrap_err();
            assert!(
                error.starts_with(&format!(
                    "{path}: invalid type: sequence, expected an object"
                )),
                "{text}: {error}"
            );
        }
    }
}
