//! The level-1 data cache of the machine the C runs on, as far as the generator's remarks
//! and the named size `line` need it: lines whose addresses are a multiple of
//! [`Cache::way_bytes`] apart fall into one set, and a set holds [`Cache::ways`] lines.

use std::path::Path;
use std::sync::OnceLock;

/// A set-associative cache's geometry, in bytes and lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cache {
    /// Bytes in a line.
    pub line: i64,
    /// Sets in the cache.
    pub sets: i64,
    /// Lines in a set.
    pub ways: i64,
}

impl Cache {
    /// A common level-1 data cache (AMD Zen 2 to 4, most Intel cores): 64 sets of 8 lines of
    /// 64 bytes.
    pub const COMMON: Cache = Cache {
        line: 64,
        sets: 64,
        ways: 8,
    };

    /// This machine's level-1 data cache, as Linux describes it
    /// (`/sys/devices/system/cpu/cpu0/cache`); [`Cache::COMMON`] where it does not.
    pub fn l1_data() -> Cache {
        static L1: OnceLock<Cache> = OnceLock::new();
        *L1.get_or_init(|| {
            let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
            (0..8)
                .find_map(|i| described(&dir.join(format!("index{i}"))))
                .unwrap_or(Cache::COMMON)
        })
    }

    /// Bytes between two addresses of one set: a line per set.
    pub fn way_bytes(&self) -> i64 {
        self.line * self.sets
    }
}

/// The cache that `dir` describes, if it is a level-1 data cache.
fn described(dir: &Path) -> Option<Cache> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let number = |name: &str| read(name)?.trim().parse::<i64>().ok().filter(|n| *n > 0);
    if number("level")? != 1 || read("type")?.trim() != "Data" {
        return None;
    }
    Some(Cache {
        line: number("coherency_line_size")?,
        sets: number("number_of_sets")?,
        ways: number("ways_of_associativity")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), format!("{text}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn a_level_1_data_cache_is_read_from_its_description_and_others_are_not() {
        let mut files = vec![
            ("level", "1"),
            ("type", "Data"),
            ("coherency_line_size", "64"),
            ("number_of_sets", "64"),
            ("ways_of_associativity", "12"),
        ];
        let l1 = described(cache_dir(&files).path()).unwrap();
        assert_eq!((l1.line, l1.sets, l1.ways), (64, 64, 12));
        assert_eq!(l1.way_bytes(), 4096);
        files[1] = ("type", "Instruction");
        assert_eq!(described(cache_dir(&files).path()), None);
        files[1] = ("type", "Data");
        files[0] = ("level", "2");
        assert_eq!(described(cache_dir(&files).path()), None);
        files[0] = ("level", "1");
        files[4] = ("ways_of_associativity", "0");
        assert_eq!(described(cache_dir(&files).path()), None);
    }
}
