import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which private download folders (``DownloadFolder``) a live process still owns, so that the
/// folders of processes that died without removing theirs (killed by a signal, which no library
/// can catch for its host) are removed by the next session that starts.
///
/// A process owns its folder through a lock: the folder holds a file, ``markerName``, that its
/// maker locks (`flock`) for as long as it uses the folder. The system releases the lock when the
/// process ends, however it ends. A folder whose marker nobody holds belongs to no live process.
enum DownloadFolderOwner {
    /// The marker file in each private folder.
    static let markerName = ".moya-owner"

    /// How recent a folder may be and still be left alone without a marker held: the moment
    /// between `mkdtemp` and the lock of its marker, and folders made by versions that wrote no
    /// marker, which are removed only once this old.
    static let grace: TimeInterval = 60

    /// The parent folders swept by this process so far: each is swept once.
    private static let swept = Protected<Set<String>>([])

    /// Creates and locks the marker of `folder`, just made; returns the open descriptor that
    /// holds the lock (closed with ``release(_:)``), or `nil` when that failed (the folder is
    /// then kept for ``grace`` after its last change, as one without a marker).
    ///
    /// The marker is made and locked under another name and then renamed into place, so a sweep
    /// never finds it unlocked: a sweep that opened it between its creation and its lock would
    /// otherwise take the lock and remove the folder just made.
    static func claim(_ folder: String) -> Int32? {
        let pending = "\(folder)/\(markerName).pending"
        let descriptor = open(pending, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, rename(pending, "\(folder)/\(markerName)") == 0 else {
            close(descriptor)
            unlink(pending)
            return nil
        }
        return descriptor
    }

    /// Whether a process (this one or another) holds the lock on `folder`'s marker.
    static func isHeld(_ folder: String) -> Bool {
        let descriptor = open("\(folder)/\(markerName)", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return true }
        _ = flock(descriptor, LOCK_UN)
        return false
    }

    /// Lets go of a marker's lock.
    static func release(_ descriptor: Int32) {
        close(descriptor)
    }

    /// Starts, in the background, the removal of the stale private folders next to `template`
    /// (a path whose last component is ``DownloadFolder/templateName``), unless this process
    /// has swept that folder already.
    static func sweepOnce(besides template: String) {
        let parent = (template as NSString).deletingLastPathComponent
        let isFirst = swept.withLock { $0.insert(parent).inserted }
        guard isFirst else { return }
        DispatchQueue.global(qos: .utility).async {
            removeStale(in: parent)
        }
    }

    /// Removes the private folders in `parent` that belong to no live process: named from
    /// ``DownloadFolder/templateName``, directories (not links) of this user that no one else
    /// may enter, whose marker no process holds, or without a marker and unchanged for
    /// ``grace``. Returns the paths removed.
    @discardableResult
    static func removeStale(in parent: String, now: Date = Date()) -> [String] {
        let prefix = String(DownloadFolder.templateName.dropLast(6))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) && name.utf8.count == DownloadFolder.templateName.utf8.count {
            let path = "\(parent)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
                continue
            }
            let descriptor = open("\(path)/\(markerName)", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if descriptor < 0 {
                // No marker (yet): stale only once unchanged for the grace period.
                #if canImport(Darwin)
                let changed = Date(timeIntervalSince1970: TimeInterval(info.st_mtimespec.tv_sec))
                #else
                let changed = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
                #endif
                guard errno == ENOENT, now.timeIntervalSince(changed) > grace else { continue }
            } else if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                // Held: a live process owns it.
                close(descriptor)
                continue
            }
            DownloadFolder.removePrivate(path)
            if descriptor >= 0 { close(descriptor) }
            if access(path, F_OK) != 0 { removed.append(path) }
        }
        return removed
    }
}
