//! The studio reads and writes only under the directory it was started in.

use crate::error::{Error, Result};
use std::path::{Component, Path, PathBuf};

/// The directory the studio serves, canonical.
#[derive(Clone, Debug)]
pub struct Root(PathBuf);

/// How deep the page's file lists look below the root, and how many files they hold.
const DEPTH: usize = 4;
const MAX_FILES: usize = 2000;

impl Root {
    pub fn new(dir: &Path) -> Result<Root> {
        let canonical = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
        Ok(Root(canonical))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `rel` under the root, written as a relative path without `..`: an error otherwise.
    fn joined(&self, rel: &str) -> Result<PathBuf> {
        let path = Path::new(rel);
        let plain = path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if rel.is_empty() || !plain {
            return Err(Error::bad_input(format!(
                "`{rel}`: the studio reads and writes only under its directory, by relative paths without `..`"
            )));
        }
        Ok(self.0.join(path))
    }

    /// An existing file under the root (symbolic links may not lead out of it).
    pub fn existing(&self, rel: &str) -> Result<PathBuf> {
        let path = self.joined(rel)?;
        let canonical = path.canonicalize().map_err(|e| Error::io(&path, e))?;
        if !canonical.starts_with(&self.0) {
            return Err(Error::bad_input(format!(
                "`{rel}` leads out of the studio's directory"
            )));
        }
        Ok(canonical)
    }

    /// A file to write under the root: its folder must exist there.
    pub fn writable(&self, rel: &str) -> Result<PathBuf> {
        let path = self.joined(rel)?;
        let parent = path.parent().unwrap_or(&self.0);
        let dir = parent.canonicalize().map_err(|e| Error::io(parent, e))?;
        if !dir.starts_with(&self.0) {
            return Err(Error::bad_input(format!(
                "`{rel}` leads out of the studio's directory"
            )));
        }
        let name = path.file_name().expect("a normal last component");
        let target = dir.join(name);
        if target.is_symlink() {
            return Err(Error::bad_input(format!(
                "`{rel}` is a symbolic link: the studio does not write through links"
            )));
        }
        Ok(target)
    }

    /// `path` (under the root) relative to it, as the page writes it.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.0).unwrap_or(path);
        rel.to_string_lossy().into_owned()
    }

    /// The rules (with their rule sets), sketches, programs and strategies under the root,
    /// skipping hidden folders and `target`.
    pub fn files(&self) -> super::session::Files {
        let mut found = vec![];
        self.walk(&self.0, 0, &mut found);
        found.sort();
        let mut files = super::session::Files::default();
        for path in found {
            let rel = self.relative(&path);
            match path.extension().and_then(|e| e.to_str()) {
                Some("rules") => {
                    // A file that does not load is left out of the choices.
                    if let Ok(file) = crate::rules::load_rule_file(&path) {
                        let sets = file.rulesets.iter().map(|s| s.name.clone()).collect();
                        files.rules.push((rel, sets));
                    }
                }
                Some("sketch") => files.sketches.push(rel),
                Some("rise") => files.programs.push(rel),
                Some("elevate") => files.strategies.push(rel),
                _ => {}
            }
        }
        files
    }

    fn walk(&self, dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            if found.len() >= MAX_FILES {
                return;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < DEPTH {
                self.walk(&entry.path(), depth + 1, found);
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rise"), "").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let root = Root::new(dir.path()).unwrap();
        assert!(root.existing("a.rise").is_ok() && root.existing("./a.rise").is_ok());
        for bad in ["", "../a.rise", "/etc/passwd", "sub/../../a.rise"] {
            assert!(root.existing(bad).is_err(), "{bad}");
            assert!(root.writable(bad).is_err(), "{bad}");
        }
        assert!(root.writable("sub/b.guide").is_ok());
        assert!(root.writable("missing/b.guide").is_err());
        std::os::unix::fs::symlink("/tmp", dir.path().join("out")).unwrap();
        assert!(root.writable("out/b.guide").is_err());
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link.rise")).unwrap();
        assert!(root.existing("link.rise").is_err());
    }
}
