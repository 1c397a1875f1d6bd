import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `HTTPURLResponse` a session hands out: Foundation's, with ``suggestedFilename`` as Apple
/// platforms work it out.
///
/// Linux Foundation answers `"Unknown"` when a response has no `Content-Disposition` file name
/// (Apple answers with the URL's last path component, which download destinations often use),
/// ignores `filename*`, and passes `..` through. Here the name is the one
/// ``DownloadFileName/serverName(for:)`` gives suggested download destinations: always a single,
/// harmless path component, so a server cannot make a destination that uses it point anywhere
/// else.
///
/// `@unchecked Sendable` as its superclass is: the object is immutable once created.
final class TransportHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    /// The file name a download of this response would have: the `Content-Disposition`
    /// `filename*` (RFC 8187) or `filename` parameter, else the URL's last path component, else
    /// `"Unknown"`. Only the last component of a name with path separators is kept, control
    /// characters are removed, and a name of `.` or `..` is not used.
    override var suggestedFilename: String? {
        DownloadFileName.serverName(for: self) ?? "Unknown"
    }
}
