import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a download could not use the folder its session writes downloads to while they arrive
/// (``Session/Configuration/temporaryDirectory``).
///
/// Delivered as ``MoyaError/underlying(_:_:)``. The download fails before its request is sent,
/// and nothing is written in the folder. The description names the folder, says what is wrong
/// with it and what to do.
///
/// A folder you set yourself must be a directory (not a symbolic link to one) that belongs to the
/// user the process runs as, and that no other user can write to: another user who owns the
/// folder, or may write to it, could read your downloads or replace them before they are moved
/// to their destination.
public enum TemporaryDirectoryError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// A symbolic link is at the folder's path. It is never followed: whoever made it would choose
    /// where your downloads are written.
    case symbolicLink(URL)

    /// Something other than a directory (a file, a socket) is at the folder's path.
    case notADirectory(URL)

    /// The folder belongs to another user, whose user ID is `owner`.
    case ownedByAnotherUser(URL, owner: UInt32)

    /// Users other than its owner may write to the folder: its permission bits, `permissions`,
    /// let its group or everyone write, without the sticky bit.
    case writableByOthers(URL, permissions: UInt16)

    /// The folder could not be created or examined; `code` is the system's `errno`.
    case unavailable(URL, code: Int32)

    /// The folder the error is about.
    public var url: URL {
        switch self {
        case .symbolicLink(let url), .notADirectory(let url), .ownedByAnotherUser(let url, _), .writableByOthers(let url, _),
            .unavailable(let url, _):
            return url
        }
    }

    /// A description of the problem, the folder it is about and what to do.
    public var errorDescription: String? {
        let folder = "The folder for downloads in progress, \(url.path),"
        let choose = "set Session.Configuration.temporaryDirectory to a folder only you can write to, or leave it at its default"
        switch self {
        case .symbolicLink:
            return "\(folder) is a symbolic link, which is never followed: whoever made it would choose where your downloads are written. "
                + "The download was not sent. Remove the link, or \(choose)."
        case .notADirectory:
            return "\(folder) is not a directory. The download was not sent. Remove what is there, or \(choose)."
        case .ownedByAnotherUser(_, let owner):
            return "\(folder) belongs to \(Self.describeUser(owner)), not to \(Self.describeUser(UInt32(geteuid()))), "
                + "the user this process runs as: its owner could read or replace your downloads. The download was not sent. "
                + "Remove the folder if you did not make it, or \(choose)."
        case .writableByOthers(_, let permissions):
            let mode = String(permissions & 0o7777, radix: 8)
            return "\(folder) can be written by other users (permissions 0\(mode), without the sticky bit): they could replace your downloads. "
                + "The download was not sent. Run `chmod go-w \(url.path)`, or \(choose)."
        case .unavailable(_, let code):
            let reason = strerror(code).map { String(cString: $0) } ?? "error"
            return "\(folder) could not be created or examined: \(reason) (errno \(code)). The download was not sent. "
                + "Check that its parent folder exists and that you may write to it, or \(choose)."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "Temporary directory error" }

    /// `user nobody (uid 65534)`, or `uid 1234` for a user without an entry in the user database.
    private static func describeUser(_ uid: UInt32) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil, let name = entry.pw_name else {
            return "uid \(uid)"
        }
        return "user \(String(cString: name)) (uid \(uid))"
    }
}
