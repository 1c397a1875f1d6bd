import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The private download folders (``DownloadFolder``) this process made and has not removed yet,
/// removed when the process exits normally (`exit`, or a return from `main`).
///
/// A session that is shut down, or released, removes its folder itself. This catches the rest:
/// the shared ``Session/default``, which is never shut down, and sessions still alive at exit.
/// A process killed by a signal leaves its folder behind, as any program leaves its temporary
/// files; the folder is private, and the system's cleaner of the temporary directory removes it.
enum DownloadFolderRegistry {
    /// The folders, by path, and the process that made them: a child made by `fork` without
    /// `exec` runs the exit handlers too, and must not remove its parent's folders.
    private static let folders = Protected<(pid: pid_t, paths: Set<String>)>((getpid(), []))

    /// Installs the exit handler, once.
    private static let exitHandler: Void = {
        atexit {
            DownloadFolderRegistry.removeAll()
        }
    }()

    /// Records a private folder just made.
    static func add(_ path: String) {
        _ = exitHandler
        folders.withLock { _ = $0.paths.insert(path) }
    }

    /// Forgets a folder that was removed, or is no longer ours.
    static func forget(_ path: String) {
        folders.withLock { _ = $0.paths.remove(path) }
    }

    /// Removes every folder still recorded, when this is the process that made them.
    private static func removeAll() {
        let paths = folders.withLock { folders -> Set<String> in
            guard folders.pid == getpid() else { return [] }
            defer { folders.paths.removeAll() }
            return folders.paths
        }
        for path in paths {
            DownloadFolder.removePrivate(path)
        }
    }
}
