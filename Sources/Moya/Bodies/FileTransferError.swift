import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// A file or stream produced fewer or more bytes than announced (a file shrank while it was
    /// sent, a stream ended early, or went on past its `Content-Length` or
    /// ``RequestBodyStream/length``), so the request could not be completed. When the source
    /// produced more, `actual` counts the bytes read up to the first one too many.
    case lengthMismatch(expected: UInt64, actual: UInt64)

    /// The temporary file of a download could not be created or written.
    case temporaryFileFailed(URL, underlying: any Error)

    /// The downloaded file could not be moved to its destination.
    ///
    /// `underlying` is the real cause: a `POSIXError` (such as `ENOTDIR` when the destination's
    /// parent is a file), the `CocoaError` that `FileManager` threw (with the `POSIXError` under
    /// `NSUnderlyingErrorKey`), `CocoaError.fileWriteFileExists` when a file is there and
    /// `.removePreviousFile` was not given, or ``isDirectory(_:)`` when a directory is there
    /// (a download never replaces a directory). The description names the cause in words.
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
        case .readFailed(let url, let underlying):
            let what = url.map { "the file at \($0.path)" } ?? "an input stream"
            return "Reading \(what) failed" + (underlying.map { ": \(Self.cause(of: $0, at: nil))." } ?? ".")
        case .lengthMismatch(let expected, let actual) where actual > expected:
            return "The body source produced more bytes than the \(expected) announced."
        case .lengthMismatch(let expected, let actual):
            return "The body source produced \(actual) bytes, but \(expected) were announced."
        case .temporaryFileFailed(let url, let underlying):
            return "The temporary download file \(url.path) could not be written: \(Self.cause(of: underlying, at: nil))."
        case .moveFailed(let source, let destination, let underlying):
            return "The downloaded file could not be moved from \(source.path) to \(destination.path): \(Self.cause(of: underlying, at: destination))."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "File transfer error" }

    /// The cause of a file-system failure in words: the system's message for the POSIX error
    /// at the root of `error` (Foundation's own text for a wrapped error is often just "The
    /// operation could not be completed"), an explanation of the refusals of
    /// ``DownloadPlacement``, or else the error's own description (``ErrorText``).
    ///
    /// - Parameters:
    ///   - error:       The error.
    ///   - destination: Where a download was to be moved, when that is what failed.
    private static func cause(of error: any Error, at destination: URL?) -> String {
        if case .isDirectory(let url)? = error as? FileTransferError {
            return "\(url.path) is a directory, and a download never replaces a directory"
        }
        let nsError = error as NSError
        // DownloadPlacement's refusal to overwrite (FileManager's own "file exists" errors name
        // another path, or carry the POSIX error).
        if nsError.domain == NSCocoaErrorDomain, nsError.code == CocoaError.fileWriteFileExists.rawValue,
            nsError.userInfo[NSUnderlyingErrorKey] == nil, let destination,
            nsError.userInfo[NSFilePathErrorKey] as? String == destination.path
        {
            return "a file already exists there, and the removePreviousFile option was not given"
        }
        if let reason = nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String {
            return reason
        }
        var current: NSError? = nsError
        var path: String?
        // Follow NSUnderlyingErrorKey to the POSIX error, if there is one (bounded, in case of a cycle).
        for _ in 0..<8 {
            guard let candidate = current else { break }
            path = path ?? candidate.userInfo[NSFilePathErrorKey] as? String
            if candidate.domain == NSPOSIXErrorDomain {
                let code = Int32(truncatingIfNeeded: candidate.code)
                let message = strerror(code).map { String(cString: $0) } ?? "POSIX error"
                let location = path.map { " at \($0)" } ?? ""
                return "\(message) (errno \(code))\(location)"
            }
            // Stored as an NSError or, on Linux, often as a Swift error such as `POSIXError`.
            current = (candidate.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        }
        let description = ErrorText.describe(error)
        return description.hasSuffix(".") ? String(description.dropLast()) : description
    }
}
