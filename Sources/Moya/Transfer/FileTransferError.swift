import Foundation

/// Why a file could not be uploaded or a download could not be stored.
///
/// Delivered as ``MoyaError/underlying(_:_:)``. Nothing is sent when a file to upload is missing
/// or unreadable: the check happens before the request starts.
public enum FileTransferError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable {
    /// The URL of a file to upload is not a `file://` URL.
    case notAFileURL(URL)

    /// There is no file at the URL.
    case fileNotFound(URL)

    /// The URL names a directory, not a file.
    case isDirectory(URL)

    /// The file exists but cannot be read (permissions, or its size cannot be determined).
    case fileNotReadable(URL)

    /// Reading a file or an `InputStream` failed while the body was being sent.
    /// The URL is `nil` for a stream.
    case readFailed(URL?, underlying: (any Error)?)

    /// A file or stream produced fewer bytes than announced (a file shrank while it was sent, or
    /// a stream ended early), so the request could not be completed.
    case lengthMismatch(expected: UInt64, actual: UInt64)

    /// The temporary file of a download could not be created or written.
    case temporaryFileFailed(URL, underlying: any Error)

    /// The downloaded file could not be moved to its destination.
    case moveFailed(source: URL, destination: URL, underlying: any Error)

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .notAFileURL(let url):
            return "The URL \(url.absoluteString) is not a file URL."
        case .fileNotFound(let url):
            return "There is no file at \(url.path)."
        case .isDirectory(let url):
            return "\(url.path) is a directory, not a file."
        case .fileNotReadable(let url):
            return "The file at \(url.path) cannot be read."
        case let .readFailed(url, underlying):
            let what = url.map { "the file at \($0.path)" } ?? "an input stream"
            return "Reading \(what) failed" + (underlying.map { ": \($0.localizedDescription)" } ?? ".")
        case let .lengthMismatch(expected, actual):
            return "The body source produced \(actual) bytes, but \(expected) were announced."
        case let .temporaryFileFailed(url, underlying):
            return "The temporary download file \(url.path) could not be written: \(underlying.localizedDescription)"
        case let .moveFailed(source, destination, underlying):
            return "The downloaded file could not be moved from \(source.path) to \(destination.path): \(underlying.localizedDescription)"
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "File transfer error" }
}
