import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder a session writes its downloads to while they arrive
/// (``Session/Configuration/temporaryDirectory``), made or checked before each download is sent
/// (``prepare()``).
///
/// Two kinds:
///
/// - **Private** (the default, and any path whose last component is ``templateName``): each
///   session gets a folder of its own, made with `mkdtemp` on its first download (a random
///   name, mode 0700, so no other user can enter it, guess its name beforehand or plant anything
///   in it). It is removed with what is in it when the session shuts down, when the session and
///   its last download are released, or at the latest when the process exits normally. A folder
///   that is gone or changed when a download starts (a cleaner of the temporary directory removed
///   it) is replaced by a new one. The folders of processes that died without removing theirs
///   are removed by the first session of a later process (``DownloadFolderOwner``).
/// - **Configured**: a path the user chose. It is created (mode 0700) when missing, and before
///   every download it must be a directory, not a symbolic link, owned by the process's effective
///   user, and not writable by group or others unless it has the sticky bit; otherwise the
///   download fails with a ``TemporaryDirectoryError``. It is never removed.
///
/// Shared by the session and every download flight of it, so that the folder outlives a session
/// released while a finished download is still being moved out of it.
final class DownloadFolder: Sendable {
    /// The last component that asks for a private folder: `mkdtemp`'s template.
    static let templateName = "org.moya.downloads-XXXXXX"

    private enum Kind {
        /// A folder of this session's own, made from the `mkdtemp` template at this path.
        case privateFolder(template: String)
        /// The user's folder.
        case configured(URL)
    }

    private enum State {
        /// No private folder made yet.
        case unmade
        /// The private folder in use, and the descriptor that holds the lock on its marker
        /// (``DownloadFolderOwner``), if it could be taken.
        case made(URL, owner: Int32?)
        /// Removed (the session shut down), or to be removed again if that failed.
        case closed(URL?)
    }

    private let kind: Kind
    private let state = Protected(State.unmade)

    /// - Parameter path: ``Session/Configuration/temporaryDirectory``.
    init(_ path: URL) {
        let trimmed = Self.plainPath(of: path)
        if path.lastPathComponent == Self.templateName {
            kind = .privateFolder(template: trimmed)
            DownloadFolderOwner.sweepOnce(besides: trimmed)
        } else {
            kind = .configured(URL(fileURLWithPath: trimmed, isDirectory: true))
        }
    }

    deinit {
        remove()
    }

    /// The folder downloads are written to now: the configured one, or the private folder once
    /// made. Resume data must name a file in it.
    var current: URL? {
        switch kind {
        case .configured(let url):
            return url
        case .privateFolder:
            return state.withLock { state in
                if case .made(let url, _) = state { return url }
                return nil
            }
        }
    }

    /// The folder to write a download to, made or checked now, before the download is sent.
    ///
    /// - Throws: ``TemporaryDirectoryError``; ``SessionError/shutDown`` for a private folder once
    ///   the session has shut down (no folder is made any more).
    func prepare() throws -> URL {
        switch kind {
        case .configured(let url):
            return try Self.checkedConfigured(url)
        case .privateFolder(let template):
            return try state.withLock { state throws -> URL in
                switch state {
                case .closed:
                    throw SessionError.shutDown
                case .made(let url, let owner):
                    if Self.isPrivate(url.path) { return url }
                    // Gone or changed: its name is known now, so a new one is made.
                    DownloadFolderRegistry.forget(url.path)
                    if let owner { DownloadFolderOwner.release(owner) }
                case .unmade:
                    break
                }
                let url = try Self.makePrivate(from: template)
                state = .made(url, owner: DownloadFolderOwner.claim(url.path))
                return url
            }
        }
    }

    /// Removes a private folder, with what is in it, and makes no other; later downloads fail
    /// with ``SessionError/shutDown``. Calling it again tries again if the folder is still
    /// there. Does nothing to a configured folder.
    func remove() {
        guard case .privateFolder = kind else { return }
        let (url, owner): (URL?, Int32?) = state.withLock { state in
            switch state {
            case .unmade:
                state = .closed(nil)
                return (nil, nil)
            case .made(let url, let owner):
                state = .closed(url)
                return (url, owner)
            case .closed(let url?):
                return (url, nil)
            case .closed(nil):
                return (nil, nil)
            }
        }
        if let url {
            Self.removePrivate(url.path)
        }
        // Let go of the marker once the folder is gone: until then no sweep may take it.
        if let owner { DownloadFolderOwner.release(owner) }
    }

    // MARK: - The file system

    /// `url`'s path without a trailing slash, so that `lstat` looks at the last component
    /// itself and never at what a symbolic link there points to.
    private static func plainPath(of url: URL) -> String {
        var path = url.path
        while path.count > 1, path.hasSuffix("/") {
            path.removeLast()
        }
        return path
    }

    /// Makes a new private folder from the `mkdtemp` template at `template`.
    private static func makePrivate(from template: String) throws(TemporaryDirectoryError) -> URL {
        var buffer = Array(template.utf8CString)
        let made = buffer.withUnsafeMutableBufferPointer { pointer in
            mkdtemp(pointer.baseAddress!)
        }
        guard made != nil else {
            throw .unavailable(URL(fileURLWithPath: template), code: errno)
        }
        let path = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        DownloadFolderRegistry.add(path)
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// Whether `path` is still a private folder of this process's user: a directory, not a
    /// link, owned by the effective user, that no one else may enter.
    private static func isPrivate(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid() && info.st_mode & 0o077 == 0
    }

    /// Removes the private folder at `path` and what is in it, when it is still ours.
    static func removePrivate(_ path: String) {
        if isPrivate(path) {
            try? FileManager.default.removeItem(atPath: path)
        }
        var info = stat()
        if lstat(path, &info) != 0 {
            DownloadFolderRegistry.forget(path)
        }
    }

    /// The configured folder at `url`, created (mode 0700, its missing parents as `FileManager`
    /// makes them) when missing, and checked.
    private static func checkedConfigured(_ url: URL) throws(TemporaryDirectoryError) -> URL {
        let path = url.path
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw .unavailable(url, code: errno) }
            // A parent that cannot be made shows as mkdir's error just below.
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if mkdir(path, 0o700) != 0, errno != EEXIST {
                throw .unavailable(url, code: errno)
            }
            // Whatever is there now, made by us or by someone faster, is checked.
            guard lstat(path, &info) == 0 else { throw .unavailable(url, code: errno) }
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            throw .symbolicLink(url)
        }
        guard type == S_IFDIR else {
            throw .notADirectory(url)
        }
        guard info.st_uid == geteuid() else {
            throw .ownedByAnotherUser(url, owner: UInt32(info.st_uid))
        }
        // Others may write to a sticky folder (such as /tmp), but not remove or rename what is
        // ours in it; download files have random names and are created exclusively.
        if info.st_mode & 0o022 != 0, info.st_mode & S_ISVTX == 0 {
            throw .writableByOthers(url, permissions: UInt16(truncatingIfNeeded: info.st_mode & 0o7777))
        }
        return url
    }
}
