//! Files a command reads and writes.
//!
//! Reading: [`read_source`] reads a file into a located [`Source`] (invalid UTF-8 is an
//! error at the line and column of its first bad byte), and [`recording`] lists every file
//! read while a command loads its inputs.
//!
//! Writing: [`Outputs`] gathers every file a command will write and checks them before any
//! work is done, against each other and against every file the command reads, so that no
//! command writes over its own input or writes one file twice. [`write_atomically`] writes
//! a file whole or not at all (a temporary file beside it, then a rename).

use crate::error::{Error, Result};
use crate::source::{Source, Span};
use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

thread_local! {
    /// The files read on this thread, one list per open [`recording`] (innermost last).
    static READS: RefCell<Vec<Vec<PathBuf>>> = const { RefCell::new(Vec::new()) };
    /// Texts standing in for files on this thread ([`with_overlay`]).
    static OVERLAY: RefCell<Vec<(PathBuf, String)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` and returns, with its result, every file [`read_source`] read on this thread
/// while it ran (in order, each once).
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<PathBuf>) {
    READS.with(|r| r.borrow_mut().push(vec![]));
    let out = f();
    let read = READS.with(|r| {
        let mut frames = r.borrow_mut();
        let read = frames.pop().unwrap_or_default();
        if let Some(outer) = frames.last_mut() {
            outer.extend(read.iter().cloned());
        }
        read
    });
    let mut unique: Vec<PathBuf> = vec![];
    for p in read {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    (out, unique)
}

/// The files read so far in the innermost [`recording`] on this thread.
pub fn read_so_far() -> Vec<PathBuf> {
    READS.with(|r| r.borrow().last().cloned().unwrap_or_default())
}

fn note_read(path: &Path) {
    READS.with(|r| {
        if let Some(frame) = r.borrow_mut().last_mut() {
            frame.push(path.to_path_buf());
        }
    });
}

/// `path` with `.` and `dir/..` components removed, without consulting the file system.
pub fn normalise_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Runs `f` with `texts` standing in for their files in [`read_source`] on this thread (a
/// sweep point's instantiated templates, see [`crate::experiments::sweep`]), keyed by their
/// lexically normalised paths.
pub fn with_overlay<T>(texts: Vec<(PathBuf, String)>, f: impl FnOnce() -> T) -> T {
    let texts = texts.into_iter().map(|(p, t)| (normalise_path(&p), t));
    let before = OVERLAY.with(|o| std::mem::replace(&mut *o.borrow_mut(), texts.collect()));
    let out = f();
    OVERLAY.with(|o| *o.borrow_mut() = before);
    out
}

/// Reads a file (or the text standing in for it, [`with_overlay`]) into a [`Source`], or fails with a located error: a
/// file that cannot be read at its name (which the caller may relocate to the line that
/// names it, [`Error::or_at`]), invalid UTF-8 at its first bad byte.
pub fn read_source(path: &Path) -> Result<Arc<Source>> {
    note_read(path);
    let key = normalise_path(path);
    let overlaid = OVERLAY.with(|o| {
        let texts = o.borrow();
        texts
            .iter()
            .find(|(p, _)| *p == key)
            .map(|(_, t)| t.clone())
    });
    let name = path.display().to_string();
    let text = match overlaid {
        Some(text) => text,
        None => {
            let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            utf8(&name, bytes)?
        }
    };
    Ok(Source::new(name, text))
}

/// `bytes` as text, or an error at the line and column of the first byte that is not
/// UTF-8.
pub fn utf8(name: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bad = e.as_bytes()[at];
        let shown = Source::new(name, String::from_utf8_lossy(e.as_bytes()).into_owned());
        let end = shown.text[at..]
            .chars()
            .next()
            .map_or(at, |c| at + c.len_utf8());
        Error::at(
            &Span::new(&shown, at, end),
            format!("invalid UTF-8: byte 0x{bad:02X} does not begin or continue a character"),
        )
    })
}

/// Writes `contents` to `path` atomically (temporary file, then rename): a reader, or a run
/// killed half-way, sees the old file or the new one, never a part.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomically_with(path, |tmp| std::fs::write(tmp, contents))
}

/// [`write_atomically`] for a writer that takes a path (another program, say): `write`
/// writes the temporary file, which is then renamed to `path`.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = prepare_to_write(path)?;
    let written = write(&tmp).and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::write(path, e)
    })
}

/// Checks, before any work, that `path` can be written: not a directory, in a directory that
/// exists or can be made, where a file can be created. Leaves nothing behind.
pub fn check_writable(path: &Path) -> Result<()> {
    let tmp = prepare_to_write(path)?;
    std::fs::write(&tmp, b"").map_err(|e| Error::write(path, e))?;
    std::fs::remove_file(&tmp).map_err(|e| Error::write(path, e))
}

/// Checks, before any work, that files can be written in directory `dir` (made if missing).
pub fn check_writable_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::write(dir, "it is not a directory"));
    }
    check_writable(&dir.join("results")).map_err(|e| Error {
        location: Some(dir.display().to_string()),
        ..e
    })
}

/// The temporary file beside `path` that [`write_atomically`] renames into place: hidden,
/// named after the file and this process, so two writers never share one.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Refuses a directory, makes `path`'s directory if missing, and returns the temporary file
/// to write before renaming it to `path`.
fn prepare_to_write(path: &Path) -> Result<PathBuf> {
    if path.is_dir() {
        return Err(Error::write(path, "it is a directory"));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::write(path, e))?;
    }
    Ok(temporary(path))
}

/// One file a command will write, and the argument that asked for it.
#[derive(Clone, Debug)]
pub struct Output {
    pub path: PathBuf,
    /// The command-line argument (or other place) that names it: where a refusal is located.
    pub named_by: String,
}

/// Every file a command will write, gathered before it starts and checked at once
/// ([`Outputs::check`]).
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub files: Vec<Output>,
}

impl Outputs {
    /// Adds `path`, asked for by the argument `named_by`.
    pub fn add(&mut self, path: impl Into<PathBuf>, named_by: &str) {
        self.files.push(Output {
            path: path.into(),
            named_by: named_by.to_string(),
        });
    }

    /// Refuses, before any work, an output that is one of `reads` (the command's inputs) or
    /// another output, or (unless `replace`) a file that exists already; then checks that each
    /// can be written. The error names both paths and is located at the argument that named
    /// the output.
    pub fn check(&self, reads: &[PathBuf], replace: bool) -> Result<()> {
        let line = crate::source::command_line();
        let refuse = |out: &Output, message: String| {
            let e = Error::bad_input(message);
            Err(e.or_at(&crate::source::argument_span(&line, &out.named_by)))
        };
        for (i, out) in self.files.iter().enumerate() {
            if let Some(input) = reads.iter().find(|r| same_file(&out.path, r)) {
                return refuse(
                    out,
                    format!(
                        "`{}` would be written over `{}`, which this command reads: \
                         choose another output path",
                        out.path.display(),
                        input.display()
                    ),
                );
            }
            if let Some(other) = self.files[..i]
                .iter()
                .find(|o| same_file(&out.path, &o.path))
            {
                return refuse(
                    out,
                    format!(
                        "`{}` would be written twice (also for `{}`): choose another output path",
                        out.path.display(),
                        other.named_by
                    ),
                );
            }
            if !replace && out.path.exists() {
                return refuse(
                    out,
                    format!(
                        "`{}` exists: give `--force` to replace it, or another output path",
                        out.path.display()
                    ),
                );
            }
        }
        self.files.iter().try_for_each(|o| check_writable(&o.path))
    }
}

/// Whether `a` and `b` name one file: the same inode when both exist, else the same absolute
/// path once `.`, `..` and symbolic links in the existing directories are resolved.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => resolved(a) == resolved(b),
    }
}

/// `path` made absolute, its directory resolved through the file system where it exists.
fn resolved(path: &Path) -> PathBuf {
    let absolute = normalise_path(&std::path::absolute(path).unwrap_or_else(|_| path.into()));
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map_or_else(|_| absolute.clone(), |d| d.join(name)),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located_at_its_first_bad_byte() {
        let e = utf8("f.rise", b"def a = 1\ndef b = \xff2\n".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.rise:2:9: error: invalid UTF-8: byte 0xFF does not begin or continue a character"
        );
    }

    #[test]
    fn the_files_read_while_recording_are_listed_once_each_and_in_nested_recordings() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.rise");
        std::fs::write(&a, "def a = 1\n").unwrap();
        let ((_, inner), outer) = recording(|| {
            recording(|| {
                read_source(&a).unwrap();
                read_source(&a).unwrap();
            })
        });
        assert_eq!(inner, vec![a.clone()]);
        assert_eq!(outer, vec![a]);
    }

    #[test]
    fn an_output_may_not_be_an_input_another_output_or_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.sketch");
        std::fs::write(&input, "sketch s = ?\n").unwrap();
        let mut outputs = Outputs::default();
        outputs.add(dir.path().join("sub/../in.sketch"), "-o");
        let e = outputs
            .check(std::slice::from_ref(&input), true)
            .unwrap_err();
        assert!(e.message.contains("which this command reads"), "{e}");
        assert!(e.message.contains("in.sketch"), "{e}");

        let mut twice = Outputs::default();
        twice.add(dir.path().join("x.json"), "--stats");
        twice.add(dir.path().join("./x.json"), "--dump-egraph");
        let e = twice.check(&[], true).unwrap_err();
        assert!(e.message.contains("written twice"), "{e}");

        let mut existing = Outputs::default();
        existing.add(&input, "-o");
        let e = existing.check(&[], false).unwrap_err();
        assert!(e.message.contains("--force"), "{e}");
        assert_eq!(std::fs::read(&input).unwrap(), b"sketch s = ?\n");
    }
}
